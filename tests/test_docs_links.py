"""The README and the pages under docs/ have no broken relative links or anchors.

A link ``[text](path#anchor)`` (or an image) to a file of the repository must name an existing
file, and its anchor a heading of that file (GitHub's slugs); ``#anchor`` alone points into the
same file. Web links are not fetched. ``make docs`` builds the site with ``mkdocs --strict``,
which checks the API reference's cross-references in the same spirit.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", flags=re.M)


def _prose(text: str) -> str:
    """The text without code blocks and inline code (links there are not links)."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file (repeated headings get -1, -2, ...)."""
    seen: dict[str, int] = {}
    result = set()
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links(page: Path) -> list[str]:
    """The relative links of a page (web and mail links left out)."""
    found = _LINK.findall(_prose(page.read_text()))
    return [link for link in found if not re.match(r"^[a-z][a-z0-9+.-]*:", link)]


def test_the_pages_have_links_to_check():
    assert sum(len(links(page)) for page in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(page: Path):
    broken = []
    for link in links(page):
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(
                f"{link}: no file {path.relative_to(ROOT) if ROOT in path.parents else path}"
            )
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {path.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_slugs_follow_github():
    assert slug("The `pinkctl` command") == "the-pinkctl-command"
    assert slug("IK groups / strict priorities") == "ik-groups--strict-priorities"
    assert slug("One-shot and global IK") == "one-shot-and-global-ik"
