# flexbody — set-up, main job, tests and benchmarks. Every target installs what it needs first.
VENV    ?= .venv
PYTHON  ?= python3
RUNTIME := $(VENV)/.runtime
TOOLS   := $(VENV)/.tools
STAMP   := $(VENV)/.installed
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# CHOLMOD (scikit-sparse) and the optimised single-threaded BLAS it then uses instead of Debian's reference BLAS
# (the 1e5-coordinate factorisation 3.9 s -> 1.35 s, docs/performance.md "Scaling"), and the X and GL libraries
# the gmsh wheel's library links to (fb.mesh.from_geometry)
SYSTEM_PACKAGES := libsuitesparse-dev libopenblas0-serial libglu1-mesa libxcursor1 libxft2 libxinerama1
# the host's pip installs into the environment when it can (pip >= 22.3: --python), which spares the
# environment a pip of its own (3 s of the first run); otherwise the environment gets one
HOST_PIP = $(PYTHON) -m pip --python "$$(command -v $(PYTHON))" --version >/dev/null 2>&1
PIP      = $$([ -x $(VENV)/bin/pip ] && echo $(VENV)/bin/pip || echo "$(PYTHON) -m pip --python $(VENV)/bin/python")
# the default tests on every core (pytest-xdist); the numba kernels are compiled once, by setup. The tests write the
# byte code of what they import (also where PYTHONDONTWRITEBYTECODE is set), so their subprocesses do not parse it
# again; byte-compiling every installed module beforehand took longer (27 s for mostly modules no test imports)
PYTEST  := env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m pytest -q -n auto --dist worksteal

.PHONY: setup run lint test test-slow test-all bench crocoddyl-venv docs docs-check clean

## the system packages, when apt-get can install them and they are missing
SYSTEM = if command -v apt-get >/dev/null 2>&1 && ! dpkg -s $(SYSTEM_PACKAGES) >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(SYSTEM_PACKAGES); fi
## imports (so byte-compiles) the modules named after it; runs while the kernels compile
IMPORT  = env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -c "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]"

## the package and what it needs to run, with the numba kernels a run needs compiled into the on-disk cache
## (pip does not byte-compile every module of every dependency; the modules a run imports are byte-compiled
## while the kernels compile, also where PYTHONDONTWRITEBYTECODE is set, so no run parses them again)
$(RUNTIME): pyproject.toml
	@$(SYSTEM)
	$(PYTHON) -m venv $$($(HOST_PIP) && echo --without-pip) $(VENV)
	$(PIP) install -q --no-compile -e .
	$(IMPORT) matplotlib.pyplot pyvista flexbody & \
		env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m flexbody.precompile --stages run && wait
	touch $(RUNTIME)

## what compiling the kernels and linting need, first: the requirements of pyproject.toml on numpy, scipy, numba,
## scikit-sparse, threadpoolctl, sympy, ruff and mypy (flexbody's other imports are unchecked by mypy's settings)
FIRST = import re; print(*re.findall(r"\"((?:numpy|scipy|numba|scikit-sparse|threadpoolctl|sympy|ruff|mypy)[<>=~!][^\"]*)\"", open("pyproject.toml").read()))
$(TOOLS): pyproject.toml
	@$(SYSTEM)
	$(PYTHON) -m venv $$($(HOST_PIP) && echo --without-pip) $(VENV)
	$(PIP) install -q --no-compile $$($(PYTHON) -c '$(FIRST)')
	touch $(TOOLS)

## ... then the package, its other requirements, the test extras (independent libraries the tests compare with,
## pytest and pytest-xdist) while every kernel compiles (from the source tree, where the package's editable install
## points); what was installed first is held (a pip constraint), so that this install cannot change a package
## the compilation is using. The modules the tests import are byte-compiled once it is done.
$(STAMP): $(TOOLS)
	$(PIP) list --format=freeze --exclude-editable > $(VENV)/held.txt
	($(PIP) install -q --no-compile -c $(VENV)/held.txt -e ".[test,lint]" && \
		$(IMPORT) matplotlib.pyplot pyvista flexbody pytest xdist hypothesis skfem pinocchio) & extras=$$!; \
		env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -m flexbody.precompile --stages all; \
		compiled=$$?; wait $$extras && exit $$compiled
	touch $(RUNTIME) $(STAMP)

setup: $(STAMP)

## main job: the flagship case (arm carrying a flexible beam under task-level control),
## results in out/16_arm_beam_task_control
run: $(RUNTIME)
	$(VENV)/bin/flexbody run cases/16_arm_beam_task_control.py --out out/16_arm_beam_task_control

## lint and format check (ruff) and type check (mypy) of the package; settings in pyproject.toml
lint: $(TOOLS)
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/mypy

## the set-up and the linters (two jobs: the linters run while the kernels compile), then the default tests
## (fast); pytest's exit code (including 5, "no tests") fails the target
test:
	@$(MAKE) --no-print-directory -j2 setup lint
	$(PYTEST) --durations=15

## slow verification tests (mesh-convergence studies, large meshes)
test-slow: setup
	$(PYTEST) -m slow

test-all: setup
	$(PYTEST) -m "slow or not slow"

## the benchmarks' peers that the tests do not need (Exudyn, MuJoCo), on top of the test set-up
BENCH_STAMP := $(VENV)/.bench
$(BENCH_STAMP): $(STAMP)
	$(PIP) install -q --no-compile -c $(VENV)/held.txt -e ".[test,lint,bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(VENV)/bin/python tests/benchmarks/bench_assembly.py
	$(VENV)/bin/python tests/benchmarks/bench_tetrahedra.py
	$(VENV)/bin/python tests/benchmarks/bench_constrained_dynamics.py
	$(VENV)/bin/python tests/benchmarks/bench_dense_factorisations.py
	$(VENV)/bin/python tests/benchmarks/bench_rigid_dynamics.py
	$(VENV)/bin/python tests/benchmarks/bench_contact_mujoco.py
	$(VENV)/bin/python tests/benchmarks/bench_kernel_threads.py
	$(VENV)/bin/python tests/benchmarks/bench_blas_threads.py
	$(VENV)/bin/python tests/benchmarks/bench_scaling.py
	$(VENV)/bin/python tests/benchmarks/bench_mpc_update.py
	$(VENV)/bin/python tests/benchmarks/bench_shooting_vs_ddp.py
	$(PIP) install -q -e ".[test,bench]"
	$(VENV)/bin/python tests/benchmarks/bench_flexible_vs_exudyn.py
	$(VENV)/bin/python tests/benchmarks/bench_flexible_dynamics.py --threads 1

## Crocoddyl, the optimal-control oracle of tests/benchmarks/bench_reach_crocoddyl.py, in an environment of its own:
## its 3.2.1 wheel crashes beside the test set's pin 4.1 and runs with pin 4.0.0 (the numbers in docs/performance.md)
CROCODDYL_VENV := .venv-crocoddyl
$(CROCODDYL_VENV)/.installed:
	$(PYTHON) -m venv --without-pip $(CROCODDYL_VENV)
	$(PYTHON) -m pip --python $(CROCODDYL_VENV)/bin/python install -q "pin==4.0.0"
	$(PYTHON) -m pip --python $(CROCODDYL_VENV)/bin/python install -q --no-deps "crocoddyl==3.2.1" "libcrocoddyl==3.2.1"
	touch $@

crocoddyl-venv: $(CROCODDYL_VENV)/.installed

## the documentation site in docs/_build/html (offline; warnings are errors): pages, API reference, and the
## gallery, whose examples run at build time
DOCS_STAMP := $(VENV)/.docs
$(DOCS_STAMP): $(STAMP)
	$(PIP) install -q -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/python -m sphinx -W --keep-going -q -b html docs docs/_build/html

## headless Chromium opens the built site's index, gallery and one example: screenshots in docs/_build/screenshots,
## failure on a broken link, a missing image or a JavaScript error
docs-check: docs
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver; fi
	$(VENV)/bin/python docs/check_site.py docs/_build/html --screenshots docs/_build/screenshots

clean:
	rm -rf out .pytest_cache docs/_build docs/gallery docs/api/generated
