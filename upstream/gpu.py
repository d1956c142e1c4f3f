"""devplan's `gpu` dialect: xDSL's, in MLIR's custom syntax, with the ops and attributes
xDSL lacks.

xDSL 0.74 reads and writes the `gpu` ops only in generic form, and lacks some ops MLIR's
GPU programs use. This dialect replaces, with subclasses of xDSL's ops that read and
write MLIR's custom syntax (generic form keeps working): the index queries
(`gpu.thread_id`, `block_id`, `block_dim`, `grid_dim`, `global_id`, `lane_id`,
`subgroup_id`, `subgroup_size`, `num_subgroups`), `gpu.barrier` (with MLIR's `memfence`
and `scope`), `gpu.terminator`, `gpu.module` (with its offloading handler and targets),
`gpu.func` (with workgroup and private attributions), `gpu.return`, `gpu.yield`,
`gpu.alloc`, `gpu.dealloc`, `gpu.memcpy`, `gpu.wait`, `gpu.launch` and
`gpu.launch_func`. It defines anew, in place of xDSL's, `gpu.host_register` and
`gpu.host_unregister` (xDSL's take unranked memrefs only) and `gpu.all_reduce` (xDSL's
knows seven of MLIR's reduction kinds, not `minsi`, `maxnumf`, ...), and adds `gpu.memset`,
`gpu.subgroup_reduce`, `gpu.shuffle`, `gpu.rotate`, `gpu.printf` and the
`#gpu.address_space` attribute.

The subclasses keep xDSL's class hierarchy (`isinstance(op, xdsl.dialects.gpu.LaunchOp)`
holds), so passes written against xDSL's classes see these ops too. The file holds one
dialect, whose ops share the syntax of async tokens, typed value lists and launch sizes;
it reads best whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xdsl.dialects import gpu
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    UnrankedMemRefType,
    i32,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    opt_result_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

from .dialect import replacing
from .syntax import parse_operands, print_attributes

# ---- shared pieces of syntax ---------------------------------------------------------------


def _parse_async(parser: Parser) -> tuple[bool, list[SSAValue]]:
    """`[async] [[%t, ...]]`: whether the op is async, and its dependencies."""
    is_async = parser.parse_optional_keyword("async") is not None
    deps: list[SSAValue] = []
    token = gpu.AsyncTokenType()
    if (
        parser.parse_optional_punctuation("[") is not None
        and parser.parse_optional_punctuation("]") is None
    ):
        deps = parser.parse_comma_separated_list(
            parser.Delimiter.NONE,
            lambda: parser.resolve_operand(parser.parse_unresolved_operand(), token),
        )
        parser.parse_punctuation("]")
    return is_async, deps


def _print_async(printer: Printer, is_async: bool, deps: Sequence[SSAValue]) -> None:
    if is_async:
        printer.print_string(" async")
    if deps:
        printer.print_string(" [")
        printer.print_list(deps, printer.print_ssa_value)
        printer.print_string("]")


def _token_types(is_async: bool) -> list[Attribute]:
    return [gpu.AsyncTokenType()] if is_async else []


def _parse_dimension(parser: Parser) -> gpu.DimensionAttr:
    return gpu.DimensionAttr(parser.parse_str_enum(gpu.DimensionEnum))


def _parse_attributes(parser: Parser, op: Operation) -> None:
    attrs = parser.parse_optional_attr_dict()
    op.attributes.update(attrs)


# ---- index queries -------------------------------------------------------------------------


def _dimension_query(base: type[IRDLOperation]) -> type[IRDLOperation]:
    """`%r = gpu.thread_id x` for one of the dimension-taking queries."""

    def parse(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        dim = _parse_dimension(parser)
        bound = None
        if parser.parse_optional_keyword("upper_bound") is not None:
            bound = IntegerAttr(parser.parse_integer(), IndexType())
        op = cls.build(result_types=[IndexType()], properties={"dimension": dim})
        if bound is not None:
            op.attributes["upper_bound"] = bound
        _parse_attributes(parser, op)
        return op

    def print_(self: IRDLOperation, printer: Printer) -> None:
        dim = self.properties["dimension"]
        assert isinstance(dim, gpu.DimensionAttr)
        printer.print_string(f" {dim.data.value}")
        bound = self.attributes.get("upper_bound")
        if isinstance(bound, IntegerAttr):
            printer.print_string(f" upper_bound {bound.value.data}")
        print_attributes(printer, self, ("upper_bound",))

    namespace: dict[str, object] = {
        "name": base.name,
        "parse": classmethod(parse),
        "print": print_,
    }
    return type(base.__name__, (base,), namespace)


ThreadIdOp = _dimension_query(gpu.ThreadIdOp)
BlockIdOp = _dimension_query(gpu.BlockIdOp)
BlockDimOp = _dimension_query(gpu.BlockDimOp)
GridDimOp = _dimension_query(gpu.GridDimOp)
GlobalIdOp = _dimension_query(gpu.GlobalIdOp)


def _nullary(base: type[IRDLOperation], typed: bool) -> type[IRDLOperation]:
    """`gpu.barrier`, `gpu.terminator`, `%l = gpu.lane_id`, `%s = gpu.subgroup_size : index`."""

    def parse(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        has_result = bool(cls.get_irdl_definition().results)
        op = cls.build(result_types=[IndexType()] if has_result else [])
        _parse_attributes(parser, op)
        if typed:
            parser.parse_punctuation(":")
            parser.parse_type()
        return op

    def print_(self: IRDLOperation, printer: Printer) -> None:
        print_attributes(printer, self)
        if typed:
            printer.print_string(" : index")

    namespace: dict[str, object] = {
        "name": base.name,
        "parse": classmethod(parse),
        "print": print_,
    }
    return type(base.__name__, (base,), namespace)


BARRIER_FENCES = "address_spaces"
BARRIER_SCOPE = "scope"
"""Where a gpu.barrier keeps the memory it fences and its scope (MLIR's names)."""
BARRIER_SCOPES = ("workgroup", "subgroup", "thread")


class BarrierOp(gpu.BarrierOp):
    """`gpu.barrier`, `gpu.barrier memfence [#gpu.address_space<workgroup>] scope <subgroup>`

    A barrier waits for the threads of its scope (by default the block) and makes the
    memory writes to the fenced address spaces (by default all) visible to them.
    Named barriers (`gpu.barrier named(...)`) are not read."""

    name = "gpu.barrier"

    @classmethod
    def parse(cls, parser: Parser) -> BarrierOp:
        if parser.parse_optional_keyword("named") is not None:
            parser.raise_error(
                "named barriers (gpu.barrier named(...)) are not supported by devplan"
            )
        op = cls.build()
        if parser.parse_optional_keyword("memfence") is not None:
            fences = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_attribute
            )
            op.attributes[BARRIER_FENCES] = ArrayAttr(fences)
        if parser.parse_optional_keyword("scope") is not None:
            parser.parse_punctuation("<")
            pos = parser.pos
            scope = parser.parse_identifier()
            if scope not in BARRIER_SCOPES:
                parser.raise_error(
                    f"unknown barrier scope '{scope}'; expected one of "
                    + ", ".join(BARRIER_SCOPES),
                    pos,
                    parser.pos,
                )
            parser.parse_punctuation(">")
            if scope != "workgroup":
                op.attributes[BARRIER_SCOPE] = StringAttr(scope)
        _parse_attributes(parser, op)
        return op

    def print(self, printer: Printer) -> None:
        fences = self.attributes.get(BARRIER_FENCES)
        if isa(fences, ArrayAttr[Attribute]):
            printer.print_string(" memfence [")
            printer.print_list(fences.data, printer.print_attribute)
            printer.print_string("]")
        scope = self.attributes.get(BARRIER_SCOPE)
        if isinstance(scope, StringAttr):
            printer.print_string(f" scope <{scope.data}>")
        print_attributes(printer, self, (BARRIER_FENCES, BARRIER_SCOPE))

    def verify_(self) -> None:
        scope = self.attributes.get(BARRIER_SCOPE)
        if isinstance(scope, StringAttr) and scope.data == "thread":
            raise VerifyException("a barrier of thread scope means nothing (one thread)")


TerminatorOp = _nullary(gpu.TerminatorOp, typed=False)
LaneIdOp = _nullary(gpu.LaneIdOp, typed=False)
SubgroupIdOp = _nullary(gpu.SubgroupIdOp, typed=True)
SubgroupSizeOp = _nullary(gpu.SubgroupSizeOp, typed=True)
NumSubgroupsOp = _nullary(gpu.NumSubgroupsOp, typed=True)


# ---- module and function -------------------------------------------------------------------


MODULE_TARGETS = "targets"
MODULE_HANDLER = "offloadingHandler"
"""Where a gpu.module keeps the compilation targets and the offloading handler MLIR
writes after its name (`gpu.module @m <#gpu.select_object<0>> [#nvvm.target] {...}`);
xDSL's op has no such properties."""


class ModuleOp(gpu.ModuleOp):
    """`gpu.module @kernels { ... }`, `gpu.module @kernels <handler> [#nvvm.target] { ... }`"""

    name = "gpu.module"

    @classmethod
    def parse(cls, parser: Parser) -> ModuleOp:
        name = parser.parse_symbol_name()
        handler: Attribute | None = None
        if parser.parse_optional_punctuation("<") is not None:
            handler = parser.parse_attribute()
            parser.parse_punctuation(">")
        if parser.parse_optional_punctuation("[") is not None:
            targets = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_attribute
            )
            parser.parse_punctuation("]")
        else:
            targets = []
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        if not region.blocks:
            region.add_block(Block())
        op = cls.build(properties={"sym_name": name}, regions=[region])
        if attrs is not None:
            op.attributes.update(attrs.data)
        if targets:
            op.attributes[MODULE_TARGETS] = ArrayAttr(targets)
        if handler is not None:
            op.attributes[MODULE_HANDLER] = handler
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        handler = self.attributes.get(MODULE_HANDLER)
        if handler is not None:
            printer.print_string(" <")
            printer.print_attribute(handler)
            printer.print_string(">")
        targets = self.attributes.get(MODULE_TARGETS)
        if isa(targets, ArrayAttr[Attribute]):
            printer.print_string(" [")
            printer.print_list(targets.data, printer.print_attribute)
            printer.print_string("]")
        printer.print_op_attributes(
            self.attributes,
            reserved_attr_names=(MODULE_TARGETS, MODULE_HANDLER),
            print_keyword=True,
        )
        printer.print_string(" ")
        printer.print_region(self.body, print_empty_block=False)


WORKGROUP_ATTRIBUTIONS = "workgroup_attributions"
"""The attribute counting a gpu.func's workgroup attributions (as MLIR names it)."""
ARG_ATTRS = "arg_attrs"
"""The attribute holding a gpu.func's argument attributes (`%a: f32 {llvm.noalias}`),
one dictionary per input, as MLIR names it."""


class FuncOp(gpu.FuncOp):
    """`gpu.func @k(%a: memref<?xf32>) workgroup(%w: memref<32xf32, 3>) kernel { ... }`

    As in MLIR, the body's entry block takes the function's inputs, then its workgroup
    attributions (memory shared by a block; their number is the `workgroup_attributions`
    attribute), then its private attributions (memory of each thread).
    """

    name = "gpu.func"

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name()
        arg_attrs: list[DictionaryAttr] = []

        def parse_input() -> Parser.Argument:
            argument = parser.parse_argument(expect_type=True)
            arg_attrs.append(DictionaryAttr(parser.parse_optional_attr_dict()))
            return argument

        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parse_input)
        outputs: Sequence[Attribute] = []
        if parser.parse_optional_punctuation("->") is not None:
            outputs = parser.parse_optional_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_type
            ) or [parser.parse_type()]
        workgroup = _parse_attributions(parser, "workgroup")
        private = _parse_attributions(parser, "private")
        kernel = parser.parse_optional_keyword("kernel") is not None
        attrs = parser.parse_optional_attr_dict_with_keyword()
        if attrs is not None and "gpu.kernel" in attrs.data:
            kernel = True
        region = parser.parse_region([*args, *workgroup, *private])
        properties: dict[str, Attribute] = {
            "function_type": FunctionType.from_lists([a.type for a in args], outputs)
        }
        if kernel:
            properties["kernel"] = UnitAttr()
        op = cls.build(properties=properties, attributes={"sym_name": name}, regions=[region])
        if attrs is not None:
            op.attributes.update({k: v for k, v in attrs.data.items() if k != "gpu.kernel"})
        if workgroup:
            op.attributes[WORKGROUP_ATTRIBUTIONS] = IntegerAttr(len(workgroup), 64)
        if any(a.data for a in arg_attrs):
            op.attributes[ARG_ATTRS] = ArrayAttr(arg_attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        entry = self.body.blocks.first  # a body of several blocks is valid (cf branches)
        args = list(entry.args) if entry is not None else []
        inputs = len(self.function_type.inputs.data)
        workgroup = workgroup_attribution_count(self)
        arg_attrs = self.attributes.get(ARG_ATTRS)
        attrs_of = arg_attrs.data if isa(arg_attrs, ArrayAttr[DictionaryAttr]) else ()

        def print_input(arg: BlockArgument) -> None:
            printer.print_block_argument(arg)
            if arg.index < len(attrs_of) and attrs_of[arg.index].data:
                printer.print_string(" ")
                printer.print_attr_dict(attrs_of[arg.index].data)

        printer.print_string("(")
        printer.print_list(args[:inputs], print_input)
        printer.print_string(")")
        outputs = self.function_type.outputs.data
        if outputs:
            printer.print_string(" -> ")
            if len(outputs) == 1:
                printer.print_attribute(outputs[0])
            else:
                printer.print_string("(")
                printer.print_list(outputs, printer.print_attribute)
                printer.print_string(")")
        for keyword, group in (
            ("workgroup", args[inputs : inputs + workgroup]),
            ("private", args[inputs + workgroup :]),
        ):
            if group:
                printer.print_string(f" {keyword}(")
                printer.print_list(group, printer.print_block_argument)
                printer.print_string(")")
        if self.kernel is not None:
            printer.print_string(" kernel")
        printer.print_op_attributes(
            self.attributes,
            reserved_attr_names=("sym_name", WORKGROUP_ATTRIBUTIONS, ARG_ATTRS),
            print_keyword=True,
        )
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        # Generic form can give any attribute; xDSL checks the constraint only after
        # verify_ (pyright trusts the declared type).
        function_type = self.properties.get("function_type")
        if not isinstance(function_type, FunctionType):
            raise VerifyException(
                f"gpu.func @{self.sym_name.data}'s function_type is {self.function_type}, "
                "not a function type such as (f32) -> ()"
            )
        block = self.body.blocks.first
        if block is None:
            raise VerifyException(f"gpu.func @{self.sym_name.data} has no body block")
        inputs = self.function_type.inputs.data
        workgroup = workgroup_attribution_count(self)
        if len(block.args) < len(inputs) + workgroup:
            raise VerifyException(
                f"gpu.func @{self.sym_name.data} takes {len(inputs)} input(s) and declares "
                f"{workgroup} workgroup attribution(s), but its entry block has "
                f"{len(block.args)} argument(s)"
            )
        if tuple(block.arg_types[: len(inputs)]) != tuple(inputs):
            raise VerifyException(
                f"the entry block's first arguments ({', '.join(map(str, block.arg_types))}) "
                f"must be the function's inputs ({', '.join(map(str, inputs))})"
            )
        for arg in block.args[len(inputs) :]:
            if not isinstance(arg.type, MemRefType):
                raise VerifyException(
                    f"attribution {arg.index - len(inputs)} has type {arg.type}; "
                    "workgroup and private attributions are memrefs"
                )
        if self.kernel is not None and self.function_type.outputs.data:
            raise VerifyException("a kernel gpu.func returns nothing (no result types)")


def workgroup_attribution_count(op: gpu.FuncOp) -> int:
    """How many of the entry block's arguments after the inputs are workgroup memory."""
    count = op.attributes.get(WORKGROUP_ATTRIBUTIONS)
    return count.value.data if isinstance(count, IntegerAttr) else 0


def _parse_attributions(parser: Parser, keyword: str) -> list[Parser.Argument]:
    """`workgroup(%a: memref<...>, ...)` or `private(...)`, when present."""
    if parser.parse_optional_keyword(keyword) is None:
        return []
    return parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
    )


class ReturnOp(gpu.ReturnOp):
    """`gpu.return` or `gpu.return %v : f32`"""

    name = "gpu.return"

    @classmethod
    def parse(cls, parser: Parser) -> ReturnOp:
        values = _parse_typed_values(parser)
        return cls.build(operands=[values])

    def print(self, printer: Printer) -> None:
        _print_typed_values(printer, self.args)


class YieldOp(gpu.YieldOp):
    """`gpu.yield %v : f32`"""

    name = "gpu.yield"

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        return cls.build(operands=[_parse_typed_values(parser)])

    def print(self, printer: Printer) -> None:
        _print_typed_values(printer, self.values)


def _parse_typed_values(parser: Parser) -> list[SSAValue]:
    operand = parser.parse_optional_unresolved_operand()
    if operand is None:
        return []
    operands = [operand]
    while parser.parse_optional_punctuation(",") is not None:
        operands.append(parser.parse_unresolved_operand())
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    if len(types) != len(operands):
        parser.raise_error(f"expected {len(operands)} types, got {len(types)}")
    return [parser.resolve_operand(o, t) for o, t in zip(operands, types, strict=True)]


def _print_typed_values(printer: Printer, values: Sequence[SSAValue]) -> None:
    if not values:
        return
    printer.print_string(" ")
    printer.print_list(values, printer.print_ssa_value)
    printer.print_string(" : ")
    printer.print_list([v.type for v in values], printer.print_attribute)


# ---- host ops ------------------------------------------------------------------------------


class AllocOp(gpu.AllocOp):
    """`%m = gpu.alloc [async] [[%t]] [host_shared] (%n) : memref<?xf32>`"""

    name = "gpu.alloc"

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        is_async, deps = _parse_async(parser)
        host_shared = parser.parse_optional_keyword("host_shared") is not None
        sizes = parse_operands(parser, parser.Delimiter.PAREN)
        symbols: list[UnresolvedOperand] = []
        if parser.parse_optional_punctuation("[") is not None:
            symbols = parse_operands(parser, parser.Delimiter.NONE)
            parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        index = IndexType()
        op = cls.build(
            operands=[
                deps,
                [parser.resolve_operand(s, index) for s in sizes],
                [parser.resolve_operand(s, index) for s in symbols],
            ],
            result_types=[type_, _token_types(is_async)],
            properties={"hostShared": UnitAttr()} if host_shared else {},
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_async(printer, self.asyncToken is not None, self.asyncDependencies)
        if self.hostShared is not None:
            printer.print_string(" host_shared")
        printer.print_string(" (")
        printer.print_list(self.dynamicSizes, printer.print_ssa_value)
        printer.print_string(")")
        if self.symbolOperands:
            printer.print_string("[")
            printer.print_list(self.symbolOperands, printer.print_ssa_value)
            printer.print_string("]")
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


class DeallocOp(gpu.DeallocOp):
    """`gpu.dealloc [async] [[%t]] %m : memref<?xf32>`"""

    name = "gpu.dealloc"

    @classmethod
    def parse(cls, parser: Parser) -> DeallocOp:
        is_async, deps = _parse_async(parser)
        buffer = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        op = cls.build(
            operands=[deps, parser.resolve_operand(buffer, type_)],
            result_types=[_token_types(is_async)],
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_async(printer, self.asyncToken is not None, self.asyncDependencies)
        printer.print_string(" ")
        printer.print_ssa_value(self.buffer)
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)


_PairOp = TypeVar("_PairOp", bound=IRDLOperation)


def _parse_async_pair(cls: type[_PairOp], parser: Parser) -> _PairOp:
    """`[async] [[%t, ...]] %a, %b {attrs} : type_a, type_b` (gpu.memcpy, gpu.memset)."""
    is_async, deps = _parse_async(parser)
    first, second = parse_operands(parser, parser.Delimiter.NONE)[:2]
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    first_type = parser.parse_type()
    parser.parse_punctuation(",")
    second_type = parser.parse_type()
    op = cls.build(
        operands=[
            deps,
            parser.resolve_operand(first, first_type),
            parser.resolve_operand(second, second_type),
        ],
        result_types=[_token_types(is_async)],
    )
    op.attributes.update(attrs)
    return op


def _print_async_pair(
    printer: Printer,
    op: Operation,
    token: SSAValue | None,
    deps: Sequence[SSAValue],
    first: SSAValue,
    second: SSAValue,
) -> None:
    _print_async(printer, token is not None, deps)
    printer.print_string(" ")
    printer.print_list([first, second], printer.print_ssa_value)
    print_attributes(printer, op)
    printer.print_string(" : ")
    printer.print_list([first.type, second.type], printer.print_attribute)


class MemcpyOp(gpu.MemcpyOp):
    """`gpu.memcpy [async] [[%t]] %dst, %src : memref<?xf32>, memref<?xf32, 1>`

    As in MLIR, source and destination agree in element type and shape; their memory
    spaces may differ (xDSL's op requires equal types)."""

    name = "gpu.memcpy"

    def verify_(self) -> None:
        dst, src = self.dst.type, self.src.type
        assert isa(dst, MemRefType[Attribute])
        assert isa(src, MemRefType[Attribute])
        if dst.element_type != src.element_type:
            raise VerifyException(
                f"gpu.memcpy copies {src.element_type} into {dst.element_type}; "
                "the element types must be the same"
            )
        if dst.get_shape() != src.get_shape():
            raise VerifyException(
                f"gpu.memcpy copies {src} into {dst}; the shapes must be the same"
            )

    @classmethod
    def parse(cls, parser: Parser) -> MemcpyOp:
        return _parse_async_pair(cls, parser)

    def print(self, printer: Printer) -> None:
        _print_async_pair(
            printer, self, self.asyncToken, self.asyncDependencies, self.dst, self.src
        )


@irdl_op_definition
class MemsetOp(IRDLOperation):
    """Fills a memref with one value (MLIR's `gpu.memset`).

    ```mlir
    gpu.memset %dst, %value : memref<?xf32>, f32
    ```
    """

    name = "gpu.memset"
    asyncDependencies = var_operand_def(gpu.AsyncTokenType)
    dst = operand_def(MemRefType)
    value = operand_def()
    asyncToken = opt_result_def(gpu.AsyncTokenType)
    irdl_options = (AttrSizedOperandSegments(),)

    @classmethod
    def parse(cls, parser: Parser) -> MemsetOp:
        return _parse_async_pair(cls, parser)

    def verify_(self) -> None:
        dst = self.dst.type
        assert isa(dst, MemRefType[Attribute])
        if self.value.type != dst.element_type:
            raise VerifyException(
                f"gpu.memset stores a {self.value.type} into {dst}; the value's type must "
                "be the element type"
            )

    def print(self, printer: Printer) -> None:
        _print_async_pair(
            printer, self, self.asyncToken, self.asyncDependencies, self.dst, self.value
        )


class WaitOp(gpu.WaitOp):
    """`gpu.wait [%t]`, `%t = gpu.wait async [%a, %b]`"""

    name = "gpu.wait"

    @classmethod
    def parse(cls, parser: Parser) -> WaitOp:
        is_async, deps = _parse_async(parser)
        op = cls.build(operands=[deps], result_types=[_token_types(is_async)])
        _parse_attributes(parser, op)
        return op

    def print(self, printer: Printer) -> None:
        _print_async(printer, self.asyncToken is not None, self.asyncDependencies)
        print_attributes(printer, self)


def _host_registration(name: str, doc: str) -> type[IRDLOperation]:
    """`gpu.host_register %m : memref<*xf32>` (ranked memrefs too, as MLIR allows; xDSL's
    op takes unranked ones only)."""

    def parse(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        operand = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls.build(operands=[parser.resolve_operand(operand, parser.parse_type())])
        op.attributes.update(attrs)
        return op

    def print_(self: IRDLOperation, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.operands[0])
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.operands[0].type)

    namespace: dict[str, object] = {
        "__doc__": doc,
        "name": name,
        "value": operand_def(MemRefType | UnrankedMemRefType),
        "parse": classmethod(parse),
        "print": print_,
    }
    class_name = "".join(w.title() for w in name.split(".")[1].split("_")) + "Op"
    return irdl_op_definition(type(class_name, (IRDLOperation,), namespace))


HostRegisterOp = _host_registration(
    "gpu.host_register", "Makes a host memref visible to kernels (MLIR's gpu.host_register)."
)
HostUnregisterOp = _host_registration(
    "gpu.host_unregister", "Undoes gpu.host_register (MLIR's gpu.host_unregister)."
)


# ---- launches ------------------------------------------------------------------------------


def _parse_launch_sizes(
    parser: Parser, keyword: str, with_ids: bool
) -> tuple[list[UnresolvedOperand], list[Parser.Argument]]:
    """`blocks(%bx, %by, %bz) in (%gx = %a, %gy = %b, %gz = %c)` (gpu.launch) or
    `blocks in (%a, %b, %c)` (gpu.launch_func): the three sizes, and for gpu.launch the
    region arguments it names (three ids, then three sizes)."""
    parser.parse_keyword(keyword)
    ids: list[Parser.Argument] = []
    if with_ids:
        ids = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN,
            lambda: parser.parse_argument(expect_type=False).resolve(IndexType()),
        )
    parser.parse_keyword("in")
    names: list[Parser.Argument] = []

    def one() -> UnresolvedOperand:
        if with_ids:
            names.append(parser.parse_argument(expect_type=False).resolve(IndexType()))
            parser.parse_punctuation("=")
        return parser.parse_unresolved_operand()

    sizes = parser.parse_comma_separated_list(parser.Delimiter.PAREN, one)
    if len(sizes) != 3 or (with_ids and len(ids) != 3):
        parser.raise_error(f"'{keyword}' takes three sizes (x, y, z)")
    return sizes, [*ids, *names]


LAUNCH_MODULE = "kernelModule"
LAUNCH_FUNCTION = "kernelFunc"
"""The attributes holding the names a gpu.launch asks its outlined kernel to get
(`module(@m) function(@f)`), as MLIR names them."""


class LaunchOp(gpu.LaunchOp):
    """`gpu.launch blocks(%bx, %by, %bz) in (%gx = %a, ...) threads(%tx, ...) in (...)
    [module(@m) function(@f)] { }`"""

    name = "gpu.launch"

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        is_async, deps = _parse_async(parser)
        index = IndexType()
        if parser.parse_optional_keyword("clusters") is not None:
            parser.raise_error("gpu.launch with clusters is not supported by devplan's parser")
        grid, grid_args = _parse_launch_sizes(parser, "blocks", True)
        threads, thread_args = _parse_launch_sizes(parser, "threads", True)
        dynamic_shared: list[SSAValue] = []
        if parser.parse_optional_keyword("dynamic_shared_memory_size") is not None:
            dynamic_shared = [parser.resolve_operand(parser.parse_unresolved_operand(), i32)]
        names: dict[str, Attribute] = {}
        for keyword, attr in (("module", LAUNCH_MODULE), ("function", LAUNCH_FUNCTION)):
            if parser.parse_optional_keyword(keyword) is not None:
                parser.parse_punctuation("(")
                names[attr] = SymbolRefAttr(parser.parse_symbol_name())
                parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict_with_keyword()
        # MLIR's order: block ids, thread ids, grid sizes, block sizes.
        region = parser.parse_region(
            [*grid_args[:3], *thread_args[:3], *grid_args[3:], *thread_args[3:]]
        )
        op = cls.build(
            operands=[
                deps,
                *[parser.resolve_operand(s, index) for s in (*grid, *threads)],
                [],
                [],
                [],
                dynamic_shared,
            ],
            result_types=[_token_types(is_async)],
            regions=[region],
        )
        if attrs is not None:
            op.attributes.update(attrs.data)
        op.attributes.update(names)
        return op

    def print(self, printer: Printer) -> None:
        _print_async(printer, self.asyncToken is not None, self.asyncDependencies)
        entry = self.body.blocks.first
        assert entry is not None
        args = entry.args
        sizes = [
            self.gridSizeX,
            self.gridSizeY,
            self.gridSizeZ,
            self.blockSizeX,
            self.blockSizeY,
            self.blockSizeZ,
        ]
        for k, keyword in enumerate(("blocks", "threads")):
            printer.print_string(f" {keyword}(")
            printer.print_list(args[3 * k : 3 * k + 3], printer.print_ssa_value)
            printer.print_string(") in (")
            for j in range(3):
                if j:
                    printer.print_string(", ")
                printer.print_ssa_value(args[6 + 3 * k + j])
                printer.print_string(" = ")
                printer.print_ssa_value(sizes[3 * k + j])
            printer.print_string(")")
        if self.dynamicSharedMemorySize is not None:
            printer.print_string(" dynamic_shared_memory_size ")
            printer.print_ssa_value(self.dynamicSharedMemorySize)
        for keyword, attr in (("module", LAUNCH_MODULE), ("function", LAUNCH_FUNCTION)):
            name = self.attributes.get(attr)
            if isinstance(name, SymbolRefAttr):
                printer.print_string(f" {keyword}(")
                printer.print_attribute(name)
                printer.print_string(")")
        printer.print_op_attributes(
            self.attributes,
            reserved_attr_names=(LAUNCH_MODULE, LAUNCH_FUNCTION),
            print_keyword=True,
        )
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


class LaunchFuncOp(gpu.LaunchFuncOp):
    """`gpu.launch_func @m::@k blocks in (%a, %b, %c) threads in (%d, %e, %f) args(%x : f32)`"""

    name = "gpu.launch_func"

    @classmethod
    def parse(cls, parser: Parser) -> LaunchFuncOp:
        is_async, deps = _parse_async(parser)
        kernel = parser.parse_attribute()
        if not isinstance(kernel, SymbolRefAttr):
            parser.raise_error("expected the kernel's symbol, e.g. @kernels::@k")
        grid = _parse_launch_sizes(parser, "blocks", False)[0]
        threads = _parse_launch_sizes(parser, "threads", False)[0]
        size_type: Attribute = IndexType()
        if parser.parse_optional_punctuation(":") is not None:
            size_type = parser.parse_type()
        dynamic_shared: list[SSAValue] = []
        if parser.parse_optional_keyword("dynamic_shared_memory_size") is not None:
            dynamic_shared = [parser.resolve_operand(parser.parse_unresolved_operand(), i32)]
        args: list[SSAValue] = []
        if parser.parse_optional_keyword("args") is not None:

            def one() -> SSAValue:
                operand = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                return parser.resolve_operand(operand, parser.parse_type())

            args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, one)
        attrs = parser.parse_optional_attr_dict()
        op = cls.build(
            operands=[
                deps,
                *[parser.resolve_operand(s, size_type) for s in (*grid, *threads)],
                [],
                [],
                [],
                dynamic_shared,
                args,
                [],
            ],
            result_types=[_token_types(is_async)],
            properties={"kernel": kernel},
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        _print_async(printer, self.asyncToken is not None, self.asyncDependencies)
        printer.print_string(" ")
        printer.print_attribute(self.kernel)
        for keyword, sizes in (
            ("blocks", (self.gridSizeX, self.gridSizeY, self.gridSizeZ)),
            ("threads", (self.blockSizeX, self.blockSizeY, self.blockSizeZ)),
        ):
            printer.print_string(f" {keyword} in (")
            printer.print_list(sizes, printer.print_ssa_value)
            printer.print_string(")")
        if not isinstance(self.gridSizeX.type, IndexType):
            printer.print_string(" : ")
            printer.print_attribute(self.gridSizeX.type)
        if self.dynamicSharedMemorySize is not None:
            printer.print_string(" dynamic_shared_memory_size ")
            printer.print_ssa_value(self.dynamicSharedMemorySize)
        if self.kernelOperands:
            printer.print_string(" args(")

            def one(value: SSAValue) -> None:
                printer.print_ssa_value(value)
                printer.print_string(" : ")
                printer.print_attribute(value.type)

            printer.print_list(self.kernelOperands, one)
            printer.print_string(")")
        print_attributes(printer, self)


# ---- kernel ops ----------------------------------------------------------------------------

_REDUCTION_KINDS = (
    "add",
    "mul",
    "minui",
    "minsi",
    "minnumf",
    "maxui",
    "maxsi",
    "maxnumf",
    "and",
    "or",
    "xor",
    "minimumf",
    "maximumf",
    "min",
    "max",
)
"""MLIR's `gpu.all_reduce_op` words (`min`/`max` are the older spelling)."""


@irdl_op_definition
class AllReduceOp(IRDLOperation):
    """Reduces a value over all threads of a block; every thread gets the result (MLIR's
    `gpu.all_reduce`). The reduction is a kind (`add`, `mul`, `minsi`, `maxnumf`, `and`,
    ...) or a region combining two values.

    ```mlir
    %r = gpu.all_reduce add %v uniform {} : (f32) -> (f32)
    ```
    """

    name = "gpu.all_reduce"
    op = opt_prop_def(StringAttr | gpu.AllReduceOpAttr)
    """The reduction kind: a word (`add`, `minsi`, ...) or xDSL's `#gpu<all_reduce_op add>`
    in generic form; absent for a region."""
    uniform = opt_prop_def(UnitAttr)
    operand = operand_def()
    result = result_def()
    body = region_def()

    @classmethod
    def parse(cls, parser: Parser) -> AllReduceOp:
        kind = parser.parse_optional_keyword_in(_REDUCTION_KINDS)  # type: ignore[arg-type]
        start = parser.pos
        other = parser.parse_optional_identifier() if kind is None else None
        if other is not None:
            parser.raise_error(
                f"'{other}' is not a reduction devplan knows; gpu.all_reduce takes one of "
                f"{', '.join(_REDUCTION_KINDS)}, or a region",
                start,
                parser.pos,
            )
        value = parser.parse_unresolved_operand()
        uniform = parser.parse_optional_keyword("uniform") is not None
        region = parser.parse_optional_region() or Region()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        function = parser.parse_function_type()
        if len(function.inputs) != 1 or len(function.outputs) != 1:
            parser.raise_error("gpu.all_reduce takes one value and gives one: (T) -> (T)")
        properties: dict[str, Attribute] = {}
        if kind is not None:
            properties["op"] = StringAttr(kind)
        if uniform:
            properties["uniform"] = UnitAttr()
        op = cls.build(
            operands=[parser.resolve_operand(value, function.inputs.data[0])],
            result_types=[function.outputs.data[0]],
            properties=properties,
            regions=[region],
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        if self.kind is not None:
            printer.print_string(f" {self.kind}")
        printer.print_string(" ")
        printer.print_ssa_value(self.operand)
        if self.uniform is not None:
            printer.print_string(" uniform")
        printer.print_string(" ")
        printer.print_region(self.body)
        print_attributes(printer, self)
        printer.print_string(" : (")
        printer.print_attribute(self.operand.type)
        printer.print_string(") -> (")
        printer.print_attribute(self.result.type)
        printer.print_string(")")

    @property
    def kind(self) -> str | None:
        """The reduction kind as MLIR spells it, None for a region."""
        op = self.op
        if op is None:
            return None
        return op.data if isinstance(op, StringAttr) else str(op.data.value)

    def verify_(self) -> None:
        if self.result.type != self.operand.type:
            raise VerifyException(
                f"gpu.all_reduce gives {self.result.type} for a {self.operand.type} value; "
                "they must be one type"
            )
        if (self.op is None) == (not self.body.blocks):
            raise VerifyException(
                "gpu.all_reduce needs exactly one of a reduction kind (add, mul, ...) and "
                "a region body"
            )


@irdl_op_definition
class SubgroupReduceOp(IRDLOperation):
    """Reduces a value over the lanes of each subgroup (MLIR's `gpu.subgroup_reduce`).

    ```mlir
    %r = gpu.subgroup_reduce add %v uniform : (i32) -> (i32)
    ```
    """

    name = "gpu.subgroup_reduce"
    op = prop_def(StringAttr)
    uniform = opt_prop_def(UnitAttr)
    cluster_size = opt_prop_def(IntegerAttr)
    cluster_stride = opt_prop_def(IntegerAttr)
    value = operand_def()
    result = result_def()

    @classmethod
    def parse(cls, parser: Parser) -> SubgroupReduceOp:
        kind = parser.parse_keyword_in(_REDUCTION_KINDS)  # type: ignore[arg-type]
        value = parser.parse_unresolved_operand()
        properties: dict[str, Attribute] = {"op": StringAttr(kind)}
        if parser.parse_optional_keyword("uniform") is not None:
            properties["uniform"] = UnitAttr()
        if parser.parse_optional_keyword("cluster") is not None:
            parser.parse_punctuation("(")
            parser.parse_keyword("size")
            parser.parse_punctuation("=")
            properties["cluster_size"] = IntegerAttr(parser.parse_integer(), i32)
            if parser.parse_optional_punctuation(",") is not None:
                parser.parse_keyword("stride")
                parser.parse_punctuation("=")
                properties["cluster_stride"] = IntegerAttr(parser.parse_integer(), i32)
            parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        function = parser.parse_function_type()
        if len(function.inputs) != 1 or len(function.outputs) != 1:
            parser.raise_error("gpu.subgroup_reduce takes one value and gives one: (T) -> (T)")
        op = cls.build(
            operands=[parser.resolve_operand(value, function.inputs.data[0])],
            result_types=[function.outputs.data[0]],
            properties=properties,
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.op.data} ")
        printer.print_ssa_value(self.value)
        if self.uniform is not None:
            printer.print_string(" uniform")
        if self.cluster_size is not None:
            printer.print_string(f" cluster(size = {self.cluster_size.value.data}")
            if self.cluster_stride is not None:
                printer.print_string(f", stride = {self.cluster_stride.value.data}")
            printer.print_string(")")
        print_attributes(printer, self)
        printer.print_string(" : (")
        printer.print_attribute(self.value.type)
        printer.print_string(") -> (")
        printer.print_attribute(self.result.type)
        printer.print_string(")")


SHUFFLE_MODES = ("xor", "down", "up", "idx")


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """Reads a value from another lane of the subgroup (MLIR's `gpu.shuffle`): `xor`
    takes lane `id ^ offset`, `down` lane `id + offset`, `up` lane `id - offset`, `idx`
    lane `offset`, within segments of `width` lanes; `valid` says the lane exists.

    ```mlir
    %v, %valid = gpu.shuffle xor %x, %offset, %width : f32
    ```
    """

    name = "gpu.shuffle"
    mode = prop_def(StringAttr)
    value = operand_def()
    offset = operand_def(IntegerType)
    width = operand_def(IntegerType)
    shuffled = result_def()
    valid = result_def(IntegerType)

    @classmethod
    def parse(cls, parser: Parser) -> ShuffleOp:
        mode = parser.parse_keyword_in(SHUFFLE_MODES)  # type: ignore[arg-type]
        value, offset, width = parse_operands(parser, parser.Delimiter.NONE)[:3]
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        op = cls.build(
            operands=[
                parser.resolve_operand(value, type_),
                parser.resolve_operand(offset, i32),
                parser.resolve_operand(width, i32),
            ],
            result_types=[type_, IntegerType(1)],
            properties={"mode": StringAttr(mode)},
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.mode.data} ")
        printer.print_list([self.value, self.offset, self.width], printer.print_ssa_value)
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)


@irdl_op_definition
class RotateOp(IRDLOperation):
    """Rotates values across the lanes of a subgroup (MLIR's `gpu.rotate`): lane `k`
    reads lane `((k + offset) mod width) + (k - k mod width)`; `valid` holds for the
    first `width` lanes. `width` is a power of two and `0 <= offset < width`.

    ```mlir
    %v, %valid = gpu.rotate %x, 1, 16 : f32
    ```
    """

    name = "gpu.rotate"
    value = operand_def()
    offset = prop_def(IntegerAttr)
    width = prop_def(IntegerAttr)
    rotated = result_def()
    valid = result_def(IntegerType)

    @classmethod
    def parse(cls, parser: Parser) -> RotateOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        offset = parser.parse_integer()
        parser.parse_punctuation(",")
        width = parser.parse_integer()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        op = cls.build(
            operands=[parser.resolve_operand(value, type_)],
            result_types=[type_, IntegerType(1)],
            properties={"offset": IntegerAttr(offset, i32), "width": IntegerAttr(width, i32)},
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(f", {self.offset.value.data}, {self.width.value.data}")
        print_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    def verify_(self) -> None:
        width, offset = self.width.value.data, self.offset.value.data
        if width <= 0 or width & (width - 1):
            raise VerifyException(f"gpu.rotate's width {width} is not a power of two")
        if not 0 <= offset < width:
            raise VerifyException(f"gpu.rotate's offset {offset} is not in [0, {width})")
        if self.rotated.type != self.value.type:
            raise VerifyException("gpu.rotate's result has the type of its value")


@irdl_op_definition
class PrintfOp(IRDLOperation):
    """Prints from every thread that runs it, C `printf` style (MLIR's `gpu.printf`).

    ```mlir
    gpu.printf "thread %lld\\n", %tid : index
    ```
    """

    name = "gpu.printf"
    format = prop_def(StringAttr)
    args = var_operand_def()

    @classmethod
    def parse(cls, parser: Parser) -> PrintfOp:
        text = parser.parse_str_literal()
        attrs = parser.parse_optional_attr_dict()
        has_comma = parser.parse_optional_punctuation(",") is not None
        args: list[SSAValue] = []
        operand = parser.parse_optional_unresolved_operand()
        if has_comma and operand is None:
            operand = parser.parse_unresolved_operand()
        if operand is not None:
            operands = [operand]
            while parser.parse_optional_punctuation(",") is not None:
                operands.append(parser.parse_unresolved_operand())
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            if len(types) != len(operands):
                parser.raise_error(f"expected {len(operands)} types, got {len(types)}")
            args = [parser.resolve_operand(o, t) for o, t in zip(operands, types, strict=True)]
        op = cls.build(operands=[args], properties={"format": StringAttr(text)})
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.format.data)
        print_attributes(printer, self)
        if self.args:
            printer.print_string(", ")
            printer.print_list(self.args, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list([a.type for a in self.args], printer.print_attribute)


ADDRESS_SPACES = ("global", "workgroup", "private", "constant")
"""MLIR's `gpu::AddressSpace` words."""


@irdl_attr_definition
class AddressSpaceAttr(ParametrizedAttribute):
    """A GPU memory space, as MLIR writes it in memref types (xDSL lacks it): global
    (device) memory, workgroup (shared by a block), private (one thread's) or constant.

    ```mlir
    memref<32xf32, #gpu.address_space<workgroup>>
    ```
    """

    name = "gpu.address_space"

    space: StringAttr = param_def()
    """One of `ADDRESS_SPACES`."""

    def __init__(self, space: str):
        super().__init__(StringAttr(space))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        pos = parser.pos
        word = parser.parse_identifier()
        if word not in ADDRESS_SPACES:
            parser.raise_error(
                f"unknown GPU address space '{word}'; expected one of " + ", ".join(ADDRESS_SPACES),
                pos,
                parser.pos,
            )
        parser.parse_punctuation(">")
        return (StringAttr(word),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.space.data}>")


# ---- the dialect ---------------------------------------------------------------------------

_CUSTOM_SYNTAX: list[type[Operation]] = [
    ThreadIdOp, BlockIdOp, BlockDimOp, GridDimOp, GlobalIdOp,
    BarrierOp, TerminatorOp, LaneIdOp, SubgroupIdOp, SubgroupSizeOp, NumSubgroupsOp,
    ModuleOp, FuncOp, ReturnOp, YieldOp, AllocOp, DeallocOp, MemcpyOp, WaitOp,
    LaunchOp, LaunchFuncOp,
]  # fmt: skip
_REDEFINED: list[type[Operation]] = [HostRegisterOp, HostUnregisterOp, AllReduceOp]
_MISSING: list[type[Operation]] = [MemsetOp, ShuffleOp, RotateOp, PrintfOp, SubgroupReduceOp]


GPU = replacing(gpu.GPU, [*_CUSTOM_SYNTAX, *_REDEFINED, *_MISSING], [AddressSpaceAttr])
"""xDSL's `gpu` dialect with MLIR's custom syntax and the ops and attributes xDSL lacks."""
