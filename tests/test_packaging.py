"""A non-editable install works: `pip install .` into a fresh virtual environment gives
an importable package with its version, `py.typed` and LICENSE, a `devplan-opt` that
runs, a `devplan-run` that lowers and runs a level-1 program (so every pass of
default-pipeline, each a subpackage, was installed), and a plain `xdsl-opt` that sees
devplan's passes through the plugin entry point. The packages pyproject.toml lists are
the packages of the tree: setuptools installs those it is told of and no others.

To stay fast and off the network (beyond the package index, for the build backend and
xdsl's scripts), the fresh environment installs devplan with `--no-deps` and reaches the
dependencies through a `.pth` line naming this environment's site-packages: a directory
a `.pth` line adds is searched, but `.pth` files inside it (this environment's editable
install of devplan) are not run, so `import devplan` there is the installed copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import xdsl

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]

PLANNED = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.addf %a, %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""


def run(command: list[str | Path], **kw: object) -> str:
    done = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, timeout=300, **kw
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def tree_packages(directory: Path = ROOT, name: str = "devplan") -> list[str]:
    """devplan's packages in the source tree: the root and, below it, each directory with
    an `__init__.py` whose parents are packages too (tests/ is not one)."""
    found = [name]
    for child in sorted(directory.iterdir()):
        if (child / "__init__.py").is_file():
            found += tree_packages(child, f"{name}.{child.name}")
    return found


def test_pyproject_lists_every_package_of_the_tree() -> None:
    listed = PYPROJECT["tool"]["setuptools"]["packages"]
    assert sorted(listed) == sorted(tree_packages())


def pip_available() -> bool:
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    return probe.returncode == 0


def test_pip_install_of_the_source_tree_gives_a_working_package(tmp_path: Path) -> None:
    assert pip_available(), f"pip is not available to {sys.executable}: nothing to install with"
    # Built from a copy, so the build's `build/` and `*.egg-info` stay out of the tree.
    source = tmp_path / "devplan"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "build", "*.egg-info", "__pycache__", "Output", ".hypothesis"
        ),
    )
    env = tmp_path / "venv"
    # Without a pip of its own (bootstrapping one costs some 5 CPU-s): this pip installs
    # into it (`--python`).
    run([sys.executable, "-m", "venv", "--without-pip", env])
    python = env / "bin" / "python"
    site = Path(
        run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # --ignore-installed: pip sees the dependencies' copies as installed already, and
    # must neither skip xdsl nor try to remove what it finds there.
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps"]
    pip += ["--ignore-installed", "-q"]
    quiet = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    run([*pip, source], env=quiet)
    run([*pip, f"xdsl=={xdsl.__version__}"], env=quiet)  # for its xdsl-opt script

    installed = Path(run([python, "-c", "import devplan; print(devplan.__file__)"]).strip())
    assert installed.parent == site / "devplan"  # the installed copy, not the checkout
    assert (installed.parent / "py.typed").is_file()
    assert run([python, "-c", "import devplan; print(devplan.__version__)"]).strip() == VERSION
    licenses = list(site.glob(f"devplan-{VERSION}.dist-info/licenses/LICENSE"))
    assert [p.read_text() for p in licenses] == [(ROOT / "LICENSE").read_text()]

    version = run([env / "bin" / "devplan-opt", "--version"])
    assert version.startswith(f"devplan-opt {VERSION} ")

    # devplan-run of the fresh environment lowers and runs a level-1 program as the
    # checkout's does, from a directory where only the installed copy can be imported.
    program = tmp_path / "f.mlir"
    program.write_text(PLANNED)
    seed = [program, "--random-args", "0"]
    ran = run([env / "bin" / "devplan-run", *seed], cwd=tmp_path)
    assert ran == run([Path(sys.executable).parent / "devplan-run", *seed], cwd=tmp_path)

    # Plain xdsl-opt of the fresh environment lists devplan's passes and runs one.
    wide = {**os.environ, "COLUMNS": "100000"}  # argparse would wrap the names mid-word
    listed = run([env / "bin" / "xdsl-opt", "--help"], env=wide)
    assert "plan-devices" in listed.replace(",", " ").split()
    planned = run([env / "bin" / "xdsl-opt", program, "-p", "plan-devices"])
    assert 'vdev.device = #vdev.device<"cpu", 0' in planned
