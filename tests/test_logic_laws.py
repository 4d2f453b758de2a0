"""Laws, law files and the shield, on Crafter's propositions and skills."""
import json

import pytest

from regula import envs
from regula.logic import Law, LawError, Shield, Verdict, load_laws, monitor, parse, save_laws
from regula.logic.render import to_dot

CRAFTER = envs.get("crafter")
STATE, ACTIONS = CRAFTER.atoms()


def write(tmp_path, text, name="laws.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_weak_next_at_the_end_of_a_trace():
    m = monitor(parse("G(near_table -> X make_wood_pickaxe)"), "native")
    assert m.run([{"near_table"}]) == [Verdict.ACCEPTING]  # ends on the trigger: not violated
    assert m.step({"collect_wood"}) == Verdict.VIOLATED and m.first_violation == 2
    strong = monitor(parse("G(near_table -> X[!] make_wood_pickaxe)"), "native")
    assert strong.run([{"near_table"}]) == [Verdict.PENDING]


def test_law_file_round_trip_and_validation(tmp_path):
    laws, _ = CRAFTER.precondition_laws()
    path = tmp_path / "pre.yaml"
    save_laws(path, laws)
    back = load_laws(path, set(STATE) | set(ACTIONS), frozenset(ACTIONS))
    assert back == laws
    save_laws(tmp_path / "pre.json", laws)
    assert load_laws(tmp_path / "pre.json") == laws
    assert json.loads((tmp_path / "pre.json").read_text())["laws"][0]["kind"] == "hard"


def test_unknown_atoms_are_listed(tmp_path):
    p = write(tmp_path, "laws:\n  - formula: G(!has_pickaxe -> !collect_stone)\n")
    with pytest.raises(LawError) as err:
        load_laws(p, set(STATE) | set(ACTIONS))
    msg = str(err.value)
    assert msg.startswith(f"{p}: law 1 (G(!has_pickaxe -> !collect_stone)) uses unknown atom has_pickaxe; "
                          "the environment defines: ")
    assert "has_wood_pickaxe" in msg and "collect_stone" in msg


@pytest.mark.parametrize("text,message", [
    ("", "is empty"),
    ("laws: []\n", "expected a list of laws"),
    ("- formula: G(a ->\n", "law 1: formula ends too early at column 7"),
    ("- {formula: G a, kind: strict}\n", "kind must be one of hard, soft, got 'strict'"),
    ("- {formula: G a, source: oracle}\n", "source must be one of hand, environment_failure"),
    ("- {formula: G a, weight: 2}\n", "law 1 has unknown field weight"),
    ("- {kind: hard}\n", "law 1 has no `formula`"),
    ("- {formula: G a}\n- {formula: F !a}\n", "hard laws 1 (G a) and 2 (F !a) contradict each other"),
    ("- {formula: a & !a}\n", "law 1 (a & !a) can never be satisfied"),
    ("laws: [\n", "not valid YAML"),
])
def test_bad_law_files(tmp_path, text, message):
    with pytest.raises(LawError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_laws(write(tmp_path, text))


def test_soft_laws_may_contradict_hard_ones(tmp_path):
    laws = load_laws(write(tmp_path, "- {formula: G a}\n- {formula: F !a, kind: soft}\n"))
    assert [law.kind for law in laws] == ["hard", "soft"]


@pytest.mark.parametrize("backend", ["native", "spot"])
def test_shield_on_crafter(backend):
    laws, _ = CRAFTER.precondition_laws()
    shield = Shield(laws, ACTIONS, STATE, backend)
    world = CRAFTER.make(1)
    state = [p for p, v in world.props().items() if v]
    d = shield.check(state, "collect_stone")
    assert not d.allowed and [law.name for law in d.violated] == ["needs_for_collect_stone"]
    assert d.explain() == ("collect_stone is blocked by 1 law: G(!has_wood_pickaxe -> !collect_stone) "
                           "[hard, hand]: collect_stone needs 1 wood_pickaxe (Crafter's data.yaml)")
    allowed, _ = shield.allowed(state)
    assert "collect_wood" in allowed and "place_table" not in allowed and "explore" in allowed
    # Play toward a pickaxe, asking the shield first: every allowed recipe skill succeeds.
    for skill in ["collect_wood"] * 5 + ["place_table", "make_wood_pickaxe", "collect_stone"]:
        state = [p for p, v in world.props().items() if v]
        assert shield.check(state, skill).allowed, skill
        assert world.run_skill(skill).success
        shield.commit(state, skill)
    state = [p for p, v in world.props().items() if v]
    assert shield.check(state, "collect_stone").allowed
    assert not shield.check(state, "collect_iron").allowed


def test_over_constraint_falls_back_to_hard_laws_and_is_recorded():
    laws = [Law("G !collect_wood", kind="soft", source="efficiency", explanation="wood is plenty"),
            Law("G(!has_wood_pickaxe -> !collect_stone)"),
            Law("G !explore", kind="soft", source="efficiency")]
    shield = Shield(laws, ["collect_wood", "collect_stone", "explore"], STATE, "native")
    allowed, decisions = shield.allowed(["is_night"])
    assert allowed == ["collect_wood", "explore"]  # soft laws dropped; the hard one still holds
    (conflict,) = shield.conflicts
    assert conflict.blocked == {"collect_stone": ["G(!has_wood_pickaxe -> !collect_stone)"],
                                "collect_wood": ["G !collect_wood"], "explore": ["G !explore"]}
    assert conflict.fallback_allowed == ["collect_wood", "explore"]


def test_dot_of_a_law():
    dot = to_dot(monitor(parse("G(!has_wood_pickaxe -> !collect_stone)"), "native", frozenset(ACTIONS)))
    assert dot.startswith("digraph law {")
    assert 'label="collect_stone & !has_wood_pickaxe"' in dot
    assert "doublecircle" in dot and "style=dashed" in dot  # accepting states and the dead one


def test_dot_is_the_same_in_every_process():
    # String hashing differs between processes; an artifact must not.
    import subprocess
    import sys
    code = ("from regula.logic import monitor, parse; from regula.logic.render import to_dot; "
            "print(to_dot(monitor(parse('G(!(has_coal & has_iron & has_wood) -> !make_iron_pickaxe)'), "
            "'native', frozenset({'make_iron_pickaxe', 'collect_wood'}))))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout
            for seed in (1, 2, 3)}
    assert len(outs) == 1


def test_work_on_a_big_automaton_within_the_limits_is_bounded(monkeypatch):
    """6 temporal operators and 12 atoms: 32 states x 4,096 letters. Whether the law can still be
    satisfied is searched lazily; drawing it all stops at MAX_MOVES. Counted in automaton moves
    computed, not seconds (a timed assert failed on a loaded machine)."""
    from regula.logic import FormulaError
    from regula.logic.formula import MAX_MOVES
    from regula.logic.monitor import NativeMonitor, SpotMonitor
    text = "G(a0 | X X X X X (" + " | ".join(f"a{i}" for i in range(1, 12)) + "))"
    for cls in (NativeMonitor, SpotMonitor):
        moves = []
        real = cls._move
        monkeypatch.setattr(cls, "_move", lambda self, s, letter, real=real: moves.append(s) or real(self, s, letter))
        m = cls(parse(text))
        assert m.run([{"a1"}, set(), {"a0"}]) == [Verdict.ACCEPTING] * 3
        assert len(moves) < 10, cls  # the lazy search: a few moves (4 here)
        with pytest.raises(FormulaError) as err:
            to_dot(m)
        assert len(moves) <= MAX_MOVES, cls  # 12,289 and 16,385 here; 131,072 without the limit
        assert str(err.value) == ("drawing its automaton explores more than 20,000 automaton moves (the limit): "
                                  "'G(a0 | X X X X X(a1 | a2 | a3 | a4 | a5 | a6 | a7 | a8 | a9 ...'")


def test_laws_past_the_monitoring_limits_are_named(tmp_path):
    dead = "(" + " | ".join(f"a{i}" for i in range(12)) + ") & X[!] X[!] X[!] X[!] X[!] false"
    p = write(tmp_path, f"- G a0\n- '{dead}'\n")
    with pytest.raises(LawError) as err:
        load_laws(p)
    assert str(err.value) == (f"{p}: law 2 ({dead}): deciding whether it can still be satisfied explores more "
                              f"than 20,000 automaton moves (the limit): '{dead[:60]}...'")
    parity = " xor ".join(f"a{i}" for i in range(11))
    with pytest.raises(LawError) as err:
        load_laws(write(tmp_path, f"- {parity}\n"))
    assert str(err.value).startswith(f"{tmp_path / 'laws.yaml'}: law 1 ({parity}): its normal form passes 1,000 "
                                     "clauses (the limit; each xor or <-> between subformulas can double it)")
    with pytest.raises(LawError, match="^law parity: its normal form passes 1,000 clauses"):
        Shield([Law(parity, kind="soft", name="parity")], ["a0"], backend="native")


def test_pairs_too_large_to_check_together_are_not_checked(tmp_path):
    # Each law alone is small; together they have 23 atoms (8 million letters): not checked.
    first = "G(" + " | ".join(f"a{i}" for i in range(12)) + ")"
    second = "G(" + " | ".join(["a0"] + [f"b{i}" for i in range(1, 12)]) + ")"
    laws = load_laws(write(tmp_path, f"- '{first}'\n- '{second}'\n- G a0\n"))
    assert [law.formula for law in laws] == [first, second, "G a0"]


def test_a_monitor_refuses_a_formula_deeper_than_it_can_recurse():
    from regula.logic import FormulaError
    from regula.logic.formula import ap, unary
    f = ap("a")
    for _ in range(188):
        f = unary("G", f)
    with pytest.raises(FormulaError, match="^formula nests 188 operators deep; a monitor takes at most 60$"):
        monitor(f, "native")
