# pinkctl: every target bootstraps .venv itself, so a fresh clone needs only `make demo` / `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
DEMO_STAMP  := $(VENV)/.installed-demo
BENCH_STAMP := $(VENV)/.installed-bench
PEERS_STAMP := $(VENV)/.installed-bench-peers
# placo pins Pinocchio 3.8 (pinkctl needs 4): it gets its own environment for bench/peers_tick.py
PLACO_VENV := .venv-placo
PLACO_STAMP := $(PLACO_VENV)/.installed
# "today's" pinkctl for the warm-started IK row of `make bench-peers` (the commit before issue 19)
BASELINE ?= ad22584
# what `make demo` writes (git-ignored); `make docs` regenerates the README's pictures
OUT := out
# the native kernel, the extension module pinkctl._native._kernel (built by the install's hook;
# rebuilt here when a source changes), named with the interpreter's suffix (.venv's is PYTHON's)
EXT_SUFFIX := $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
KERNEL := src/pinkctl/_native/_kernel$(EXT_SUFFIX)
KERNEL_SOURCES := $(wildcard src/pinkctl/_native/*.c src/pinkctl/_native/*.h)
# the compiled tick, pinkctl._native._tick (C++ on Pinocchio; optional: hatch_build.py skips
# it with a note when a compiler, Pinocchio's headers or Eigen is missing)
TICK := src/pinkctl/_native/_tick$(EXT_SUFFIX)
TICK_SOURCES := src/pinkctl/_native/_tick.cpp src/pinkctl/_native/_kernel.c src/pinkctl/_native/_native.h
export MUJOCO_GL ?= egl

.PHONY: demo docs pictures test test-busy soak lint typecheck bench bench-readme bench-peers bench-report clean

# the development toolchain (tests, linters, every extra); it holds the demo's extra too
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	@touch $(STAMP) $(DEMO_STAMP)

# only what the demo needs: pinkctl and its [demo] extra (matplotlib, imageio)
$(DEMO_STAMP): pyproject.toml
	@echo "make demo: installing pinkctl with its [demo] extra into $(VENV) (NumPy, Pinocchio, pink, MuJoCo, matplotlib, ...; about a minute on a fresh machine)"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install --progress-bar off -e ".[demo]"
	@touch $(DEMO_STAMP)

$(KERNEL): $(KERNEL_SOURCES) | $(DEMO_STAMP)
	$(BIN)/python hatch_build.py

$(TICK): $(TICK_SOURCES) | $(KERNEL)
	$(BIN)/python hatch_build.py --tick

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	@touch $(BENCH_STAMP)

$(PEERS_STAMP): $(BENCH_STAMP)
	$(BIN)/python -m pip install -q -e ".[dev,bench,bench-peers]"
	@touch $(PEERS_STAMP)

# Without a placo wheel for this Python the tick row says so and the other rows still run.
$(PLACO_STAMP):
	@test -x $(PLACO_VENV)/bin/python || $(PYTHON) -m venv $(PLACO_VENV)
	@if $(PLACO_VENV)/bin/python -m pip install -q "placo==0.10.2"; then touch $(PLACO_STAMP); \
	else echo "placo could not be installed: bench-peers runs without its row"; fi

demo: $(DEMO_STAMP) $(KERNEL) $(TICK)
	@mkdir -p $(OUT)
	@echo "make demo: a Franka traces a figure-eight in MuJoCo (17 s simulated): table, plot and picture in $(OUT)/"
	$(BIN)/pinkctl demo franka --plot $(OUT)/demo.png --picture $(OUT)/robot.png

# the README's pictures (tracked), then the API reference site, strict: a broken reference fails
pictures: $(STAMP) $(KERNEL)
	$(BIN)/pinkctl demo franka --plot docs/demo.png --picture docs/robot.png

docs: pictures
	$(BIN)/mkdocs build --strict --site-dir site

lint: $(STAMP)
	$(BIN)/ruff check src tests examples bench
	$(BIN)/ruff format --check src tests examples bench

typecheck: $(STAMP)
	$(BIN)/mypy

# the tests of the native/Python split run a second time with the kernel switched off: the
# Python path is what runs where no compiler was present at install
NATIVE_SPLIT_TESTS := $(addprefix tests/test_,qp_equivalence.py pink_ik.py motion_limits.py \
	compiled_tick.py array_step.py \
	ik.py ik_cache.py native.py native_ik.py native_build.py cascade.py safety.py containers.py \
	input_contract.py batch.py ik_rows.py retarget.py runner.py)

test: lint typecheck $(KERNEL) $(TICK)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q
	PINKCTL_NATIVE=0 $(BIN)/python -m pytest -n 2 --dist loadgroup -q $(NATIVE_SPLIT_TESTS)

# the same suite beside two CPU-bound processes: no test's outcome may depend on the load
test-busy: $(STAMP) $(KERNEL) $(TICK)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q --busy 2
	PINKCTL_NATIVE=0 $(BIN)/python -m pytest -n 2 --dist loadgroup -q --busy 2 $(NATIVE_SPLIT_TESTS)

soak: $(STAMP) $(KERNEL)
	PINKCTL_SOAK_TICKS=20000 $(BIN)/python -m pytest -n 2 -q tests/test_safety.py

bench: $(BENCH_STAMP) $(KERNEL) $(TICK)
	$(BIN)/python -m bench.step_latency
	$(BIN)/python -m bench.cascade_latency
	$(BIN)/python -m bench.tracking
	$(BIN)/python -m bench.ik_protocol
	$(BIN)/python -m bench.collision_cost
	$(BIN)/python -m bench.envs_step

bench-peers: $(PEERS_STAMP) $(KERNEL) $(TICK) $(PLACO_STAMP)
	$(BIN)/python -m bench.peers --baseline $(BASELINE) --write-docs

# one run of every performance block, written into docs/performance.md (~10 min, 2 idle cores)
bench-report: $(PEERS_STAMP) $(KERNEL) $(TICK) $(PLACO_STAMP)
	$(BIN)/python -m bench.report --write docs/performance.md

# rerun the benchmarks and rewrite the tables of docs/performance.md
bench-readme: $(BENCH_STAMP)
	$(BIN)/python -m bench.readme

clean:
	rm -rf $(VENV) $(PLACO_VENV) dist build site $(OUT) .pytest_cache .mypy_cache .ruff_cache
