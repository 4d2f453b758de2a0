import copy

import pytest

from regula import params as params_mod


@pytest.fixture
def small_params():
    """Defaults with a short episode budget, for fast end-to-end checks."""
    p = copy.deepcopy(params_mod.validate({}))
    p["demos"].update(episodes=2, max_steps=400, max_skills=80)
    return p
