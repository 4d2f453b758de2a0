"""VirtualHome on the evolving-graph simulator of `virtualhome-eval` (`SPEC` is its family, see `spec.py`)."""
from .spec import SPEC

__all__ = ["SPEC"]
