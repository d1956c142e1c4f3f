"""The package's layers (ARCHITECTURE.md): no import cycle, no import against the layering,
and importing devplan changes nothing in xDSL.

Layers, lowest first (ARCHITECTURE.md): `diagnostics` and `dispatch`; `dialects` and `upstream`;
`system` and `analysis`; `passes`, `runtime` and `reference` side by side; the package API
(the root `__init__`, `universe`, `execution`); `tools`. A module may import its own package
and any lower layer; of its own layer, only what `SIDEWAYS` allows. Every import counts: at the top
of a file, inside a function, or under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from support import ROOT

LAYERS: dict[str, int] = {
    "diagnostics": 0,
    "dispatch": 0,
    "dialects": 1,
    "upstream": 1,
    "system": 2,
    "analysis": 2,
    "passes": 3,
    "runtime": 3,
    "reference": 3,
    "": 4,  # the package API: __init__.py, universe.py, execution.py
    "tools": 5,
}
"""The layer of each top-level package of devplan ("" for the modules at the top)."""

SIDEWAYS = {("analysis", "system")}
"""Imports allowed between two packages of one layer: analyses read the system description."""

SOURCE_DIRS = ("dialects", "upstream", "system", "analysis", "passes", "runtime")
SOURCE_DIRS += ("reference", "tools")


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name (`devplan.passes.plan_devices.planner`)."""
    found: dict[str, Path] = {}
    paths = [*ROOT.glob("*.py")]
    for directory in ("diagnostics", *SOURCE_DIRS):
        paths += (ROOT / directory).rglob("*.py")
    for path in paths:
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(("devplan", *parts))] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The devplan modules that module `name` (at `path`) imports, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            while target not in known and "." in target:
                target = target.rpartition(".")[0]
            if target in known and target != name:
                yield target


def import_graph() -> set[tuple[str, str]]:
    """Every import between two devplan modules, as (importer, imported)."""
    known = modules()
    return {
        (name, target) for name, path in known.items() for target in imported(name, path, known)
    }


def package_of(module: str) -> str:
    """The top-level package of a devplan module ("" for the modules at the top)."""
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    if parts[1] in LAYERS:
        return parts[1]
    return ""


def test_every_package_has_a_layer() -> None:
    packages = {package_of(module) for module in modules()}
    assert packages <= set(LAYERS), f"packages without a layer: {packages - set(LAYERS)}"


def test_no_import_cycle() -> None:
    names = sorted(modules())
    index = {name: i for i, name in enumerate(names)}
    edges = import_graph()
    rows = [index[a] for a, _ in edges]
    columns = [index[b] for _, b in edges]
    matrix = csr_matrix((np.ones(len(edges)), (rows, columns)), shape=(len(names), len(names)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    components: dict[int, list[str]] = {}
    for name, label in zip(names, labels, strict=True):
        components.setdefault(int(label), []).append(name)
    assert [c for c in components.values() if len(c) > 1] == []


def test_no_import_against_the_layering() -> None:
    wrong: list[str] = []
    for source, target in import_graph():
        a, b = package_of(source), package_of(target)
        if a == b or LAYERS[b] < LAYERS[a] or (a, b) in SIDEWAYS:
            continue
        wrong.append(f"{source} -> {target}")
    assert sorted(wrong) == []


SNAPSHOT = """
import importlib, pkgutil, sys
import xdsl.dialects
for info in pkgutil.iter_modules(xdsl.dialects.__path__, "xdsl.dialects."):
    try:
        importlib.import_module(info.name)
    except Exception:
        pass

def snapshot():
    state = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("xdsl."):
            continue
        for attr, value in sorted(vars(module).items()):
            if isinstance(value, type) and value.__module__ == name:
                for key, member in vars(value).items():
                    state[f"{name}.{attr}.{key}"] = id(member)
    return state

before = snapshot()
import devplan
for path in sys.argv[1:]:
    importlib.import_module(path)
ctx = devplan.context()
devplan.parse("func.func @f(%a: tensor<4xf32>) -> tensor<4xi1> {"
              " %c = arith.cmpf olt, %a, %a : tensor<4xf32> func.return %c : tensor<4xi1> }")
after = snapshot()
changed = sorted(k for k in before if after.get(k) != before[k])
added = sorted(k for k in after if k not in before and k.split(".")[0] == "xdsl"
               and any(k.startswith(m + ".") for m in {n.rsplit(".", 2)[0] for n in before}))
print("\\n".join(changed + added))
"""


def test_importing_devplan_changes_no_xdsl_class() -> None:
    """Importing every devplan module, building its context and parsing a program leaves
    every class of xDSL as it was: devplan's versions of upstream ops are classes of its
    own that its contexts load, never patches."""
    names = sorted(m for m in modules() if not m.startswith("devplan.tools"))
    result = subprocess.run(
        [sys.executable, "-c", SNAPSHOT, *names], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == []


RAY_MODULES = {"devplan.runtime.ray_cluster"}
"""The modules that may import Ray (a `ray` device's driver side reaches it through them)."""


def test_only_the_ray_modules_import_ray_and_only_inside_functions() -> None:
    """Ray is an extra, loaded when a ray device is built: never by importing devplan."""
    wrong: list[str] = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text(), str(path))
        functions = (ast.FunctionDef, ast.AsyncFunctionDef)
        in_functions = {
            inner
            for f in ast.walk(tree)
            if isinstance(f, functions)
            for inner in ast.walk(f)
            if inner is not f
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue
            if not any(t == "ray" or t.startswith("ray.") for t in targets):
                continue
            if name not in RAY_MODULES:
                wrong.append(f"{name}:{node.lineno} imports Ray")
            elif node not in in_functions:
                wrong.append(f"{name}:{node.lineno} imports Ray when it is imported")
    assert wrong == []
