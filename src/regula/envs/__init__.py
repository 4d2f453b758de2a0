"""Environments behind one interface: `get(name)` gives a family (`EnvSpec`), `make(name, seed,
**options)` an episode (`Environment`).

Adapters live in `regula/envs/<name>/` and are imported on first use, so a system that needs
only Crafter never imports another simulator. Nothing outside an adapter's folder imports it.
"""
from __future__ import annotations

import importlib

from regula.errors import UnknownNameError

from .base import CAUSE_KINDS, Environment, EnvSpec, FactSpec, action_atom, true_props

# name -> the module whose `SPEC` is the family (imported lazily).
_ADAPTERS = {"ai2thor": "regula.envs.ai2thor", "crafter": "regula.envs.crafter",
             "minihack": "regula.envs.minihack", "virtualhome": "regula.envs.virtualhome"}
_LOADED: dict[str, EnvSpec] = {}


def names() -> list[str]:
    return sorted(_ADAPTERS)


def get(name: str) -> EnvSpec:
    if name not in _ADAPTERS:
        raise UnknownNameError("environment", name, _ADAPTERS)
    if name not in _LOADED:
        _LOADED[name] = importlib.import_module(_ADAPTERS[name]).SPEC
    return _LOADED[name]


def make(name: str, seed: int, **options) -> Environment:
    return get(name).make(seed, **options)


__all__ = ["CAUSE_KINDS", "Environment", "EnvSpec", "FactSpec", "action_atom", "get", "make", "names", "true_props"]
