"""How far two correct roundings of one float program may be apart: the rounding spread.

A contraction (matmul, convolution, a generic reduction) is rounded differently by a kernel
(one rounding per step of its loop, or an `fma` per step) and by the oracle (NumPy's
`einsum`, rounded once): both are correct roundings of the program. Their difference is
bounded by the unit roundoff times the magnitudes of the *terms summed*, not of the result:
in a sum that cancels (`1 + 256 - 256` in bf16, whose ulp at 256 is 2) a step may lose the
whole result. Every op after it carries that difference on.

`slack` evaluates the program's *magnitude program* in the oracle: the same program on
the absolute values of its inputs and constants, each op replaced by one whose result
bounds the magnitude of the terms it combines (`subf` by `addf`, `negf` and `tanh` by
`absf`, `minimumf` by `maximumf`, `select` by `maximumf` of both choices; `mulf`, sums,
maxima, casts and control flow stay). Its result `M` bounds, per element, the magnitudes
every rounding on the way saw; `M - |result|` is what cancelled. Rounding error analysis
(Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 3) bounds the spread by
`n * u * M` where `n` is the number of roundings on the way and `u` the unit roundoff.

Not covered: a comparison whose operands are within the spread of each other may come out
either way, and what it selects then differs by more than any rounding.
"""

from __future__ import annotations

import re
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

import devplan
from devplan.reference.program import evaluate

UNIT_ROUNDOFF = {"bf16": 2.0**-8, "f16": 2.0**-11, "f32": 2.0**-24, "f64": 2.0**-53}

_SAME_MAGNITUDE = {
    "arith.subf": "arith.addf",
    "arith.minimumf": "arith.maximumf",
    "arith.negf": "math.absf",
    "math.tanh": "math.absf",
}
_SELECT = re.compile(
    r"arith\.select %[\w.#]+, (%[\w.#]+), (%[\w.#]+) : (?:[^,]+, )?(.*b?f(16|32|64)>?)$"
)
_FLOAT_CONSTANT = re.compile(r"arith\.constant .*: (tensor<[^>]*x)?b?f(16|32|64)>?$")


def magnitude_program(text: str) -> str:
    """The magnitude program of level-1 program `text` (see the module docstring)."""
    lines: list[str] = []
    for line in text.splitlines():
        for op, other in _SAME_MAGNITUDE.items():
            line = line.replace(f"{op} ", f"{other} ")
        line = _SELECT.sub(r"arith.maximumf \1, \2 : \3", line)
        if _FLOAT_CONSTANT.search(line):
            line = line.replace("-", "")
        lines.append(line)
    return "\n".join(lines) + "\n"


def slack(
    module: ModuleOp, text: str, inputs: list[object], expected: list[Any], entry: str = "main"
) -> list[Any]:
    """Per output of `module` (parsed from `text`) run on `inputs` (the oracle gives
    `expected`, bf16 as bit patterns), how far a correct rounding may be from the oracle's
    beyond the rounding of the result itself: `n * u * (M - |expected|)` elementwise (f64;
    zero where nothing cancelled, and for outputs that are not floats), with `M` the
    magnitude program's result and `n` = `roundings(text)`."""
    function = _function(module, entry)
    outputs = [str(_element(t)) for t in function.function_type.outputs.data]
    if not any(name in UNIT_ROUNDOFF for name in outputs):
        return [np.zeros(np.shape(want)) for want in expected]
    magnitude_module = devplan.parse(magnitude_program(text))
    absolute: list[object] = []
    for value, type_ in zip(inputs, function.function_type.inputs.data, strict=True):
        element = _element(type_)
        array = np.asarray(value)
        if isinstance(element, BFloat16Type):
            absolute.append(array & np.uint16(0x7FFF))
        elif array.dtype.kind == "f":
            absolute.append(np.abs(array))
        else:
            absolute.append(value)
    n = roundings(text)
    slacks: list[Any] = []
    for magnitude, want, name in zip(
        evaluate(magnitude_module, absolute, entry), expected, outputs, strict=True
    ):
        if name not in UNIT_ROUNDOFF:
            slacks.append(np.zeros(np.shape(want)))
            continue
        bf16 = name == "bf16"
        with np.errstate(invalid="ignore"):  # inf - inf where both are infinite: no slack
            cancelled = _values(np.asarray(magnitude), bf16) - np.abs(
                _values(np.asarray(want), bf16)
            )
            slacks.append(np.nan_to_num(n * UNIT_ROUNDOFF[name] * np.maximum(cancelled, 0.0)))
    return slacks


def _function(module: ModuleOp, entry: str) -> FuncOp:
    return next(op for op in module.walk() if isinstance(op, FuncOp) and op.sym_name.data == entry)


def _element(type_: Attribute) -> Attribute:
    return (
        cast(TensorType[Attribute], type_).element_type if isinstance(type_, TensorType) else type_
    )


def _values(array: np.ndarray[Any, Any], bf16: bool) -> np.ndarray[Any, Any]:
    """f64 values of an oracle result (bf16 as bit patterns)."""
    if bf16:
        return (array.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def roundings(text: str) -> int:
    """An upper bound of the roundings on any path through `text`'s ops: each op line once,
    a contraction once a step of its longest dimension, times 16 (the largest trip count
    `random_inputs` gives `%n`) when a loop runs `%n` times."""
    steps = max([int(s) for s in re.findall(r"(\d+)x", text)] + [1]) + 1
    count = 0
    for line in text.splitlines():
        if re.search(r"= (arith|math)\.", line):
            count += 1
        elif re.search(r"= linalg\.", line):
            count += steps
    return count * (16 if "to %n step" in text else 1)
