import copy
import platform

import pytest

from regula import params as params_mod


@pytest.fixture
def small_params():
    """Defaults with a short episode budget, for fast end-to-end checks."""
    p = copy.deepcopy(params_mod.validate({}))
    p["demos"].update(episodes=2, max_steps=400, max_skills=80)
    return p


# spottl (Spot) is a dependency wherever it has wheels; only elsewhere may Spot tests skip.
# On Linux x86_64 a missing Spot makes them fail instead of hiding the gap.
SPOT_PLATFORM = platform.system() == "Linux" and platform.machine() == "x86_64"
needs_spot_platform = pytest.mark.skipif(not SPOT_PLATFORM, reason="spottl has wheels for Linux x86_64 only")
