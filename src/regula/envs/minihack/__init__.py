"""MiniHack behind the environment interface (`SPEC`, see `spec.py`): the DiVE paper's Lava
Crossing, Wand of Death and Quest tasks on NetHack's learning environment. Only `env.py` and
`bench.py` here import `minihack` or `nle`, and only when an episode is made."""
from .spec import SPEC

__all__ = ["SPEC"]
