"""AI2-THOR behind the environment interface (`SPEC`, see `spec.py`): ai2thor's controller where its
Unity build runs, recorded metadata frames read through ai2thor's `Event` everywhere else."""
from .spec import SPEC

__all__ = ["SPEC"]
