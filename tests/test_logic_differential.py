"""The native engine against Spot on random formulas x random traces: zero disagreements; both
against a brute-force oracle where every step takes exactly one action."""
import random
import subprocess
import sys
from itertools import product

import pytest

from regula.logic import ltlf
from conftest import needs_spot_platform
from regula.logic import Law, Shield, parse
from regula.logic.monitor import NativeMonitor, SpotMonitor, Verdict, resolve_backend
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


# Letters over atoms a, b (the actions) and c: exactly one action per step.
ONE_ACTION = [frozenset(x) for x in ({"a"}, {"b"}, {"a", "c"}, {"b", "c"})]


def oracle(f, prefix: list) -> Verdict:
    """The verdict by enumeration: accepted as is, or by some extension of up to 3 letters."""
    if prefix and ltlf.accepts(f, prefix):
        return Verdict.ACCEPTING
    extensions = (list(ext) for n in range(1, 4) for ext in product(ONE_ACTION, repeat=n))
    return Verdict.PENDING if any(ltlf.accepts(f, prefix + ext) for ext in extensions) else Verdict.VIOLATED


def test_both_monitors_take_exactly_one_action_per_step():
    rng = random.Random(7)
    actions = frozenset({"a", "b"})
    checked = 0
    for _ in range(300):
        f = random_formula(rng, depth=3)
        trace = [rng.choice(ONE_ACTION) for _ in range(rng.randint(1, 5))]
        for m in (NativeMonitor(f, actions), SpotMonitor(f, actions)):
            m.reset()
            assert m.verdict == (Verdict.VIOLATED if oracle(f, []) == Verdict.VIOLATED else Verdict.PENDING), str(f)
            for i, verdict in enumerate(m.run(trace), 1):
                assert verdict == oracle(f, trace[:i]), (m.backend, str(f), [sorted(x) for x in trace[:i]])
                checked += 1
    assert checked > 1500


@pytest.mark.parametrize("backend", ["native", "spot"])
def test_a_law_no_single_action_satisfies(backend):
    both = SpotMonitor(parse("a <-> b"), frozenset({"a", "b"})) if backend == "spot" else \
        NativeMonitor(parse("a <-> b"), frozenset({"a", "b"}))
    assert both.verdict == Verdict.VIOLATED and both.first_violation == 0
    # After b the trace must go on with neither action: impossible, so the shield blocks b ...
    law = Law("G(b -> X[!](!a & !b))")
    allowed, _ = Shield([law], ["a", "b"], backend=backend).allowed([])
    assert allowed == ["a"]
    # ... unless some other action exists to take next.
    allowed, _ = Shield([law], ["a", "b", "c"], backend=backend).allowed([])
    assert allowed == ["a", "b", "c"]


def test_spot_monitor_imports_in_a_fresh_process():
    code = "from regula.logic import parse; from regula.logic.monitor import SpotMonitor; SpotMonitor(parse('G a'))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
