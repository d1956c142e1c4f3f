"""The oracle `devplan.reference.program.evaluate`: level-1 programs on NumPy, MLIR's semantics."""

# ruff: noqa: E501  (IR lines in test programs are long)

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import devplan
from devplan.diagnostics import DevplanError
from devplan.reference.program import ReferenceError, evaluate


def run(body: str, signature: str, inputs: list[object]) -> list[object]:
    return evaluate(devplan.parse(f"func.func @main{signature} {{\n{body}\n}}"), inputs)


def test_integers_wrap_at_their_width() -> None:
    (out,) = run(
        "  %s = arith.addi %a, %a : tensor<2xi8>\n  func.return %s : tensor<2xi8>",
        "(%a: tensor<2xi8>) -> tensor<2xi8>",
        [np.array([100, -100], np.int8)],
    )
    np.testing.assert_array_equal(out, np.array([-56, 56], np.int8))


def test_signed_division_truncates_and_remainder_takes_the_dividends_sign() -> None:
    a, b = np.array([7, -7, 7, -7], np.int32), np.array([2, 2, -2, -2], np.int32)
    q, r = run(
        "  %q = arith.divsi %a, %b : tensor<4xi32>\n  %r = arith.remsi %a, %b : tensor<4xi32>\n"
        "  func.return %q, %r : tensor<4xi32>, tensor<4xi32>",
        "(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)",
        [a, b],
    )
    np.testing.assert_array_equal(q, [3, -3, -3, 3])
    np.testing.assert_array_equal(r, [1, -1, 1, -1])


def test_unsigned_ops_see_the_bits_as_unsigned() -> None:
    (out,) = run(
        "  %m = arith.maxui %a, %b : tensor<2xi32>\n  func.return %m : tensor<2xi32>",
        "(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32>",
        [np.array([-1, 3], np.int32), np.array([5, 2], np.int32)],
    )
    np.testing.assert_array_equal(out, [-1, 3])


def test_division_by_zero_is_an_error_at_the_op() -> None:
    with pytest.raises(
        devplan.DevplanError, match=r"<string>:2:3: error: 'arith.divsi' divides by zero"
    ):
        run(
            "  %q = arith.divsi %a, %a : tensor<2xi32>\n  func.return %q : tensor<2xi32>",
            "(%a: tensor<2xi32>) -> tensor<2xi32>",
            [np.array([1, 0], np.int32)],
        )


def test_matmul_adds_the_product_to_its_output_and_fill_and_empty_make_tensors() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((3, 2), np.float32)
    (out,) = run(
        "  %one = arith.constant 1.0 : f32\n"
        "  %e = tensor.empty() : tensor<2x2xf32>\n"
        "  %f = linalg.fill ins(%one : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>\n"
        "  %m = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>\n"
        "  func.return %m : tensor<2x2xf32>",
        "(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32>",
        [a, b],
    )
    np.testing.assert_array_equal(out, a @ b + 1)


def test_placement_is_ignored_and_control_flow_and_calls_are_followed() -> None:
    module = devplan.parse(
        """
func.func @double(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = arith.addf %x, %x : tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @main(%a: tensor<3xf32>, %n: index, %flag: i1) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = vdev.on_device %a to #vdev.device<"cuda", 0> : tensor<3xf32>
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %g) -> (tensor<3xf32>) {
    %d = func.call @double(%acc) : (tensor<3xf32>) -> tensor<3xf32>
    scf.yield %d : tensor<3xf32>
  }
  %r = scf.if %flag -> (tensor<3xf32>) {
    %k = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %s = arith.subf %l, %k : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  } else {
    scf.yield %l : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
"""
    )
    a = np.ones(3, np.float32)
    np.testing.assert_array_equal(evaluate(module, [a, 3, True])[0], [7, 6, 5])
    np.testing.assert_array_equal(evaluate(module, [a, 0, False])[0], [1, 1, 1])


def test_inputs_of_the_wrong_shape_are_refused_naming_the_argument() -> None:
    module = devplan.parse("func.func @main(%a: tensor<3xf32>) {\n  func.return\n}")
    with pytest.raises(
        ReferenceError,
        match=r"argument 0 of @main is tensor<3xf32>, got an array of float32 with shape \(4,\)",
    ):
        evaluate(module, [np.ones(4, np.float32)])


def _identity(type_: str) -> str:
    return f"func.func @main(%x: {type_}) -> {type_} {{\n  func.return %x : {type_}\n}}\n"


@pytest.mark.parametrize(
    ("type_", "value", "problem"),
    [  # each ran before: as 1, 5, 1, inf and nan; 300 and 10**400 raised OverflowError
        ("i32", 1.5, "is i32, got float 1.5"),
        ("i32", "5", "is i32, got str '5'"),
        ("i32", True, "is i32, got bool True"),
        ("f32", 1e39, "is f32, and 1e+39 does not fit in it"),
        ("f32", None, "is f32, got NoneType None"),
        ("i8", 300, "is i8, and 300 does not fit in it (valid: -128 to 255)"),
        ("f64", 10**400, "is f64, and 100000... (an integer of 401 digits) does not fit in it"),
    ],
)
def test_scalar_inputs_are_checked_as_execute_checks_them(
    type_: str, value: object, problem: str
) -> None:
    with pytest.raises(ReferenceError) as info:
        evaluate(devplan.parse(_identity(type_)), [value])
    assert str(info.value) == f"error: argument 0 of @main {problem}"


def test_a_signless_scalar_input_takes_its_bits_as_execute_does() -> None:
    assert evaluate(devplan.parse(_identity("i8")), [200]) == [np.int8(-56)]


def test_masked_arrays_and_wrongly_typed_arguments_are_refused() -> None:
    masked = np.ma.array(np.ones(2, np.float32), mask=[False, True])
    with pytest.raises(ReferenceError, match=r"needs a NumPy array \(unmasked\)$"):
        evaluate(devplan.parse(_identity("tensor<2xf32>")), [masked])
    with pytest.raises(DevplanError, match="inputs must be a list of NumPy arrays and scalars"):
        evaluate(devplan.parse(_identity("f32")), None)  # type: ignore[arg-type]
    with pytest.raises(DevplanError, match=r"module must be a builtin\.module"):
        evaluate("func.func @main() {}", [])  # type: ignore[arg-type]


def test_tensor_comparisons_give_bool_arrays_with_nan_unordered_and_select_picks_elementwise() -> (
    None
):
    a = np.array([1.0, np.nan, 3.0, 2.0], np.float32)
    b = np.array([2.0, 1.0, np.nan, 2.0], np.float32)
    ult, olt, pick, bits = run(
        "  %u = arith.cmpf ult, %a, %b : tensor<4xf32>\n"
        "  %o = arith.cmpf olt, %a, %b : tensor<4xf32>\n"
        "  %p = arith.select %o, %a, %b : tensor<4xi1>, tensor<4xf32>\n"
        "  %n = arith.uitofp %u : tensor<4xi1> to tensor<4xf64>\n"
        "  func.return %u, %o, %p, %n : tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf64>",
        "(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xf32>, tensor<4xf64>)",
        [a, b],
    )
    assert ult.dtype == olt.dtype == np.bool_
    np.testing.assert_array_equal(ult, [True, True, True, False])
    np.testing.assert_array_equal(olt, [True, False, False, False])
    np.testing.assert_array_equal(pick, np.array([1.0, 1.0, np.nan, 2.0], np.float32))
    np.testing.assert_array_equal(bits, np.array([1.0, 1.0, 1.0, 0.0]))


def test_tensor_casts_truncate_extend_and_convert_as_mlir_does() -> None:
    i = np.array([-1, 300, -129, 7], np.int32)
    byte, unsigned, signed, floats = run(
        "  %b = arith.trunci %i : tensor<4xi32> to tensor<4xi8>\n"
        "  %u = arith.extui %b : tensor<4xi8> to tensor<4xi64>\n"
        "  %s = arith.extsi %b : tensor<4xi8> to tensor<4xi64>\n"
        "  %f = arith.uitofp %i : tensor<4xi32> to tensor<4xf64>\n"
        "  func.return %b, %u, %s, %f : tensor<4xi8>, tensor<4xi64>, tensor<4xi64>, tensor<4xf64>",
        "(%i: tensor<4xi32>) -> (tensor<4xi8>, tensor<4xi64>, tensor<4xi64>, tensor<4xf64>)",
        [i],
    )
    np.testing.assert_array_equal(byte, np.array([-1, 44, 127, 7], np.int8))
    np.testing.assert_array_equal(unsigned, [255, 44, 127, 7])
    np.testing.assert_array_equal(signed, [-1, 44, 127, 7])
    np.testing.assert_array_equal(floats, [2.0**32 - 1, 300.0, 2.0**32 - 129, 7.0])


@pytest.mark.parametrize("sizes", [(3, 4), (1, 4)])
def test_elementwise_operands_of_different_dynamic_sizes_are_an_error_at_the_op_not_broadcast(
    sizes: tuple[int, int],
) -> None:
    a, b = (np.ones(n, np.float32) for n in sizes)
    with pytest.raises(
        devplan.DevplanError,
        match=rf"<string>:2:3: error: 'arith.addf' on tensors of different shapes: operand 1 is {sizes[1]}, operand 0 {sizes[0]}",
    ):
        run(
            "  %c = arith.addf %a, %b : tensor<?xf32>\n  func.return %c : tensor<?xf32>",
            "(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32>",
            [a, b],
        )


def test_i1_is_a_one_bit_twos_complement_integer_whose_true_is_minus_one() -> None:
    t = "tensor<4xi1>"
    body = f"""
  %add = arith.addi %a, %b : {t}
  %sub = arith.subi %a, %b : {t}
  %max = arith.maxsi %a, %b : {t}
  %min = arith.minsi %a, %b : {t}
  %lt = arith.cmpi slt, %a, %b : {t}
  %ext = arith.extsi %a : {t} to tensor<4xi32>
  %float = arith.sitofp %a : {t} to tensor<4xf32>
  func.return %add, %sub, %max, %min, %lt, %ext, %float : {t}, {t}, {t}, {t}, {t}, tensor<4xi32>, tensor<4xf32>"""
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    results = run(
        body,
        f"(%a: {t}, %b: {t}) -> ({t}, {t}, {t}, {t}, {t}, tensor<4xi32>, tensor<4xf32>)",
        [a, b],
    )
    expected = [
        [False, True, True, False],  # addi wraps: true + true is -2, which is 0 in one bit
        [False, True, True, False],
        [True, False, False, False],  # maxsi: -1 < 0
        [True, True, True, False],
        [False, True, False, False],  # slt: -1 < 0
        [-1, -1, 0, 0],
        [-1.0, -1.0, 0.0, 0.0],
    ]
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_signed_division_of_the_minimum_by_minus_one_is_an_error_at_the_op() -> None:
    for t, minimum in (("i1", True), ("i32", -(2**31))):
        dtype = np.bool_ if t == "i1" else np.int32
        minus_one = True if t == "i1" else -1
        with pytest.raises(
            devplan.DevplanError,
            match=rf"<string>:2:3: error: 'arith.divsi' divides the minimum {t} value by -1",
        ):
            run(
                f"  %q = arith.divsi %a, %b : tensor<1x{t}>\n  func.return %q : tensor<1x{t}>",
                f"(%a: tensor<1x{t}>, %b: tensor<1x{t}>) -> tensor<1x{t}>",
                [np.array([minimum], dtype), np.array([minus_one], dtype)],
            )


def test_bf16_is_computed_in_f64_rounded_once_and_given_as_bit_patterns() -> None:
    # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even, 1; 1 + 3 * 2^-8 rounds up.
    def bits(values: list[float]) -> np.ndarray[Any, Any]:  # of values exact in bf16
        return (np.array(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)

    (result,) = run(
        "  %c = arith.addf %a, %b : tensor<3xbf16>\n  func.return %c : tensor<3xbf16>",
        "(%a: tensor<3xbf16>, %b: tensor<3xbf16>) -> tensor<3xbf16>",
        [bits([1.0, 1.0, 3.0e38]), bits([2.0**-8, 3 * 2.0**-8, 3.0e38])],
    )
    assert [hex(b) for b in result] == ["0x3f80", "0x3f82", "0x7f80"]  # 1, 1 + 2^-6, inf


def test_unsigned_integers_go_in_and_come_out_in_the_dtypes_execute_uses() -> None:
    """The same inputs go to the oracle and to `devplan.execute`: ui8 is uint8 on both
    (the oracle computes on the same bits, signless)."""
    text = """
func.func @main(%a: ui8, %t: tensor<2xui16>, %s: tensor<2xsi8>) -> (ui8, tensor<2xui16>, tensor<2xsi8>) {
  func.return %a, %t, %s : ui8, tensor<2xui16>, tensor<2xsi8>
}"""
    inputs = [200, np.array([65535, 7], np.uint16), np.array([-128, 5], np.int8)]
    oracle = evaluate(devplan.parse(text), inputs)
    executed = devplan.execute(devplan.parse(text), inputs).outputs
    for want, got in zip(executed, oracle, strict=True):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.asarray(got).tolist() == np.asarray(want).tolist()
    assert oracle[0] == 200
    assert oracle[1].tolist() == [65535, 7]


CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def _expected_cmpi(predicate: str, x: int, y: int, width: int) -> bool:
    """LangRef's `arith.cmpi` on two `width`-bit values given in signed form."""
    if predicate.startswith("u"):
        x, y = x % 2**width, y % 2**width
    compare = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    return compare[predicate.removeprefix("s").removeprefix("u")]


@pytest.mark.parametrize(("element", "width"), [("i8", 8), ("i32", 32), ("i64", 64), ("index", 64)])
def test_integer_comparisons_on_equal_and_boundary_operands(element: str, width: int) -> None:
    """Every predicate on every pair of boundary values (equal operands included, where
    `le` and `lt` differ; negative ones, where signed and unsigned order differ)."""
    low, high = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    values = sorted({low, low + 1, -2, -1, 0, 1, 2, high - 1, high})
    pairs = [(x, y) for x in values for y in values]
    dtype = np.int64 if element == "index" else np.dtype(f"i{width // 8}")
    a = np.array([x for x, _ in pairs], dtype)
    b = np.array([y for _, y in pairs], dtype)
    n = len(pairs)
    body = "".join(
        f"  %{p} = arith.cmpi {p}, %a, %b : tensor<{n}x{element}>\n" for p in CMPI_PREDICATES
    )
    results = ", ".join(f"%{p}" for p in CMPI_PREDICATES)
    types = ", ".join([f"tensor<{n}xi1>"] * len(CMPI_PREDICATES))
    outputs = run(
        f"{body}  func.return {results} : {types}",
        f"(%a: tensor<{n}x{element}>, %b: tensor<{n}x{element}>) -> ({types})",
        [a, b],
    )
    for predicate, out in zip(CMPI_PREDICATES, outputs, strict=True):
        expected = [_expected_cmpi(predicate, x, y, width) for x, y in pairs]
        np.testing.assert_array_equal(out, expected, err_msg=f"cmpi {predicate}")


@pytest.mark.parametrize("element", ["f32", "f64"])
def test_float_arithmetic_is_rounded_once_in_its_own_type(element: str) -> None:
    """Values whose sums, products and quotients differ between f32 and f64 rounding: the
    oracle's results are exactly IEEE's in the op's type."""
    dtype = np.float32 if element == "f32" else np.float64
    a = np.array([1.0, 1 / 3, 1e-300, 2.0**60, 0.1], dtype)
    b = np.array([2.0**-40, 2 / 3, 3e-300, 1.0, 0.2], dtype)
    ops = ("addf", "subf", "mulf", "divf")
    t = f"tensor<5x{element}>"
    body = "".join(f"  %{op} = arith.{op} %a, %b : {t}\n" for op in ops)
    outputs = run(
        f"{body}  func.return {', '.join(f'%{op}' for op in ops)} : {', '.join([t] * 4)}",
        f"(%a: {t}, %b: {t}) -> ({', '.join([t] * 4)})",
        [a, b],
    )
    with np.errstate(all="ignore"):
        expected = [a + b, a - b, a * b, a / b]
    for op, out, want in zip(ops, outputs, expected, strict=True):
        assert np.asarray(out).dtype == dtype, op
        np.testing.assert_array_equal(out, want, err_msg=op)


def _expected_division(name: str, x: int, y: int) -> int:
    """MLIR's integer division family on Python ints, wrapped to i8."""
    ux, uy = x % 256, y % 256
    truncated = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    result = {
        "divsi": truncated,
        "remsi": x - truncated * y,
        "floordivsi": x // y,
        "ceildivsi": -(-x // y),
        "divui": ux // uy,
        "remui": ux % uy,
        "ceildivui": -(-ux // uy),
    }[name]
    return (result + 128) % 256 - 128


def test_integer_division_rounds_each_way_on_boundary_operands() -> None:
    """Every division and remainder of i8 on every pair of boundary and mixed-sign values
    (exact and inexact quotients; unsigned ones past the signed maximum, which wrap)."""
    values = [-128, -127, -7, -2, -1, 1, 2, 3, 7, 127]
    pairs = [(x, y) for x in values for y in values if (x, y) != (-128, -1)]
    a = np.array([x for x, _ in pairs], np.int8)
    b = np.array([y for _, y in pairs], np.int8)
    names = ("divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "ceildivui")
    t = f"tensor<{len(pairs)}xi8>"
    body = "".join(f"  %{n} = arith.{n} %a, %b : {t}\n" for n in names)
    outputs = run(
        f"{body}  func.return {', '.join(f'%{n}' for n in names)} : {', '.join([t] * len(names))}",
        f"(%a: {t}, %b: {t}) -> ({', '.join([t] * len(names))})",
        [a, b],
    )
    for name, out in zip(names, outputs, strict=True):
        expected = [_expected_division(name, x, y) for x, y in pairs]
        np.testing.assert_array_equal(out, np.array(expected, np.int8), err_msg=name)


def test_fma_truncation_to_i1_and_scalar_float_constants() -> None:
    """math.fma multiplies before it adds; trunci to i1 keeps the lowest bit (2 is false);
    a scalar f64 constant keeps its fraction."""
    fma, bit, half = run(
        "  %f = math.fma %a, %b, %c : tensor<3xf64>\n"
        "  %t = arith.trunci %i : tensor<4xi8> to tensor<4xi1>\n"
        "  %h = arith.constant 2.5 : f64\n"
        "  func.return %f, %t, %h : tensor<3xf64>, tensor<4xi1>, f64",
        "(%a: tensor<3xf64>, %b: tensor<3xf64>, %c: tensor<3xf64>, %i: tensor<4xi8>)"
        " -> (tensor<3xf64>, tensor<4xi1>, f64)",
        [
            np.array([3.0, -2.0, 0.5]),
            np.array([5.0, 7.0, 0.25]),
            np.array([1.0, 0.5, -1.0]),
            np.array([1, 2, 3, -2], np.int8),
        ],
    )
    np.testing.assert_array_equal(fma, [16.0, -13.5, -0.875])
    np.testing.assert_array_equal(bit, [True, False, True, False])
    assert half == 2.5


def test_matmul_into_an_output_of_another_shape_is_an_error_at_the_op() -> None:
    t = "tensor<?x?xf32>"
    with pytest.raises(
        DevplanError,
        match=r"<string>:2:3: error: 'linalg.matmul' operand #2 has size 3 where another operand has 2",
    ):
        run(
            f"  %r = linalg.matmul ins(%a, %b : {t}, {t}) outs(%c : {t}) -> {t}\n  func.return %r : {t}",
            f"(%a: {t}, %b: {t}, %c: {t}) -> {t}",
            [np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), np.ones((3, 3), np.float32)],
        )


def test_shifts_remsi_of_the_minimum_and_cmpf_one_on_equal_and_nan_operands() -> None:
    """shrsi keeps the sign, shrui shifts zeros in; remsi(-128, -1) is 0 (only the
    quotient overflows); `one` is false on equal operands and on NaN, `ueq` true on both."""
    a = np.array([-128, -7, 127, -1], np.int8)
    s = np.array([1, 2, 3, 7], np.int8)
    x = np.array([1.0, 1.0, np.nan, np.nan])
    y = np.array([1.0, 2.0, 1.0, np.nan])
    t, b = "tensor<4xi8>", "tensor<4xi1>"
    left, signed, unsigned, rem, one, ueq = run(
        f"  %l = arith.shli %a, %s : {t}\n  %r = arith.shrsi %a, %s : {t}\n"
        f"  %u = arith.shrui %a, %s : {t}\n  %m = arith.remsi %min, %neg : i8\n"
        "  %o = arith.cmpf one, %x, %y : tensor<4xf64>\n"
        "  %e = arith.cmpf ueq, %x, %y : tensor<4xf64>\n"
        f"  func.return %l, %r, %u, %m, %o, %e : {t}, {t}, {t}, i8, {b}, {b}",
        f"(%a: {t}, %s: {t}, %min: i8, %neg: i8, %x: tensor<4xf64>, %y: tensor<4xf64>)"
        f" -> ({t}, {t}, {t}, i8, {b}, {b})",
        [a, s, -128, -1, x, y],
    )
    np.testing.assert_array_equal(left, np.array([0, -28, -8, -128], np.int8))
    np.testing.assert_array_equal(signed, np.array([-64, -2, 15, -1], np.int8))
    np.testing.assert_array_equal(unsigned, np.array([64, 62, 15, 1], np.int8))
    assert rem == 0
    np.testing.assert_array_equal(one, [False, True, False, False])
    np.testing.assert_array_equal(ueq, [True, False, True, True])


FPTOSI_I8 = (
    "  %i = arith.fptosi %x : tensor<2xf64> to tensor<2xi8>\n  func.return %i : tensor<2xi8>"
)


@pytest.mark.parametrize("bad", [128.0, -129.0, 1e300, math.nan, math.inf, -math.inf])
def test_fptosi_of_nan_or_a_value_outside_the_range_is_an_error_at_the_op(bad: float) -> None:
    with pytest.raises(
        DevplanError,
        match=r"<string>:2:3: error: 'arith.fptosi' converts NaN or a value outside the range of i8",
    ):
        run(FPTOSI_I8, "(%x: tensor<2xf64>) -> tensor<2xi8>", [np.array([1.0, bad])])


def test_fptosi_truncates_toward_zero_up_to_both_ends_of_the_range() -> None:
    (out,) = run(FPTOSI_I8, "(%x: tensor<2xf64>) -> tensor<2xi8>", [np.array([-128.9, 127.9])])
    np.testing.assert_array_equal(out, np.array([-128, 127], np.int8))


NEGATIVE_STEP = """func.func @main(%x: i32) -> i32 {
  %lb = arith.constant 0 : index
  %ub = arith.constant 4 : index
  %step = arith.constant -1 : index
  %r = scf.for %i = %lb to %ub step %step iter_args(%a = %x) -> (i32) {
    %b = arith.addi %a, %a : i32
    scf.yield %b : i32
  }
  func.return %r : i32
}
"""


def test_a_loop_with_a_negative_step_is_a_located_error() -> None:
    with pytest.raises(
        DevplanError, match=r"<string>:5:3: error: 'scf.for' step must be positive, got -1"
    ):
        evaluate(devplan.parse(NEGATIVE_STEP), [np.int32(1)])
