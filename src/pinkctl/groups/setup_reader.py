"""Reading an IK-setup TOML file: typed access whose every error names the file and the line.

:func:`read_document` turns a path into the parsed document and a :class:`DocumentReader`; a
directory, bytes that are not UTF-8 and TOML syntax errors are
:class:`~pinkctl.errors.ConfigurationError` (a ``ValueError``) naming the file (and the line,
where there is one). ``tomllib`` gives no line numbers for values, so the reader finds the
line of a key in the text itself (:class:`~pinkctl.groups.toml_lines.LineIndex`). Keys and
tables a table does not know are errors listing the known ones, with the close names.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import real_array
from ..errors import ConfigurationError, DescriptionNotFoundError, InputError, PinkctlError
from .toml_lines import LineIndex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["DocumentReader", "Location", "close_names", "parse_document", "read_document"]

#: A path in the parsed document: ``("groups", 0, "elements", 1, "tip")``.
Location = tuple[str | int, ...]


def close_names(name: str, known: Sequence[str]) -> str:
    """`` (close: [...])`` listing the names of ``known`` close to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=3)
    return f" (close: {close})" if close else ""


def read_document(path: str | Path) -> tuple[DocumentReader, dict[str, Any]]:
    """The parsed TOML document at ``path`` and a reader for it.

    Raises:
        FileNotFoundError: (:class:`~pinkctl.errors.DescriptionNotFoundError`) no such file.
        ValueError: (:class:`~pinkctl.errors.ConfigurationError`) a directory, text that is
            not UTF-8 (the line of the first bad byte), or invalid TOML (its line).
    """
    source = Path(path)
    if source.is_dir():
        raise ConfigurationError(f"{source} is a directory, not an IK setup file")
    if not source.is_file():
        raise DescriptionNotFoundError(f"IK setup file not found: {source}")
    data = source.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise ConfigurationError(
            f"{source}, line {line}: not UTF-8 text (byte 0x{byte}); save the file as UTF-8"
        ) from exc
    return parse_document(text, str(source))


def parse_document(text: str, source: str = "<string>") -> tuple[DocumentReader, dict[str, Any]]:
    """The parsed TOML ``text`` and a reader whose errors name ``source``.

    Raises:
        ValueError: (:class:`~pinkctl.errors.ConfigurationError`) invalid TOML (its line).
    """
    if not isinstance(text, str):
        raise InputError(f"text must be a str, got {type(text).__name__}")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message holds the line and column
        raise ConfigurationError(f"{source}: {exc}") from exc
    return DocumentReader(source, text), document


class DocumentReader:
    """Typed access to the parsed document; errors name the file and the line.

    Args:
        source: The file's name, as messages give it.
        text: The file's text.
    """

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.index = LineIndex(text)

    def fail(self, path: Location, message: str) -> ConfigurationError:
        """The error to raise for ``path`` (the line of its key, else of its table)."""
        line = self.index.line(path) or 1
        where = ".".join(str(p) for p in path)
        return ConfigurationError(f"{self.source}, line {line} ({where}): {message}")

    def _located(self, exc: Exception) -> bool:
        return isinstance(exc, ConfigurationError) and str(exc).startswith(f"{self.source}, ")

    @contextmanager
    def at(
        self,
        path: Location,
        table: Mapping[str, Any],
        *,
        aliases: Mapping[str, str] | None = None,
        fallback: str | None = None,
    ) -> Iterator[None]:
        """Report a pinkctl error raised inside as a configuration error at the key of
        ``table`` its message starts with (pinkctl's messages name the argument first; the
        argument's name in ``aliases`` maps to the key), else at ``fallback``, else at
        ``path``."""
        try:
            yield
        except PinkctlError as exc:
            if self._located(exc):
                raise
            word = re.match(r"[A-Za-z_]+", str(exc))
            key = None if word is None else (aliases or {}).get(word.group(0), word.group(0))
            if key not in table:
                key = fallback if fallback in table else None
            raise self.fail(path if key is None else path + (key,), str(exc)) from exc

    def keys(self, table: Mapping[str, Any], path: Location, known: Sequence[str]) -> None:
        """Refuse the keys of ``table`` that are not in ``known`` (a typo loads nothing)."""
        for key, value in table.items():
            if key in known:
                continue
            what = f"key {key!r}"
            if isinstance(value, dict):
                what = f"table [{key}]"
            elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                what = f"table [[{key}]]"
            where = ".".join(str(p) for p in path) or "the top level"
            raise self.fail(
                path + (key,),
                f"unknown {what} in {where}{close_names(key, known)}; known: {list(known)}",
            )

    def get(
        self, table: Mapping[str, Any], path: Location, key: str, kind: Any, default: Any = ...
    ) -> Any:
        """``table[key]`` of type ``kind`` (an int is a float), ``default`` when absent
        (no default: the key is required)."""
        if key not in table:
            if default is ...:
                raise self.fail(path, f"missing key {key!r}")
            return default
        value = table[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind in (int, float) and isinstance(value, bool)):
            raise self.fail(path + (key,), f"{key} has the wrong type: {value!r}")
        return value

    def tables(self, table: Mapping[str, Any], path: Location, key: str) -> list[Any]:
        """The array of tables ``table[key]`` (empty when absent)."""
        items = self.get(table, path, key, list, [])
        if not all(isinstance(item, dict) for item in items):
            raise self.fail(path + (key,), f"{key} must be an array of tables")
        return items

    def floats(
        self, table: Mapping[str, Any], path: Location, key: str, shape: tuple[int, ...]
    ) -> np.ndarray:
        """``table[key]``, an array of ``shape`` of finite numbers (no strings, no booleans)."""
        values = self.get(table, path, key, list)
        try:
            return real_array(values, key, shape)
        except InputError as exc:
            raise self.fail(path + (key,), str(exc)) from exc

    def names(
        self, table: Mapping[str, Any], path: Location, key: str, members: tuple[Any, ...]
    ) -> int:
        """The bits of the flag names listed in ``table[key]``."""
        known = {str(m.name).lower(): int(m) for m in members}
        value = 0
        for index, name in enumerate(self.get(table, path, key, list)):
            if name not in known:
                message = f"unknown name {name!r}; known: {list(known)}"
                raise self.fail(path + (key, index), message)
            value |= known[name]
        return value
