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
    "core": {"errors", "_validation"},
    # the world around a robot and its collision geometry (pinkctl.world)
    "world": {"core", "errors", "_validation"},
    "impl": {"core", "errors", "_validation"},  # the Isaac extension's module path, re-exports
    "motion": {"core", "errors", "_validation", "_native"},
    "qp": {"core", "world", "errors", "_validation", "_native"},
    "trajectories": {"core", "motion", "errors", "_validation"},
    "ik": {"core", "qp", "world", "errors", "_validation", "_native", "_progress"},
    "controllers": {
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
#: Deprecated shims of old module paths (they only re-export).
SHIMS = {"state", "transforms", "motion_limits", "demo", "robot"}
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
    assert layers <= set(LAYERS) | SHIMS | {"__main__"}, layers - set(LAYERS) - SHIMS


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
