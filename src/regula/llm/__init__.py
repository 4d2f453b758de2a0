"""LLM layer: one client for any OpenAI-compatible endpoint, a content-addressed cache shared
as files, replay, accounting, and per-role choice between an LLM and a non-LLM backend."""
from .accounting import Accounting
from .cache import CacheError, QueryCache, cache_key
from .client import LLMClient, LLMConfig, LLMError, ReplayMiss, UnusableAnswer, parse_yes_no
from .roles import make_backend, register_backend, role_backends

__all__ = ["Accounting", "CacheError", "QueryCache", "cache_key", "LLMClient", "LLMConfig", "LLMError",
           "ReplayMiss", "UnusableAnswer", "parse_yes_no", "make_backend", "register_backend", "role_backends"]
