# `make demo` and `make test` work on a fresh machine with Python 3 and make:
# each (re)creates .venv when it is missing or pyproject.toml changed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.devplan-installed

.PHONY: test demo lint pytest lit bench fuzz semantics mutate mlir-integration clean

# setuptools installs a package whose directory is the repository's top level through an
# import finder, and says so in a notice about folders named like the package; there is
# no such folder here, so the notice is silenced. `--no-compile`: pip would compile every
# module of every package (Ray's, Numba's, ...) to bytecode, about 33 of the install's 57
# CPU-s cold; the modules a run imports are compiled when first imported instead (into the
# PYTHONPYCACHEPREFIX below under `make test`).
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' \
		$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile \
		-e '.[test,dev]'
	@touch $(STAMP)

# pytest runs on every core (`-n auto`); work stealing keeps each file's tests together at
# first, so one process compiles a file's kernels, and evens out the slow files at the end.
PYTEST_JOBS ?= auto

# What the suite may not add to the source tree: changes git sees, Numba cache files (in
# ignored `__pycache__` folders), `build/`, hypothesis' `.hypothesis/`. Listed before and
# after `make test`; a difference fails it. Hypothesis keeps its data under the user's cache.
TREE_STATE = { git status --porcelain --untracked-files=all 2>/dev/null; \
	find . \( -path ./.venv -o -path ./.git \) -prune -o \( -name '*.nbi' -o -name '*.nbc' \
	-o -name .hypothesis -o -path ./build \) -print; } | LC_ALL=C sort
export HYPOTHESIS_STORAGE_DIRECTORY ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/devplan/hypothesis
# Python's compiled modules go to the user's cache as well, never beside the sources: a
# tool started by lit or a test then imports devplan's modules compiled once per run, not
# compiled again from source in each process (about 0.3 s of CPU a start) as they are
# where the environment sets PYTHONDONTWRITEBYTECODE.
export PYTHONPYCACHEPREFIX ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/devplan/pycache
unexport PYTHONDONTWRITEBYTECODE

test: $(STAMP)
	@$(TREE_STATE) > $(VENV)/.tree-before
	$(BIN)/ruff check --quiet .
	$(BIN)/lit --succinct --order=smart tests/filecheck
	$(BIN)/pytest -q -n $(PYTEST_JOBS) --dist worksteal --rootdir=tests tests
	@$(TREE_STATE) | diff $(VENV)/.tree-before - > $(VENV)/.tree-diff || { \
		echo "error: make test changed the source tree ('>' added, '<' removed):"; \
		cat $(VENV)/.tree-diff; exit 1; }

pytest: $(STAMP)
	$(BIN)/pytest -q -n $(PYTEST_JOBS) --dist worksteal --rootdir=tests tests

lit: $(STAMP)
	$(BIN)/lit -v tests/filecheck

# Differential fuzzing at length: 2,000 random level-1 programs against the oracle, unseeded
# (DEVPLAN_FUZZ_SEED=N replays a seed); failing examples are kept in .hypothesis/fuzz and
# replayed first next time, each failing program written to build/fuzz-failures/.
# (`make test` runs a fixed set of 64 of them, fewer since the generator draws linalg ops,
# so that its share of `make test` stays about a minute.)
fuzz: $(STAMP)
	DEVPLAN_FUZZ_EXAMPLES=$${DEVPLAN_FUZZ_EXAMPLES:-2000} $(BIN)/pytest -q --rootdir=tests tests/test_differential_fuzz.py

# Every arith/math op x type against the exact LangRef model on the numba backend too
# (`make test` runs every combination on host code and the numpy backend, a sample on numba).
semantics: $(STAMP)
	DEVPLAN_SEMANTICS_NUMBA=all $(BIN)/pytest -q --rootdir=tests tests/runtime/test_arith_semantics.py

# Mutation testing (Cosmic Ray) of the planner, elide-copies, lower-to-device, the oracle and
# the scalar semantics, each with its tests; prints the score per module and overall.
# `make mutate MODULES=reference SAMPLE=40` for a quick run (SAMPLE mutants a module, SEED);
# after adding tests, `MUTATE_FLAGS=--rerun-survivors` with the same SAMPLE and SEED runs
# that session's survivors again.
MODULES ?= reference,reference-scalars,elide-copies,planner,semantics,numpy-semantics,lower-to-device
SAMPLE ?= 0
SEED ?= 1
MUTATE_FLAGS ?=

mutate: $(STAMP)
	$(BIN)/python mutation/mutate.py --modules $(MODULES) --sample $(SAMPLE) --seed $(SEED) \
		$(MUTATE_FLAGS)

# MLIR's integration tests as published (not part of `make test`): every .mlir directly in
# MLIR_DIR through devplan-run on each CPU backend and LLVM's FileCheck; prints the table.
MLIR_DIR ?=
mlir-integration: $(STAMP)
	@$(BIN)/python tests/mlir_integration.py "$(MLIR_DIR)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/pyright

demo: $(STAMP)
	@$(BIN)/python examples/demo.py

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b; done

clean:
	rm -rf $(VENV) build *.egg-info
