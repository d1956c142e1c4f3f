"""Run a directory of MLIR integration tests through devplan-run and LLVM's FileCheck.

    .venv/bin/python tests/mlir_integration.py DIR [--backends numpy,numba]
    make mlir-integration MLIR_DIR=DIR

For each `*.mlir` directly in DIR (MLIR's `mlir/test/Integration/Dialect/Linalg/CPU/`,
say, fetched by the user: the files are not part of devplan), and each kernel backend:
`devplan-opt FILE` (does it parse and verify), `devplan-run FILE --entry E
--kernel-backend B` (does it run: exit 0; E is the function the file's RUN lines name
with `-e`, `main` when none), and `FileCheck FILE` on what it printed (does it pass its own
CHECK lines). Prints one table row per file with the first blocker (the first error
line devplan or FileCheck printed), then the count that pass on every backend.

It judges by LLVM's FileCheck (`FileCheck` on PATH, else the newest
/usr/lib/llvm-*/bin/FileCheck; `--filecheck PATH` to choose), not the `filecheck`
package, whose CHECK-NEXT and CHECK-NOT differ from LLVM's where these files need
them. Without DIR's files or FileCheck it says so and exits 0: it is not part of
`make test`.
"""

from __future__ import annotations

import argparse
import glob
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent


@dataclass
class Outcome:
    parses: bool
    runs: dict[str, bool]
    checks: dict[str, bool]
    blocker: str


def find_filecheck(given: str | None) -> str | None:
    if given:
        return given if Path(given).is_file() else None
    found = shutil.which("FileCheck")
    if found:
        return found
    versions = sorted(
        glob.glob("/usr/lib/llvm-*/bin/FileCheck"),
        key=lambda p: int(re.sub(r"\D", "", p.split("llvm-")[1].split("/")[0]) or 0),
    )
    return versions[-1] if versions else None


def tool(name: str) -> str:
    local = BIN / name
    return str(local) if local.exists() else (shutil.which(name) or name)


def first_error(text: str, file: Path) -> str:
    for line in text.splitlines():
        if "error:" in line:
            return line.replace(str(file.parent) + "/", "").strip()
    return ""


def entry_of(text: str) -> str:
    """The function the file's RUN lines run (`-e NAME`, or `%{entry_point}` as a DEFINE
    line sets it); `main` when they name none."""
    defined = dict(re.findall(r"//\s*DEFINE:\s*%\{(\w+)\}\s*=\s*(\S+)\s*$", text, re.M))
    for line in re.findall(r"//\s*(?:RUN|DEFINE):(.*)$", text, re.M):
        named = re.search(r"(?:^|\s)-e\s+(%\{\w+\}|\w+)", line)
        if named:
            name = named.group(1)
            return defined.get(name[2:-1], "main") if name.startswith("%{") else name
    return "main"


def first_remark(text: str, file: Path) -> str:
    """The first remark devplan printed (a transform schedule it did not apply), cut short."""
    for line in text.splitlines():
        if "remark:" in line:
            short = line.replace(str(file.parent) + "/", "").strip()
            return short.split(": devplan runs")[0]
    return ""


def run_file(file: Path, backends: list[str], filecheck: str, timeout: int) -> Outcome:
    entry = entry_of(file.read_text())
    parsed = subprocess.run(
        [tool("devplan-opt"), str(file)], capture_output=True, text=True, timeout=timeout
    )
    outcome = Outcome(parsed.returncode == 0, {}, {}, first_error(parsed.stderr, file))
    for backend in backends:
        try:
            ran = subprocess.run(
                [tool("devplan-run"), str(file), "--entry", entry, "--kernel-backend", backend],
                capture_output=True, text=True, timeout=timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            outcome.runs[backend] = outcome.checks[backend] = False
            outcome.blocker = outcome.blocker or f"{backend}: timed out after {timeout} s"
            continue
        outcome.runs[backend] = ran.returncode == 0
        checked = subprocess.run(
            [filecheck, str(file)], input=ran.stdout, capture_output=True, text=True
        )
        outcome.checks[backend] = checked.returncode == 0
        if not outcome.blocker and checked.returncode != 0:
            outcome.blocker = first_error(ran.stderr, file)
            if not outcome.blocker:
                outcome.blocker = "FileCheck: " + first_error(checked.stderr, file)
                remark = first_remark(ran.stderr, file)
                outcome.blocker += f" (devplan said: {remark})" if remark else ""
    return outcome


def mark(ok: bool) -> str:
    return "yes" if ok else "no"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", default="")
    parser.add_argument("--backends", default="numpy,numba")
    parser.add_argument("--filecheck", default=None)
    parser.add_argument("--timeout", type=int, default=300, help="seconds a run may take")
    args = parser.parse_args(argv)
    directory = Path(args.directory)
    if not args.directory:
        print("mlir-integration: skipped: no directory given (MLIR_DIR=...)")
        return 0
    files = sorted(directory.glob("*.mlir")) if directory.is_dir() else []
    if not files:
        print(f"mlir-integration: skipped: no .mlir files in {args.directory}")
        return 0
    filecheck = find_filecheck(args.filecheck)
    if filecheck is None:
        print("mlir-integration: skipped: LLVM's FileCheck not found (apt-get install llvm)")
        return 0
    backends = [b for b in args.backends.split(",") if b]
    print(f"devplan-run FILE --entry E --kernel-backend B | {filecheck} FILE, B in {backends}")
    print()
    print("| file | parses | runs (" + ", ".join(backends) + ") | CHECK (" + ", ".join(backends)
          + ") | first blocker |")  # fmt: skip
    print("|---|---|---|---|---|")
    passed = 0
    for file in files:
        o = run_file(file, backends, filecheck, args.timeout)
        runs = ", ".join(mark(o.runs[b]) for b in backends)
        checks = ", ".join(mark(o.checks[b]) for b in backends)
        blocker = o.blocker.replace("|", "\\|") or "-"
        print(f"| {file.name} | {mark(o.parses)} | {runs} | {checks} | {blocker} |", flush=True)
        passed += all(o.checks[b] for b in backends)
    print()
    every = ", ".join(backends)
    print(f"{passed} of {len(files)} pass their CHECK lines on every backend ({every})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
