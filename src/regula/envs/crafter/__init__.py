"""Crafter: the deterministic, image-free adapter (`SPEC` is its family, see `spec.py`)."""
from .spec import SPEC

__all__ = ["SPEC"]
