# pinkctl: every target bootstraps .venv itself, so a fresh clone needs only `make demo` / `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
BENCH_STAMP := $(VENV)/.installed-bench
# the native kernel (built by the install's hook; rebuilt here when its source changes)
KERNEL := src/pinkctl/_native/_kernel.so
export MUJOCO_GL ?= egl

.PHONY: demo test soak lint typecheck bench bench-readme clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	@touch $(STAMP)

$(KERNEL): src/pinkctl/_native/_kernel.c | $(STAMP)
	$(BIN)/python hatch_build.py

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e ".[dev,bench]"
	@touch $(BENCH_STAMP)

demo: $(STAMP) $(KERNEL)
	$(BIN)/pinkctl demo franka --plot docs/demo.png

lint: $(STAMP)
	$(BIN)/ruff check src tests examples bench
	$(BIN)/ruff format --check src tests examples bench

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck $(KERNEL)
	$(BIN)/python -m pytest -n 2 -q

soak: $(STAMP) $(KERNEL)
	PINKCTL_SOAK_TICKS=20000 $(BIN)/python -m pytest -n 2 -q tests/test_safety.py

bench: $(BENCH_STAMP) $(KERNEL)
	$(BIN)/python -m bench.step_latency
	$(BIN)/python -m bench.cascade_latency
	$(BIN)/python -m bench.tracking
	$(BIN)/python -m bench.ik_protocol
	$(BIN)/python -m bench.collision_cost
	$(BIN)/python -m bench.envs_step

bench-readme: $(BENCH_STAMP)
	$(BIN)/python -m bench.readme

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
