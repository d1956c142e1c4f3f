"""Mutation testing of devplan's core modules with Cosmic Ray, and one score per module.

`make mutate` runs this script. For each chosen module it writes a Cosmic Ray configuration
(the module's files and the narrow pytest command that covers them) under
`build/mutate/<module>/`, lets `cosmic-ray init` enumerate every mutant (each a one-place
change: an operator swapped, a number changed, a condition negated, a loop emptied...), runs
the unmutated tests once (`cosmic-ray baseline`: a module whose tests fail unmutated has no
score), then `cosmic-ray exec`, which applies one mutant at a time to the file in place, runs
the command and puts the file back. A mutant is killed when the command fails or runs past
the timeout. The score is killed / (killed + survived); mutants whose test command could
not even be started (`incompetent`) count in neither. Kills by timeout are counted apart
too: on a loaded machine a harmless mutant can run past a timeout, so a score with many of
them says less.

Cosmic Ray mutates in place rather than copying the tree, which is what this repository
needs: its top level is the package (`package-dir = {"devplan" = "."}`), so the editable
install imports the very files being mutated. The script keeps each file's bytes and writes
them back if a run is interrupted with a mutant in place.

Mutants inside type annotations that Python never evaluates (`unevaluated_annotations`:
about one in seven of the planner's) are equivalent by construction and are marked skipped
first, so that a score counts changes to what runs. A sample (`--sample N` per module,
`--seed`) then marks all but N randomly chosen mutants as skipped before `exec`, for quick
runs; the full sets are thousands of mutants. Sessions are kept between runs: a second
run with the same module, sample and seed resumes where the first stopped (`--fresh`
starts again). Survivors are printed with their place and diff.
After tests are added for them, `--rerun-survivors` runs a finished session's survivors
again, with the module's tests as the table now lists them (the mutants already killed
stay killed: tests were only added), and prints the new score.

    python mutation/mutate.py [--modules reference,elide-copies] [--sample 40] [--seed 1]
                              [--fresh | --rerun-survivors | --report]
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import NoReturn

from cosmic_ray.work_db import WorkDB, use_db  # pyright: ignore[reportUnknownVariableType]
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkItem, WorkResult

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PYTEST = f"{BIN / 'pytest'} -q -x -p no:xdist --rootdir=tests"
LIT = f"{BIN / 'lit'} -q"


@dataclass(frozen=True)
class Module:
    """A module under mutation: its files (relative to the root) and the tests that cover it."""

    paths: tuple[str, ...]
    tests: tuple[str, ...]
    timeout: float
    lit: tuple[str, ...] = ()
    """lit tests that cover the module too, run when its pytest tests pass."""


# Each module with the narrowest tests that cover it. The per-mutant run must take seconds:
# no Numba compile where a module's tests do not need one (the timeouts are a few times each
# command's unmutated time on a loaded 2-core machine; a mutant that makes a test loop for
# ever is killed at the timeout).
MODULES: dict[str, Module] = {
    "reference": Module(
        ("reference/program.py", "reference/tensor.py"),
        (
            "tests/reference/test_program.py",
            "tests/reference/test_runner_utils.py",
            "tests/reference/test_tensor.py",
            "tests/passes/lower_to_device/test_movement.py",
        ),
        120.0,
    ),
    # The oracle's exact LangRef model of scalar ops: the check of every op and type against
    # it covers it (a minute a run: sample it), and its own rules that every path takes the
    # same side of (seconds, so first).
    "reference-scalars": Module(
        (
            "reference/arith.py",
            "reference/expectations.py",
            "reference/scalars.py",
            "reference/transcendental.py",
        ),
        ("tests/reference/test_arith.py", "tests/runtime/test_arith_semantics.py"),
        1200.0,
    ),
    "elide-copies": Module(
        ("passes/elide_copies",),
        (
            "tests/passes/test_elide_copies.py",
            # the one test of `necessary_bytes` (statistics.py) without a random program
            "tests/passes/test_elide_copies_pipeline.py::"
            "test_mlp_example_moves_exactly_the_bytes_its_placement_needs",
        ),
        300.0,
        # the chain, reroute and async-token rules are checked on IR here only
        ("tests/filecheck/passes/elide_copies.mlir",),
    ),
    "planner": Module(
        ("passes/plan_devices",),
        (
            "tests/passes/plan_devices/test_planner.py",
            "tests/passes/plan_devices/test_cost_strategy.py",
            "tests/passes/plan_devices/test_specialisation.py",
        ),
        600.0,
        # the majority vote over placed neighbours' bytes is checked on IR here only; data
        # movement (slices, scalar reads) and ops with several results in the other two
        (
            "tests/filecheck/passes/plan_devices.mlir",
            "tests/filecheck/passes/plan_devices_movement.mlir",
            "tests/filecheck/passes/plan_devices_names.mlir",
        ),
    ),
    "semantics": Module(
        ("runtime/semantics.py",),
        # the LangRef model's every op x type (the numba path on a sample) and named cases
        ("tests/runtime/test_op_semantics.py", "tests/runtime/test_arith_semantics.py"),
        600.0,
    ),
    # The integer ops and float extrema of host code and the numpy backend, over whole
    # arrays: held bit for bit to `semantics` on all pairs of boundary values.
    "numpy-semantics": Module(
        ("runtime/numpy_semantics.py",),
        ("tests/runtime/test_numpy_semantics.py",),
        300.0,
    ),
    "lower-to-device": Module(
        ("passes/lower_to_device",),
        (
            "tests/passes/test_lower_to_device.py",
            "tests/passes/lower_to_device",
            # linalg.pack and unpack lowered against the oracle, dynamic tiles too
            "tests/reference/test_tensor.py",
        ),
        600.0,
    ),
}


def config_text(module: Module) -> str:
    """The Cosmic Ray configuration (TOML) of one module."""
    paths = ", ".join(f'"{path}"' for path in module.paths)
    command = " ".join((PYTEST, *module.tests))
    if module.lit:
        # Cosmic Ray splits the command into words and runs no shell: `sh -c` joins the two.
        command = f"sh -c '{command} && {' '.join((LIT, *module.lit))}'"
    return (
        "[cosmic-ray]\n"
        f"module-path = [{paths}]\n"
        f"timeout = {module.timeout}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n'
        '\n[cosmic-ray.distributor]\nname = "local"\n'
    )


def cosmic_ray(*arguments: str) -> None:
    """Run one `cosmic-ray` command in the repository root; a failure stops the script."""
    subprocess.run([str(BIN / "cosmic-ray"), *arguments], cwd=ROOT, check=True)


def place(item: WorkItem) -> tuple[tuple[str, int, int, str, int], ...]:
    """Where a mutant changes the code and how: the same for the same mutant in every
    session (its job id is a fresh random uuid each `init`, so a sample drawn over job ids
    would differ between two runs with one seed)."""
    return tuple(
        (str(m.module_path), *m.start_pos, m.operator_name, m.occurrence) for m in item.mutations
    )


Span = tuple[tuple[int, int], tuple[int, int]]
"""A stretch of a file: its first (line, column) and the (line, column) just after it."""


def unevaluated_annotations(path: Path) -> list[Span]:
    """The type annotations in `path` that Python never evaluates, so that no mutant in
    them can change what the code does: those of local variables (never evaluated), and,
    in a module with `from __future__ import annotations`, the parameters and results of
    undecorated functions (a decorator, such as xDSL's `op_type_rewrite_pattern`, may read
    them). Annotations of class attributes are left in: xDSL reads those of its
    attribute and op definitions."""
    tree = ast.parse(path.read_text(), str(path))
    postponed = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(name.name == "annotations" for name in node.names)
        for node in tree.body
    )
    spans: list[Span] = []

    def add(annotation: ast.expr | None) -> None:
        if annotation is not None and annotation.end_lineno is not None:
            end = (annotation.end_lineno, annotation.end_col_offset or 0)
            spans.append(((annotation.lineno, annotation.col_offset), end))

    def locals_of(node: ast.AST) -> None:  # a class's attributes are not its locals
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.AnnAssign):
                add(child.annotation)
            if not isinstance(child, ast.ClassDef):
                locals_of(child)

    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        locals_of(function)
        if postponed and not function.decorator_list:
            arguments = function.args
            for argument in (
                *arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                *(a for a in (arguments.vararg, arguments.kwarg) if a is not None),
            ):  # fmt: skip
                add(argument.annotation)
            add(function.returns)
    return spans


def leave_out_annotations(session: Path) -> int:
    """Mark the pending mutants that lie wholly inside an unevaluated annotation as skipped
    (each is equivalent: `int | None` made `int + None` changes nothing that runs); return
    how many."""
    spans: dict[str, list[Span]] = {}
    with use_db(str(session), WorkDB.Mode.open) as db:
        left_out: list[str] = []
        for item in db.pending_work_items:
            inside = True
            for mutation in item.mutations:
                path = str(mutation.module_path)
                if path not in spans:
                    spans[path] = unevaluated_annotations(ROOT / path)
                start, end = tuple(mutation.start_pos), tuple(mutation.end_pos)
                inside = inside and any(a <= start and end <= b for a, b in spans[path])
            if inside and item.mutations:
                left_out.append(item.job_id)
        skipped = WorkResult(worker_outcome=WorkerOutcome.SKIPPED)
        db.set_multiple_results(left_out, skipped)  # pyright: ignore[reportUnknownMemberType]
    return len(left_out)


def sample(session: Path, size: int, seed: int) -> None:
    """Mark all but `size` pending mutants, drawn with `seed`, as skipped."""
    with use_db(str(session), WorkDB.Mode.open) as db:
        items = sorted(db.pending_work_items, key=place)
        if len(items) <= size:
            return
        kept = {item.job_id for item in random.Random(seed).sample(items, size)}
        skipped = WorkResult(worker_outcome=WorkerOutcome.SKIPPED)
        skipped_jobs = [item.job_id for item in items if item.job_id not in kept]
        db.set_multiple_results(skipped_jobs, skipped)  # pyright: ignore[reportUnknownMemberType]


@dataclass
class Score:
    """Counts of one module's mutants that ran."""

    killed: int = 0
    survived: int = 0
    incompetent: int = 0
    timeouts: int = 0
    """The killed mutants whose tests ran past the timeout (Cosmic Ray counts them killed)."""

    @property
    def percent(self) -> float:
        tested = self.killed + self.survived
        return 100.0 * self.killed / tested if tested else 0.0

    def line(self, name: str) -> str:
        return (
            f"{name:17} {self.percent:5.1f} % killed  ({self.killed} killed, of which "
            f"{self.timeouts} by timeout; {self.survived} survived, "
            f"{self.incompetent} incompetent)"
        )


def score(session: Path, show_survivors: bool) -> Score:
    """The module's score from its session; each survivor printed with its place and diff."""
    counts = Score()
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome == TestOutcome.SURVIVED:
                counts.survived += 1
                if show_survivors:
                    for mutation in item.mutations:
                        line, _ = mutation.start_pos
                        print(f"survived: {mutation.module_path}:{line} {mutation.operator_name}")
                    print(result.diff or "")
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                counts.incompetent += 1
            elif result.test_outcome == TestOutcome.KILLED:
                counts.killed += 1
                # Cosmic Ray's word for a command it stopped at the timeout
                counts.timeouts += result.output == "timeout"
    return counts


def session_of(name: str, arguments: argparse.Namespace) -> Path:
    """The folder of a module's session: its configuration, database and caches."""
    return ROOT / "build" / "mutate" / f"{name}-s{arguments.sample}-r{arguments.seed}"


def run(name: str, module: Module, arguments: argparse.Namespace) -> Score:
    """Initialise (or resume) the module's session, run its mutants and score them."""
    directory = session_of(name, arguments)
    directory.mkdir(parents=True, exist_ok=True)
    # The tests write kernel and Numba caches here: never into the tree under mutation, and
    # one cache a session, so that two sessions running at once share none.
    os.environ["DEVPLAN_CACHE_DIR"] = str(directory / "devplan-cache")
    os.environ["NUMBA_CACHE_DIR"] = str(directory / "numba-cache")
    config = directory / "config.toml"
    session = directory / "session.sqlite"
    if arguments.rerun_survivors:
        rerun_survivors(name, module, config, session)
    elif arguments.fresh or not session.exists() or config.read_text() != config_text(module):
        session.unlink(missing_ok=True)
        config.write_text(config_text(module))
        cosmic_ray("init", str(config), str(session))
        left_out = leave_out_annotations(session)
        print(f"{name}: {left_out} mutant(s) in unevaluated type annotations left out")
        if arguments.sample:
            sample(session, arguments.sample, arguments.seed)
        cosmic_ray("baseline", str(config))
    files = [path for root in module.paths for path in sorted_files(ROOT / root)]
    originals = {path: path.read_bytes() for path in files}
    try:
        cosmic_ray("exec", str(config), str(session))
    finally:
        for path, text in originals.items():
            if path.read_bytes() != text:
                path.write_bytes(text)
                print(f"restored {path.relative_to(ROOT)} (a run stopped with a mutant in it)")
    return score(session, show_survivors=True)


def rerun_survivors(name: str, module: Module, config: Path, session: Path) -> None:
    """Make the session's survivors pending again, to meet the module's tests as they are
    now; the session must have mutated the same files."""
    if not session.exists():
        fail(f"--rerun-survivors: {name} has no session {session.relative_to(ROOT)} to rerun")
    files = config_text(module).splitlines()[1]
    if config.read_text().splitlines()[1] != files:
        fail(f"--rerun-survivors: {name}'s files changed since its session; run it --fresh")
    config.write_text(config_text(module))
    cosmic_ray("baseline", str(config))
    # Cosmic Ray's database stores the outcome by name; a job without a result is pending.
    with sqlite3.connect(session) as db:
        rerun = db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'").rowcount
    print(f"{name}: {rerun} survivor(s) run again")


def fail(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def sorted_files(path: Path) -> list[Path]:
    """The Python files of a module: the file itself, or every `.py` under the directory."""
    return [path] if path.is_file() else sorted(path.rglob("*.py"))


def stop(signum: int, frame: FrameType | None) -> NoReturn:
    """SIGTERM's handler: exit by an exception, so that `finally` undoes the mutant."""
    sys.exit(128 + signum)


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--modules", default=",".join(MODULES), help="comma-separated names")
    parser.add_argument("--sample", type=int, default=0, help="mutants per module (0: all)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample")
    parser.add_argument("--fresh", action="store_true", help="start each session again")
    parser.add_argument(
        "--rerun-survivors",
        action="store_true",
        help="run a finished session's survivors again with the module's current tests",
    )
    parser.add_argument(
        "--report", action="store_true", help="score the sessions so far; run nothing"
    )
    arguments = parser.parse_args()
    names = [name.strip() for name in arguments.modules.split(",") if name.strip()]
    unknown = [name for name in names if name not in MODULES]
    if unknown:
        print(
            f"error: unknown module(s) {', '.join(unknown)}; choose from {', '.join(MODULES)}",
            file=sys.stderr,
        )
        return 1
    if arguments.sample < 0:
        print(f"error: --sample {arguments.sample}: a sample is 0 (all) or more", file=sys.stderr)
        return 1
    # A stop (SIGTERM, as from `timeout`) unwinds like Ctrl-C: the mutant in place is undone.
    signal.signal(signal.SIGTERM, stop)
    if arguments.report:
        scores = {
            name: score(session_of(name, arguments) / "session.sqlite", True) for name in names
        }
    else:
        scores = {name: run(name, MODULES[name], arguments) for name in names}
    total = Score()
    print(f"\nmutation score (sample {arguments.sample or 'all'}, seed {arguments.seed}):")
    for name, counts in scores.items():
        print(counts.line(name))
        total.killed += counts.killed
        total.survived += counts.survived
        total.incompetent += counts.incompetent
        total.timeouts += counts.timeouts
    print(total.line("overall"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
