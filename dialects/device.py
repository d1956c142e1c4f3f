"""The `device` dialect: host-side device operations (TVM's DeviceAPI calls as ops).

Level-2 host programs use it to allocate and free device memory (`device.alloc`,
`device.alloc_workspace`), view part of a buffer as another memref without copying
it (`device.view`), move data between memories (`device.copy`, and
`device.copy_async` on a stream, ordered by `!device.token`s and `device.wait`),
launch kernels of a `kernel.module` on a device (`device.launch`, MLIR's
`gpu.launch_func`), and query device attributes (`device.attr`, TVM's
`DeviceAPI::GetAttr`). A memref without a memory space is host memory; a memref whose
memory space is a `#vdev.device` lives on that device:

```mlir
%d = device.alloc() : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
device.copy %h to %d : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
device.launch @kernels::@scale on #vdev.device<"cuda", 0> grid(%c1, %c1, %c1)
    block(%c16, %c1, %c1) args(%d) : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
device.free %d : memref<16xf32, #vdev.device<"cuda", 0, ?, "global">>
```

Memory effects are declared so xDSL's DCE and CSE keep what matters: allocs allocate,
frees free, copies read their source and write their destination, launches read and
write every memref argument, `device.wait` orders everything, and `device.attr` is a
pure query (except `available_global_memory`, which changes as memory is allocated).

One dialect, one file (as xDSL keeps its dialects): the token type, the ops, their memory
effects and the checks their verifiers share. `device.launch` is most of it, because a
launch is checked against the kernel it names (parameters, memory spaces, block sizes).
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from io import StringIO
from typing import ClassVar, Literal

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    AlwaysSpeculatable,
    EffectInstance,
    MemoryAllocEffect,
    MemoryEffect,
    MemoryEffectKind,
    MemoryFreeEffect,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

from .kernel import (
    KernelFuncOp,
    KernelModuleOp,
    OrdersAllMemory,
    known_sizes,
    launch_size_conflict,
)
from .memory_scopes import KERNEL_PRIVATE_SCOPES, effective_scope, kernel_can_reach
from .shaped_types import is_memref
from .target import TargetAttr
from .virtual_device import DeviceAttr, memory_space_of

DEVICE_ATTR_KINDS: dict[str, Literal["int", "string"]] = {
    "exist": "int",
    "max_threads_per_block": "int",
    "warp_size": "int",
    "max_shared_memory_per_block": "int",
    "compute_version": "string",
    "device_name": "string",
    "max_clock_rate": "int",
    "multi_processor_count": "int",
    "max_thread_dimensions": "string",
    "max_registers_per_block": "int",
    "gcn_arch": "int",
    "api_version": "int",
    "driver_version": "int",
    "l2_cache_size_bytes": "int",
    "total_global_memory": "int",
    "available_global_memory": "int",
    "image_pitch_alignment": "int",
}
"""TVM's `DeviceAttrKind`, in snake case, in TVM's order, with the kind of value it has."""


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """Completion of asynchronous device work (a copy or a launch on a stream).

    ```mlir
    %t = device.copy_async [] %h to %d : memref<4xf32> to memref<4xf32, #vdev.device<"cuda", 0>>
    ```
    """

    name = "device.token"


# --- helpers ---------------------------------------------------------------------------


def _memref(value: SSAValue) -> MemRefType[Attribute]:
    type_ = value.type
    assert is_memref(type_)
    return type_


def _ir(attr: Attribute) -> str:
    """An attribute as it is written in IR (`str()` of a target is its JSON form)."""
    stream = StringIO()
    Printer(stream=stream).print_attribute(attr)
    return stream.getvalue()


def _require_concrete(device: DeviceAttr, what: str) -> None:
    if device.type_name is not None and device.device_id is not None:
        return
    raise VerifyException(
        f'{what} {_ir(device)} needs a device type and an id, e.g. #vdev.device<"cuda", 0>'
    )


def _satisfies(memory: DeviceAttr | None, wanted: DeviceAttr) -> bool:
    """Whether memory in `memory` meets every field `wanted` constrains (an unset
    scope is `global` at run time, so it meets a `global` requirement)."""
    if memory is None:
        return False
    fields = (
        (wanted.type_name, memory.type_name),
        (wanted.device_id, memory.device_id),
        (wanted.target_value, memory.target_value),
    )
    if any(want is not None and want != have for want, have in fields):
        return False
    return wanted.scope is None or wanted.scope == effective_scope(memory)


def _op_name_span(parser: Parser, name: str) -> tuple[int, int]:
    """Where the op being parsed spells its name: a custom parser runs after the name,
    and an error about what is missing reads best under the op rather than under
    whatever follows it (possibly on the next line)."""
    content = parser.lexer.input.content
    found = content.rfind(name, 0, parser.pos)
    if found < 0:
        return parser.pos, parser.pos
    return found, found + len(name)


def _parse_wait_tokens(parser: Parser) -> list[UnresolvedOperand]:
    """The `%t, %t1` of a `device.wait` that is not `device.wait all`."""
    start, end = _op_name_span(parser, "device.wait")
    expected = (
        "expected the tokens to wait for (device.wait %t, %t1) or 'all'; write "
        "'device.wait all' to wait for all outstanding work on every device"
    )
    first = parser.parse_optional_unresolved_operand()
    if first is None:
        parser.raise_error(expected, start, end)
    names = [first]
    while parser.parse_optional_punctuation(",") is not None:
        names.append(parser.parse_unresolved_operand())
    # A bare `device.wait` followed by `%v = ...` (or `%v:2 = ...`) on the next line:
    # what looked like tokens are the results of the next op.
    colon = parser.parse_optional_punctuation(":") is not None
    if colon and parser.parse_optional_integer() is None:
        parser.raise_error("'device.wait' takes no types: write device.wait %t, %t1", start, end)
    if colon or parser.parse_optional_punctuation("=") is not None:
        parser.raise_error(
            f"{expected} ({first.span.text} begins the next op, it is not a token)", start, end
        )
    return names


def _constant_index(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _first_mismatch(a: Sequence[int], b: Sequence[int]) -> int | None:
    """The first dimension where two static extents differ (None if they agree)."""
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != DYNAMIC_INDEX and y != DYNAMIC_INDEX and x != y:
            return i
    return None


def _verify_copy_types(source: MemRefType[Attribute], destination: MemRefType[Attribute]) -> None:
    what = f"cannot copy {_ir(source)} to {_ir(destination)}"
    if source.element_type != destination.element_type:
        raise VerifyException(
            f"{what}: element type {_ir(source.element_type)} differs from "
            f"{_ir(destination.element_type)}"
        )
    src_shape, dst_shape = source.get_shape(), destination.get_shape()
    if len(src_shape) != len(dst_shape):
        raise VerifyException(f"{what}: rank {len(src_shape)} differs from rank {len(dst_shape)}")
    dim = _first_mismatch(src_shape, dst_shape)
    if dim is not None:
        raise VerifyException(
            f"{what}: dimension {dim} is {src_shape[dim]} in the source and "
            f"{dst_shape[dim]} in the destination"
        )


def _verify_device_memory(type_: MemRefType[Attribute], does: str, remedy: str) -> DeviceAttr:
    device = memory_space_of(type_)
    if device is None:
        raise VerifyException(
            f"{does} device memory, but {_ir(type_)} is host memory (no memory space); {remedy}"
        )
    return device


def _verify_allocation(result: MemRefType[Attribute], dynamic_sizes: int) -> None:
    device = _verify_device_memory(result, "allocates", "allocate host memory with memref.alloc")
    _require_concrete(device, f"result {_ir(result)}: device")
    if device.scope in KERNEL_PRIVATE_SCOPES:
        raise VerifyException(
            f'cannot allocate {_ir(result)}: scope "{device.scope}" exists only inside a '
            "kernel (use kernel.alloc_shared there)"
        )
    wanted = sum(1 for d in result.get_shape() if d == DYNAMIC_INDEX)
    if dynamic_sizes != wanted:
        raise VerifyException(
            f"result {_ir(result)} has {wanted} '?' dimension(s) but {dynamic_sizes} "
            "dynamic size(s) were given (one index per '?', in order)"
        )


# --- memory effects ----------------------------------------------------------------------


class _CopyEffect(MemoryEffect):
    """A copy reads its source and writes its destination."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        assert isinstance(op, CopyOp | CopyAsyncOp)
        return frozenset(
            (
                EffectInstance(MemoryEffectKind.READ, op.source),
                EffectInstance(MemoryEffectKind.WRITE, op.destination),
            )
        )


class _LaunchEffect(MemoryEffect):
    """A kernel may read and write each memref it is given (conservatively, all of them)."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        assert isinstance(op, LaunchOp)
        effects: set[EffectInstance] = set()
        for arg in op.args:
            if isinstance(arg.type, MemRefType):
                effects.add(EffectInstance(MemoryEffectKind.READ, arg))
                effects.add(EffectInstance(MemoryEffectKind.WRITE, arg))
        return frozenset(effects)


class _DeviceQueryEffect(MemoryEffect):
    """Device attributes are fixed, except the free memory, which allocations change."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance] | None:
        assert isinstance(op, AttrOp)
        # Unknown effects keep DCE, CSE and hoisting away from a value that changes.
        return None if op.attr_name == "available_global_memory" else frozenset()


# --- ops ---------------------------------------------------------------------------------


class _DeviceAllocationOp(IRDLOperation, ABC):
    """What `device.alloc` and `device.alloc_workspace` share: a device memref result,
    one index per `?` dimension, and the same checks."""

    dynamic_sizes = var_operand_def(IndexType)
    """The extents of the `?` dimensions, in order."""
    result = result_def(MemRefType)

    traits = traits_def(MemoryAllocEffect())

    assembly_format = "`(` $dynamic_sizes `)` attr-dict `:` type($result)"

    def __init__(
        self, result_type: MemRefType[Attribute], dynamic_sizes: Sequence[SSAValue | Operation] = ()
    ) -> None:
        super().__init__(operands=[dynamic_sizes], result_types=[result_type])

    def verify_(self) -> None:
        _verify_allocation(_memref(self.result), len(self.dynamic_sizes))


class _DeviceReleaseOp(IRDLOperation, ABC):
    """What `device.free` and `device.free_workspace` share: one device memref operand,
    which must not be host memory."""

    buffer = operand_def(MemRefType)

    traits = traits_def(MemoryFreeEffect())

    assembly_format = "$buffer attr-dict `:` type($buffer)"

    RELEASES: ClassVar[str]
    """What the op does to the memory, for the message about host memory ("frees")."""
    HOST_MEMORY_REMEDY: ClassVar[str]
    """What to do instead when the memory is host memory."""

    def __init__(self, buffer: SSAValue | Operation) -> None:
        super().__init__(operands=[buffer])

    def verify_(self) -> None:
        _verify_device_memory(_memref(self.buffer), self.RELEASES, self.HOST_MEMORY_REMEDY)


@irdl_op_definition
class AllocOp(_DeviceAllocationOp):
    """Allocates device memory (TVM's `AllocDataSpace`); one index per `?` dimension.

    The result's memory space names the device and scope; host memory (no memory
    space) is allocated with `memref.alloc` instead.

    ```mlir
    %a = device.alloc(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
    ```
    """

    name = "device.alloc"


@irdl_op_definition
class FreeOp(_DeviceReleaseOp):
    """Frees device memory allocated by `device.alloc` (TVM's `FreeDataSpace`).

    ```mlir
    device.free %a : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
    ```
    """

    name = "device.free"

    RELEASES: ClassVar[str] = "frees"
    HOST_MEMORY_REMEDY: ClassVar[str] = "free host memory with memref.dealloc"


@irdl_op_definition
class AllocWorkspaceOp(_DeviceAllocationOp):
    """Takes temporary device memory from the device's workspace pool (TVM's
    `AllocWorkspace`: page-rounded, reused after `device.free_workspace`).

    ```mlir
    %w = device.alloc_workspace(%n) : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
    ```
    """

    name = "device.alloc_workspace"


@irdl_op_definition
class FreeWorkspaceOp(_DeviceReleaseOp):
    """Returns workspace memory to its device's pool (TVM's `FreeWorkspace`).

    ```mlir
    device.free_workspace %w : memref<?xf32, #vdev.device<"cuda", 0, ?, "global">>
    ```
    """

    name = "device.free_workspace"

    RELEASES: ClassVar[str] = "returns"
    HOST_MEMORY_REMEDY: ClassVar[str] = (
        "only workspaces from device.alloc_workspace go back to the pool"
    )


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A view of device (or host) memory: the elements of `source` at `offset +
    sum(i_d * strides_d)` for each index `i` of `sizes` (TVM's `NDArray::CreateView`,
    MLIR's `memref.reinterpret_cast`). No memory is allocated or copied; the view
    lives while its source does and is never freed itself (freeing the source ends it).

    The source has the identity layout (its elements in row-major order); offset and
    strides count elements. The result has the source's element type and memory
    space, and a strided layout (or none, for a row-major view at offset 0).

    ```mlir
    %v = device.view %a offset(%c8) sizes(%c4, %c8) strides(%c16, %c1)
        : memref<64xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
    ```
    """

    name = "device.view"

    source = operand_def(MemRefType)
    offset = operand_def(IndexType)
    """The element of `source` at index 0 of the view."""
    sizes = var_operand_def(IndexType)
    """The extent of each dimension of the view."""
    strides = var_operand_def(IndexType)
    """How many elements of `source` one step along each dimension moves."""
    result = result_def(MemRefType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(AlwaysSpeculatable())

    assembly_format = (
        "$source `offset` `(` $offset `)` `sizes` `(` $sizes `)` `strides` `(` $strides `)` "
        "attr-dict `:` type($source) `to` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        offset: SSAValue | Operation,
        sizes: Sequence[SSAValue | Operation],
        strides: Sequence[SSAValue | Operation],
        result_type: MemRefType[Attribute],
    ) -> None:
        super().__init__(operands=[source, offset, sizes, strides], result_types=[result_type])

    def verify_(self) -> None:
        source, result = _memref(self.source), _memref(self.result)
        what = f"cannot view {_ir(source)} as {_ir(result)}"
        if not isinstance(source.layout, NoneAttr):
            raise VerifyException(
                f"{what}: the source must have the identity layout (view the buffer it views)"
            )
        if source.element_type != result.element_type:
            raise VerifyException(f"{what}: the element types differ")
        if source.memory_space != result.memory_space:
            raise VerifyException(f"{what}: the memory spaces differ")
        shape = result.get_shape()
        if len(self.sizes) != len(shape) or len(self.strides) != len(shape):
            raise VerifyException(
                f"{what}: {len(self.sizes)} size(s) and {len(self.strides)} stride(s) given "
                f"for a result of rank {len(shape)} (one of each per dimension)"
            )
        for d, (n, size) in enumerate(zip(shape, self.sizes, strict=True)):
            known = _constant_index(size)
            if n != DYNAMIC_INDEX and known is not None and known != n:
                raise VerifyException(f"{what}: size {d} is {known} but the result type says {n}")
        self._verify_layout(result, what)

    def _verify_layout(self, result: MemRefType[Attribute], what: str) -> None:
        layout = result.layout
        if isinstance(layout, NoneAttr):
            return
        if not isinstance(layout, StridedLayoutAttr):
            raise VerifyException(f"{what}: the result layout must be strided<...> or none")
        given = [*layout.get_strides(), layout.get_offset()]
        operands = [*self.strides, self.offset]
        for i, (want, value) in enumerate(zip(given, operands, strict=True)):
            known = _constant_index(value)
            if want is not None and known is not None and known != want:
                field = "offset" if i == len(operands) - 1 else f"stride {i}"
                raise VerifyException(
                    f"{what}: {field} is {known} but the result layout says {want}"
                )


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copies all elements of one memref into another, across memories if they differ
    (TVM's `CopyDataFromTo`); returns when the copy is done.

    Shapes (where both are static) and element types must agree; memory spaces may
    differ: host→device, device→host, device→device and between two devices.

    ```mlir
    device.copy %src to %dst : memref<16xf32> to memref<16xf32, #vdev.device<"cuda", 0>>
    ```
    """

    name = "device.copy"

    source = operand_def(MemRefType)
    destination = operand_def(MemRefType)

    traits = traits_def(_CopyEffect())

    assembly_format = (
        "$source `to` $destination attr-dict `:` type($source) `to` type($destination)"
    )

    def __init__(self, source: SSAValue | Operation, destination: SSAValue | Operation) -> None:
        super().__init__(operands=[source, destination])

    def verify_(self) -> None:
        _verify_copy_types(_memref(self.source), _memref(self.destination))


@irdl_op_definition
class CopyAsyncOp(IRDLOperation):
    """`device.copy` on a stream: starts once every dependency token completed and
    returns at once a token that completes with the copy. The list may be empty.

    ```mlir
    %t = device.copy_async [%t0] %h to %d : memref<4xf32> to memref<4xf32, #vdev.device<"cuda", 0>>
    ```
    """

    name = "device.copy_async"

    dependencies = var_operand_def(TokenType)
    """Work that must complete before the copy starts."""
    source = operand_def(MemRefType)
    destination = operand_def(MemRefType)
    token = result_def(TokenType)
    """Completes when the copy is done."""

    traits = traits_def(_CopyEffect())

    assembly_format = (
        "` ` `[` $dependencies `]` $source `to` $destination attr-dict"
        " `:` type($source) `to` type($destination)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        destination: SSAValue | Operation,
        dependencies: Sequence[SSAValue | Operation] = (),
    ) -> None:
        super().__init__(operands=[dependencies, source, destination], result_types=[TokenType()])

    def verify_(self) -> None:
        _verify_copy_types(_memref(self.source), _memref(self.destination))


@irdl_op_definition
class WaitOp(IRDLOperation):
    """Blocks the host until the given tokens complete (TVM's `StreamSync`).

    Without tokens it is spelled `device.wait all` and waits until every outstanding
    asynchronous copy and launch on every device completed. The keyword is required
    because MLIR syntax is not line-sensitive: a bare `device.wait` followed by
    `%v = ...` on the next line would read `%v` as a token.

    ```mlir
    device.wait %t, %t1
    device.wait all
    ```
    """

    name = "device.wait"

    tokens = var_operand_def(TokenType)
    """The work to wait for; empty means all outstanding work on every device."""

    traits = traits_def(OrdersAllMemory())  # the awaited writes become visible

    def __init__(self, tokens: Sequence[SSAValue | Operation] = ()) -> None:
        super().__init__(operands=[tokens])

    @classmethod
    def parse(cls, parser: Parser) -> WaitOp:
        tokens: list[SSAValue] = []
        if parser.parse_optional_keyword("all") is None:
            tokens = [parser.resolve_operand(n, TokenType()) for n in _parse_wait_tokens(parser)]
        op = cls(tokens)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        if self.tokens:
            printer.print_string(" ")
            printer.print_list(self.tokens, printer.print_operand)
        else:
            printer.print_string(" all")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Runs kernel `@module::@kernel` on a device over a grid of blocks of threads
    (MLIR's `gpu.launch_func`, TVM's packed kernel call).

    The sync form returns when the kernel is done; `async [deps]` starts it once the
    dependencies completed and returns a token at once. Memref arguments must live in
    memory the device's kernels reach; grid and block are three index values each, and
    must equal the kernel's `known_block_size` / `known_grid_size` when it declares them.

    ```mlir
    device.launch @kernels::@add on #vdev.device<"cuda", 0> grid(%g, %c1, %c1)
        block(%b, %c1, %c1) args(%a) : memref<?xf32, #vdev.device<"cuda", 0>>
    ```
    """

    name = "device.launch"

    kernel = prop_def(SymbolRefAttr)
    """The kernel, `@module::@kernel`."""
    device = prop_def(DeviceAttr)
    """Where it runs (device type and id)."""
    dependencies = var_operand_def(TokenType)
    """Work that must complete first (async form only)."""
    grid_x = operand_def(IndexType)
    grid_y = operand_def(IndexType)
    grid_z = operand_def(IndexType)
    block_x = operand_def(IndexType)
    block_y = operand_def(IndexType)
    block_z = operand_def(IndexType)
    args = var_operand_def()
    """Kernel arguments: memrefs, index, integers and floats."""
    token = opt_result_def(TokenType)
    """Completes with the kernel (async form only)."""

    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    traits = traits_def(_LaunchEffect())

    def __init__(
        self,
        kernel: SymbolRefAttr,
        device: DeviceAttr,
        grid: Sequence[SSAValue | Operation],
        block: Sequence[SSAValue | Operation],
        args: Sequence[SSAValue | Operation] = (),
        *,
        is_async: bool = False,
        dependencies: Sequence[SSAValue | Operation] = (),
    ) -> None:
        if len(grid) != 3 or len(block) != 3:
            raise ValueError("grid and block take three index values each (x, y, z)")
        super().__init__(
            operands=[dependencies, *([g] for g in grid), *([b] for b in block), args],
            properties={"kernel": kernel, "device": device},
            result_types=[[TokenType()] if is_async or dependencies else []],
        )

    @property
    def grid(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The number of blocks along x, y, z."""
        return (self.grid_x, self.grid_y, self.grid_z)

    @property
    def block(self) -> tuple[SSAValue, SSAValue, SSAValue]:
        """The number of threads per block along x, y, z."""
        return (self.block_x, self.block_y, self.block_z)

    @property
    def is_async(self) -> bool:
        """Whether this is the `async` form (it returns a token)."""
        return self.token is not None

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        is_async = parser.parse_optional_keyword("async") is not None
        deps: list[UnresolvedOperand] = []
        if is_async:
            deps = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_unresolved_operand
            )
        start = parser.pos
        kernel = parser.parse_attribute()
        if not isinstance(kernel, SymbolRefAttr):
            parser.raise_error("expected a kernel symbol such as @kernels::@add", start, parser.pos)
        parser.parse_keyword("on")
        start = parser.pos
        device = parser.parse_attribute()
        if not isinstance(device, DeviceAttr):
            parser.raise_error(
                'expected a device such as #vdev.device<"cuda", 0>', start, parser.pos
            )
        index = IndexType()
        sizes: list[SSAValue] = []
        for keyword in ("grid", "block"):
            parser.parse_keyword(keyword)
            start = parser.pos
            values = parser.parse_comma_separated_list(
                parser.Delimiter.PAREN, parser.parse_unresolved_operand
            )
            if len(values) != 3:
                parser.raise_error(
                    f"{keyword} takes three index values (x, y, z), got {len(values)}",
                    start,
                    parser.pos,
                )
            sizes += (parser.resolve_operand(v, index) for v in values)
        parser.parse_keyword("args")
        start = parser.pos
        arg_names = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        arg_types: list[Attribute] = []
        if arg_names:
            parser.parse_punctuation(":")
            arg_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(arg_types) != len(arg_names):
            parser.raise_error(
                f"args(...) lists {len(arg_names)} value(s) but {len(arg_types)} type(s)",
                start,
                parser.pos,
            )
        token = TokenType()
        op = cls(
            kernel,
            device,
            sizes[:3],
            sizes[3:],
            [parser.resolve_operand(a, t) for a, t in zip(arg_names, arg_types, strict=True)],
            is_async=is_async,
            dependencies=[parser.resolve_operand(d, token) for d in deps],
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.is_async:
            printer.print_string(" async [")
            printer.print_list(self.dependencies, printer.print_operand)
            printer.print_string("]")
        printer.print_string(" ")
        printer.print_attribute(self.kernel)
        printer.print_string(" on ")
        printer.print_attribute(self.device)
        for keyword, values in (("grid", self.grid), ("block", self.block)):
            printer.print_string(f" {keyword}(")
            printer.print_list(values, printer.print_operand)
            printer.print_string(")")
        printer.print_string(" args(")
        printer.print_list(self.args, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        if self.args:
            printer.print_string(" : ")
            printer.print_list(self.args.types, printer.print_attribute)

    # -- verification ---------------------------------------------------------------------

    def verify_(self) -> None:
        if self.dependencies and self.token is None:
            raise VerifyException("dependencies are only allowed in the async form")
        _require_concrete(self.device, "launch device")
        kernel = self._verify_kernel()
        self._verify_launch_sizes(kernel)
        self._verify_args(kernel)

    def _verify_kernel(self) -> KernelFuncOp:
        try:
            found = SymbolTable.lookup_symbol(self, self.kernel)
        except ValueError:
            found = None
        if found is None:
            raise VerifyException(f"kernel {self.kernel} not found{self._known_kernels_hint()}")
        if not isinstance(found, KernelFuncOp) or not isinstance(
            module := found.parent_op(), KernelModuleOp
        ):
            raise VerifyException(
                f"{self.kernel} is '{found.name}', not a kernel.func inside a kernel.module"
            )
        launch_type = self.device.type_name
        kernel_type = module.target.device_type
        if kernel_type != launch_type:
            raise VerifyException(
                f"kernel {self.kernel} is compiled for {_ir(module.target)} (device type "
                f'"{kernel_type}") but launched on {_ir(self.device)} (device type '
                f'"{launch_type}")'
            )
        return found

    def _known_kernels_hint(self) -> str:
        root = self
        while (parent := root.parent_op()) is not None:
            root = parent
        names = [
            f"@{m.sym_name.data}::@{k.sym_name.data}"
            for m in root.walk()
            if isinstance(m, KernelModuleOp)
            for k in m.kernels
        ]
        return f"; known kernels: {', '.join(names)}" if names else "; there is no kernel.func"

    def _target(self, kernel: KernelFuncOp) -> TargetAttr:
        target = self.device.target_value
        if target is not None:
            return target
        module = kernel.parent_op()
        assert isinstance(module, KernelModuleOp)
        return module.target

    def _verify_launch_sizes(self, kernel: KernelFuncOp) -> None:
        for keyword, values in (("grid", self.grid), ("block", self.block)):
            for axis, value in zip("xyz", values, strict=True):
                size = _constant_index(value)
                if size is not None and size < 1:
                    raise VerifyException(
                        f"{keyword} size along {axis} is {size}; sizes must be at least 1"
                    )
        block = [_constant_index(v) for v in self.block]
        known = known_sizes(kernel)
        for keyword, sizes in (("grid", [_constant_index(v) for v in self.grid]), ("block", block)):
            conflict = launch_size_conflict(f"{self.kernel}", known, keyword, sizes)
            if conflict is not None:
                raise VerifyException(conflict)
        target = self._target(kernel)
        limit = target.get_attr("max_num_threads")
        if not isinstance(limit, int) or isinstance(limit, bool) or any(b is None for b in block):
            return  # unknown block size or no limit: checked when the kernel runs
        threads = 1
        for b in block:
            assert b is not None
            threads *= b
        if threads > limit:
            raise VerifyException(
                f"block of {'x'.join(map(str, block))} = {threads} threads exceeds "
                f"max_num_threads = {limit} of {_ir(target)}"
            )

    def _verify_args(self, kernel: KernelFuncOp) -> None:
        params = kernel.param_types
        where = f"kernel {self.kernel}"
        if len(params) != len(self.args):
            raise VerifyException(
                f"{where} takes {len(params)} argument(s) "
                f"({', '.join(map(str, params))}) but the launch passes {len(self.args)}"
            )
        for i, (param, arg) in enumerate(zip(params, self.args, strict=True)):
            arg_type = arg.type
            if is_memref(param) and is_memref(arg_type):
                self._verify_memref_arg(i, param, arg_type)
            elif param != arg_type:
                raise VerifyException(
                    f"argument {i} of {where} has type {_ir(arg_type)} but the kernel "
                    f"expects {_ir(param)}"
                )

    def _verify_memref_arg(
        self, i: int, param: MemRefType[Attribute], arg: MemRefType[Attribute]
    ) -> None:
        where = f"argument {i} of kernel {self.kernel}"
        mismatch = arg.element_type != param.element_type or len(arg.get_shape()) != len(
            param.get_shape()
        )
        if mismatch or _first_mismatch(arg.get_shape(), param.get_shape()) is not None:
            raise VerifyException(
                f"{where} has type {_ir(arg)} but the kernel expects {_ir(param)} "
                "(shape and element type must agree)"
            )
        param_space = memory_space_of(param)
        memory = memory_space_of(arg)
        if param_space is not None and not _satisfies(memory, param_space):
            raise VerifyException(
                f"{where} lives in {_ir(arg.memory_space)} but the kernel expects memory "
                f"{_ir(param_space)}"
            )
        if not kernel_can_reach(self.device, memory):
            place = "host memory" if memory is None else _ir(memory)
            private = memory is not None and memory.scope in KERNEL_PRIVATE_SCOPES
            remedy = (
                "shared and local memory exist only inside a kernel"
                if private
                else "copy it to the device first"
            )
            raise VerifyException(
                f"{where} ({_ir(arg)}) lives in {place}, which kernels on {_ir(self.device)} "
                f"cannot reach; {remedy}"
            )


@irdl_op_definition
class AttrOp(IRDLOperation):
    """Reads a device attribute (TVM's `DeviceAPI::GetAttr`); names are TVM's
    `DeviceAttrKind` in snake case. Numeric attributes only: the string-valued ones
    (`device_name`, `compute_version`, `max_thread_dimensions`) have no SSA value.

    ```mlir
    %n = device.attr "max_threads_per_block" of #vdev.device<"cuda", 0> : index
    ```
    """

    name = "device.attr"

    kind = prop_def(StringAttr)
    """Which attribute, e.g. "max_threads_per_block"."""
    device = prop_def(DeviceAttr)
    """The queried device (type and id)."""
    result = result_def()

    traits = traits_def(_DeviceQueryEffect(), AlwaysSpeculatable())

    assembly_format = "$kind `of` qualified($device) attr-dict `:` type($result)"

    def __init__(self, attr_name: str, device: DeviceAttr, result_type: Attribute) -> None:
        super().__init__(
            properties={"kind": StringAttr(attr_name), "device": device},
            result_types=[result_type],
        )

    @property
    def attr_name(self) -> str:
        """The attribute's name, e.g. "max_threads_per_block"."""
        return self.kind.data

    def verify_(self) -> None:
        kind = DEVICE_ATTR_KINDS.get(self.attr_name)
        if kind is None:
            raise VerifyException(
                f'unknown device attribute "{self.attr_name}"; valid names: '
                + ", ".join(DEVICE_ATTR_KINDS)
            )
        if kind == "string":
            raise VerifyException(
                f'device attribute "{self.attr_name}" is a string and cannot be an SSA '
                "value; numeric attributes: "
                + ", ".join(k for k, v in DEVICE_ATTR_KINDS.items() if v == "int")
            )
        type_ = self.result.type
        if not (isinstance(type_, IndexType | IntegerType) or isa(type_, AnyFloat)):
            raise VerifyException(
                f"result type {_ir(type_)} is not a number; use index, an integer or a float"
            )
        _require_concrete(self.device, "queried device")


Device = Dialect(
    "device",
    [
        AllocOp,
        FreeOp,
        AllocWorkspaceOp,
        FreeWorkspaceOp,
        ViewOp,
        CopyOp,
        CopyAsyncOp,
        WaitOp,
        LaunchOp,
        AttrOp,
    ],
    [TokenType],
)
