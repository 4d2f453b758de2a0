"""The papers' tables (papers.yaml), as the report shows them beside regula's rows."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml


@lru_cache(maxsize=1)
def _tables() -> dict:
    return yaml.safe_load(Path(__file__).with_name("papers.yaml").read_text())


def table(name: str) -> dict:
    """{'paper', 'table', 'setting', 'columns', 'rows': {label: [value per column]}}."""
    return _tables()[name]


def rows(name: str) -> dict[str, dict]:
    """Each row as {column: value}."""
    t = table(name)
    return {label: dict(zip(t["columns"], values)) for label, values in t["rows"].items()}
