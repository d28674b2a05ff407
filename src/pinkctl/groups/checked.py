"""A property whose setter checks its value: the one pattern of the groups' editable settings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

__all__ = ["Checked"]

T = TypeVar("T")


class Checked(Generic[T]):
    """A data descriptor: reading gives the stored value; assigning stores ``check(value)``
    (which raises on a bad value, leaving the stored one as it was).

    Args:
        check: Validates and converts an assigned value.
        doc: The attribute's docstring.
    """

    def __init__(self, check: Callable[[Any], T], doc: str) -> None:
        self._check = check
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Checked[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Checked[T] | T:
        return self if obj is None else getattr(obj, self._slot)  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: Any) -> None:
        setattr(obj, self._slot, self._check(value))
