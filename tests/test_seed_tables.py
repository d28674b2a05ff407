"""The seed documents' mapping tables in docs/ stay whole: every row says whether pinkctl
works as the seed describes or how it differs, and names tests that exist.

A mapping table is one whose header's third cell is "works / differs". docs/groups.md's
table has its own, stricter check (tests/test_groups_seed_options.py: every seed function
listed).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
DOCS = TESTS.parent / "docs"
#: The pages holding the seed documents' tables, and how many tables each holds.
PAGES = {"envs.md": 1, "view.md": 1, "mujoco_ik.md": 2, "isaac.md": 1, "ik.md": 1}
STATUSES = ("works", "differs", "absent")


def _defined_tests() -> dict[str, set[str]]:
    """Test functions by test file name."""
    out = {}
    for path in TESTS.glob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out[path.name] = {
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
        }
    return out


def _cells(line: str) -> list[str]:
    """A table row's cells (a ``|`` inside backquotes, escaped as ``\\|``, is kept)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def _tables(page: Path) -> list[list[list[str]]]:
    """The mapping tables of ``page``: lists of rows, each a list of cells."""
    lines = page.read_text(encoding="utf-8").splitlines()
    tables = []
    for index, line in enumerate(lines):
        if line.startswith("|") and "works / differs" in line:
            rows = []
            for row in lines[index + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            tables.append(rows)
    return tables


def _named_tests(cell: str) -> list[tuple[str | None, str]]:
    """``(file or None, test)`` for every test a cell names: ``tests/file.py::name``,
    ``::name`` (in the file named before it), ``name (`tests/file.py`)``, a bare ``name``
    (None: any file), or a whole file ``tests/file.py`` (test ``""``)."""
    named: list[tuple[str | None, str]] = []
    current: str | None = None
    pattern = r"`(?:tests/(\w+\.py))?(::)?(test_\w+)?`(?: \(`tests/(\w+\.py)`\))?"
    for prefix, colons, name, suffix in re.findall(pattern, cell):
        if prefix:
            current = prefix
        if name:
            named.append((suffix or (current if colons else None), name))
        elif prefix:
            named.append((prefix, ""))
    return named


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_mapping_row_states_works_or_differs_and_names_existing_tests(name: str) -> None:
    page = DOCS / name
    if not page.is_file():  # e.g. tests run from an sdist
        pytest.skip("docs/ is not available")
    tables = _tables(page)
    assert len(tables) == PAGES[name], f"{name}: {len(tables)} mapping tables"
    defined = _defined_tests()
    every = set().union(*defined.values())
    problems = []
    for rows in tables:
        for cells in rows:
            status, tests = cells[-2], cells[-1]
            if not status.startswith(STATUSES):
                problems.append(f"{cells[0]}: status {status!r}")
            named = _named_tests(tests)
            if status.startswith("absent"):
                continue
            if not named:
                problems.append(f"{cells[0]}: no test named")
            for file, test in named:
                if file is not None and file not in defined:
                    problems.append(f"{cells[0]}: no file tests/{file}")
                elif test and test not in (defined[file] if file else every):
                    problems.append(f"{cells[0]}: no {test} in tests/{file or '*'}")
    assert problems == []


def test_named_tests_are_read_with_their_files() -> None:
    cell = (
        "`test_a`, `tests/test_x.py::test_b`, `::test_c`, `test_d` (`tests/test_y.py`), "
        "`test_e`, `tests/test_z.py`"
    )
    assert _named_tests(cell) == [
        (None, "test_a"),
        ("test_x.py", "test_b"),
        ("test_x.py", "test_c"),
        ("test_y.py", "test_d"),
        (None, "test_e"),
        ("test_z.py", ""),
    ]
    assert _cells(r"| `a \| b` | c |") == [r"`a \| b`", "c"]


def _seed_names(cell: str) -> set[str]:
    """Names a row's seed cell gives (functions, options, fields; 4 letters or more), in the
    form test names are compared: lower case without underscores (``maxStepRad`` matches
    ``test_maxStepRad_...``, ``solve_joints`` matches ``test_solve_joints_...``). A cell
    without backquoted code gives its words of 5 letters or more."""
    code = re.findall(r"`([^`]*)`", cell)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", " ".join(code))
    if not code:
        words = [w for w in re.findall(r"[A-Za-z]+", cell) if len(w) >= 5]
    return {w.lower().replace("_", "") for w in words if len(w) >= 4}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_mapping_row_names_a_test_after_the_seed_function_or_option(name: str) -> None:
    """Issue "Seed fidelity": a test per row, named after the seed's function or option, so
    that a reader finds the test of a seed feature by its name."""
    page = DOCS / name
    if not page.is_file():
        pytest.skip("docs/ is not available")
    unnamed = []
    for rows in _tables(page):
        for cells in rows:
            if cells[-2].startswith("absent"):
                continue
            seed = _seed_names(cells[0])
            tests = [test.lower().replace("_", "") for _, test in _named_tests(cells[-1]) if test]
            if not any(word in test for word in seed for test in tests):
                unnamed.append(cells[0])
    assert unnamed == [], f"{name}: rows whose tests are not named after the seed: {unnamed}"


def test_seed_names_are_read_from_code_or_words() -> None:
    assert _seed_names("`maxStepRad`: bound") == {"maxsteprad"}
    assert _seed_names("`solve_ik(model, data)`") == {"solveik", "model", "data"}
    assert _seed_names("the damping keeps the solve stable") == {
        "damping",
        "keeps",
        "solve",
        "stable",
    }
