"""The `kernel` dialect: device code (MLIR's `gpu.module`/`gpu.func`, TVM's device functions).

A `kernel.module` groups the kernels compiled for one target; each `kernel.func` is one
SIMT kernel, run by every thread of a grid of blocks (`device.launch` starts it). Inside a
kernel, `kernel.thread_id`/`block_id`/`block_dim`/`grid_dim` give the thread's place,
`kernel.barrier` synchronises the threads of a block and `kernel.alloc_shared` allocates
memory shared by them. Kernel bodies use a small, fixed op set (`KERNEL_BODY_OPS`) so every
backend can compile them:

```mlir
kernel.module @kernels target #target.target<"cuda"> {
  kernel.func @scale(%a: memref<?xf32>, %k: f32) {
    %i = kernel.thread_id x
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %k : f32
    memref.store %y, %a[%i] : memref<?xf32>
    kernel.return
  }
}
```

One dialect, one file: the ops, the body op set and the launch sizes a kernel may fix
(`known_block_size`, `known_grid_size`), which `device.launch` checks. What a kernel does
with its parameters (the memory it writes) is `kernel_arguments.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, cast

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnregisteredOp,
    i32,
)
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    EffectInstance,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryAllocEffect,
    MemoryEffect,
    MemoryEffectKind,
    NoTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

from ..diagnostics import error_at
from .shaped_types import is_memref
from .target import TargetAttr
from .virtual_device import memory_space_of, memory_space_problem

Dimension = Literal["x", "y", "z"]
DIMENSIONS: tuple[Dimension, ...] = ("x", "y", "z")

KERNEL_BODY_OPS: tuple[str, ...] = (
    "arith.*",
    "math.*",
    "memref.load",
    "memref.store",
    "memref.dim",
    "memref.atomic_rmw",
    "scf.for",
    "scf.if",
    "scf.yield",
    "scf.while",
    "scf.condition",
    "scf.index_switch",
    "kernel.return",
    "kernel.thread_id",
    "kernel.block_id",
    "kernel.block_dim",
    "kernel.grid_dim",
    "kernel.barrier",
    "kernel.alloc_shared",
    "kernel.printf",
    "kernel.assert",
)
"""The ops a kernel body may use (`dialect.*` = every op of that dialect)."""


SUPPORTED_OPS: frozenset[str] = frozenset({
    "arith.addf", "arith.addi", "arith.addui_extended", "arith.andi", "arith.bitcast",
    "arith.ceildivsi", "arith.ceildivui", "arith.cmpf", "arith.cmpi", "arith.constant",
    "arith.divf", "arith.divsi", "arith.divui", "arith.extf", "arith.extsi", "arith.extui",
    "arith.floordivsi", "arith.fptosi", "arith.fptoui", "arith.index_cast",
    "arith.index_castui", "arith.maximumf", "arith.maxnumf", "arith.maxsi", "arith.maxui",
    "arith.minimumf", "arith.minnumf", "arith.minsi", "arith.minui", "arith.mulf", "arith.muli",
    "arith.mulsi_extended", "arith.mului_extended", "arith.negf", "arith.ori", "arith.remf",
    "arith.remsi", "arith.remui", "arith.select", "arith.shli", "arith.shrsi", "arith.shrui",
    "arith.sitofp", "arith.subf", "arith.subi", "arith.truncf", "arith.trunci", "arith.uitofp",
    "arith.xori",
    "math.absf", "math.absi", "math.acos", "math.acosh", "math.asin", "math.asinh", "math.atan",
    "math.atan2", "math.atanh", "math.cbrt", "math.ceil", "math.copysign", "math.cos",
    "math.cosh", "math.ctlz", "math.ctpop", "math.cttz", "math.erf", "math.exp", "math.exp2",
    "math.expm1", "math.floor", "math.fma", "math.fpowi", "math.ipowi", "math.log",
    "math.log10", "math.log1p", "math.log2", "math.powf", "math.round", "math.roundeven",
    "math.rsqrt", "math.sin", "math.sinh", "math.sqrt", "math.tan", "math.tanh", "math.trunc",
    "memref.atomic_rmw", "memref.dim", "memref.load", "memref.store",
    "scf.condition", "scf.for", "scf.if", "scf.index_switch", "scf.while", "scf.yield",
    "kernel.alloc_shared", "kernel.assert", "kernel.barrier", "kernel.block_dim",
    "kernel.block_id", "kernel.grid_dim", "kernel.printf", "kernel.return", "kernel.thread_id",
})  # fmt: skip
"""The ops of a kernel body that every kernel backend compiles; lower-to-device generates
only these, and a kernel holding another op is a compile-time error of its backend."""


def _allowed_in_kernel(name: str) -> bool:
    dialect = name.split(".", 1)[0]
    return name in KERNEL_BODY_OPS or f"{dialect}.*" in KERNEL_BODY_OPS


def is_kernel_param_type(type_: Attribute) -> bool:
    """Kernel parameters are memrefs, `index`, integers and floats."""
    return isinstance(type_, MemRefType | IndexType | IntegerType) or isa(type_, AnyFloat)


@irdl_op_definition
class KernelModuleOp(IRDLOperation):
    """A group of kernels compiled for one target (MLIR's `gpu.module`).

    The target fixes the device type the kernels run on: `device.launch` checks that
    its device has that type. The body holds only `kernel.func` ops.

    ```mlir
    kernel.module @kernels target #target.target<"cuda"> { kernel.func @k() { kernel.return } }
    ```
    """

    name = "kernel.module"

    sym_name = prop_def(SymbolNameConstraint())
    """The module's symbol, the first part of a launch's `@module::@kernel`."""
    target = prop_def(TargetAttr)
    """How (and for which device type) the kernels are compiled."""
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable())

    @classmethod
    def parse(cls, parser: Parser) -> KernelModuleOp:
        name = parser.parse_symbol_name()
        parser.parse_keyword("target")
        start = parser.pos
        target = parser.parse_attribute()
        if not isinstance(target, TargetAttr):
            parser.raise_error(
                'expected a target such as #target.target<"cuda">', start, parser.pos
            )
        attrs = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region()
        if not body.blocks:  # `{}`: the body block of a module without kernels
            body.add_block(Block())
        op = cls.create(properties={"sym_name": name, "target": target}, regions=[body])
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" target ")
        printer.print_attribute(self.target)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    def __init__(
        self, sym_name: str, target: TargetAttr, kernels: Sequence[KernelFuncOp] = ()
    ) -> None:
        super().__init__(
            properties={"sym_name": StringAttr(sym_name), "target": target},
            regions=[Region(Block(kernels))],
        )

    @property
    def kernels(self) -> list[KernelFuncOp]:
        """The module's kernels, in order."""
        return [op for op in self.body.block.ops if isinstance(op, KernelFuncOp)]

    def verify_(self) -> None:
        for op in self.body.block.ops:
            if not isinstance(op, KernelFuncOp):
                raise error_at(
                    op,
                    f"'{op.name}' is not allowed in kernel.module @{self.sym_name.data}; "
                    "a kernel.module holds only kernel.func ops",
                )


@irdl_op_definition
class KernelFuncOp(IRDLOperation):
    """One SIMT kernel: every thread of the launch grid runs the body once.

    Parameters are memrefs (their memory space may be omitted: then any memory the
    launching device's kernels reach is accepted), `index`, integers and floats; a
    kernel returns nothing. The body uses only `KERNEL_BODY_OPS`, and
    `kernel.alloc_shared` only in its top-level block.

    ```mlir
    kernel.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) { ... }
    ```
    """

    name = "kernel.func"

    sym_name = prop_def(SymbolNameConstraint())
    """The kernel's name, the last part of a launch's `@module::@kernel`."""
    function_type = prop_def(FunctionType)
    """Parameter types; no results."""
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    """Optional per-parameter attribute dictionaries."""
    body = region_def("single_block")

    # Optional discardable attributes `known_block_size` / `known_grid_size`
    # (`attributes {known_block_size = array<i32: 128, 1, 1>}`, MLIR's gpu.func hints):
    # every launch of the kernel must have exactly that block / grid. A launch with
    # constant sizes that contradict them fails to verify; other launches are checked
    # when they run (`known_sizes`, `launch_size_conflict`).

    traits = traits_def(IsolatedFromAbove(), HasParent(KernelModuleOp), SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        param_types: Sequence[Attribute],
        body: Region | None = None,
    ) -> None:
        function_type = FunctionType.from_lists(param_types, [])
        super().__init__(
            properties={"sym_name": StringAttr(sym_name), "function_type": function_type},
            regions=[body if body is not None else Region(Block(arg_types=param_types))],
        )

    @property
    def param_types(self) -> tuple[Attribute, ...]:
        """The kernel's parameter types, in order."""
        return self.function_type.inputs.data

    @classmethod
    def parse(cls, parser: Parser) -> KernelFuncOp:
        reserved = ("sym_name", "function_type", "arg_attrs")
        name, inputs, outputs, region, extra, arg_attrs, _ = parse_func_op_like(
            parser, reserved_attr_names=reserved
        )
        op = cls.create(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(inputs, outputs),
            },
            regions=[region],
        )
        if arg_attrs is not None:
            op.properties["arg_attrs"] = arg_attrs
        if extra is not None:
            op.attributes |= extra.data
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            arg_attrs=self.arg_attrs,
            reserved_attr_names=("sym_name", "function_type", "arg_attrs"),
            print_empty_outputs=False,
        )

    def verify_(self) -> None:
        where = f"kernel.func @{self.sym_name.data}"
        if self.function_type.outputs.data:
            raise VerifyException(
                f"{where} declares results ({', '.join(map(str, self.function_type.outputs))}); "
                "kernels return nothing (write results to a memref parameter)"
            )
        if not self.body.blocks:
            raise VerifyException(f"{where} has no body; kernels must be defined")
        block_types = self.body.block.arg_types
        if tuple(block_types) != self.param_types:
            raise VerifyException(
                f"{where}: entry block argument types ({', '.join(map(str, block_types))}) "
                f"differ from the signature ({', '.join(map(str, self.param_types))})"
            )
        for i, type_ in enumerate(self.param_types):
            if not is_kernel_param_type(type_):
                raise VerifyException(
                    f"{where}: parameter {i} has type {type_}; kernel parameters are "
                    "memrefs, index, integers and floats"
                )
            if is_memref(type_) and memory_space_problem(type_) is not None:
                raise VerifyException(
                    f"{where}: parameter {i} has type {type_}, whose memory space "
                    f"{type_.memory_space} is not a #vdev.device; a kernel memref has no "
                    'memory space or a #vdev.device, e.g. memref<4xf32, #vdev.device<"cuda", 0>>'
                )
        known_sizes(self)  # raises on a malformed hint
        for op in self.body.walk():
            if op is self:
                continue
            if not _allowed_in_kernel(op.name):
                # An unregistered op's name is its op_name (its class is builtin.unregistered).
                name = op.op_name.data if isinstance(op, UnregisteredOp) else op.name
                raise error_at(
                    op,
                    f"'{name}' is not allowed in {where}; kernel bodies may use "
                    + ", ".join(KERNEL_BODY_OPS),
                )
            if isinstance(op, AllocSharedOp) and op.parent_op() is not self:
                raise error_at(
                    op,
                    f"'kernel.alloc_shared' must be in the top-level block of {where}, "
                    "not nested in a loop or branch",
                )


KNOWN_SIZES = {"block": "known_block_size", "grid": "known_grid_size"}
"""The kernel.func attributes that fix the block / grid of every launch of the kernel."""


def known_sizes(kernel: KernelFuncOp) -> dict[str, tuple[int, int, int]]:
    """The block and grid sizes `kernel` declares (`known_block_size`, `known_grid_size`),
    by keyword ("block", "grid"); a VerifyException when a hint is not three i32s >= 1."""
    known: dict[str, tuple[int, int, int]] = {}
    for keyword, name in KNOWN_SIZES.items():
        attr = kernel.attributes.get(name)
        if attr is None:
            continue
        values = (
            attr.get_values()
            if isa(attr, DenseArrayBase[IntegerType]) and attr.elt_type == i32
            else ()
        )
        if len(values) != 3 or min(values) < 1:
            raise VerifyException(
                f"kernel.func @{kernel.sym_name.data}: {name} is {attr}; it must be three "
                "sizes of at least 1, e.g. array<i32: 128, 1, 1>"
            )
        known[keyword] = cast(tuple[int, int, int], tuple(int(v) for v in values))
    return known


def launch_size_conflict(
    kernel: str, known: dict[str, tuple[int, int, int]], keyword: str, sizes: Sequence[int | None]
) -> str | None:
    """The message for a launch of `kernel` whose `keyword` ("block" or "grid") sizes
    contradict the kernel's `known` sizes, or None when they agree (None in `sizes` is
    a size not known yet, which agrees)."""
    fixed = known.get(keyword)
    if fixed is None:
        return None
    for axis, size, want in zip("xyz", sizes, fixed, strict=True):
        if size is not None and size != want:
            shown = ", ".join("?" if s is None else str(s) for s in sizes)
            return (
                f"{keyword} ({shown}) has {size} along {axis}, but kernel {kernel} declares "
                f"{KNOWN_SIZES[keyword]} = array<i32: {', '.join(map(str, fixed))}>: every "
                f"launch of it must have that {keyword}"
            )
    return None


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a kernel body; kernels return nothing.

    ```mlir
    kernel.return
    ```
    """

    name = "kernel.return"

    traits = traits_def(HasParent(KernelFuncOp), IsTerminator())

    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()


def _enclosing_kernel(op: Operation) -> KernelFuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelFuncOp):
        parent = parent.parent_op()
    return parent


def _require_kernel(op: Operation) -> None:
    if _enclosing_kernel(op) is None:
        raise VerifyException("is only valid inside a kernel.func")


class _IndexQueryOp(IRDLOperation):
    """Shared definition of the thread/block position queries (`kernel.thread_id x`)."""

    dimension = prop_def(StringAttr)
    """Which grid axis: "x", "y" or "z"."""
    result = result_def(IndexType)

    traits = traits_def(Pure())

    def __init__(self, dim: Dimension) -> None:
        super().__init__(properties={"dimension": StringAttr(dim)}, result_types=[IndexType()])

    @property
    def dim(self) -> Dimension:
        """The queried axis, "x", "y" or "z"."""
        return cast(Dimension, self.dimension.data)

    @classmethod
    def parse(cls, parser: Parser) -> _IndexQueryOp:
        start = parser.pos
        word = parser.parse_optional_identifier()
        if word not in DIMENSIONS:
            parser.raise_error(
                f"expected a dimension, one of {', '.join(DIMENSIONS)}", start, parser.pos
            )
        attrs = parser.parse_optional_attr_dict()
        op = cls(word)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.dimension.data}")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if self.dimension.data not in DIMENSIONS:
            raise VerifyException(
                f"dimension '{self.dimension.data}' is not one of {', '.join(DIMENSIONS)}"
            )
        _require_kernel(self)


@irdl_op_definition
class ThreadIdOp(_IndexQueryOp):
    """The calling thread's index inside its block along one axis (CUDA `threadIdx`).

    ```mlir
    %tx = kernel.thread_id x
    ```
    """

    name = "kernel.thread_id"


@irdl_op_definition
class BlockIdOp(_IndexQueryOp):
    """The calling thread's block index inside the grid along one axis (CUDA `blockIdx`).

    ```mlir
    %bx = kernel.block_id x
    ```
    """

    name = "kernel.block_id"


@irdl_op_definition
class BlockDimOp(_IndexQueryOp):
    """The number of threads per block along one axis (CUDA `blockDim`).

    ```mlir
    %bd = kernel.block_dim x
    ```
    """

    name = "kernel.block_dim"


@irdl_op_definition
class GridDimOp(_IndexQueryOp):
    """The number of blocks in the grid along one axis (CUDA `gridDim`).

    ```mlir
    %gd = kernel.grid_dim x
    ```
    """

    name = "kernel.grid_dim"


class OrdersAllMemory(MemoryEffect):
    """Reads and writes all memory: no access moves across the op (a barrier, a wait)."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        return frozenset(
            (EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE))
        )


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Waits until every thread of the block reaches it; then their memory writes
    before the barrier are visible to all of them (CUDA `__syncthreads`).

    ```mlir
    kernel.barrier
    ```
    """

    name = "kernel.barrier"

    traits = traits_def(OrdersAllMemory())

    assembly_format = "attr-dict"

    def __init__(self) -> None:
        super().__init__()

    def verify_(self) -> None:
        _require_kernel(self)


@irdl_op_definition
class AllocSharedOp(IRDLOperation):
    """Allocates block-shared memory for the kernel's lifetime (CUDA `__shared__`).

    Every thread of a block sees the same buffer. The shape is static and the memory
    space is a `#vdev.device` whose scope is "shared". Only in a kernel.func's top-level
    block.

    ```mlir
    %s = kernel.alloc_shared : memref<256xf32, #vdev.device<?, ?, ?, "shared">>
    ```
    """

    name = "kernel.alloc_shared"

    result = result_def(MemRefType)

    traits = traits_def(MemoryAllocEffect())

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: MemRefType) -> None:
        super().__init__(result_types=[result_type])

    def verify_(self) -> None:
        type_ = self.result.type
        assert isinstance(type_, MemRefType)
        if not type_.has_static_shape():
            raise VerifyException(f"shared memory needs a static shape, got {type_}")
        space = memory_space_of(type_)
        if space is None or space.scope != "shared":
            raise VerifyException(
                f"result {type_} must live in shared memory, e.g. "
                'memref<256xf32, #vdev.device<?, ?, ?, "shared">>'
            )
        if self.parent_op() is None or not isinstance(self.parent_op(), KernelFuncOp):
            _require_kernel(self)


def lookup_kernel(op: Operation, symbol_ref: SymbolRefAttr) -> KernelFuncOp | None:
    """The `kernel.func` that `@module::@kernel` names, seen from `op`'s symbol table.

    None when the reference does not resolve, when `op` has no enclosing symbol table,
    or when the symbol is not a `kernel.func` inside a `kernel.module`.
    """
    try:
        found = SymbolTable.lookup_symbol(op, symbol_ref)
    except ValueError:  # no SymbolTable ancestor
        return None
    if isinstance(found, KernelFuncOp) and isinstance(found.parent_op(), KernelModuleOp):
        return found
    return None


@irdl_op_definition
class PrintfOp(IRDLOperation):
    """Prints from every thread that runs it, with a C `printf` format (`%d`, `%lld`,
    `%f`, `%s`, ...; MLIR's `gpu.printf`). The threads of one launch print in a defined
    order: the NumPy backend per op in linear thread order (block-major), the Numba
    backend thread by thread.

    ```mlir
    kernel.printf "thread %lld\\n" (%tid) : index
    ```
    """

    name = "kernel.printf"

    format = prop_def(StringAttr)
    args = var_operand_def()

    assembly_format = "$format `(` $args `)` attr-dict `:` type($args)"

    def __init__(self, format: str, args: Sequence[SSAValue]) -> None:
        super().__init__(operands=[args], properties={"format": StringAttr(format)})

    def verify_(self) -> None:
        _require_kernel(self)


@irdl_op_definition
class AssertOp(IRDLOperation):
    """Stops the launch when `condition` is false in some thread (CUDA's device-side
    `assert`): the launch fails with one line per failing thread, as CUDA prints them:
    `<origin>: block: [x,y,z], thread: [x,y,z] Assertion `<message>` failed.`; a failing
    thread does nothing after it.

    ```mlir
    kernel.assert %ok, "in range" at "kernel.cc:7: k"
    ```
    """

    name = "kernel.assert"

    condition = operand_def(IntegerType(1))
    message = prop_def(StringAttr)
    origin = prop_def(StringAttr)
    """`file:line: function`, the place the message names."""

    assembly_format = "$condition `,` $message `at` $origin attr-dict"

    def __init__(self, condition: SSAValue, message: str, origin: str) -> None:
        super().__init__(
            operands=[condition],
            properties={"message": StringAttr(message), "origin": StringAttr(origin)},
        )

    def verify_(self) -> None:
        _require_kernel(self)


Kernel = Dialect(
    "kernel",
    [
        KernelModuleOp,
        KernelFuncOp,
        ReturnOp,
        ThreadIdOp,
        BlockIdOp,
        BlockDimOp,
        GridDimOp,
        BarrierOp,
        AllocSharedOp,
        PrintfOp,
        AssertOp,
    ],
    [],
)


__all__ = [
    "DIMENSIONS",
    "KERNEL_BODY_OPS",
    "KNOWN_SIZES",
    "AllocSharedOp",
    "AssertOp",
    "BarrierOp",
    "BlockDimOp",
    "BlockIdOp",
    "Dimension",
    "GridDimOp",
    "Kernel",
    "KernelFuncOp",
    "KernelModuleOp",
    "PrintfOp",
    "ReturnOp",
    "ThreadIdOp",
    "is_kernel_param_type",
    "known_sizes",
    "launch_size_conflict",
    "lookup_kernel",
]
