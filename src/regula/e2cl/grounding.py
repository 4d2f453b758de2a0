"""Making a script name the objects of the scene it runs in: a test program's initial graph (each
object's class and id) is what a planner may see of the scene (issue: the planner grounded in it).

A copied or generated line names objects as `<class> (id)`. `ground` keeps an object the graph
holds under that class; gives one whose id the graph holds under another class, or does not hold,
the graph's lowest id of the class (the same copied id always becomes the same new one);
and, with `similar`, gives a class the graph lacks altogether the graph's class whose name is the
nearest by all-MiniLM-L6-v2 cosine (the shipped weights, `regula.rag.embed`, rounded as RAG rounds;
ties to the first class in name order), so that "Wash clothes" copied from a dishwasher program
asks for the washing machine this scene has rather than a dishwasher it has not. Without
`similar` such a class keeps its id, and the step fails.
"""
from __future__ import annotations

import re
from typing import Sequence

_OBJECT = re.compile(r"<([^<>]+)> \((\d+)\)")


def _phrase(name: str) -> str:
    return name.replace("_", " ")


def nearest_classes(names: Sequence[str], classes: Sequence[str]) -> dict[str, str]:
    """Each of `names` -> the most similar of `classes` (MiniLM cosine of the names, underscores read
    as spaces)."""
    from regula.rag import embed
    classes = sorted(set(classes))
    if not names or not classes:
        return {}
    model = embed.model()
    sims = model.encode([_phrase(n) for n in names]) @ model.encode([_phrase(c) for c in classes]).T
    out = {}
    for name, row in zip(names, sims):
        scores = [embed.rounded(x) for x in row]
        out[name] = classes[max(range(len(classes)), key=lambda i: (scores[i], -i))]
    return out


def ground(lines: Sequence[str], nodes: Sequence[dict], similar: bool = False) -> list[str]:
    """`lines` naming the objects of the graph whose `nodes` are given (see the module's doc)."""
    classes: dict[int, str] = {n["id"]: n["class_name"] for n in nodes}
    lowest: dict[str, int] = {}
    for node_id, name in sorted(classes.items()):
        lowest.setdefault(name, node_id)
    missing = sorted({name for line in lines for name, _ in _OBJECT.findall(line) if name not in lowest})
    instead = nearest_classes(missing, list(lowest)) if similar else {}

    def swap(m: re.Match) -> str:
        name, node_id = m.group(1), int(m.group(2))
        name = instead.get(name, name)
        if classes.get(node_id) != name and name in lowest:
            node_id = lowest[name]
        return f"<{name}> ({node_id})"
    return [_OBJECT.sub(swap, line) for line in lines]

