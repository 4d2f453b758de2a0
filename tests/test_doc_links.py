"""Every link README.md and docs/*.md make inside the repository leads somewhere: the file
exists and, for `file.md#anchor`, the file has a heading with that anchor (GitHub's rule:
lower case, punctuation dropped, spaces to hyphens)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    inside_code = False
    found = set()
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            inside_code = not inside_code
        elif not inside_code and line.startswith("#"):
            found.add(anchor(line.lstrip("#")))
    return found


def links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # code blocks hold no links
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def test_the_docs_are_found_and_link():
    assert len(DOCS) > 5 and sum(len(links(p)) for p in DOCS) > 20


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    broken = []
    for target in links(doc):
        file, _, frag = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif frag and dest.suffix == ".md" and frag not in anchors(dest):
            broken.append(f"{target}: no heading #{frag}")
    assert broken == []


def test_the_anchor_rule():
    assert anchor(" Comparing two versions: `regula diff`") == "comparing-two-versions-regula-diff"
    assert anchor("Working as a team") == "working-as-a-team"
