"""What the stub server's answers share (`stub_answers.py` and each system's `stubs.py`): reading
the fields a role's prompt filled in (bulleted lists, counts, the inventory line) and writing
the answer (sorted JSON, yes/no)."""
from __future__ import annotations

import json
import re


def dumps(value: dict) -> str:
    return json.dumps(value, sort_keys=True)


def yes(value: bool) -> str:
    return "Yes." if value else "No."


def bullets(text: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def counts(text: str, sep: str) -> dict[str, int]:
    """`wood: 4, sapling: 1` (sep ': ', name first) or `4 wood, 1 sapling` (sep ' ', count first)."""
    out = {}
    for part in filter(None, text.split(", ")):
        a, b = part.split(sep, 1)
        name, n = (a, b) if sep == ": " else (b, a)
        out[name] = int(n)
    return out


def inventory_of(observation: str) -> dict[str, int]:
    """The items held, from the verbalizer's `Inventory: wood: 4, sapling: 1.` line."""
    m = re.search(r"^Inventory: (.*)\.$", observation, re.M)
    return {} if m is None or m.group(1) == "empty" else counts(m.group(1), ": ")
