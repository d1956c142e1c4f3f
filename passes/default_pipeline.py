"""`default-pipeline`: a level-1 module to a classified level-2 program in one pass name.

`devplan-opt -p default-pipeline`, `devplan-run` and `devplan.execute` (for level-1
modules) run these passes in order and verify the IR they produce (a failure names the
pass that produced the bad IR):

1. `plan-devices` — place every tensor value, insert `vdev.device_copy`s;
2. `elide-copies` — remove the level-1 copies that change nothing;
3. `lower-to-device` — elementwise and named linalg ops to `linalg.generic` first
   (`convert-elementwise-to-linalg`, `generalize-named-linalg-ops`), then tensors to
   memrefs, ops to kernel launches, frees;
4. `elide-copies` — remove the level-2 copies that change nothing;
5. `classify-regions` — mark each function host / device / mixed / multi-device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ..diagnostics import LocatedError, collect_remarks, verify_located
from ..diagnostics.progress import progress
from ..system.module_verifiers import MODULE_VERIFIERS
from .classify_regions import ClassifyRegionsPass
from .elide_copies import ElideCopiesPass
from .lower_to_device import LowerToDevicePass
from .plan_devices import PlanDevicesPass

STEPS: tuple[type[ModulePass], ...] = (
    PlanDevicesPass,
    ElideCopiesPass,
    LowerToDevicePass,
    ElideCopiesPass,
    ClassifyRegionsPass,
)
"""The passes `default-pipeline` runs, in order, with their default options. They are
imported here rather than looked up in `registry.py`, which lists this pass too."""

DEFAULT_PIPELINE: tuple[str, ...] = tuple(step.name for step in STEPS)
"""The names of the passes `default-pipeline` runs, in order."""


@dataclass(frozen=True)
class DefaultPipelinePass(ModulePass):
    """Runs plan-devices, elide-copies, lower-to-device, elide-copies and classify-regions,
    and verifies (with locations) what they produced.

    The steps run on unverified IR and the result is verified once, so that a run pays
    for one check of the program rather than one per step. When that check fails, or a
    step raises, the steps run again from a copy of the input, verifying after each, so
    that the error names the pass that produced the bad IR as it would had each been
    verified (their remarks are not repeated)."""

    name = "default-pipeline"

    verifies_result: ClassVar[bool] = True
    """It verifies what it produced (`verified_by_itself`): a driver that verifies after
    each pass need not verify after this one again."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        source = op.clone()
        ran = 0  # the steps that ended; the one after them raised, if any did
        try:
            for step in STEPS:
                with progress(f"running pass '{step.name}'"):
                    step().apply(ctx, op)
                ran += 1
            verify_located(op, MODULE_VERIFIERS)
        except Exception:
            if ran == 0:
                raise  # plan-devices itself, on the input as it was given
            with collect_remarks():  # the first run printed them
                for step in STEPS[:ran]:
                    _run_verified(step, ctx, source)
            raise  # each step before the failure passed its check: the error stands


def _run_verified(step: type[ModulePass], ctx: Context, op: ModuleOp) -> None:
    """Run `step` on `op`, then verify it, naming the step when that fails."""
    with progress(f"running pass '{step.name}'"):
        step().apply(ctx, op)
    try:
        verify_located(op, MODULE_VERIFIERS)
    except LocatedError as e:
        raise LocatedError(f"{e} (IR produced by pass '{step.name}')") from e
