"""LLM layer: one client for any OpenAI-compatible endpoint, a content-addressed cache shared
as files, replay and accounting. Which backend plays a role, LLM or not, `regula.roles` chooses."""
from .accounting import Accounting
from .cache import CacheError, QueryCache, cache_key
from .client import LLMClient, LLMConfig, LLMError, ReplayMiss, UnusableAnswer, parse_yes_no

__all__ = ["Accounting", "CacheError", "QueryCache", "cache_key", "LLMClient", "LLMConfig", "LLMError",
           "ReplayMiss", "UnusableAnswer", "parse_yes_no"]
