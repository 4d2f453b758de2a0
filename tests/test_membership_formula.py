"""The teacher as a formula (issue 37): asked once per task for LTLf clauses over the task's
letters, which the logic core compiles; every membership query is the monitor's verdict."""
import json

import pytest

from regula import membership, params as params_mod, stages
from regula.automata import teachers
from regula.errors import RegulaError
from regula.llm import Accounting, LLMClient, LLMConfig, UnusableAnswer
from regula.llm.stub_server import StubLLMServer
from regula.report.sections import llm_runs

ALPHABET = membership.ALPHABET
GOALS = params_mod.validate({}).membership.goals
W, T, MWP = "collect_wood", "place_table", "make_wood_pickaxe"

# The stand-in's formula (noise 0) against data.yaml's rules on the stage's 40 words: wrong on
# these 3 only, each a make or place done a second time, which spends wood again (a clause holds
# at a letter's first occurrence: the recipes' counts are read along the plan, not per use).
COUNT_ERRORS = {
    ("make_wood_pickaxe", (W, W, W, T, T, MWP)),  # the 2nd table takes the wood the pickaxe needs
    ("collect_stone", (W, W, W, T, T, MWP, "collect_stone")),
    ("collect_stone", (W, W, W, T, MWP, MWP, "collect_stone")),  # the 2nd pickaxe finds no wood
}


def _teacher(goal, noise=0.0, seed=0):
    return teachers.FormulaTeacher(teachers.RulesFormula(goal, ALPHABET, noise=noise, seed=seed), ALPHABET)


def test_the_stand_in_formula_agrees_with_the_rules_but_on_counts():
    wrong = set()
    for goal in GOALS:
        t = _teacher(goal)
        for w in membership.words_for(goal, 8, 0):
            if t.member(tuple(w["word"])) != w["truth"]:
                assert w["truth"] is False  # a count error only ever says yes too often
                wrong.add((goal, tuple(w["word"])))
        assert t.calls == 1 and t.unusable == 0
    assert wrong == COUNT_ERRORS
    t = _teacher("place_table")
    assert t.member(()) is False and t.member((W, W, T)) and not t.member((W, T))
    assert not t.member(("sleep", W, W, T))  # no recipe: the abstract rules never apply it
    with pytest.raises(RegulaError, match="the goal's skill place_table is not a letter of the alphabet"):
        teachers.RulesFormula("place_table", (W, "sleep"))


def test_noise_makes_a_declared_number_of_clauses_wrong_reproducibly():
    truth = teachers.RulesFormula("make_wood_pickaxe", ALPHABET).formula()
    src = teachers.RulesFormula("make_wood_pickaxe", ALPHABET, noise=0.2, seed=3)
    assert len(src.wrong) == round(0.2 * len(truth)) == 7
    got = src.formula()
    dropped = [i for i, how in src.wrong.items() if how == "dropped"]
    negated = [i for i, how in src.wrong.items() if how == "negated"]
    assert dropped and negated and len(got) == len(truth) - len(dropped)
    assert all(f"!({truth[i]})" in got and truth[i] not in got for i in negated)
    assert all(truth[i] not in got for i in dropped)
    assert src.wrong == teachers.RulesFormula("make_wood_pickaxe", ALPHABET, noise=0.2, seed=3).wrong
    assert src.wrong != teachers.RulesFormula("make_wood_pickaxe", ALPHABET, noise=0.2, seed=4).wrong


def test_refine_fixes_the_refuted_clause_then_falls_back_to_an_exception():
    # seed 0, noise 0.1: collect_wood's formula has `!eat_cow U collect_wood` negated: it says no to the plan
    t = _teacher("collect_wood", noise=0.1, seed=0)
    assert t.member((W,)) is False
    assert t.refine((W,), True) and t.member((W,)) is True and t.calls == 2
    assert sorted(t.source.wrong.values()) == ["dropped"]  # the three negated clauses restored
    # an honest count error: no wrong clause explains it; the word becomes an exception
    t = _teacher("collect_stone")
    bad = (W, W, W, T, T, MWP, "collect_stone")
    assert t.member(bad) is True and t.refine(bad, False) and t.member(bad) is False
    assert t.member((W, W, W, T, MWP, "collect_stone")) is True and t.calls == 2
    # and a member the formula missed
    t = _teacher("place_table", noise=0.0)
    odd = (W, W, "sleep", T)
    assert t.member(odd) is False and t.refine(odd, True) and t.member(odd) is True
    assert t.member((W, T)) is False


def _client(server, tmp_path, reasks=0):
    cfg = LLMConfig(base_url=server.base_url, cache_dir=str(tmp_path / "cache"), model=server.model, retries=0,
                    reasks=reasks, timeout=10.0, max_tokens=1024)
    return LLMClient(cfg, "stub", Accounting())


def test_the_llm_formula_is_asked_once_and_refined_with_the_counterexample_in_the_prompt(tmp_path):
    with StubLLMServer() as server:
        t = teachers.FormulaTeacher(teachers.LLMFormula(_client(server, tmp_path), "place table", ALPHABET),
                                    ALPHABET)
        answers = [t.member(tuple(w["word"])) for w in membership.words_for("place_table", 8, 0)]
        assert server.calls == 1 and t.calls == 1 and t.unusable == 0
        assert answers == [w["truth"] for w in membership.words_for("place_table", 8, 0)]
        server.script = [json.dumps({"clauses": ["F place_table", "!place_table U collect_wood"]})]
        assert t.refine((W, T), True) and t.calls == 2 and server.calls == 2
        asked = server.requests[-1]["messages"][-1]["content"]
        assert "wrong on this sequence: collect_wood, place_table. That sequence does accomplish" in asked


@pytest.mark.parametrize("answer, reason", [
    ({"clauses": ["!place_table U (collect_wood"]}, "missing ')'"),
    ({"clauses": ["F place_table", "!fly U place_table"]}, "names letters outside the alphabet (fly)"),
    ({"formula": "F place_table"}, "does not match the schema")])
def test_a_bad_llm_formula_is_unusable_with_its_reason(tmp_path, answer, reason):
    with StubLLMServer() as server:
        server.script = [json.dumps(answer)] * 2
        c = _client(server, tmp_path, reasks=1)
        t = teachers.FormulaTeacher(teachers.LLMFormula(c, "place table", ALPHABET), ALPHABET)
        assert (server.calls, t.calls, t.unusable) == (2, 1, 1)  # re-asked once with the reason, then given up
        assert reason in t.reason and "no usable answer after 2 tries" in t.reason
        assert reason in server.requests[1]["messages"][-1]["content"]
        with pytest.raises(UnusableAnswer, match="the formula teacher has no usable formula"):
            t.member((W, W, T))
        assert c.accounting.to_dict()["stub"]["teacher_formula"]["unusable"] == 1


def _run(name, p, tmp_path):
    stages.execute(name, p, stages.Paths(tmp_path), stages.SerialWork(lambda line: None))
    return json.loads((tmp_path / "metrics" / f"{name}_detail.json").read_text())


def test_the_stage_scores_both_forms_on_the_same_words_and_the_report_shows_the_formula(tmp_path):
    with StubLLMServer() as server:
        p = params_mod.validate({"llm": {"base_url": server.base_url, "model": server.model, "retries": 0},
                                 "membership": {"goals": ["make_wood_pickaxe", "collect_stone"], "words": 8,
                                                "noise": 0.0}})
        stand_in = _run("membership", p, tmp_path)
        calls = server.calls
        twin = _run("membership_llm", p, tmp_path)
        # 8 words per goal per word, 1 formula per goal, 1 refinement per goal (both get a word wrong)
        assert server.calls - calls == 16 + 2 + 2
    for record in (stand_in, twin):
        f = record["formula"]
        assert (f["n"], f["calls"], f["unusable_calls"], f["false_yes"], f["false_no"]) == (16, 2, 0, 3, 0)
        assert f["kinds"]["extra_letters"]["false_yes"] == 3 and set(f["kinds"]) == set(record["kinds"])
    assert stand_in["formula"]["goals"]["collect_stone"]["wrong_clauses"] == {}
    assert twin["llm"]["membership_llm"]["teacher_formula"]["calls"] == 4
    # refined with the first word each got wrong: the stand-in makes it an exception (2 of its 3
    # count errors are first ones); the stub's LLM answers the same formula again
    assert (stand_in["formula"]["refined"]["false_yes"], stand_in["formula"]["refined"]["calls"]) == (1, 2)
    assert (twin["formula"]["refined"]["false_yes"], twin["formula"]["refined"]["calls"]) == (3, 2)
    assert twin["formula"]["goals"]["collect_stone"]["refined"]["counterexample"] == [W, W, W, T, T, MWP, "collect_stone"]
    rows = [json.loads(line) for line in (tmp_path / "data" / "membership" / "answers.jsonl").read_text().splitlines()]
    assert {(r["goal"], tuple(r["word"])) for r in rows if r["formula_answer"] != r["truth"]} == COUNT_ERRORS
    text = "\n".join(llm_runs.section(stages.Paths(tmp_path)))
    header = next(line for line in text.splitlines() if line.startswith("| word class"))
    assert header.split(" | ")[1:] == [
        "membership: right", "membership: false yes / no", "membership_llm: right",
        "membership_llm: false yes / no", "membership as a formula: right",
        "membership as a formula: false yes / no", "membership_llm as a formula: right",
        "membership_llm as a formula: false yes / no |"]
    assert "`membership` as a formula, the stand-in from data.yaml's recipes, wrong on 0% of its clauses: 2 calls" in text
    assert "counterexample (2 more calls): 15/16" in text


def test_the_formula_form_can_be_left_out(tmp_path):
    p = params_mod.validate({"membership": {"goals": ["place_table"], "words": 4, "formula": False}})
    record = _run("membership", p, tmp_path)
    assert "formula" not in record and record["n"] == 4


def test_the_formula_as_a_dfa_answers_as_the_monitor():
    import random
    rng = random.Random(0)
    common = ALPHABET[:8] + (W,) * 6 + (T, T, MWP)
    for goal in GOALS:
        t = _teacher(goal, noise=0.1)
        d = t.dfa()
        words = [tuple(w["word"]) for w in membership.words_for(goal, 8, 0)]
        words += [tuple(rng.choice(common) for _ in range(rng.randrange(10))) for _ in range(500)]
        assert d.alphabet == ALPHABET and all(d.accepts(w) == t.member(w) for w in words)
    # start, refuted (a letter off its recipes first), after a sapling (place_plant allowed), the goal done
    assert _teacher("collect_wood").dfa().size == 4

    class Broken:
        uses_llm = False

        def formula(self):
            return ["F (collect_wood"]
    t = teachers.FormulaTeacher(Broken(), ALPHABET)
    assert t.dfa() is None and t.unusable == 1 and "missing ')'" in t.reason
