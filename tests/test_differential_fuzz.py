"""Differential fuzzing: random level-1 programs, planned, lowered and run, against the oracle.

Each example is a random program: a DAG of elementwise ops (arithmetic, comparisons
feeding selects or casts of their `i1` results, casts to another element type and back)
and matmuls over two shape classes (`R x C` values and `C x C` weights, R and C from 0
to 5; R dynamic, `?`, in half the programs, then an `index` argument %rows) of one
element type (f16, bf16, f32, f64, i1, i8, i32, i64), constants, calls to
helper functions (one helper is called from two device contexts, so plan-devices may
specialise it), `scf.if` on an `i1` argument, `scf.for` carrying a tensor (its body a
call, a pinned op, an `scf.if` or another loop, up to three deep; a branch may hold a
call, a pinned op or a loop), random `linalg.generic`s (maps that permute, project,
broadcast, take constants or affine sums `(d_i * k + d_j) mod C`; reductions; two
outputs) and named linalg ops (mixed-type matmuls f16 x f16 -> f32 and i8 x i8 -> i32,
batch_matmul, transpose, conv_2d, pooling_nchw_max/sum, fill), round trips through the
data-movement ops (a pad and the slice inside it; a `tensor.reshape` to one dimension and
back, its shapes from `tensor.from_elements`; two row slices concatenated; a `linalg.pack`
into tiles and the `linalg.unpack` back; an element extracted, then inserted or splat; a
`collapse_shape` to one dimension and the `expand_shape` back; a `tensor.cast` to dynamic
sizes and back; a row slice inserted into another value with `insert_slice`; each
intermediate maybe on a device of its own),
`vdev.device_copy` written by the user, random `vdev.on_device` hints and random
argument/result placements over the default system's devices (cpu:0, cuda:0, cuda:1). Properties:

* `default-pipeline` leaves verifiable IR after every pass, and planning twice is
  planning once;
* running the pipeline's output (numpy kernels, `strict=True`: no leak) gives what
  `devplan.reference.program.evaluate` gives: bit for bit for integers, close for floats.
  The passes run one by one (as `devplan.execute` runs `default-pipeline`), so the
  planned IR can be checked on the way.

Inputs are `random_inputs(module, seed=0)`, which is what `devplan-run --random-args 0`
uses, so a failure is reproduced by pasting the printed program into a file and running
`devplan-run FILE --random-args 0` (a program with dynamic rows: `inputs_for`, as the
failure's note says).

`make test` runs a fixed set of 64 programs, 16 planned by cost and 3 short ones per
data-movement form (the same every run) and 20 fresh ones drawn from a seed that a
failure prints (`DEVPLAN_FUZZ_SEED=N` replays them); `make fuzz` runs 2,000 fresh ones
unseeded (Hypothesis keeps nothing from a seeded run), keeps the failing examples in
`.hypothesis/fuzz` (ignored by git; the next run replays them first) and writes each
failing program, shrunk, to `build/fuzz-failures/`, printing the path.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis.control import current_build_context
from hypothesis.database import DirectoryBasedExampleDatabase
from support import ROOT
from support.level1_programs import MOVEMENT_FORMS, Drawn, check, programs, reproduce

import devplan

FIXED = 64
"""The fixed set's size: with the linalg draws, the file's share of `make test` stays about
a minute of CPU."""
EXAMPLES = int(os.environ.get("DEVPLAN_FUZZ_EXAMPLES", str(FIXED)))
AT_LENGTH = "DEVPLAN_FUZZ_EXAMPLES" in os.environ
"""`make fuzz` sets DEVPLAN_FUZZ_EXAMPLES: fresh programs only, failures kept."""
FRESH = 20
"""Fresh programs `make test` draws beside its fixed set."""
GIVEN_SEED = os.environ.get("DEVPLAN_FUZZ_SEED")
SEED = int(GIVEN_SEED or random.SystemRandom().randrange(2**32))
"""The seed of the fresh programs of `make test` (a failure prints it)."""
SEEDED = GIVEN_SEED is not None or not AT_LENGTH
"""At length, the fresh programs are seeded only when asked: a seeded run keeps no examples."""
FAILURES = ROOT / "build" / "fuzz-failures"

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
FIXED_SET = settings(max_examples=FIXED, derandomize=True, database=None, **_COMMON)
FRESH_SET = settings(
    max_examples=EXAMPLES if AT_LENGTH else FRESH,
    database=DirectoryBasedExampleDatabase(str(ROOT / ".hypothesis" / "fuzz"))
    if AT_LENGTH
    else None,
    **_COMMON,
)


def fresh_seed(test: Callable[..., Any]) -> Callable[..., Any]:
    """`@seed(SEED)` where the fresh programs are seeded (see `SEEDED`)."""
    return seed(SEED)(test) if SEEDED else test


def check_and_keep(drawn: Drawn, strategy: str = "default") -> None:
    """`check`; at length, the failing program Hypothesis reports (shrunk) is also written to
    `build/fuzz-failures/` and its path printed."""
    note(reproduce(drawn))
    try:
        check(drawn, strategy)
    except Exception:
        if AT_LENGTH and current_build_context().is_final:
            FAILURES.mkdir(parents=True, exist_ok=True)
            name = hashlib.sha256(drawn.text.encode()).hexdigest()[:12]
            path = FAILURES / f"{strategy}-{name}.mlir"
            path.write_text(f"// {reproduce(drawn).splitlines()[0]}\n{drawn.text}")
            note(f"failing program written to {path}")
            print(f"failing program written to {path}", file=sys.stderr)
        raise


@FIXED_SET
@given(programs())
def test_planned_and_lowered_programs_compute_what_the_oracle_computes(drawn: Drawn) -> None:
    check_and_keep(drawn)


KEPT = sorted((ROOT / "tests" / "fuzz_kept").glob("*.mlir"))
"""Programs the fuzzer once found failing, fixed since: each is checked every run."""


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
def test_kept_failing_programs_compute_what_the_oracle_computes(path: Path) -> None:
    check(path.read_text())


@pytest.mark.parametrize("form", MOVEMENT_FORMS)
def test_each_data_movement_form_computes_what_the_oracle_computes(form: str) -> None:
    """The fixed set draws each form only by chance: a few short programs of each."""

    @settings(max_examples=3, derandomize=True, database=None, **_COMMON)
    @given(programs(form=form))
    def each(drawn: Drawn) -> None:
        check_and_keep(drawn)

    each()


@fresh_seed
@FRESH_SET
@given(programs())
def test_fresh_programs_compute_what_the_oracle_computes(drawn: Drawn) -> None:
    if SEEDED:
        note(f"fresh programs of seed {SEED}: DEVPLAN_FUZZ_SEED={SEED} replays them")
    check_and_keep(drawn)


# Found by `make fuzz`: @helper's calls pin (cuda:0, cuda:1) and then (cuda:1, a value
# that follows @helper); plan-devices sent both to one clone named for the clashing
# argument, then kept sending the second call back to that clone until it gave up.
SPECIALISED_TWICE = """
func.func @helper(%a: tensor<1x1xi32>, %b: tensor<1x1xi32>) -> tensor<1x1xi32> {
  %s = arith.addi %a, %b : tensor<1x1xi32>
  %r = arith.addi %s, %a : tensor<1x1xi32>
  func.return %r : tensor<1x1xi32>
}
func.func @main(%x: tensor<1x1xi32>, %y: tensor<1x1xi32>, %w: tensor<1x1xi32>,
                %n: index, %flag: i1) -> (tensor<1x1xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t1 = arith.addi %x, %x : tensor<1x1xi32>
  %t2 = arith.addi %x, %x : tensor<1x1xi32>
  %t3 = vdev.on_device %t1 to #vdev.device<"cuda", 0> : tensor<1x1xi32>
  %t4 = vdev.on_device %t2 to #vdev.device<"cuda", 0> : tensor<1x1xi32>
  %t5 = func.call @helper(%t3, %t4) : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %t6 = arith.addi %x, %x : tensor<1x1xi32>
  %t7 = arith.addi %x, %x : tensor<1x1xi32>
  %t8 = vdev.on_device %t6 to #vdev.device<"cuda", 1> : tensor<1x1xi32>
  %t9 = vdev.on_device %t7 to #vdev.device<"cuda", 1> : tensor<1x1xi32>
  %t10 = func.call @helper(%t8, %t9) : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %t11 = func.call @helper(%x, %x) : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %t12 = arith.addi %x, %x : tensor<1x1xi32>
  %t13 = arith.addi %x, %x : tensor<1x1xi32>
  %t14 = vdev.on_device %t12 to #vdev.device<"cuda", 1> : tensor<1x1xi32>
  %t15 = vdev.on_device %t13 to #vdev.device<"cuda", 1> : tensor<1x1xi32>
  %t16 = func.call @helper(%t14, %t15) : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %t17 = func.call @helper(%t1, %t12) : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  %t18 = func.call @helper(%t6, %x) : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x1xi32>
  func.return %t18 : tensor<1x1xi32>
}
"""


def test_a_call_disagreeing_with_its_clone_is_specialised_again_and_computes_the_oracle() -> None:
    check(SPECIALISED_TWICE)
    planned = devplan.apply(devplan.parse(SPECIALISED_TWICE), "plan-devices")
    assert "func.call @helper_cuda0_cuda1(%t1, %t12)" in str(planned)


# The kind of failure the fresh programs met now and then (bf16 or f16 matmuls whose values
# cancel), made small by hand: a bf16 matmul whose terms cancel. The kernel rounds each
# step (1 + 256 is 256 in bf16, whose ulp there is 2; minus 256 is 0), the oracle rounds
# the exact sum once (1): both correct roundings, 16,256 ulps apart. The comparison allows
# the rounding spread of what cancelled (`support.spread`), not only ulps of the result.
CANCELLING_BF16_MATMUL = """
func.func @main(%x: tensor<1x3xbf16>) -> tensor<1x1xbf16> {
  %a = arith.constant dense<[[1.0, 256.0, -256.0]]> : tensor<1x3xbf16>
  %b = arith.constant dense<[[1.0], [1.0], [1.0]]> : tensor<3x1xbf16>
  %z = arith.constant dense<0.0> : tensor<1x1xbf16>
  %c = linalg.matmul ins(%a, %b : tensor<1x3xbf16>, tensor<3x1xbf16>)
                     outs(%z : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %d = linalg.matmul ins(%x, %b : tensor<1x3xbf16>, tensor<3x1xbf16>)
                     outs(%c : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  func.return %d : tensor<1x1xbf16>
}
"""


def test_a_bf16_matmul_whose_terms_cancel_is_within_the_spread_of_its_rounding() -> None:
    check(CANCELLING_BF16_MATMUL)


@fresh_seed
@settings(FRESH_SET if AT_LENGTH else FIXED_SET, max_examples=max(1, EXAMPLES // 4))
@given(programs())
def test_cost_planned_programs_compute_what_the_oracle_computes(drawn: Drawn) -> None:
    check_and_keep(drawn, "cost")
