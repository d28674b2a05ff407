"""The line of every key of a TOML text (``tomllib`` gives lines for syntax errors only).

:class:`LineIndex` maps a path in the parsed document (``("groups", 0, "elements", 1,
"tip")``) to the 1-based line that defines it in the text (an array of tables: its first
header), or to the line of the closest table above it when the key is absent, so that a
checker can say where a value went wrong. It follows ``[table]`` and ``[[array]]`` headers,
``key = value`` lines (dotted and quoted keys included), and the items of arrays that span
several lines (the style of ``tomli_w``, one item per line): an item is at the line where it
starts, and the keys of an inline table ``{ key = value, ... }`` at the line of its key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LineIndex"]

_HEADER = re.compile(r"^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(#.*)?$")

Path = tuple[str | int, ...]


def _split_key(text: str) -> list[str]:
    """Components of a (possibly dotted, possibly quoted) TOML key."""
    parts = re.findall(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[^.\s]+', text)
    return [part[1:-1] if part[:1] in "\"'" else part for part in parts]


@dataclass
class _Quote:
    """Whether a scan is inside a quoted string (``"..."`` with backslash escapes, or
    ``'...'``)."""

    quote: str = ""
    escaped: bool = False

    def inside(self, char: str) -> bool:
        """Advance over ``char`` when inside a string (closing quote included): True then."""
        if not self.quote:
            return False
        if self.escaped:
            self.escaped = False
        elif char == "\\" and self.quote == '"':
            self.escaped = True
        elif char == self.quote:
            self.quote = ""
        return True

    def opens(self, char: str) -> bool:
        """Whether ``char`` opens a string (then the scan is inside it)."""
        if char in "\"'":
            self.quote = char
        return bool(self.quote)


@dataclass
class _Scan:
    """Where a scan of an array's text is: bracket depth (1 inside the array), the number of
    top-level commas seen (the index of the current item), whether an item has started."""

    depth: int = 0
    commas: int = 0
    started: bool = False

    def structure(self, char: str) -> None:
        """Advance over a character outside strings: brackets and the array's commas."""
        if char in "[{":
            self.depth += 1
        elif char in "]}":
            self.depth -= 1
        elif char == "," and self.depth == 1:
            self.commas += 1
            self.started = False


def _inline_keys(text: str) -> list[list[str]]:
    """The keys of the inline table that ``text`` starts with (``{ a = 1, b.c = [2] }``)."""
    keys, piece, depth, quotes = [], "", 0, _Quote()
    for char in text[1:]:
        if quotes.inside(char) or quotes.opens(char):
            piece += char
            continue
        if char in "]}" and depth == 0:
            break
        depth += (char in "[{") - (char in "]}")
        if char == "," and depth == 0:
            keys.append(piece)
            piece = ""
            continue
        piece += char
    keys.append(piece)
    return [_split_key(k.partition("=")[0]) for k in keys if "=" in k]


def _scan(text: str, scan: _Scan) -> list[tuple[int, str]]:
    """Advance ``scan`` over one line of a value; the items starting on it at depth 1, as
    ``(index, text from the item on)``."""
    starts: list[tuple[int, str]] = []
    quotes = _Quote()
    for offset, char in enumerate(text):
        if quotes.inside(char):
            continue
        if char == "#":
            break
        if scan.depth == 1 and not scan.started and char not in " \t,]":
            starts.append((scan.commas, text[offset:]))
            scan.started = True
        if not quotes.opens(char):
            scan.structure(char)
    return starts


class LineIndex:
    """Line numbers of the tables, keys and array items of a TOML text (module docstring)."""

    def __init__(self, text: str) -> None:
        self._lines: dict[Path, int] = {}
        counts: dict[Path, int] = {}
        table: Path = ()
        array: Path = ()
        scan = _Scan()
        for number, line in enumerate(text.splitlines(), start=1):
            if scan.depth > 0:  # continuation of a multi-line array
                self._items(array, _scan(line, scan), number)
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
                array = table + tuple(_split_key(key))
                self._define(array, number)
                scan = _Scan()
                starts = _scan(value, scan)
                if value.strip().startswith("["):
                    self._items(array, starts, number)

    def _items(self, array: Path, starts: list[tuple[int, str]], number: int) -> None:
        for index, item in starts:
            self._define(array + (index,), number)
            if item.startswith("{"):
                for key in _inline_keys(item):
                    self._define(array + (index, *key), number)

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
