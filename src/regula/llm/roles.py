"""How a role (teacher, actor, critic, discoverer, corrector, ...) picks its backend.

Each system registers, per role, an LLM backend and its non-LLM stand-ins under names
(`openai`, `rules`, ...); params name the backend per role, and the embedded defaults name
stand-ins, so nothing needs a network unless a user asks for it.
"""
from __future__ import annotations

from typing import Callable

from regula.errors import UnknownNameError

_BACKENDS: dict[str, dict[str, Callable]] = {}


def register_backend(role: str, name: str):
    """Decorator: `@register_backend("feedback", "rules")` on a factory."""
    def deco(factory: Callable) -> Callable:
        _BACKENDS.setdefault(role, {})[name] = factory
        return factory
    return deco


def role_backends(role: str) -> list[str]:
    if role not in _BACKENDS:
        raise UnknownNameError("role", role, _BACKENDS)
    return sorted(_BACKENDS[role])


def make_backend(role: str, name: str, **kwargs):
    backends = role_backends(role)
    if name not in backends:
        raise UnknownNameError(f"backend for role '{role}'", name, backends)
    return _BACKENDS[role][name](**kwargs)
