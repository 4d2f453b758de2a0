"""Prompt templates are data: one YAML file per role, formatted with str.format."""
from functools import lru_cache
from pathlib import Path

import yaml

from regula.errors import UnknownNameError

_DIR = Path(__file__).parent


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    path = _DIR / f"{name}.yaml"
    if not path.exists():
        raise UnknownNameError("prompt", name, [p.stem for p in _DIR.glob("*.yaml")])
    return yaml.safe_load(path.read_text())


def messages(name: str, **fields) -> list[dict]:
    t = load(name)
    return [{"role": "system", "content": t["system"].format(**fields)},
            {"role": "user", "content": t["user"].format(**fields)}]
