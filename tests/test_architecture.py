"""The package's shape (docs/architecture.md): layers import only downward, no import cycle,
modules small unless they say why at the top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "pinkctl"

#: Each layer may import itself and the layers listed for it (transitively closed).
LAYERS: dict[str, set[str]] = {
    "errors": set(),
    "_validation": {"errors"},
    "_gl": {"errors"},
    "_progress": set(),
    "_native": {"errors"},
    "core": {"errors", "_validation", "_native"},  # the states' value checks (spaces)
    # the world around a robot and its collision geometry (pinkctl.world)
    "world": {"core", "errors", "_validation"},
    "impl": {"core", "errors", "_validation"},  # the Isaac extension's module path, re-exports
    "motion": {"core", "errors", "_validation", "_native"},
    "qp": {"core", "world", "errors", "_validation", "_native"},
    "trajectories": {"core", "motion", "errors", "_validation"},
    "ik": {"core", "qp", "world", "errors", "_validation", "_native", "_progress"},
    "controllers": {
        "ik",  # the IK's capsules (ik.capsules), which the controller's collision check reads
        "core",
        "motion",
        "qp",
        "trajectories",
        "world",
        "errors",
        "_validation",
        "_native",
    },
    "sim": {
        "core",
        "controllers",
        "motion",
        "trajectories",
        "world",
        "errors",
        "_validation",
        "_gl",
        "_progress",
    },
    "groups": {"core", "qp", "ik", "world", "errors", "_validation"},
    "reach": {"core", "qp", "ik", "world", "errors", "_validation"},
    "mujoco_ik": {"core", "errors", "_validation"},
    "view": {
        "core",
        "mujoco_ik",
        "controllers",
        "ik",
        "motion",
        "qp",
        "sim",
        "trajectories",
        "world",
        "errors",
        "_validation",
        "app",
    },
    "envs": {
        "core",
        "controllers",
        "mujoco_ik",
        "motion",
        "qp",
        "sim",
        "ik",
        "trajectories",
        "world",
        "errors",
        "_validation",
    },
    "app": {
        "core",
        "controllers",
        "ik",
        "motion",
        "qp",
        "sim",
        "trajectories",
        "view",
        "world",
        "errors",
        "_validation",
        "envs",
        "reach",
        "_progress",
    },
}
#: The marker a long module writes at its top, with the reason.
LONG_MODULE_NOTE = "This module is long because"
MAX_LINES = 400


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """pinkctl modules imported at module level (not under TYPE_CHECKING, not in functions)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("pinkctl"):
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pinkctl"))
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_layers_import_only_downward() -> None:
    modules = _modules()
    wrong = []
    for name, path in modules.items():
        layer = _layer(name)
        if layer not in LAYERS:
            continue
        allowed = LAYERS[layer] | {layer}
        for target in _imports(name, path):
            if target in modules and _layer(target) and _layer(target) not in allowed:
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_every_top_level_package_has_a_layer() -> None:
    layers = {_layer(name) for name in _modules()} - {""}
    assert layers <= set(LAYERS) | {"__main__"}, layers - set(LAYERS)


def test_no_import_cycle() -> None:
    modules = _modules()
    graph = {
        name: {t for t in _imports(name, path) if t in modules and t != name}
        for name, path in modules.items()
    }
    # a package's __init__ importing its own submodules is not a cycle of the layering
    for name in graph:
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, stack: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle.extend(stack[stack.index(nxt) :] + [node, nxt])
                return True
            if nxt not in state and visit(nxt, stack + [nxt]):
                return True
        state[node] = 2
        return False

    for start in sorted(graph):
        if start not in state and visit(start, [start]):
            break
    assert not cycle, " -> ".join(cycle)


@pytest.mark.parametrize("name", sorted(_modules()))
def test_modules_are_small_or_say_why(name: str) -> None:
    path = _modules()[name]
    lines = path.read_text().splitlines()
    if len(lines) <= MAX_LINES:
        return
    head = "\n".join(lines[:60])
    assert LONG_MODULE_NOTE in head, (
        f"{path.relative_to(PACKAGE.parent)} has {len(lines)} lines: split it, or say at its "
        f'top why it is long ("{LONG_MODULE_NOTE} ...")'
    )


# ---------------------------------------------------------------------- one tick, measured
#: Python-level calls inside pinkctl in one default Franka tick, and frames from ``forward``
#: down to the QP solver (issue "the QP layer in two verbs": at most 30; pink's tick makes 27).
#: The default tick runs the compiled C++ tick: state reading and the command's state remain
#: in Python (19 calls measured).
MAX_TICK_CALLS = 30
MAX_SOLVER_DEPTH = 4


def _default_tick_trace(robot) -> list[tuple[str, str, int]]:  # type: ignore[no-untyped-def]
    """``(file under pinkctl, function, frames below forward)`` of every Python call of one
    default Franka tick toward a moving target, after 50 ticks of warm-up."""
    import sys  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415
    import pinocchio as pin  # noqa: PLC0415

    from pinkctl import JointState, PinkIKController, RobotState, SpatialState  # noqa: PLC0415

    names, frame = list(robot.joint_names), robot.tool_frame
    controller = PinkIKController(robot, names, [frame], dt=0.005)
    q = np.array([robot.home_positions()[n] for n in names])

    def estimate() -> RobotState:
        return RobotState(joints=JointState.from_name(names, positions=(names, q)))

    assert controller.reset(estimate(), None, 0.0)
    home = controller.configuration.get_transform_frame_to_world(frame)  # type: ignore[union-attr]
    w, x, y, z = pin.Quaternion(home.rotation).coeffs()[[3, 0, 1, 2]]

    def target(k: int) -> RobotState:
        position = home.translation + [0.0, 0.05 * np.sin(0.02 * k), 0.0]
        return RobotState(
            sites=SpatialState.from_name(
                [frame],
                positions=([frame], position.reshape(1, 3)),
                orientations=([frame], np.array([[w, x, y, z]])),
            )
        )

    for k in range(50):
        out = controller.forward(estimate(), target(k), 0.005 * k)
        q[out.joints.position_indices] = out.joints.positions
    est, setpoint = estimate(), target(50)
    root = str(PACKAGE)
    calls: list[tuple[str, str, int]] = []

    def profile(frame_, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame_.f_code.co_filename.startswith(root):
            depth, outer = 0, frame_
            while outer is not None and outer.f_code.co_name != "forward":
                outer, depth = outer.f_back, depth + 1
            path = frame_.f_code.co_filename[len(root) + 1 :]
            calls.append((path, frame_.f_code.co_name, depth))

    sys.setprofile(profile)
    try:
        controller.forward(est, setpoint, 0.25)
    finally:
        sys.setprofile(None)
    assert controller.status.value == "ok", controller.last_error
    return calls


def test_a_default_tick_makes_few_calls_and_reaches_the_solver_quickly(franka_robot) -> None:
    from pinkctl._native import native_available  # noqa: PLC0415

    if not native_available()[0]:  # e.g. the suite's PINKCTL_NATIVE=0 run
        pytest.skip("the default tick runs the native kernel; this run has it switched off")
    calls = _default_tick_trace(franka_robot)
    listing = "\n".join(f"{depth * '  '}{path}:{name}" for path, name, depth in calls)
    assert len(calls) <= MAX_TICK_CALLS, f"{len(calls)} calls:\n{listing}"
    solver = [
        depth
        for path, name, depth in calls
        if path in ("qp/box_qp.py",)
        or "solvers/" in path
        or (path, name) == ("controllers/compiled_path.py", "_compiled_run")  # the C++ tick
    ]
    assert solver, f"no QP solver call:\n{listing}"
    assert min(solver) <= MAX_SOLVER_DEPTH, listing
