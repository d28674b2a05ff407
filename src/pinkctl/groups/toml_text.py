"""A small TOML writer that round-trips exactly, and the line of every key of a TOML text.

:func:`dumps` writes a document of tables, arrays of tables, and inline values (strings,
booleans, integers, floats, lists of them): floats are written with ``repr``, which ``tomllib``
reads back to the same float (``inf`` and ``nan`` included), so ``tomllib.loads(dumps(doc))
== doc``. Keys that are not bare TOML keys are quoted.

:class:`LineIndex` maps a path in the parsed document (``("groups", 0, "elements", 1,
"tip")``) to the 1-based line that defines it in the text (an array of tables: its first
header), or to the line of the closest table above it when the key is absent, so that a
checker can say where a value went wrong.
It follows ``[table]`` and ``[[array]]`` headers, ``key = value`` lines (dotted keys
included) and skips the continuation lines of multi-line arrays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LineIndex", "dumps"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")

Path = tuple[str | int, ...]


def _string(text: str) -> str:
    # JSON's escapes are valid TOML basic-string escapes; DEL must be escaped in TOML too
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} values to TOML")


def _is_table_array(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and bool(value)
        and all(isinstance(item, Mapping) for item in value)
    )


def _emit(lines: list[str], prefix: str, table: Mapping[str, Any]) -> None:
    nested = []
    for key, value in table.items():
        if isinstance(value, Mapping) or _is_table_array(value):
            nested.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in nested:
        name = prefix + _key(key)
        if isinstance(value, Mapping):
            lines.extend(["", f"[{name}]"])
            _emit(lines, name + ".", value)
            continue
        for item in value:
            lines.extend(["", f"[[{name}]]"])
            _emit(lines, name + ".", item)


def dumps(document: Mapping[str, Any], header: str = "") -> str:
    """TOML text of ``document`` (module docstring), after ``header`` comment lines."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    _emit(lines, "", document)
    return "\n".join(lines).lstrip("\n") + "\n"


def _split_key(text: str) -> list[str]:
    """Components of a (possibly dotted, possibly quoted) TOML key."""
    parts = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^.\s]+', text)
    return [part[1:-1] if part[:1] in "\"'" else part for part in parts]


def _depth_change(text: str) -> int:
    """Net ``[`` minus ``]`` of a value, outside strings and comments."""
    depth, quote = 0, ""
    escaped = False
    for char in text:
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
    return depth


class LineIndex:
    """Line numbers of the tables and keys of a TOML text (module docstring)."""

    def __init__(self, text: str) -> None:
        self._lines: dict[Path, int] = {}
        counts: dict[Path, int] = {}
        table: Path = ()
        depth = 0
        for number, line in enumerate(text.splitlines(), start=1):
            if depth > 0:  # continuation of a multi-line array
                depth += _depth_change(line)
                continue
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            header = _HEADER.match(line) if stripped.startswith("[") else None
            if header is not None:
                table = self._resolve(_split_key(header.group(2)), counts, header.group(1) == "[[")
                self._define(table, number)
                continue
            key, sep, value = stripped.partition("=")
            if sep:
                self._define(table + tuple(_split_key(key)), number)
                depth = _depth_change(value)

    def _define(self, path: Path, number: int) -> None:
        """``path`` and every path above it start at line ``number`` unless defined before
        (so ``("group",)`` of a stray ``[[group]]`` has the line of its first header)."""
        for end in range(1, len(path) + 1):
            self._lines.setdefault(path[:end], number)

    def _resolve(self, parts: list[str], counts: dict[Path, int], array: bool) -> Path:
        path: Path = ()
        for part in parts[:-1]:
            path = path + (part,)
            if path in counts:
                path = path + (counts[path],)
        path = path + (parts[-1],)
        if array:
            counts[path] = counts.get(path, -1) + 1
            path = path + (counts[path],)
        return path

    def line(self, path: Path) -> int | None:
        """Line of ``path``, else of its closest defined ancestor (None: nothing defined)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self._lines:
                return self._lines[path[:end]]
        return None
