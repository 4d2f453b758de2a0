"""The native engine against Spot on random formulas x random traces: zero disagreements."""
import random

import pytest

from regula.logic import ltlf
from conftest import needs_spot_platform
from regula.logic.monitor import NativeMonitor, SpotMonitor, resolve_backend
from regula.logic.randomized import random_formula, random_trace

pytestmark = needs_spot_platform


def test_auto_picks_spot_where_spottl_installs():
    assert resolve_backend("auto") == "spot"


def test_native_agrees_with_spot_on_1000_random_formulas():
    rng = random.Random(2026)
    checked = disagreements = 0
    for i in range(1000):
        f = random_formula(rng, depth=rng.randint(1, 5))
        native, spot_ = NativeMonitor(f), SpotMonitor(f)
        for _ in range(4):
            trace = random_trace(rng)
            native.reset()
            spot_.reset()
            a, b = native.run(trace), spot_.run(trace)
            checked += 1
            if a != b or native.first_violation != spot_.first_violation:
                disagreements += 1
                pytest.fail(f"formula {f}, trace {[sorted(x) for x in trace]}: native {a} spot {b}")
            assert (a[-1].value == "accepting") == ltlf.accepts(f, trace)
    assert checked == 4000 and disagreements == 0


def test_agreement_with_an_action_alphabet():
    rng = random.Random(7)
    actions = frozenset({"a", "b"})
    for _ in range(200):
        f = random_formula(rng, depth=3)
        native, spot_ = NativeMonitor(f, actions), SpotMonitor(f, actions)
        trace = [frozenset({rng.choice(["a", "b"])}) | ({"c"} if rng.random() < .5 else set())
                 for _ in range(rng.randint(1, 6))]
        assert native.run(trace) == spot_.run(trace), str(f)
