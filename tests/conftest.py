"""Test-session setup: headless MuJoCo rendering; shared robots; one local Ray cluster for the
Ray tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from types import ModuleType

import pytest

# Offscreen rendering without a display; must be set before mujoco creates a GL context.
os.environ.setdefault("MUJOCO_GL", "egl")


#: A CPU-bound process: what shares the machine with a CI run.
_BUSY = pytest.StashKey[list]()
_SPIN = [sys.executable, "-c", "while True: pass"]


def _start_busy(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(_SPIN) for _ in range(n)]


def _stop_busy(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
        process.wait()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--busy",
        type=int,
        default=0,
        metavar="N",
        help="run N CPU-bound processes beside the whole session (`make test-busy`): "
        "no test's outcome may depend on how busy the machine is",
    )


def pytest_configure(config: pytest.Config) -> None:
    # once, in the controlling process: xdist workers carry `workerinput`
    if config.getoption("--busy") and not hasattr(config, "workerinput"):
        config.stash[_BUSY] = _start_busy(config.getoption("--busy"))


def pytest_unconfigure(config: pytest.Config) -> None:
    _stop_busy(config.stash.get(_BUSY, []))


@pytest.fixture
def busy() -> Iterator[None]:
    """Two CPU-bound processes beside the test (as many as the CI machine has cores)."""
    processes = _start_busy(2)
    try:
        yield
    finally:
        _stop_busy(processes)


@pytest.fixture(scope="session")
def franka_robot():
    """The bundled Franka, loaded once per session (tests must not modify it)."""
    from pinkctl import load_pink_supported_robot

    return load_pink_supported_robot("franka")


@pytest.fixture
def franka_scene(franka_robot):
    """A fresh kinematic scene on the Franka (pinkctl.groups)."""
    from pinkctl.groups import KinematicScene

    return KinematicScene(franka_robot)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[ModuleType]:
    """A local Ray cluster of 2 CPUs (``ray.init(num_cpus=2)``), shared by the session.

    Skipped only when Ray is not installed *and* pinkctl declares it as its optional extra
    ``pinkctl[ray]``; a Ray backend without that extra fails here. Tests using it carry
    ``pytest.mark.xdist_group("ray")`` so that ``make test`` (``--dist loadgroup``) starts
    one cluster, not one per test worker.
    """
    try:
        import ray
    except ImportError:
        extras = metadata.metadata("pinkctl").get_all("Provides-Extra") or []
        assert "ray" in extras, "the Ray backend needs the optional extra pinkctl[ray]"
        pytest.skip("Ray is not installed (pip install 'pinkctl[ray]')")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    if started:
        ray.shutdown()
