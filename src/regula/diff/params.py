"""params.yaml: the knobs that differ, by dotted key (`ltlcrit.actors[1]`), old -> new, shown
first, since they are usually why the rest differs. The file is compared as written (a key
left to its default is absent, not the default)."""
from __future__ import annotations

import yaml

from regula.errors import DataError

from .tables import ABSENT, leaves, row, same

PATH = "params.yaml"
ROOTS = (PATH,)  # where its files lie (which unavailable outputs concern it)


def selects(path: str) -> bool:
    return path == PATH


def _read(raw: bytes | None, where: str) -> dict:
    if raw is None:
        return {}
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise DataError(f"{PATH} at {where}: not valid YAML ({' '.join(str(exc).split())})") from None
    return leaves(data) if isinstance(data, dict) and data else {}


def compare(path: str, old: bytes | None, new: bytes | None, where: tuple[str, str]) -> list[dict]:
    a, b = _read(old, where[0]), _read(new, where[1])
    keys = list(a) + [k for k in b if k not in a]
    return [row(path, k, a.get(k, ABSENT), b.get(k, ABSENT)) for k in keys
            if k not in a or k not in b or not same(a[k], b[k])]
