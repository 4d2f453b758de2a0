"""The teacher as a formula in CEDAR's loop (`cedar.teacher_form: formula`, issue 37): called once
per alphabet for LTLf clauses, every membership query answered by the compiled formula, refined
once by a world's counterexample; a garbage answer is a failed call with a one-line reason."""
import itertools
import json

import pytest

from regula import envs, roles
from regula.automata import teachers
from regula.automata.learning import LearningError
from regula.cedar import formula, stage
from regula.cedar.learn import learn_skill
from regula.stages import Paths, SerialWork
from stage_configs import changed

CRAFTER = envs.get("crafter")
SKILLS = [s for s in CRAFTER.skill_names() if s in CRAFTER.rules.recipes]


def test_without_calls_the_clauses_are_recipe_clauses_and_no_skill_reads_as_a_call():
    assert not [s for s in CRAFTER.skill_names() if s.startswith(formula.CALL)]
    for goal in ("collect_wood", "place_table", "make_wood_pickaxe", "make_stone_pickaxe", "place_furnace",
                 "make_iron_pickaxe"):
        for letters in (SKILLS, sorted({goal, "collect_wood", "place_table", "sleep"})):
            assert teachers.recipe_clauses(goal, letters, calls=formula.CALL) == teachers.recipe_clauses(goal, letters)


def test_a_call_needs_nothing_and_gives_what_its_skill_ends_with():
    texts = [c["text"] for c in teachers.recipe_clauses("make_wood_pickaxe", [
        "call_place_table", "collect_wood", "make_wood_pickaxe"], calls=formula.CALL)]
    # the table from the call: the word's wood is the pickaxe's one, not the plan's three
    assert texts == ["F make_wood_pickaxe", "!make_wood_pickaxe U (call_place_table)",
                     "!make_wood_pickaxe U (collect_wood)"]
    t = teachers.FormulaTeacher(formula.CedarRulesFormula("make_iron_pickaxe", [formula.atom(a) for a in (
        "@collect_coal", "@collect_iron", "@place_furnace", "@place_table", "collect_wood", "make_iron_pickaxe")]),
        [formula.atom(a) for a in ("@collect_coal", "@collect_iron", "@place_furnace", "@place_table",
                                   "collect_wood", "make_iron_pickaxe")])
    ok = ("call_collect_coal", "call_collect_iron", "call_place_furnace", "collect_wood", "make_iron_pickaxe")
    assert t.member(ok)  # the table comes with the coal's call (its plan placed one)
    assert not t.member(ok[1:])  # no coal
    assert not t.member(("call_collect_coal", "call_collect_iron", "collect_wood", "make_iron_pickaxe"))  # no furnace


class _Exact:
    """An exact equivalence oracle over the rules' language (every word up to length 5 it gets wrong)."""

    def __init__(self, truth, letters):
        self.truth, self.letters = truth, letters
        self.rounds, self.last, self.lacks, self.missing = 0, [], {}, set()
        self.cache = formula._NoCache()

    def observe(self, hypothesis):
        from regula.automata.learning import Counterexample
        self.rounds += 1
        self.last = [{"label": True}]
        words = [w for n in range(1, 6) for w in itertools.product(self.letters, repeat=n)]
        return [Counterexample(w, self.truth(w)) for w in words if hypothesis.accepts(w) != self.truth(w)]


def _learn(source_for, goal, letters, max_calls=2, drop=False):
    truth = roles.make("teacher", "rules", goal=goal).member
    oracles = []

    def oracle_for(sigma):
        oracles.append(_Exact(truth, sigma))
        return oracles[-1]

    t = formula.FormulaTeachers(source_for, max_calls, drop=drop)
    run = learn_skill(lambda step, lacked: letters, t, oracle_for, 0, {"max_rounds": 20, "max_queries": 5000})
    return run, t, truth


def _wrong_seed(goal, atoms, how):
    """A seed at which the stand-in's formula (one clause wrong of two) has its wrong clause `how`."""
    return next(s for s in range(100)
                if set(formula.CedarRulesFormula(goal, atoms, noise=0.49, seed=s).wrong.values()) == {how})


def test_a_wrong_formula_is_refined_by_the_worlds_counterexample_in_a_second_call():
    goal, letters = "place_table", ("collect_wood", "place_table")
    seed = _wrong_seed(goal, letters, "negated")

    def source_for(atoms):
        return formula.CedarRulesFormula(goal, atoms, noise=0.49, seed=seed)

    wrong = formula.CedarRulesFormula(goal, letters, noise=0.49, seed=seed)
    assert wrong.formula() != [c["text"] for c in wrong.truth]
    run, t, truth = _learn(source_for, goal, letters)
    assert [c["why"] for c in t.calls] == ["first", "counterexample"]
    assert t.calls[1]["label"] is True  # a member the negated clause refused
    assert t.clauses == [c["text"] for c in wrong.truth]  # the clause restored
    assert run.reached and not run.error
    words = [w for n in range(1, 6) for w in itertools.product(letters, repeat=n)]
    assert all(run.dfa.accepts(w) == truth(w) for w in words)
    assert t.queries > 0 and run.teacher_queries > 0  # membership queries answered by the formula, not calls


def test_past_its_calls_the_learner_learns_around_a_wrong_formula():
    goal, letters = "place_table", ("collect_wood", "place_table")
    seed = _wrong_seed(goal, letters, "negated")
    run, t, truth = _learn(lambda atoms: formula.CedarRulesFormula(goal, atoms, noise=0.49, seed=seed),
                           goal, letters, max_calls=1)
    assert len(t.calls) == 1 and t.clauses != [c["text"] for c in t.teacher.source.truth] and not t.dropped
    words = [w for n in range(1, 6) for w in itertools.product(letters, repeat=n)]
    assert run.reached and all(run.dfa.accepts(w) == truth(w) for w in words)  # the world's labels pinned
    # formula_drop: the negated clause refuses the world's members, so it is dropped, with no call
    run, t, truth = _learn(lambda atoms: formula.CedarRulesFormula(goal, atoms, noise=0.49, seed=seed),
                           goal, letters, max_calls=1, drop=True)
    negated = [c for c in t.calls[0]["clauses"] if c.startswith("!(")]
    assert len(t.calls) == 1 and [d["clause"] for d in t.dropped] == negated and negated
    assert t.clauses == [c for c in t.calls[0]["clauses"] if c not in negated]
    assert truth(tuple(t.dropped[0]["word"]))  # the word that refuted it does the skill
    assert run.reached and all(run.dfa.accepts(w) == truth(w) for w in words)


class _Garbage:
    uses_llm = False

    def formula(self):
        return ["collect_wood &&& ("]


def test_a_garbage_answer_is_a_failed_call_with_a_one_line_reason_not_a_crash():
    t = formula.FormulaTeachers(lambda atoms: _Garbage())
    with pytest.raises(LearningError, match=r"^the formula teacher gave no usable formula: ") as err:
        t.on_alphabet(("collect_wood",))
    assert "\n" not in str(err.value)
    assert t.calls == [{"why": "first", "letters": ["collect_wood"], "clauses": None, "usable": False,
                        "reason": t.teacher.reason}]
    run, t, _ = _learn(lambda atoms: _Garbage(), "collect_wood", ("collect_wood",))
    assert not run.reached and run.error.startswith("the formula teacher gave no usable formula: ")
    assert len(t.calls) == 1


def test_a_garbage_answer_for_a_wider_alphabet_keeps_the_formula_the_teacher_had():
    sources = iter([formula.CedarRulesFormula("place_table", ("collect_wood", "place_table")), _Garbage()])
    t = formula.FormulaTeachers(lambda atoms: next(sources))
    t.on_alphabet(("collect_wood", "place_table"))
    t.on_alphabet(("collect_wood", "eat_cow", "place_table"))
    assert [c["usable"] for c in t.calls] == [True, False] and t.teacher.alphabet[1] == "eat_cow"
    assert t.member(("collect_wood", "eat_cow", "collect_wood", "place_table"))  # a letter no clause names
    assert not t.member(("collect_wood", "place_table"))


def test_an_llm_answer_that_names_a_letter_outside_the_alphabet_is_unusable():
    from pydantic import ValidationError

    from regula.llm import UnusableAnswer

    class Client:  # what the LLM client raises once its re-asks are spent on answers the schema refuses
        def ask_json(self, messages, schema, role):
            with pytest.raises(ValidationError, match="outside the alphabet"):
                schema(clauses=["F make_diamond"])
            raise UnusableAnswer("teacher_formula: no answer in the asked form after 2 re-asks")

    t = formula.FormulaTeachers(lambda atoms: teachers.LLMFormula(Client(), "collect wood", atoms))
    with pytest.raises(LearningError, match="no answer in the asked form"):
        t.on_alphabet(("collect_wood",))
    assert t.calls[0]["usable"] is False and t.uses_llm


@pytest.fixture
def formula_params(small_params):
    return changed(small_params, {"cedar": dict(
        skills=["collect_wood", "place_table", "make_wood_pickaxe"], teacher_form="formula", explore_worlds=6,
        rollouts=3, max_skills=25, worlds="dev", episodes=3, simulations=0, tasks={"trials": 0})})


def test_the_stage_learns_three_skills_with_at_most_two_calls_each(tmp_path, formula_params):
    paths = Paths(tmp_path, "cedar_skills")
    stage.prepare(formula_params, paths)
    head = stage.run(formula_params, paths, SerialWork(lambda line: None))
    assert head["skills_learned"] == 3
    detail = json.loads((tmp_path / "metrics" / "cedar_skills_detail.json").read_text())
    rows = {r["skill"]: r for r in detail["skills"]}
    assert all(1 <= r["teacher_calls"] <= 2 == formula_params.cedar.formula_calls for r in rows.values())
    assert rows["collect_wood"]["formula"][0]["clauses"] == ["F collect_wood"]
    # make_wood_pickaxe's first Σ has no table: the world's exploration shows it before any call (a call
    # there would be a formula saying no word does it), so the first call is on the wider Σ
    mwp = rows["make_wood_pickaxe"]
    assert len(mwp["alphabets"]) == 2 and "@place_table" in mwp["alphabets"][1]
    assert mwp["formula"][0]["why"] == "first" and mwp["formula"][0]["letters"] == mwp["alphabets"][1]
    assert "!make_wood_pickaxe U (call_place_table)" in mwp["formula"][0]["clauses"]
    assert mwp["history"][0]["widened"] == ["table"] and mwp["history"][0]["teacher_queries"] == 0
    assert rows["make_wood_pickaxe"]["teacher_queries"] > rows["make_wood_pickaxe"]["teacher_calls"]
    assert detail["this_run"]["teacher_asked"] == sum(r["teacher_calls"] for r in rows.values())
    assert not (tmp_path / "data" / "cache" / "cedar_skills" / "mq" / "collect_wood.json").exists()
    csv = (tmp_path / "metrics" / "cedar_skills.csv").read_text().splitlines()[0].split(",")
    assert "teacher_calls" in csv and "formula" not in csv


def test_the_llm_formula_teacher_glosses_the_calls_and_counts_a_garbage_answer(tmp_path, formula_params):
    from regula import rag
    from regula.llm import Accounting, LLMClient, LLMConfig
    from regula.llm.stub_server import StubLLMServer

    params = changed(formula_params, {"cedar": {"teacher": "openai"}})
    letters = ("@place_table", "collect_wood", "make_wood_pickaxe")
    with StubLLMServer() as server:
        cfg = LLMConfig(base_url=server.base_url, cache_dir=str(tmp_path / "cache"), model=server.model, retries=0,
                        reasks=0, timeout=10.0, max_tokens=64)
        client = LLMClient(cfg, "cedar_skills", Accounting())
        t = stage.make_formula_teacher(params, client, "make_wood_pickaxe", "make a wooden pickaxe",
                                       rag.GlobalAlphabet.of("crafter"))
        t.on_alphabet(letters)  # the stub answers with the stand-in's clauses, the call as `call_place_table`
        assert server.calls == 1 and t.uses_llm
        asked = server.requests[0]
        assert asked["max_tokens"] == params.cedar.formula_tokens
        assert "call_place_table: the learned skill place_table" in asked["messages"][-1]["content"]
        assert t.member(("@place_table", "collect_wood", "make_wood_pickaxe"))
        assert not t.member(("collect_wood", "make_wood_pickaxe"))
        server.script = ["the pickaxe needs a table"]  # not JSON: no re-ask left, a failed call
        assert not t.refine_on({("collect_wood", "make_wood_pickaxe"): True})  # the formula it had stays
        assert [c["usable"] for c in t.calls] == [True, False] and "\n" not in t.calls[1]["reason"]
        assert t.member(("@place_table", "collect_wood", "make_wood_pickaxe"))
        assert client.accounting.to_dict()["cedar_skills"]["teacher_formula"]["unusable"] == 1


def test_compare_formula_learns_the_curriculum_again_beside_the_per_word_rows(tmp_path, formula_params):
    from regula.cedar import report
    params = changed(formula_params, {"cedar": {"teacher_form": "word", "compare_formula": True,
                                                "skills": ["collect_wood", "place_table"]}})
    paths = Paths(tmp_path, "cedar_skills")
    stage.prepare(params, paths)
    stage.run(params, paths, SerialWork(lambda line: None))
    detail = json.loads((tmp_path / "metrics" / "cedar_skills_detail.json").read_text())
    assert [r["skill"] for r in detail["formula"]] == ["collect_wood", "place_table"]
    assert all(r["teacher_calls"] == 1 and r["reached"] for r in detail["formula"])
    assert not any("teacher_calls" in r for r in detail["skills"])  # the per-word rows as they were
    assert (tmp_path / "data" / "cedar_skills" / "formula" / "skills" / "place_table.json").is_file()
    assert (tmp_path / "data" / "cache" / "cedar_skills" / "formula" / "eq" / "place_table.json").is_file()
    rows = report.formula_rows(detail)
    assert rows["teacher"].tolist() == ["per word", "formula", "no teacher (`false`)"] * 2  # formula_baseline
    assert rows["teacher calls"].tolist()[1::3] == [1, 1]
    assert "### The teacher as a formula" in "\n".join(report.section(paths))


def test_restarts_on_a_changed_formula_share_one_mq_budget():
    class Restless(formula.FormulaTeachers):  # says its formula changed after every round
        def refine_on(self, labels):
            return True

    truth = roles.make("teacher", "rules", goal="place_table").member
    t = Restless(lambda atoms: formula.CedarRulesFormula("place_table", atoms))
    letters = ("collect_wood", "place_table")
    run = learn_skill(lambda step, lacked: letters, t, lambda sigma: _Exact(truth, sigma), 0,
                      {"max_rounds": 1000, "max_queries": 30})
    assert run.error.startswith("membership-query budget of ")  # what was left of the 30, after a restart
    assert not run.reached and 0 < run.teacher_queries <= 30 and t.queries <= 30


def test_clause_pattern_admits_formulas_the_parser_reads_over_the_alphabet_and_nothing_else():
    import random
    import re

    from regula.logic import parse
    letters = ("collect_wood", "place_table", "call_place_table")
    pattern = re.compile(teachers.clause_pattern(letters))
    rng = random.Random(0)

    def term(depth):
        head = "".join(rng.choice(["", "", "!", "F ", "G ", "X ", "G !"]) for _ in range(rng.randint(0, 2)))
        if depth and rng.random() < 0.5:
            return head + "(" + clause(depth - 1) + ")"
        return head + rng.choice(letters + ("true", "false"))

    def clause(depth):
        out = term(depth)
        for _ in range(rng.randint(0, 2)):
            out += f" {rng.choice(['&', '|', '->', 'U', 'W', 'R'])} " + term(depth)
        return out

    for _ in range(300):
        text = clause(2)
        assert pattern.fullmatch(text), text
        assert parse(text).atoms() <= set(letters)
    # what SmolLM2 wrote without the pattern, letters outside Σ, glued or unbalanced text
    for bad in ("<formula>", "defer_action", "F collect_wood place_table", "collect_wood->place_table",
                "F (collect_wood", "F(collect_wood)", "F make_wood_pickaxe", ""):
        assert not pattern.fullmatch(bad), bad


def test_the_formula_answers_schema_sends_the_pattern_and_still_refuses_what_does_not_parse():
    schema = teachers.clauses_schema(("collect_wood",))
    sent = schema.model_json_schema()["properties"]["clauses"]
    assert sent["minItems"] == 1 and sent["items"]["pattern"] == teachers.clause_pattern(("collect_wood",))
    assert schema.model_validate({"clauses": ["F (collect_wood & X !collect_wood)"]}).clauses
    # the pattern is for grammar decoding only: a deeper formula from a stronger model is taken
    assert schema.model_validate({"clauses": ["F (collect_wood & (X (F (collect_wood))))"]}).clauses
    for bad in ([], ["F place_table"], ["F ("]):
        with pytest.raises(ValueError):
            schema.model_validate({"clauses": bad})


def test_the_silent_teacher_says_no_to_every_word_and_the_world_still_teaches(tmp_path, formula_params):
    t = formula.FormulaTeachers(lambda atoms: formula.Silent(), 2)
    t.on_alphabet(("collect_wood", "place_table"))
    assert t.clauses == ["false"] and not t.uses_llm
    assert not any(t.member(w) for n in (1, 2, 3) for w in itertools.product(("collect_wood", "place_table"), repeat=n))
    assert not t.refine_on({("collect_wood",): True}) and len(t.calls) == 2  # asked again: `false` again
    params = changed(formula_params, {"cedar": {"teacher_form": "word", "compare_formula": True,
                                                "formula_baseline": True, "skills": ["collect_wood"],
                                                "formula_skills": ["collect_wood", "place_table"]}})
    paths = Paths(tmp_path, "cedar_skills")
    stage.prepare(params, paths)
    stage.run(params, paths, SerialWork(lambda line: None))
    detail = json.loads((tmp_path / "metrics" / "cedar_skills_detail.json").read_text())
    assert [r["skill"] for r in detail["skills"]] == ["collect_wood"]  # the per-word pass keeps `skills`
    assert [r["skill"] for r in detail["formula"]] == [r["skill"] for r in detail["formula_none"]] == [
        "collect_wood", "place_table"]
    assert all(c["clauses"] == ["false"] for r in detail["formula_none"] for c in r["formula"])
    assert all(r["reached"] for r in detail["formula_none"])  # the world's counterexamples alone teach these
    assert (tmp_path / "data" / "cedar_skills" / "formula_none" / "skills" / "place_table.json").is_file()


def test_bench_cedar_twin_runs_the_twin_from_nothing_and_counts_calls_per_skill(tmp_path, small_params):
    """`regula bench cedar-twin`: every answer asked (none replayed), the formula pass's calls per
    skill, and the refusal of a folder that holds a cache already."""
    from regula.bench import bench_cedar_twin
    from regula.llm.stub_server import StubLLMServer

    with StubLLMServer() as server:
        params = changed(small_params, {
            "llm": {"base_url": server.base_url, "model": server.model, "retries": 0, "timeout": 10.0},
            "llm_runs": {"cedar": {"skills": ["collect_wood"], "formula_skills": ["collect_wood"],
                                   "explore_worlds": 2, "rollouts": 1, "episodes": 1, "max_skills": 10}}})
        out = bench_cedar_twin(params, tmp_path / "run")
        asked = server.calls + len(server.probes)
    assert out["this_run"]["llm_calls"] == asked > 1  # every question asked, none replayed
    assert out["this_run"]["env_steps"] > 0 and out["seconds"] > 0
    assert set(out["formula"]) == {"collect_wood"} == set(out["formula_none"])
    assert 1 <= out["formula_max_calls"] <= 2 and out["formula_learned"] == 1
    assert out["llm"]["teacher_formula"]["calls"] == sum(r["teacher_calls"] for r in out["formula"].values())
    with pytest.raises(ValueError, match="is not empty"):
        bench_cedar_twin(params, tmp_path / "run")
