"""A semantic diff of the project's tracked artifacts between two revisions (`regula diff`):
params.yaml by key (first: what changed the rest), laws by language, DFAs by language, DiVE's dynamics by fact, metrics and tables by value, LLM
caches by key. Content is compared parsed, never as bytes or positional names, so a no-op
rerun of a stage is no diff at all. A file with the same bytes (or the same git / DVC object)
on both sides is not read twice.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

from regula.errors import UnknownNameError

from . import automata, caches, dynamics, laws, params, tables
from .fill import Filler
from .revisions import WORKSPACE, Revision, git_root, open_revision
from .tables import TOLERANCE

KINDS = {"params": params, "laws": laws, "dfas": automata, "dynamics": dynamics, "metrics": tables, "caches": caches}

__all__ = ["KINDS", "TOLERANCE", "WORKSPACE", "diff", "diff_revisions"]


def _under(path: str, prefixes) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def _concerns(kind, path: str) -> bool:
    """Whether an output at `path` may hold files of `kind` (its ROOTS, less its NOT_UNDER)."""
    return (any(_under(path, (root,)) or _under(root, (path,)) for root in kind.ROOTS)
            and not _under(path, getattr(kind, "NOT_UNDER", ())))


def diff_revisions(a: Revision, b: Revision, kinds=tuple(KINDS), backend: str = "auto",
                   tolerance: float = TOLERANCE) -> dict:
    """{a, b, kinds: {kind: [row, ...]}, unavailable: [line, ...]} for two opened revisions;
    numbers in metrics at most `tolerance` apart are the same."""
    for kind in kinds:
        if kind not in KINDS:
            raise UnknownNameError("kind", kind, KINDS)
    skip = set(a.unavailable) | set(b.unavailable)
    known = {p for p, md5 in a.unread.items() if b.unread.get(p) == md5}  # one DVC object both sides: equal
    unavailable = []  # one line per revision and reason, naming the paths the kinds asked for would read
    for rev in (a, b):
        by_why: dict = {}
        for path, why in sorted(rev.unavailable.items()):
            if path not in known and any(_concerns(KINDS[kind], path) for kind in kinds):
                by_why.setdefault(why, []).append(path)
        unavailable += [f"at {rev.label}, {', '.join(paths)} {'is' if len(paths) == 1 else 'are'} {why}: "
                        "left out of the diff" for why, paths in by_why.items()]
    selected = {kind: sorted(p for p in set(a.files) | set(b.files) if KINDS[kind].selects(p) and not _under(p, skip))
                for kind in kinds}
    paths = sorted({p for ps in selected.values() for p in ps
                    if not (a.files.get(p) is not None and a.files.get(p) == b.files.get(p))})
    old = a.read([p for p in paths if p in a.files])
    new = b.read([p for p in paths if p in b.files])
    where, wanted = (a.label, b.label), set(paths)
    out = {"a": a.label, "b": b.label, "kinds": {}, "unavailable": unavailable}
    for kind in kinds:
        compare = (partial(laws.compare, backend=backend) if kind == "laws"
                   else partial(tables.compare, tolerance=tolerance) if kind == "metrics" else KINDS[kind].compare)
        rows = []
        for p in selected[kind]:
            if p in wanted and old.get(p) != new.get(p):
                rows += compare(p, old.get(p), new.get(p), where)
        out["kinds"][kind] = rows
    return out


def diff(root: str | Path = ".", a: str = "HEAD", b: str = WORKSPACE, kinds=tuple(KINDS),
         backend: str = "auto", tolerance: float = TOLERANCE, fill: str = "none") -> dict:
    """The diff of the project at `root` between revisions `a` and `b` (git revisions, DVC
    experiment names, or `workspace`). `fill`: what to do about outputs a revision lacks in the
    local DVC cache (`regula.diff.fill.FILLS`; none: leave them out, named in `unavailable`);
    `notes` says how each revision filled was."""
    for kind in kinds:
        if kind not in KINDS:
            raise UnknownNameError("kind", kind, KINDS)
    root = Path(root)

    def lacks(rev, other) -> bool:
        """Whether `rev` lacks an output the kinds read that may differ from `other`'s (one the
        other side records with the same md5 is the same output, read or not)."""
        return any(any(_concerns(KINDS[kind], p) for kind in kinds) and not _same_object(rev, other, p)
                   for p in rev.unavailable)

    with Filler(git_root(root), fill, lambda name: open_revision(root, name)) as filler:
        ra, rb = open_revision(root, a), open_revision(root, b)
        ra = filler.fill(ra, a, lambda rev: lacks(rev, rb))
        rb = open_revision(root, b)  # again: filling `a` may have brought b's objects too (a fetch does)
        rb = filler.fill(rb, b, lambda rev: lacks(rev, ra))
        return {**diff_revisions(ra, rb, kinds, backend, tolerance), "notes": filler.notes}


def _same_object(rev, other, path: str) -> bool:
    md5 = rev.unread.get(path)
    return md5 is not None and (other.unread.get(path) == md5 or other.files.get(path) == f"md5:{md5}")


def changed(result: dict) -> bool:
    return any(result["kinds"].values())
