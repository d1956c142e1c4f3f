"""devplan's `linalg` dialect: xDSL's, with the named ops models use that xDSL 0.74 lacks,
and devplan's classes where xDSL's body differs from MLIR's definition.

Each named op is a `linalg.generic` with fixed indexing maps, iterator types and body,
as MLIR's OpDSL (`core_named_ops.py`) defines it. The classes here follow xDSL's
`NamedOperation` interface (`get_indexing_maps()`, `get_iterator_types()`, a hidden body
region built when the op is built or parsed), so xDSL's `linalg-generalize-named-ops`
turns each into the `linalg.generic` MLIR's `linalg-generalize-named-ops` gives:

- contractions (`batch_matmul`, `matvec`, `vecmat`, `dot`, `mmt4d`, and `matmul` in
  place of xDSL's): `out += cast(in0) * cast(in1)`, each input converted to the output's
  element type first (MLIR's `cast_signed`: `arith.extsi`/`trunci` between integers,
  `sitofp` from an integer, `extf`/`truncf` between floats), then multiplied and added in
  the output's type. xDSL's `matmul` multiplies in the inputs' type and adds a value of
  another type, so an `f16 x f16 -> f32` matmul fails to verify there;
- convolutions (`conv_1d`, `conv_2d`, `conv_3d` without strides; `conv_1d_nwc_wcf`,
  `conv_3d_ndhwc_dhwcf`, `depthwise_conv_2d_nhwc_hwc` with optional `strides` and
  `dilations`, one per spatial dimension, default 1): the contraction body over a window,
  an input index `out * stride + window * dilation`;
- poolings (`pooling_nhwc_max`, `pooling_nchw_sum`, `pooling_nhwc_sum`, and
  `pooling_nchw_max` in place of xDSL's): the second input only gives the window's shape;
  the body reduces the input into the output (`maximumf`/`maxsi`, `addf`/`addi`). xDSL's
  `pooling_nchw_max` takes the maximum of the input and the window-shape operand, whose
  contents are unspecified, instead of the output;
- `linalg.div` (`divf`/`divsi`), which xDSL lacks;
- `conv_2d_nchw_fchw_q`, the quantized NCHW convolution (zero points as two scalar
  inputs, subtracted after the casts, as in `quantized_matmul`), which xDSL lacks;
- xDSL's six `conv_2d_*` layouts as devplan's classes: xDSL requires `strides` and
  `dilations` (MLIR defaults them to 1), fails on a float input narrower than the output
  (an assertion) and extends an input already of the output's type (`extsi i32 to i32`);
- xDSL's `add sub mul max min exp log sqrt copy select fill quantized_matmul` with MLIR's
  casts of the inputs to the output's element type: xDSL computes in the inputs' type and
  yields a value of another type (an `i8 + i8 -> i32` add wraps at 8 bits), and its
  `quantized_matmul` extends to i32 whatever the types;
- `linalg.generic` reading MLIR's `-> (tensor<..>, tensor<..>)` for several results
  (xDSL 0.74 prints it but parses only an unparenthesised list), and keeping the
  attributes of its leading dictionary that are not its own.

`MatmulOp` subclasses xDSL's, so `isinstance(op, xdsl.dialects.linalg.ops.MatmulOp)`
holds for devplan's `matmul`; devplan's `pooling_nchw_max` is its own class, with
MLIR's optional `strides`/`dilations` like the other window ops here.
"""

# ruff: noqa: E501  (IR examples in docstrings are long)

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, cast

from xdsl.builder import Builder
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DenseIntElementsAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerType,
    ShapedType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg import Linalg as XdslLinalg
from xdsl.dialects.linalg import ops as linalg_ops
from xdsl.dialects.linalg.abstract_ops import ElementwiseOperation, NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp as XdslGenericOp
from xdsl.dialects.linalg.ops import MatmulOp as XdslMatmulOp
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.irdl import irdl_op_definition, opt_prop_def
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from .dialect import replacing
from .linalg_pack import PackOp, UnPackOp

_PARALLEL = IteratorTypeAttr.parallel()
_REDUCTION = IteratorTypeAttr.reduction()


def cast_signed(builder_value: SSAValue, to: Attribute) -> SSAValue:
    """`builder_value` converted to `to` as MLIR's OpDSL `TypeFn.cast_signed` does, inside an
    implicit region being built (the value itself when the types agree)."""
    source = builder_value.type
    if source == to:
        return builder_value
    if isinstance(source, IntegerType) and isinstance(to, IntegerType):
        if source.bitwidth < to.bitwidth:
            return arith.ExtSIOp(builder_value, to).result  # pyright: ignore[reportUnknownArgumentType]
        return arith.TruncIOp(builder_value, to).result  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(source, IntegerType) and isinstance(to, AnyFloat):
        return arith.SIToFPOp(builder_value, to).result
    if isinstance(source, AnyFloat) and isinstance(to, AnyFloat):
        if source.bitwidth < to.bitwidth:
            return arith.ExtFOp(builder_value, to).result
        return arith.TruncFOp(builder_value, to).result
    if isinstance(source, AnyFloat) and isinstance(to, IntegerType):
        return arith.FPToSIOp(builder_value, to).result  # pyright: ignore[reportUnknownArgumentType]
    raise VerifyException(f"no signed cast from {source} to {to} in a linalg named op")


def _element_types(operands: Sequence[SSAValue]) -> list[Attribute]:
    types: list[Attribute] = []
    for operand in operands:
        type_ = operand.type
        element: Attribute = (
            cast(Any, type_).get_element_type() if isinstance(type_, ShapedType) else type_
        )
        types.append(element)
    return types


def _is_tensor(type_: Attribute) -> bool:
    return isinstance(type_, TensorType)


def _is_float(type_: Attribute) -> bool:
    return isinstance(type_, AnyFloat)


def _contraction_region(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
    """`out + cast(in0) * cast(in1)` in the output's element type."""
    arg_types = _element_types((*inputs, *outputs))
    out_type = arg_types[-1]
    mul, add = (arith.MulfOp, arith.AddfOp) if _is_float(out_type) else (arith.MuliOp, arith.AddiOp)

    @Builder.implicit_region(arg_types)
    def body(args: tuple[BlockArgument, ...]) -> None:
        product = mul(cast_signed(args[0], out_type), cast_signed(args[1], out_type))
        YieldOp(add(args[-1], product))

    return body


class _NamedOp(NamedOperation):
    """A named op with fixed maps, built from `ins`/`outs` (results: the tensor outputs)."""

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue] = (),
        res: Sequence[Attribute] | None = None,
        attributes: dict[str, Attribute] | None = None,
    ):
        result_types: list[Attribute] = (
            list(res) if res is not None else [o.type for o in outputs if _is_tensor(o.type)]
        )
        super().__init__(
            ins=inputs,
            outs=outputs,
            result_types=result_types,
            attributes=attributes,
            hidden_region=self.get_hidden_region(inputs, outputs),
        )

    ITERATORS: ClassVar[str] = ""
    """One letter a loop: `p` parallel, `r` reduction."""

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr(_PARALLEL if c == "p" else _REDUCTION for c in self.ITERATORS)

    INPUTS: ClassVar[int] = 2
    """How many inputs the op takes (a quantized op's zero points count)."""

    def verify_(self) -> None:
        if len(self.inputs) != self.INPUTS or len(self.outputs) != 1:
            raise VerifyException(
                f"takes {self.INPUTS} inputs and 1 output, got {len(self.inputs)} and "
                f"{len(self.outputs)}"
            )
        super().verify_()


def _quantized_region(inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
    """`out + (cast(a) - cast(a_zero)) * (cast(b) - cast(b_zero))` in the output's type
    (inputs a, b, a_zero, b_zero)."""
    arg_types = _element_types((*inputs, *outputs))
    out_type = arg_types[-1]

    @Builder.implicit_region(arg_types)
    def body(args: tuple[BlockArgument, ...]) -> None:
        a, b, a_zero, b_zero = (cast_signed(x, out_type) for x in args[:4])
        product = arith.MuliOp(arith.SubiOp(a, a_zero), arith.SubiOp(b, b_zero))
        YieldOp(arith.AddiOp(args[-1], product))

    return body


def _maps(num_dims: int, *operands: Sequence[AffineExpr]) -> tuple[AffineMap, ...]:
    return tuple(AffineMap(num_dims, 0, tuple(results)) for results in operands)


def _dims(count: int) -> list[AffineExpr]:
    return [AffineDimExpr(i) for i in range(count)]


class _ContractionOp(_NamedOp):
    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _contraction_region(inputs, outputs)


class MatmulOp(XdslMatmulOp):
    """`C[m, n] += cast(A[m, k]) * cast(B[k, n])`, the inputs converted to `C`'s element
    type before the multiply (so `f16 x f16 -> f32` and `i8 x i8 -> i32` multiply and
    add in f32 and i32).

    ```mlir
    %c = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x2xf16>) outs(%z : tensor<4x2xf32>) -> tensor<4x2xf32>
    ```
    """

    name = "linalg.matmul"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _contraction_region(inputs, outputs)


@irdl_op_definition
class BatchMatmulOp(_ContractionOp):
    """`C[b, m, n] += cast(A[b, m, k]) * cast(B[b, k, n])`.

    ```mlir
    %c = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%z : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    ```
    """

    name = "linalg.batch_matmul"
    ITERATORS: ClassVar[str] = "pppr"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        b, m, n, k = _dims(4)
        return _maps(4, (b, m, k), (b, k, n), (b, m, n))


@irdl_op_definition
class MatvecOp(_ContractionOp):
    """`x[m] += cast(A[m, n]) * cast(y[n])`.

    ```mlir
    %x = linalg.matvec ins(%a, %y : tensor<4x8xf32>, tensor<8xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.matvec"
    ITERATORS: ClassVar[str] = "pr"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        m, n = _dims(2)
        return _maps(2, (m, n), (n,), (m,))


@irdl_op_definition
class VecmatOp(_ContractionOp):
    """`x[n] += cast(y[m]) * cast(A[m, n])`.

    ```mlir
    %x = linalg.vecmat ins(%y, %a : tensor<8xf32>, tensor<8x4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.vecmat"
    ITERATORS: ClassVar[str] = "pr"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, m = _dims(2)
        return _maps(2, (m,), (m, n), (n,))


@irdl_op_definition
class DotOp(_ContractionOp):
    """`C[] += cast(A[m]) * cast(B[m])`: a dot product into a rank-0 tensor.

    ```mlir
    %c = linalg.dot ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%z : tensor<f32>) -> tensor<f32>
    ```
    """

    name = "linalg.dot"
    ITERATORS: ClassVar[str] = "r"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        (m,) = _dims(1)
        return _maps(1, (m,), (m,), ())


@irdl_op_definition
class Mmt4dOp(_ContractionOp):
    """A matmul of tiled matrices with the right-hand side transposed:
    `acc[m, n, m0, n0] += cast(lhs[m, k, m0, k0]) * cast(rhs[n, k, n0, k0])`.

    ```mlir
    %c = linalg.mmt4d ins(%a, %b : tensor<2x3x4x5xf32>, tensor<6x3x7x5xf32>) outs(%z : tensor<2x6x4x7xf32>) -> tensor<2x6x4x7xf32>
    ```
    """

    name = "linalg.mmt4d"
    ITERATORS: ClassVar[str] = "pprppr"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        m, n, k, m0, n0, k0 = _dims(6)
        return _maps(6, (m, k, m0, k0), (n, k, n0, k0), (m, n, m0, n0))


class _WindowOp(_NamedOp):
    """A named op over a sliding window: `SPATIAL` spatial dimensions, each input index
    `out * stride + window * dilation`; `strides` and `dilations` (one each a spatial
    dimension, default 1) are optional, as in MLIR. Ops without them in MLIR (`conv_2d`)
    set `STRIDED = False` and reject them."""

    SPATIAL: ClassVar[int] = 0
    STRIDED: ClassVar[bool] = True

    strides = opt_prop_def(DenseIntElementsAttr)
    dilations = opt_prop_def(DenseIntElementsAttr)

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue] = (),
        res: Sequence[Attribute] | None = None,
        attributes: dict[str, Attribute] | None = None,
        *,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
    ):
        super().__init__(inputs, outputs, res, attributes)
        for name, values in (("strides", strides), ("dilations", dilations)):
            if values is not None:
                self.properties[name] = DenseIntOrFPElementsAttr.from_list(
                    TensorType(i64, [len(values)]), list(values)
                )

    def _window_values(self, attr: DenseIntElementsAttr | None) -> tuple[int, ...]:
        if attr is None:
            return (1,) * self.SPATIAL
        values = tuple(int(v) for v in attr.get_values())
        return values * self.SPATIAL if len(values) == 1 else values

    def window_strides(self) -> tuple[int, ...]:
        """The stride of each spatial dimension (1 where not given)."""
        return self._window_values(self.strides)

    def window_dilations(self) -> tuple[int, ...]:
        """The dilation of each spatial dimension (1 where not given)."""
        return self._window_values(self.dilations)

    def _windowed(
        self, outs: Sequence[AffineExpr], windows: Sequence[AffineExpr]
    ) -> list[AffineExpr]:
        return [
            o * s + w * d
            for o, w, s, d in zip(
                outs, windows, self.window_strides(), self.window_dilations(), strict=True
            )
        ]

    def verify_(self) -> None:
        for name, attr in (("strides", self.strides), ("dilations", self.dilations)):
            if attr is None:
                continue
            if not self.STRIDED:
                raise VerifyException(f"takes no '{name}' attribute (MLIR's op has none)")
            values = [int(v) for v in attr.get_values()]
            shape = tuple(cast(Any, attr).get_type().get_shape())
            if shape != (self.SPATIAL,) or any(v < 1 for v in values):
                raise VerifyException(
                    f"needs '{name}' of {self.SPATIAL} positive i64 "
                    f"(dense<..> : tensor<{self.SPATIAL}xi64>), got {attr}"
                )
        super().verify_()


class _ConvOp(_WindowOp):
    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _contraction_region(inputs, outputs)


@irdl_op_definition
class Conv1DOp(_ConvOp):
    """`O[ow] += cast(I[ow + kw]) * cast(K[kw])`: a 1-D convolution without channels.

    ```mlir
    %o = linalg.conv_1d ins(%i, %k : tensor<8xf32>, tensor<3xf32>) outs(%z : tensor<6xf32>) -> tensor<6xf32>
    ```
    """

    name = "linalg.conv_1d"
    ITERATORS: ClassVar[str] = "pr"
    SPATIAL: ClassVar[int] = 1
    STRIDED: ClassVar[bool] = False

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        ow, kw = _dims(2)
        return _maps(2, (ow + kw,), (kw,), (ow,))


@irdl_op_definition
class Conv2DOp(_ConvOp):
    """`O[oh, ow] += cast(I[oh + kh, ow + kw]) * cast(K[kh, kw])`.

    ```mlir
    %o = linalg.conv_2d ins(%i, %k : tensor<6x6xf32>, tensor<3x3xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
    ```
    """

    name = "linalg.conv_2d"
    ITERATORS: ClassVar[str] = "pprr"
    SPATIAL: ClassVar[int] = 2
    STRIDED: ClassVar[bool] = False

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        oh, ow, kh, kw = _dims(4)
        return _maps(4, (oh + kh, ow + kw), (kh, kw), (oh, ow))


@irdl_op_definition
class Conv3DOp(_ConvOp):
    """`O[od, oh, ow] += cast(I[od + kd, oh + kh, ow + kw]) * cast(K[kd, kh, kw])`.

    ```mlir
    %o = linalg.conv_3d ins(%i, %k : tensor<4x4x4xf32>, tensor<2x2x2xf32>) outs(%z : tensor<3x3x3xf32>) -> tensor<3x3x3xf32>
    ```
    """

    name = "linalg.conv_3d"
    ITERATORS: ClassVar[str] = "ppprrr"
    SPATIAL: ClassVar[int] = 3
    STRIDED: ClassVar[bool] = False

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        od, oh, ow, kd, kh, kw = _dims(6)
        return _maps(6, (od + kd, oh + kh, ow + kw), (kd, kh, kw), (od, oh, ow))


@irdl_op_definition
class Conv1DNwcWcfOp(_ConvOp):
    """`O[n, ow, f] += cast(I[n, ow * s + kw * d, c]) * cast(K[kw, c, f])`.

    ```mlir
    %o = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>} ins(%i, %k : tensor<1x9x2xf32>, tensor<3x2x4xf32>) outs(%z : tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    ```
    """

    name = "linalg.conv_1d_nwc_wcf"
    ITERATORS: ClassVar[str] = "ppprr"
    SPATIAL: ClassVar[int] = 1

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, ow, f, kw, c = _dims(5)
        (w,) = self._windowed((ow,), (kw,))
        return _maps(5, (n, w, c), (kw, c, f), (n, ow, f))


@irdl_op_definition
class Conv3DNdhwcDhwcfOp(_ConvOp):
    """`O[n, od, oh, ow, f] += cast(I[n, od*s+kd*d, oh*s+kh*d, ow*s+kw*d, c]) *
    cast(K[kd, kh, kw, c, f])`.

    ```mlir
    %o = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>} ins(%i, %k : tensor<1x4x4x4x2xf32>, tensor<2x2x2x2x3xf32>) outs(%z : tensor<1x3x3x3x3xf32>) -> tensor<1x3x3x3x3xf32>
    ```
    """

    name = "linalg.conv_3d_ndhwc_dhwcf"
    ITERATORS: ClassVar[str] = "pppppr" + "rrr"
    SPATIAL: ClassVar[int] = 3

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, od, oh, ow, f, kd, kh, kw, c = _dims(9)
        d, h, w = self._windowed((od, oh, ow), (kd, kh, kw))
        return _maps(9, (n, d, h, w, c), (kd, kh, kw, c, f), (n, od, oh, ow, f))


@irdl_op_definition
class DepthwiseConv2DNhwcHwcOp(_ConvOp):
    """`O[n, oh, ow, c] += cast(I[n, oh*s+kh*d, ow*s+kw*d, c]) * cast(K[kh, kw, c])`:
    each channel convolved with its own filter.

    ```mlir
    %o = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x5x5x3xf32>, tensor<2x2x3xf32>) outs(%z : tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
    ```
    """

    name = "linalg.depthwise_conv_2d_nhwc_hwc"
    ITERATORS: ClassVar[str] = "pppprr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, c, kh, kw = _dims(6)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(6, (n, h, w, c), (kh, kw, c), (n, oh, ow, c))


@irdl_op_definition
class Conv2DNchwFchwOp(_ConvOp):
    """`O[n, f, oh, ow] += cast(I[n, c, oh*s+kh*d, ow*s+kw*d]) * cast(K[f, c, kh, kw])`.

    ```mlir
    %o = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%z : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    ```
    """

    name = "linalg.conv_2d_nchw_fchw"
    ITERATORS: ClassVar[str] = "pppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, f, oh, ow, c, kh, kw = _dims(7)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(7, (n, c, h, w), (f, c, kh, kw), (n, f, oh, ow))


@irdl_op_definition
class Conv2DNchwFchwQOp(_ConvOp):
    """`O[n, f, oh, ow] += (cast(I[n, c, oh*s+kh*d, ow*s+kw*d]) - cast(IZp)) *
    (cast(K[f, c, kh, kw]) - cast(KZp))`: the quantized NCHW convolution, the zero points
    two scalar inputs after the image and the filter.

    ```mlir
    %o = linalg.conv_2d_nchw_fchw_q ins(%i, %k, %iz, %kz : tensor<1x2x3x3xi8>, tensor<2x2x2x2xi8>, i32, i32) outs(%z : tensor<1x2x2x2xi32>) -> tensor<1x2x2x2xi32>
    ```
    """

    name = "linalg.conv_2d_nchw_fchw_q"
    INPUTS: ClassVar[int] = 4
    ITERATORS: ClassVar[str] = "pppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, f, oh, ow, c, kh, kw = _dims(7)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(7, (n, c, h, w), (f, c, kh, kw), (), (), (n, f, oh, ow))

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _quantized_region(inputs, outputs)


@irdl_op_definition
class Conv2DNhwcHwcfOp(_ConvOp):
    """`O[n, oh, ow, f] += cast(I[n, oh*s+kh*d, ow*s+kw*d, c]) * cast(K[kh, kw, c, f])`.

    ```mlir
    %o = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%z : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
    ```
    """

    name = "linalg.conv_2d_nhwc_hwcf"
    ITERATORS: ClassVar[str] = "pppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, f, kh, kw, c = _dims(7)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(7, (n, h, w, c), (kh, kw, c, f), (n, oh, ow, f))


@irdl_op_definition
class Conv2DNhwcFhwcOp(_ConvOp):
    """`O[n, oh, ow, f] += cast(I[n, oh*s+kh*d, ow*s+kw*d, c]) * cast(K[f, kh, kw, c])`.

    ```mlir
    %o = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) outs(%z : tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
    ```
    """

    name = "linalg.conv_2d_nhwc_fhwc"
    ITERATORS: ClassVar[str] = "pppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, f, kh, kw, c = _dims(7)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(7, (n, h, w, c), (f, kh, kw, c), (n, oh, ow, f))


@irdl_op_definition
class Conv2DNgchwFgchwOp(_ConvOp):
    """Grouped: `O[n, g, fg, oh, ow] += cast(I[n, g, c, oh*s+kh*d, ow*s+kw*d]) *
    cast(K[fg, g, c, kh, kw])`.

    ```mlir
    %o = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x2x3x4x4xf32>, tensor<5x2x3x2x2xf32>) outs(%z : tensor<1x2x5x3x3xf32>) -> tensor<1x2x5x3x3xf32>
    ```
    """

    name = "linalg.conv_2d_ngchw_fgchw"
    ITERATORS: ClassVar[str] = "ppppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, g, fg, oh, ow, c, kh, kw = _dims(8)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(8, (n, g, c, h, w), (fg, g, c, kh, kw), (n, g, fg, oh, ow))


@irdl_op_definition
class Conv2DNgchwGfchwOp(_ConvOp):
    """Grouped: `O[n, g, fg, oh, ow] += cast(I[n, g, c, oh*s+kh*d, ow*s+kw*d]) *
    cast(K[g, fg, c, kh, kw])`.

    ```mlir
    %o = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x2x3x4x4xf32>, tensor<2x5x3x2x2xf32>) outs(%z : tensor<1x2x5x3x3xf32>) -> tensor<1x2x5x3x3xf32>
    ```
    """

    name = "linalg.conv_2d_ngchw_gfchw"
    ITERATORS: ClassVar[str] = "ppppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, g, fg, oh, ow, c, kh, kw = _dims(8)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(8, (n, g, c, h, w), (g, fg, c, kh, kw), (n, g, fg, oh, ow))


@irdl_op_definition
class Conv2DNhwgcGfhwcOp(_ConvOp):
    """Grouped: `O[n, oh, ow, g, fg] += cast(I[n, oh*s+kh*d, ow*s+kw*d, g, c]) *
    cast(K[g, fg, kh, kw, c])`.

    ```mlir
    %o = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %k : tensor<1x4x4x2x3xf32>, tensor<2x5x2x2x3xf32>) outs(%z : tensor<1x3x3x2x5xf32>) -> tensor<1x3x3x2x5xf32>
    ```
    """

    name = "linalg.conv_2d_nhwgc_gfhwc"
    ITERATORS: ClassVar[str] = "ppppprrr"
    SPATIAL: ClassVar[int] = 2

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, g, fg, kh, kw, c = _dims(8)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(8, (n, h, w, g, c), (g, fg, kh, kw, c), (n, oh, ow, g, fg))


class _PoolingOp(_WindowOp):
    """`O = reduce(O, cast(I[window]))` over a 2-D window whose shape the second input
    gives (its contents are not read)."""

    SPATIAL: ClassVar[int] = 2
    ITERATORS: ClassVar[str] = "pppprr"
    REDUCE: ClassVar[str] = "max"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = _element_types((*inputs, *outputs))
        out_type = arg_types[-1]
        if cls.REDUCE == "max":
            combine = arith.MaximumfOp if _is_float(out_type) else arith.MaxSIOp
        else:
            combine = arith.AddfOp if _is_float(out_type) else arith.AddiOp

        @Builder.implicit_region(arg_types)
        def body(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(combine(args[-1], cast_signed(args[0], out_type)))

        return body


@irdl_op_definition
class PoolingNchwMaxOp(_PoolingOp):
    """`O[n, c, oh, ow] = max(O[n, c, oh, ow], I[n, c, oh*s+kh*d, ow*s+kw*d])` over the
    window `kh x kw`.

    ```mlir
    %o = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %w : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    ```
    """

    name = "linalg.pooling_nchw_max"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, c, oh, ow, kh, kw = _dims(6)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(6, (n, c, h, w), (kh, kw), (n, c, oh, ow))


@irdl_op_definition
class PoolingNhwcMaxOp(_PoolingOp):
    """`O[n, oh, ow, c] = max(O[n, oh, ow, c], I[n, oh*s+kh*d, ow*s+kw*d, c])`.

    ```mlir
    %o = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %w : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    ```
    """

    name = "linalg.pooling_nhwc_max"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, c, kh, kw = _dims(6)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(6, (n, h, w, c), (kh, kw), (n, oh, ow, c))


@irdl_op_definition
class PoolingNchwSumOp(_PoolingOp):
    """`O[n, c, oh, ow] += cast(I[n, c, oh*s+kh*d, ow*s+kw*d])`.

    ```mlir
    %o = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%z : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    ```
    """

    name = "linalg.pooling_nchw_sum"
    REDUCE: ClassVar[str] = "sum"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, c, oh, ow, kh, kw = _dims(6)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(6, (n, c, h, w), (kh, kw), (n, c, oh, ow))


@irdl_op_definition
class PoolingNhwcSumOp(_PoolingOp):
    """`O[n, oh, ow, c] += cast(I[n, oh*s+kh*d, ow*s+kw*d, c])`.

    ```mlir
    %o = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %w : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
    ```
    """

    name = "linalg.pooling_nhwc_sum"
    REDUCE: ClassVar[str] = "sum"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, c, kh, kw = _dims(6)
        h, w = self._windowed((oh, ow), (kh, kw))
        return _maps(6, (n, h, w, c), (kh, kw), (n, oh, ow, c))


@irdl_op_definition
class DivOp(ElementwiseOperation):
    """`O = I0 / I1` elementwise (`arith.divf` on floats, `arith.divsi` on integers).

    ```mlir
    %o = linalg.div ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.div"

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        outputs: Sequence[SSAValue] = (),
        res: Sequence[Attribute] | None = None,
        attributes: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            ins=inputs,
            outs=outputs,
            result_types=res if res is not None else [o.type for o in outputs],
            attributes=attributes,
            hidden_region=self.get_hidden_region(inputs, outputs),
        )

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = _element_types((*inputs, *outputs))
        div = arith.DivfOp if _is_float(arg_types[-1]) else arith.DivSIOp

        @Builder.implicit_region(arg_types)
        def body(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(div(args[0], args[1]))

        return body


def _cast_inputs_region(
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    compute: Callable[[Attribute, list[SSAValue]], SSAValue],
    uncast: int = 0,
) -> Region:
    """A body yielding `compute(output type, inputs)`, each input but the first `uncast`
    converted to the output's element type first (MLIR's `cast_signed`)."""
    arg_types = _element_types((*inputs, *outputs))
    out_type = arg_types[-1]

    @Builder.implicit_region(arg_types)
    def body(args: tuple[BlockArgument, ...]) -> None:
        values = [
            a if i < uncast else cast_signed(a, out_type) for i, a in enumerate(args[: len(inputs)])
        ]
        YieldOp(compute(out_type, values))

    return body


def _binary(
    float_op: type[arith.FloatingPointLikeBinaryOperation],
    int_op: type[arith.SignlessIntegerBinaryOperation],
) -> Callable[[Attribute, list[SSAValue]], SSAValue]:
    def compute(out_type: Attribute, values: list[SSAValue]) -> SSAValue:
        op = float_op if _is_float(out_type) else int_op
        return op(values[0], values[1]).result

    return compute


class AddOp(linalg_ops.AddOp):
    """`O = cast(I0) + cast(I1)` elementwise, in the output's type.

    ```mlir
    %o = linalg.add ins(%a, %b : tensor<4xi8>, tensor<4xi8>) outs(%z : tensor<4xi32>) -> tensor<4xi32>
    ```
    """

    name = "linalg.add"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _binary(arith.AddfOp, arith.AddiOp))


class SubOp(linalg_ops.SubOp):
    """`O = cast(I0) - cast(I1)` elementwise, in the output's type.

    ```mlir
    %o = linalg.sub ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.sub"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _binary(arith.SubfOp, arith.SubiOp))


class MulOp(linalg_ops.MulOp):
    """`O = cast(I0) * cast(I1)` elementwise, in the output's type.

    ```mlir
    %o = linalg.mul ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.mul"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _binary(arith.MulfOp, arith.MuliOp))


class MaxOp(linalg_ops.MaxOp):
    """`O = max(cast(I0), cast(I1))` elementwise (`maximumf`, `maxsi`).

    ```mlir
    %o = linalg.max ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.max"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _binary(arith.MaximumfOp, arith.MaxSIOp))


class MinOp(linalg_ops.MinOp):
    """`O = min(cast(I0), cast(I1))` elementwise (`minimumf`, `minsi`).

    ```mlir
    %o = linalg.min ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.min"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _binary(arith.MinimumfOp, arith.MinSIOp))


def _unary(
    op: type[math.FloatingPointLikeUnaryMathOperation],
) -> Callable[[Attribute, list[SSAValue]], SSAValue]:
    return lambda _, values: op(values[0]).result


class ExpOp(linalg_ops.ExpOp):
    """`O = exp(cast(I))` elementwise.

    ```mlir
    %o = linalg.exp ins(%a : tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.exp"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _unary(math.ExpOp))


class LogOp(linalg_ops.LogOp):
    """`O = log(cast(I))` elementwise.

    ```mlir
    %o = linalg.log ins(%a : tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.log"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _unary(math.LogOp))


class SqrtOp(linalg_ops.SqrtOp):
    """`O = sqrt(cast(I))` elementwise.

    ```mlir
    %o = linalg.sqrt ins(%a : tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.sqrt"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, _unary(math.SqrtOp))


class CopyOp(linalg_ops.CopyOp):
    """`O = cast(I)` elementwise: a copy converting to the output's element type.

    ```mlir
    %o = linalg.copy ins(%a : tensor<4xf16>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.copy"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, lambda _, values: values[0])


class SelectOp(linalg_ops.SelectOp):
    """`O = C ? cast(I0) : cast(I1)` elementwise (the condition `i1` is not cast).

    ```mlir
    %o = linalg.select ins(%c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.select"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(
            inputs, outputs, lambda _, v: arith.SelectOp(v[0], v[1], v[2]).result, uncast=1
        )


class FillOp(linalg_ops.FillOp):
    """`O = cast(value)` at every element.

    ```mlir
    %o = linalg.fill ins(%v : f64) outs(%z : tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "linalg.fill"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _cast_inputs_region(inputs, outputs, lambda _, values: values[0])


class QuantizedMatmulOp(linalg_ops.QuantizedMatmulOp):
    """`C[m, n] += (cast(A[m, k]) - cast(AZp)) * (cast(B[k, n]) - cast(BZp))`, every
    input converted to `C`'s element type.

    ```mlir
    %c = linalg.quantized_matmul ins(%a, %b, %az, %bz : tensor<3x4xi8>, tensor<4x2xi8>, i32, i32) outs(%z : tensor<3x2xi32>) -> tensor<3x2xi32>
    ```
    """

    name = "linalg.quantized_matmul"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _quantized_region(inputs, outputs)


_ITERATORS = {
    "parallel": IteratorTypeAttr.parallel,
    "reduction": IteratorTypeAttr.reduction,
    "window": IteratorTypeAttr.window,
}


class GenericOp(XdslGenericOp):
    """A loop nest over the iteration space its `iterator_types` give: at each point the
    body reads the inputs' and outputs' elements its `indexing_maps` select and yields the
    outputs' new elements.

    ```mlir
    %s:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%a, %b : tensor<4xf32>, tensor<4xf32>) {...} -> (tensor<4xf32>, tensor<4xf32>)
    ```
    """

    name = "linalg.generic"

    @classmethod
    def parse(cls, parser: Parser) -> GenericOp:
        start = parser.pos
        if parser.lexer.input.content.startswith("#", start):  # a trait: an attribute alias
            trait = parser.parse_attribute()
            if not isinstance(trait, DictionaryAttr):
                parser.raise_error(
                    f"'linalg.generic' takes a dictionary of attributes, not {trait}",
                    start, parser.pos,
                )  # fmt: skip
            attrs = dict(trait.data)
        else:
            attrs = dict(parser.parse_optional_attr_dict())
        maps, iterators = attrs.pop("indexing_maps", None), attrs.pop("iterator_types", None)
        if not isinstance(maps, ArrayAttr) or not isinstance(iterators, ArrayAttr):
            parser.raise_error(
                "'linalg.generic' needs 'indexing_maps' and 'iterator_types' arrays",
                start,
                parser.pos,
            )
        iterator_attrs: list[Attribute] = []
        for iterator in cast(ArrayAttr[Attribute], iterators).data:
            # xDSL's "window" too: its pooling ops generalise to it (devplan lowers only
            # parallel and reduction, and says so at the op).
            if isinstance(iterator, StringAttr) and iterator.data in _ITERATORS:
                iterator = _ITERATORS[iterator.data]()
            if not isinstance(iterator, IteratorTypeAttr):
                parser.raise_error(f"unknown iterator type {iterator}", start, parser.pos)
            iterator_attrs.append(iterator)
        doc, library_call = attrs.pop("doc", None), attrs.pop("library_call", None)
        ins, outs = _parse_operands(parser, "ins"), _parse_operands(parser, "outs")
        if parser.parse_optional_keyword("attrs"):
            parser.parse_punctuation("=")
            attrs |= parser.expect(parser.parse_optional_attr_dict, "expected attributes")
        body = parser.parse_region()
        result_types: list[Attribute] = []
        if parser.parse_optional_punctuation("->"):
            listed = parser.parse_optional_comma_separated_list(
                Parser.Delimiter.PAREN, parser.parse_type
            )
            if listed is None:  # xDSL's spelling: `-> type, type` without parentheses
                listed = [parser.parse_type()]
                while parser.parse_optional_punctuation(","):
                    listed.append(parser.parse_type())
            result_types = list[Attribute](listed)
        op = cls(
            ins,
            outs,
            body,
            cast(ArrayAttr[AffineMapAttr], maps),
            iterator_attrs,
            result_types,
            cast(StringAttr | None, doc),
            cast(StringAttr | None, library_call),
        )
        op.attributes |= attrs
        return op


def _parse_operands(parser: Parser, keyword: str) -> Sequence[SSAValue]:
    """`keyword(%a, %b : type, type)`, or nothing when the keyword is absent."""
    start = parser.pos
    if not parser.parse_optional_characters(keyword):
        return ()
    parser.parse_punctuation("(")
    names = parser.parse_comma_separated_list(
        Parser.Delimiter.NONE, parser.parse_unresolved_operand
    )
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return parser.resolve_operands(names, types, start)


NAMED_OPS: tuple[type[NamedOperation], ...] = (
    MatmulOp, BatchMatmulOp, MatvecOp, VecmatOp, DotOp, Mmt4dOp,
    Conv1DOp, Conv2DOp, Conv3DOp, Conv1DNwcWcfOp, Conv3DNdhwcDhwcfOp,
    DepthwiseConv2DNhwcHwcOp, Conv2DNchwFchwOp, Conv2DNchwFchwQOp, Conv2DNhwcHwcfOp, Conv2DNhwcFhwcOp,
    Conv2DNgchwFgchwOp, Conv2DNgchwGfchwOp, Conv2DNhwgcGfhwcOp,
    PoolingNchwMaxOp, PoolingNhwcMaxOp, PoolingNchwSumOp, PoolingNhwcSumOp, DivOp,
    AddOp, SubOp, MulOp, MaxOp, MinOp, ExpOp, LogOp, SqrtOp, CopyOp, SelectOp, FillOp,
    QuantizedMatmulOp,
)  # fmt: skip
"""devplan's named op classes, in place of or beside xDSL's."""

Linalg = replacing(XdslLinalg, [*NAMED_OPS, GenericOp, PackOp, UnPackOp])
"""xDSL's `linalg` dialect with devplan's named ops, `linalg.pack` and `linalg.unpack`."""
