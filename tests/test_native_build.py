"""The native kernel is the CPython extension module ``pinkctl._native._kernel``: how it loads,
what runs without it, and how the QP layer answers a problem the kernel refuses."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from importlib.machinery import ExtensionFileLoader

import numpy as np
import pytest

from pinkctl._native import NATIVE_ENVIRONMENT_VARIABLE, kernel_module, native_available
from pinkctl.qp.errors import QPSolveError
from pinkctl.qp.problem import QPWorkspace
from pinkctl.qp.solvers.box import BoxSolver

switched_off = pytest.mark.skipif(
    os.environ.get(NATIVE_ENVIRONMENT_VARIABLE) == "0", reason="the native kernel is switched off"
)


@switched_off
def test_the_kernel_is_an_extension_module_of_this_interpreter() -> None:
    module = kernel_module()
    assert module.__name__ == "pinkctl._native._kernel"
    assert isinstance(module.__loader__, ExtensionFileLoader)
    assert module.__file__ is not None
    assert module.__file__.endswith(sysconfig.get_config_var("EXT_SUFFIX"))


@switched_off
def test_the_module_refuses_null_addresses_and_wrong_arity() -> None:
    module = kernel_module()
    buffer = np.zeros(4)
    with pytest.raises(ValueError, match="null address"):
        module.update(0, buffer.ctypes.data)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        module.update(buffer.ctypes.data)
    with pytest.raises(TypeError):
        module.box_qp("4", *[buffer.ctypes.data] * 7)


def test_the_switch_turns_the_kernel_off() -> None:
    if os.environ.get(NATIVE_ENVIRONMENT_VARIABLE) == "0":
        assert native_available() == (False, f"switched off ({NATIVE_ENVIRONMENT_VARIABLE}=0)")
        with pytest.raises(RuntimeError, match="switched off"):
            kernel_module()
    else:
        assert native_available() == (True, "")


_WITHOUT_EXTENSION = """
import sys
sys.modules["pinkctl._native._kernel"] = None  # as if no compiler had built it
import numpy as np
from pinkctl import PinkIKController, RobotState, JointState, load_pink_supported_robot
from pinkctl._native import native_available
robot = load_pink_supported_robot("franka")
names = robot.joint_names
controller = PinkIKController(robot, names, [robot.tool_frame], dt=0.005)
q = np.array([robot.home_positions()[n] for n in names])
state = RobotState(joints=JointState.from_name(names, positions=(names, q)))
controller.reset(state, None, 0.0)
controller.forward(state, None, 0.005)
print(native_available()[1])
print(controller.shaper.native, controller.status.value, controller.qp_step.last_solver)
"""


def test_without_the_extension_the_python_path_runs() -> None:
    """The install without a C compiler: the import fails, the Python path runs a tick."""
    env = {k: v for k, v in os.environ.items() if k != NATIVE_ENVIRONMENT_VARIABLE}
    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTENSION],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert "pinkctl._native._kernel is not built" in out[-2]
    assert out[-1] == "False ok daqp"


def test_a_negative_diagonal_goes_to_daqp_which_reports_it() -> None:
    """The kernel refuses a non-positive Hessian diagonal even for a variable its warm start
    holds at a bound (it would divide by it); the ``"box"`` solver hands the problem to
    DAQP, whose verdict is the answer: non-convex is the QP's error. Alike without the kernel."""
    ws = QPWorkspace(4)
    ws.H[...], ws.c[...], ws.lb[...], ws.ub[...] = np.eye(4), [0.0, 0.0, 5.0, 0.0], -1.0, 1.0
    solver = BoxSolver({})
    assert np.allclose(solver.solve(ws), [0.0, 0.0, -1.0, 0.0], atol=1e-8)  # x[2] held at its bound
    assert solver.last_name == ("box" if native_available()[0] else "daqp")
    ws.H[2, 2] = -1.0
    with pytest.raises(QPSolveError, match="daqp: non-convex"):
        solver.solve(ws)
    assert solver.last_name == "daqp"
    ws.H[2, 2] = 0.0  # semidefinite: DAQP solves it (proximal iterations: to 1e-10)
    assert np.allclose(solver.solve(ws), [0.0, 0.0, -1.0, 0.0], atol=1e-8)
    assert solver.last_name == "daqp"
    ws.H[2, 2] = 1.0
    assert np.allclose(solver.solve(ws), [0.0, 0.0, -1.0, 0.0], atol=1e-8)


def test_the_build_skips_an_extension_newer_than_its_sources_built_alike(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("hatch_build", root / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    hatch_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hatch_build)
    monkeypatch.delenv("PINKCTL_REBUILD", raising=False)
    source, extension = tmp_path / "a.c", tmp_path / "a.so"
    source.write_text("int a;")
    extension.write_text("built")
    os.utime(source, (1000.0, 1000.0))
    os.utime(extension, (2000.0, 2000.0))
    assert not hatch_build._up_to_date(tmp_path, extension, [source], "cc -O2")  # no record
    hatch_build._record(tmp_path, extension, "cc -O2")
    assert hatch_build._up_to_date(tmp_path, extension, [source], "cc -O2")
    assert not hatch_build._up_to_date(tmp_path, extension, [source], "cc -O3")  # new flags
    monkeypatch.setenv("PINKCTL_REBUILD", "1")
    assert not hatch_build._up_to_date(tmp_path, extension, [source], "cc -O2")  # forced
    monkeypatch.delenv("PINKCTL_REBUILD")
    os.utime(source, (3000.0, 3000.0))
    assert not hatch_build._up_to_date(tmp_path, extension, [source], "cc -O2")  # edited
    assert hatch_build._signature([["cc", "/tmp/x1/a.o"]], "/tmp/x1") == "cc <scratch>/a.o"
