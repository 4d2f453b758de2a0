"""Prefect tasks: thin wrappers around the library, cached on content, never on paths."""
import flows  # noqa: F401  (configures Prefect before it is imported)
