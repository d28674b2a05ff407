"""Every Sphinx cross-reference in pinkctl's docstrings names something that exists.

A reference (``:mod:`x```, ``:class:`x```, ``:func:`x```, ``:meth:`x```, ``:attr:`x```,
``:data:`x```, ``:exc:`x```; ``~`` and leading-dot forms; ``text <target>``) is resolved the
way the API site resolves it: an absolute dotted name by importing the longest module
prefix and following attributes; a short name against the module the docstring lives in
(its globals, then the class that owns the docstring). Names of other projects resolve when
their package imports.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType
from typing import Any

import pytest

import pinkctl

ROLE = re.compile(r":(?:py:)?(mod|class|func|meth|attr|data|exc|obj):`([^`]+)`")
#: Other projects' names, resolved by importing them (``np``/``pin`` as their aliases).
EXTERNAL = ("numpy", "np", "pinocchio", "pin", "pink", "mujoco", "qpsolvers", "gymnasium")


def _modules() -> list[str]:
    names = ["pinkctl"]
    names += [info.name for info in pkgutil.walk_packages(pinkctl.__path__, "pinkctl.")]
    return sorted(names)


def _docstrings(module: ModuleType) -> list[tuple[str, Any]]:
    """(docstring, owner) of the module and of everything defined in it."""
    out: list[tuple[str, Any]] = [(module.__doc__ or "", module)]
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        source = ""
    # `#:` comments document module constants and attributes
    out += [(line, module) for line in re.findall(r"#:(.*)", source)]
    for _, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj):
            out.append((obj.__doc__ or "", obj))
            for member in vars(obj).values():
                func = getattr(member, "__func__", member)
                func = getattr(func, "fget", func)
                if callable(func) or isinstance(member, property):
                    out.append((getattr(func, "__doc__", None) or "", obj))
        elif inspect.isfunction(obj):
            out.append((obj.__doc__ or "", module))
    return out


def _follow(root: Any, parts: list[str]) -> bool:
    obj = root
    for part in parts:
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif part in getattr(obj, "__annotations__", {}) or part in getattr(
            obj, "__dataclass_fields__", {}
        ):
            return True  # an instance attribute declared on the class
        elif inspect.isclass(obj) and any(
            part in getattr(base, "__annotations__", {}) for base in obj.__mro__
        ):
            return True
        else:
            return False
    return True


def _instance_attribute(cls: type, parts: list[str]) -> bool:
    """``Class.name`` or ``name``: an attribute the class's methods assign to ``self``."""
    if len(parts) == 2 and parts[0] == cls.__name__:
        parts = parts[1:]
    if len(parts) != 1:
        return False
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return False
    return re.search(rf"self\.{re.escape(parts[0])}\s*(:[^=]*)?=", source) is not None


def _resolve_absolute(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return _follow(module, parts[cut:])
    return False


def _resolves(target: str, module: ModuleType, owner: Any) -> bool:
    target = re.sub(r"\s+", "", target).lstrip("~")  # a reference broken over lines
    if "<" in target and target.endswith(">"):  # "text <target>"
        target = target[target.index("<") + 1 : -1].lstrip("~")
    target = target.removesuffix("()")
    target = target.lstrip(".")  # relative: searched from the owning module up
    if target.split(".")[0] in EXTERNAL or target.split(".")[0] in dir(__builtins__):
        head = target.split(".")[0]
        if head in ("np", "pin"):
            target = {"np": "numpy", "pin": "pinocchio"}[head] + target[len(head) :]
        return _resolve_absolute(target) or head in dir(__builtins__)
    if target.startswith("pinkctl"):
        return _resolve_absolute(target)
    parts = target.split(".")
    if inspect.isclass(owner) and _follow(owner, parts):
        return True
    if _follow(module, parts):
        return True
    classes = [c for c in vars(module).values() if inspect.isclass(c)]
    if any(_follow(c, parts) or _instance_attribute(c, parts) for c in classes):
        return True  # a member of a class of the module, named short
    package = module.__name__ + ".x"
    while "." in package:  # the packages above the module, innermost first
        package = package.rsplit(".", 1)[0]
        if _resolve_absolute(f"{package}.{target}"):
            return True
    return _resolve_absolute(target)


@pytest.mark.parametrize("name", _modules())
def test_every_docstring_reference_resolves(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional dependency (ray, viser, matplotlib ...)
        pytest.skip(f"{name} needs an optional dependency: {exc}")
    broken = []
    for text, owner in _docstrings(module):
        for role, target in ROLE.findall(text):
            if not _resolves(target, module, owner):
                where = getattr(owner, "__qualname__", getattr(owner, "__name__", "?"))
                broken.append(f":{role}:`{target}` in {where}")
    assert not broken, f"{name}: unresolved references:\n" + "\n".join(sorted(set(broken)))


@pytest.mark.parametrize(
    "target",
    ["pinkctl.state.JointState", "~pinkctl.robot.PinkRobot", "pinkctl.ik.solve_ik", "NoSuch"],
)
def test_a_stale_reference_is_caught(target: str) -> None:
    """The resolver is not a rubber stamp: the references this suite's fixes removed (shims
    gone, renamed functions) and unknown names do not resolve."""
    import pinkctl.ik.api as module

    assert not _resolves(target, module, module)
    assert _resolves("~pinkctl.ik.local_ik", module, module) and _resolves(
        "find_ik", module, module
    )
