"""The READMEs' commands and Python blocks run as written and print what they show.

Every fenced block of README.md and examples/README.md is read by its info string:

* ```console: a line starting with `$ ` is a command; the lines after it, up to the next
  `$ `, are what it prints (stdout and stderr together, as a terminal shows them).
* ```sh: each line is a command (a trailing backslash continues it); nothing is shown,
  so only its exit status is checked.
* ```python: the block runs alone in a fresh interpreter (one namespace per block). An
  expression statement whose trailing comment is a Python expression (before an optional
  `: prose`) shows its value: `t == u  # True` must be true of the block as it runs.
* `no-test` after the language (```sh no-test) marks a block that must not run (`make
  test` itself, a GPU); `NOT_RUN` names each, so no block goes untested by accident.
* Other languages (mlir, toml) and bare fences are listings and are not run; a listing
  whose first line starts with `$ ` is an error, since it reads as an untested command.

Shown output is compared with the actual one line by line, exactly, except that
`...` alone on a line stands for any number of lines (none included), `...` inside a
line, with the spaces around it, for any text on that line (timings: `wall time ...`),
trailing spaces and blank lines at the end are ignored, and the working directory's
absolute path reads as relative. A command exits with status 1 when its shown output has
an `error:` line (a user error) and 0 otherwise.

Commands run as `bash -o pipefail -c COMMAND` from a temporary copy of the repository
(nothing is written into the source tree; `.venv` there is a link to this interpreter's
environment) with the environment's bin first on PATH, as after
`source .venv/bin/activate`; Python blocks run with that directory as the current one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
READMES = ("README.md", "examples/README.md")
BIN = Path(sys.prefix) / "bin"
TIMEOUT_S = 300

NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "make demo"): "make itself: the tested commands run after it",
    ("README.md", "devplan-run examples/reduction.mlir --random-args 0 --system gpu.toml"): (
        "needs an NVIDIA GPU and its system file"
    ),
    ("README.md", "make mlir-integration MLIR_DIR="): (
        "needs MLIR's test files, which the user fetches; without them it only says so"
    ),
    ("README.md", "ray start --head --port=6399"): (
        "starts a Ray cluster of two raylets (20 s and 700 MB here); tests/runtime/"
        "test_ray_device.py runs the same devplan-run across two raylets and checks the "
        "report shown after it"
    ),
}
"""The blocks marked `no-test`, by file and the start of their first line, and why."""

LISTINGS = {"", "mlir", "toml"}
"""Info strings of blocks that are shown, not run."""

ELIDED = "..."


@dataclass(frozen=True)
class Command:
    line: int
    """The README line the command starts on (1-based)."""
    text: str
    shown: tuple[str, ...] | None
    """What the README shows it printing (console blocks), or None (sh blocks)."""


@dataclass(frozen=True)
class Block:
    path: str
    line: int
    """The line of the opening fence (1-based)."""
    language: str
    no_test: bool
    body: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line} (```{self.language} block)"

    def commands(self) -> list[Command]:
        commands: list[Command] = []
        first = self.line + 1
        if self.language == "sh":
            pending: list[str] = []
            start = first
            for number, line in enumerate(self.body, first):
                if not pending:
                    start = number
                if not pending and (not line.strip() or line.lstrip().startswith("#")):
                    continue
                pending.append(line.removesuffix("\\"))
                if not line.endswith("\\"):
                    commands.append(Command(start, " ".join(pending).strip(), None))
                    pending = []
            assert not pending, f"{self.where}: the last command ends in a backslash"
            return commands
        current: tuple[int, str] | None = None
        shown: list[str] = []
        for number, line in enumerate(self.body, first):
            if line.startswith("$ "):
                if current is not None:
                    commands.append(Command(current[0], current[1], tuple(shown)))
                current, shown = (number, line[2:]), []
            else:
                assert current is not None, f"{self.path}:{number}: output before any `$ ` command"
                shown.append(line)
        if current is not None:
            commands.append(Command(current[0], current[1], tuple(shown)))
        return commands


def read_blocks(path: str, text: str | None = None) -> list[Block]:
    """The fenced blocks of `path` (its `text`, when given, else the file's)."""
    blocks: list[Block] = []
    lines = (ROOT / path).read_text().splitlines() if text is None else text.splitlines()
    opened: tuple[int, str] | None = None
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        if not line.startswith("```"):
            if opened is not None:
                body.append(line)
            continue
        if opened is None:
            opened, body = (number, line[3:].strip()), []
            continue
        assert line == "```", (
            f"{path}:{number}: a fence inside the block opened at line {opened[0]}"
        )
        words = opened[1].split()
        language = words[0] if words else ""
        blocks.append(Block(path, opened[0], language, words[1:] == ["no-test"], tuple(body)))
        opened = None
    assert opened is None, f"{path}:{opened[0]}: the block is never closed"
    return blocks


@cache
def all_blocks() -> tuple[Block, ...]:
    return tuple(block for path in READMES for block in read_blocks(path))


def runnable() -> list[Block]:
    return [b for b in all_blocks() if b.language not in LISTINGS and not b.no_test]


# -- matching shown output ----------------------------------------------------------------


def _pattern(shown: str) -> re.Pattern[str] | str:
    if ELIDED not in shown:
        return shown
    parts = re.split(r" *\.\.\. *", shown)
    return re.compile(".*?".join(re.escape(part) for part in parts))


def first_difference(shown: list[str], actual: list[str]) -> tuple[int, int] | None:
    """None when `actual` matches `shown`; else the shown line and actual line (0-based)
    where the best alignment, the one getting furthest through `shown`, breaks down."""
    patterns = [None if line == ELIDED else _pattern(line) for line in shown]
    failures: dict[tuple[int, int], tuple[int, int] | None] = {}

    def match(i: int, j: int) -> tuple[int, int] | None:
        if (i, j) in failures:
            return failures[i, j]
        result: tuple[int, int] | None
        if i == len(patterns):
            result = None if j == len(actual) else (i, j)
        elif patterns[i] is None:
            result = (i, j)
            for k in range(j, len(actual) + 1):
                attempt = match(i + 1, k)
                if attempt is None:
                    result = None
                    break
                result = max(result, attempt)
        else:
            pattern = patterns[i]
            fits = j < len(actual) and (
                actual[j] == pattern
                if isinstance(pattern, str)
                else pattern.fullmatch(actual[j]) is not None
            )
            result = match(i + 1, j + 1) if fits else (i, j)
        failures[i, j] = result
        return result

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 4 * (len(shown) + len(actual)) + 1000))
    return match(0, 0)


def _trimmed(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def difference_message(block: Block, command: Command, output: str, status: int) -> str | None:
    shown = _trimmed(list(command.shown or ()))
    actual = _trimmed(output.splitlines())
    where = f"{block.path}:{command.line}: `$ {command.text}`"
    expected_status = 1 if any("error:" in line for line in shown) else 0
    if command.shown is None:
        if status != 0:
            return f"{where} exited with status {status}; it printed:\n{output}"
        return None
    problems: list[str] = []
    if status != expected_status:
        problems.append(f"exit status {status}, expected {expected_status}")
    difference = first_difference(shown, actual)
    if difference is not None:
        i, j = difference
        shown_line = (
            f"{block.path}:{command.line + 1 + i} shows {shown[i]!r}"
            if i < len(shown)
            else "the README shows nothing more"
        )
        actual_line = (
            f"line {j + 1} of the output is {actual[j]!r}"
            if j < len(actual)
            else "the output has ended"
        )
        problems.append(f"{shown_line}, but {actual_line}")
    if not problems:
        return None
    return f"{where}: " + "; ".join(problems) + "\nwhat it printed:\n" + output


# -- running ----------------------------------------------------------------------------


def workdir(tmp_path: Path) -> Path:
    """A copy of the repository, where commands may write what they like."""
    copy = tmp_path / "repo"
    shutil.copytree(
        ROOT,
        copy,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv",
            ".git",
            "build",
            "__pycache__",
            ".pytest_cache",
            ".hypothesis",
            "Output",
            "*.egg-info",
            ".lit_test_times.txt",
        ),
    )
    (copy / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    return copy


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = sys.prefix
    env.pop("PYTHONHOME", None)
    return env


def run_shell(command: str, cwd: Path) -> tuple[str, int]:
    run = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=cwd,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return run.stdout.replace(f"{cwd}/", "").replace(str(cwd), "."), run.returncode


PYTHON_RUNNER = r"""
import ast, io, sys, tokenize

path, readme, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
source = open(path).read()
tree = ast.parse(source)
ast.increment_lineno(tree, first - 1)
comments = {
    token.start[0] + first - 1: token.string[1:].strip()
    for token in tokenize.generate_tokens(io.StringIO(source).readline)
    if token.type == tokenize.COMMENT
}

def shown_value(comment):
    for text in (comment, comment.split(":", 1)[0]):
        try:
            return ast.parse(text, mode="eval")
        except SyntaxError:
            pass
    return None

namespace = {"__name__": "__main__"}
for node in tree.body:
    shown = shown_value(comments.get(node.end_lineno, "")) if isinstance(node, ast.Expr) else None
    if shown is None:
        exec(compile(ast.Module([node], []), readme, "exec"), namespace)
        continue
    value = eval(compile(ast.Expression(node.value), readme, "eval"), namespace)
    ast.increment_lineno(shown, node.end_lineno - 1)
    expected = eval(compile(shown, readme, "eval"), namespace)
    try:
        same = bool(value == expected)
    except Exception:
        same = repr(value) == repr(expected)
    if not same:
        print(
            f"{readme}:{node.end_lineno}: the comment shows {ast.unparse(shown)}, "
            f"but the statement gives {value!r}",
            file=sys.stderr,
        )
        sys.exit(1)
"""


def run_python(block: Block, cwd: Path) -> tuple[str, int]:
    script = cwd / "build" / f"readme_block_{block.line}.py"
    script.parent.mkdir(exist_ok=True)
    script.write_text("\n".join(block.body) + "\n")
    run = subprocess.run(
        [str(BIN / "python"), "-c", PYTHON_RUNNER, str(script), block.path, str(block.line + 1)],
        cwd=cwd,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return run.stdout, run.returncode


# -- the tests ----------------------------------------------------------------------------


def test_the_readmes_have_blocks_of_every_kind() -> None:
    """Guards the parser: a change that stopped it finding blocks would run nothing."""
    blocks = runnable()
    commands = [c for b in blocks if b.language in ("sh", "console") for c in b.commands()]
    shown = [c for c in commands if c.shown]
    assert len(commands) >= 15
    assert len(shown) >= 8
    assert sum(b.language == "python" for b in blocks) >= 3


def unlisted_blocks(blocks: tuple[Block, ...] | list[Block]) -> list[str]:
    """What is wrong with the blocks that do not run: each `no-test` block NOT_RUN does
    not list, each NOT_RUN entry no block matches, each listing that reads as a command."""
    problems: list[str] = []
    found: set[tuple[str, str]] = set()
    for block in blocks:
        if block.language not in LISTINGS | {"sh", "console", "python"}:
            problems.append(f"{block.where}: the test knows no language {block.language!r}")
        elif block.language in LISTINGS and block.body and block.body[0].startswith("$ "):
            problems.append(f"{block.where} starts with a `$ ` command: make it ```console")
        if not block.no_test:
            continue
        first_line = block.body[0] if block.body else ""
        listed = [k for k in NOT_RUN if k[0] == block.path and first_line.startswith(k[1])]
        if not listed:
            problems.append(f"{block.where} is marked no-test, but NOT_RUN does not list it")
        found.update(listed)
    problems += [
        f"NOT_RUN lists {key}, which no no-test block matches" for key in set(NOT_RUN) - found
    ]
    return problems


def test_blocks_not_run_are_the_ones_listed() -> None:
    assert unlisted_blocks(all_blocks()) == []


def test_an_unlisted_no_test_block_or_an_untagged_command_is_reported() -> None:
    text = "```sh no-test\nrm -rf build\n```\n```\n$ devplan-opt x.mlir\nout\n```\n```cpp\nx\n```\n"
    problems = unlisted_blocks(read_blocks("README.md", text))
    assert (
        problems[0] == "README.md:1 (```sh block) is marked no-test, but NOT_RUN does not list it"
    )
    assert problems[1] == "README.md:4 (``` block) starts with a `$ ` command: make it ```console"
    assert problems[2] == "README.md:8 (```cpp block): the test knows no language 'cpp'"
    assert len(problems) == 3 + len(NOT_RUN)


def test_console_and_sh_blocks_split_into_commands_and_shown_output() -> None:
    text = "```console\n$ a\none\n\n$ b\n```\n```sh\n# why\nc --x \\\n  --y\nd  # note\n```\n"
    console, sh = read_blocks("README.md", text)
    assert console.commands() == [Command(2, "a", ("one", "")), Command(5, "b", ())]
    assert sh.commands() == [Command(9, "c --x    --y", None), Command(11, "d  # note", None)]


@pytest.mark.parametrize(
    ("shown", "actual", "difference"),
    [
        (["a", "b"], ["a", "b"], None),
        (["a", "b"], ["a", "c"], (1, 1)),
        (["a"], ["a", "b"], (1, 1)),
        (["a", "b"], ["a"], (1, 1)),
        (["a", "...", "z"], ["a", "z"], None),
        (["a", "...", "z"], ["a", "b", "c", "z"], None),
        (["a", "...", "z"], ["a", "b", "c"], (2, 3)),
        (["wall time ..., model 5 us"], ["wall time 21.0 ms, model 5 us"], None),
        (["wall time ..., model 5 us"], ["wall time 21.0 ms, model 6 us"], (0, 0)),
        (["x  ...   y"], ["x 1.5 us y"], None),
        (["x ... y"], ["x 1", "y"], (0, 0)),
        (["a.b"], ["aXb"], (0, 0)),
    ],
)
def test_shown_output_matches_with_elisions_and_names_the_first_difference(
    shown: list[str], actual: list[str], difference: tuple[int, int] | None
) -> None:
    assert first_difference(shown, actual) == difference


def test_a_difference_names_the_readme_line_and_the_status() -> None:
    (block,) = read_blocks("README.md", "intro\n```console\n$ tool\nerror: one\ntwo\n```\n")
    (command,) = block.commands()
    message = difference_message(block, command, "error: one\nthree\n", 0)
    assert message is not None
    assert message.splitlines()[0] == (
        "README.md:3: `$ tool`: exit status 0, expected 1; "
        "README.md:5 shows 'two', but line 2 of the output is 'three'"
    )
    assert difference_message(block, command, "error: one\ntwo  \n\n", 1) is None


def test_the_readmes_name_only_files_the_repository_has() -> None:
    top = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name not in ("build", ".venv")}
    for path in READMES:
        text = (ROOT / path).read_text()
        base = (ROOT / path).parent
        assert "DESIGN" not in text, f"{path} refers to DESIGN, which the repository lacks"
        for target in re.findall(r"\]\(([^)#]+)\)", text):
            if "://" not in target:
                assert (base / target).exists(), f"{path} links to {target}, which does not exist"
        for name in re.findall(r"`([\w./-]+)`", text):
            first = name.split("/", 1)[0]
            if name.endswith(".md") or ("/" in name and first in top and "*" not in name):
                assert (ROOT / name).exists() or (base / name).exists(), (
                    f"{path} names `{name}`, which the repository lacks"
                )


@pytest.mark.parametrize("block", runnable(), ids=lambda b: f"{b.path}:{b.line}")
def test_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    assert (BIN / "devplan-opt").exists(), f"no devplan-opt in {BIN}: run `make demo` first"
    cwd = workdir(tmp_path)
    if block.language == "python":
        output, status = run_python(block, cwd)
        if status != 0:
            pytest.fail(f"{block.where} failed:\n{output}", pytrace=False)
        return
    for command in block.commands():
        output, status = run_shell(command.text, cwd)
        message = difference_message(block, command, output, status)
        if message is not None:
            pytest.fail(message, pytrace=False)
