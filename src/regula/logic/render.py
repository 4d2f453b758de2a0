"""A law's automaton over the explicit alphabet, as DOT and SVG."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from regula.errors import RegulaError

from .formula import FormulaError
from .monitor import Monitor


def _merge(cubes: set) -> set:
    """Merge cubes that differ in one atom until none do (enough for a readable label)."""
    cubes = set(cubes)
    changed = True
    while changed:
        changed = False
        for c in sorted(cubes, key=sorted):
            for atom, value in sorted(c):  # sorted: str hashing varies by process
                twin = (c - {(atom, value)}) | {(atom, not value)}
                if twin in cubes:
                    cubes -= {c, twin}
                    cubes.add(c - {(atom, value)})
                    changed = True
                    break
            if changed:
                break
    return cubes


# Letters one edge label merges: the merge takes time quadratic in them (1,024 letters of 10
# atoms ~1.4 s, 4,096 of 12 atoms 35 s).
MAX_LABEL_LETTERS = 1024


def _label(letters: list[frozenset], atoms: list[str], total: int) -> str:
    if len(letters) == total:
        return "true"
    cubes = _merge({frozenset((a, a in letter) for a in atoms) for letter in letters})
    text = sorted(" & ".join(a if v else f"!{a}" for a, v in sorted(c)) or "true" for c in cubes)
    return " |\\n".join(text)


def to_dot(m: Monitor, title: str = "") -> str:
    states, start, edges, accepting, live = m.transitions()
    widest = max((len(x) for x in edges.values() if len(x) < len(m.letters)), default=0)
    if widest > MAX_LABEL_LETTERS:  # checked before any label is merged
        raise FormulaError(f"drawing its automaton: an edge carries {widest:,} letters, more than the "
                           f"{MAX_LABEL_LETTERS:,} one label may merge (the limit)", str(m.formula))
    atoms = sorted(m.atoms)
    lines = ["digraph law {", "  rankdir=LR;", '  node [shape=circle, fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];',
             f'  label="{(title or str(m.formula)).replace(chr(34), chr(39))}"; labelloc=t;',
             '  init [shape=point];', f"  init -> {start};"]
    for i in sorted(states.values()):
        shape = "doublecircle" if i in accepting else "circle"
        dead = "" if i == start or i in accepting or i in live else ", style=dashed, color=gray"
        lines.append(f"  {i} [shape={shape}{dead}];")
    for (src, dst), letters in sorted(edges.items()):
        lines.append(f'  {src} -> {dst} [label="{_label(letters, atoms, len(m.letters))}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz() -> str:
    """The `graphviz-pure` binary (a dependency: Graphviz's dot in one static binary, so an SVG
    is the same bytes on every machine, which a system `dot` of another version is not)."""
    beside = Path(sys.executable).parent / "graphviz-pure"
    exe = str(beside) if beside.exists() else shutil.which("graphviz-pure")
    if exe is None:
        raise RegulaError("SVG needs the graphviz-pure package's binary (`make install` installs it)")
    return exe


def write_svg(dot: str, path: str | Path) -> Path:
    """`dot` rendered to an SVG file, written atomically."""
    from regula.io import write_atomic
    done = subprocess.run([graphviz(), "-Tsvg"], input=dot, capture_output=True, text=True)
    if done.returncode != 0:
        raise RegulaError(f"graphviz could not draw {path}: {done.stderr.strip()[:300]}")
    return write_atomic(path, done.stdout)
