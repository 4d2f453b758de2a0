"""CEDAR's household tasks (Table 6) on VirtualHome's evolving graph (issue 37): Σ by RAG over the
scene's objects, the teacher as one formula from the recipe, the simulator as the EQ oracle; the
plate in the closed cabinet is the natural counterexample, repaired by the teacher's second call."""
import itertools
import json
from pathlib import Path

import pytest

from regula.automata import teachers
from regula.cedar import household as h
from regula.errors import RegulaError, UnknownNameError

TASKS = ("MAKE_1_TOAST", "MAKE_COFFEE", "COOK_POTATO", "MAKE_SALAD", "STORE_PLATE_IN_FRIDGE")


@pytest.fixture(scope="module")
def runs():
    return {name: h.learn_task(name) for name in TASKS}


def test_the_five_tasks_of_table_6_are_the_data():
    assert tuple(h.tasks()) == TASKS


@pytest.mark.parametrize("name", TASKS)
def test_each_learned_dfa_accepts_the_recipe_and_its_policy_reaches_the_goal(runs, name):
    run = runs[name]
    assert run.success and not run.error
    recipe = h.RecipeFormula(h.Scene(h.task(name))).recipe
    if name == "STORE_PLATE_IN_FRIDGE":  # the cabinet opened first: what the counterexample taught
        recipe = ["[WALK] <kitchen_cabinet> (1000)", "[OPEN] <kitchen_cabinet> (1000)"] + recipe
    assert run.dfa.accepts(tuple(h.atom(s) for s in recipe))
    assert run.policy == recipe
    swapped = [recipe[1], recipe[0]] + recipe[2:]  # a grab before the walk to its object
    assert not run.dfa.accepts(tuple(h.atom(s) for s in swapped))
    # the policy replayed on a fresh episode reaches the goal, which the scene does not start in
    scene = h.Scene(h.task(name))
    ep = scene.episode()
    assert not scene.goal_holds(ep.graph())
    assert all(ep.run_skill(line).success for line in run.policy)
    assert scene.goal_holds(ep.graph())


@pytest.mark.parametrize("name", TASKS)
def test_the_teacher_is_called_at_most_twice_and_answers_every_membership_query(runs, name):
    run = runs[name]
    assert 1 <= len(run.calls) <= 2
    assert run.queries > 0 and run.world_rounds >= 1


@pytest.mark.parametrize("name", TASKS[:4])
def test_four_tasks_succeed_in_one_pass_with_one_call(runs, name):
    run = runs[name]
    assert (len(run.calls), run.world_rounds, run.outcome_before, run.outcome_after) == (1, 1, "success", "")


def test_the_plate_in_the_closed_cabinet_needs_exactly_one_counterexample_fix(runs):
    run = runs["STORE_PLATE_IN_FRIDGE"]
    assert (run.outcome_before, run.outcome_after, len(run.calls), run.world_rounds) == ("fail", "success", 2, 2)
    first, second = run.rollouts
    assert not first.goal and second.goal
    assert first.feedback["line"] == "[GRAB] <plate> (1001)"
    assert "inside other closed thing" in first.feedback["message"]
    assert first.feedback["enclosed_by"] == "<kitchen_cabinet> (1000)"
    opened = "open_kitchen_cabinet_1000"
    assert not any(opened in c for c in run.calls[0]["clauses"])
    assert any(opened in c for c in run.calls[1]["clauses"])
    assert run.calls[1]["counterexample"] == [h.atom(s) for s in first.word]
    # RAG did not retrieve the cabinet: the refusal's container widened Σ
    assert "kitchen_cabinet" not in [n["name"] for n in run.nouns]
    assert run.alphabets[0] < run.alphabets[1] and "[OPEN] <kitchen_cabinet> (1000)" in run.letters


def test_an_injected_object_is_named_in_the_episode():
    scene = h.Scene(h.task("COOK_POTATO"))
    assert scene.injected[0]["object"] == "<food_potato> (3002)"
    assert "<food_potato> (3002) injected on <kitchen_counter>" in scene.description
    ep = scene.episode()
    assert "<food_potato> (3002) injected" in ep.description
    assert ep.run_skill("[WALK] <food_potato> (3002)").success
    assert ep.run_skill("[GRAB] <food_potato> (3002)").success
    # a task whose scene has everything injects nothing, and says so
    assert h.Scene(h.task("MAKE_1_TOAST")).injected == []


def test_a_bad_task_name_is_refused_in_one_line():
    with pytest.raises(UnknownNameError) as e:
        h.learn_task("MAKE_TEA")
    assert "\n" not in str(e.value) and "MAKE_1_TOAST" in str(e.value)
    with pytest.raises(RegulaError, match="household.k must be >= 1"):
        h.learn_task("MAKE_1_TOAST", k=0)


def test_a_sigma_without_the_recipe_is_refused_in_one_line():
    with pytest.raises(RegulaError, match="lacks the recipe's") as e:
        h.learn_task("MAKE_COFFEE", k=4)  # the mug is RAG's fifth noun
    assert "\n" not in str(e.value)


def test_letters_are_grounded_by_what_their_objects_afford():
    scene = h.Scene(h.task("MAKE_1_TOAST"))
    sigma = h.letters(scene, ["food_bread", "toaster"])
    assert "[PUTIN] <food_bread> (2009) <toaster> (292)" in sigma
    assert "[SWITCHON] <toaster> (292)" in sigma
    assert not [s for s in sigma if s.startswith("[GRAB] <toaster>") or s.startswith("[SWITCHON] <food_bread>")]
    assert h.atom("[PUTIN] <food_bread> (2009) <toaster> (292)") == "putin_food_bread_2009_toaster_292"


def test_the_stand_in_is_wrong_on_its_declared_share_and_a_counterexample_restores_a_refuted_clause():
    scene = h.Scene(h.task("MAKE_1_TOAST"))
    clean = h.RecipeFormula(scene)
    noisy = h.RecipeFormula(scene, noise=0.3, seed=0)
    assert len(noisy.wrong) == round(0.3 * len(clean.truth)) == 2
    assert noisy.formula() != clean.formula()
    alphabet = tuple(h.atom(s) for s in h.letters(scene, ["food_bread", "toaster"]))
    mon = teachers.compile_clauses(noisy.formula(), alphabet)
    # a word the wrong formula takes that the recipe refuses (found among the recipe's reorderings)
    recipe = tuple(h.atom(s) for s in clean.recipe)
    taken = next(w for n in range(1, len(recipe) + 1) for w in itertools.permutations(recipe, n)
                 if teachers.accepts(mon, w) and not teachers.accepts(teachers.compile_clauses(clean.formula(), alphabet), w))
    wrong_before = dict(noisy.wrong)
    noisy.refine(noisy.formula(), taken, False, {}, alphabet)
    assert len(noisy.wrong) < len(wrong_before)
    assert not teachers.accepts(teachers.compile_clauses(noisy.formula(), alphabet), taken)
    with pytest.raises(RegulaError, match="noise"):
        h.RecipeFormula(scene, noise=0.5)


def test_a_task_learns_the_same_record_twice(runs):
    again = h.learn_task("STORE_PLATE_IN_FRIDGE")
    assert again.to_json() == runs["STORE_PLATE_IN_FRIDGE"].to_json() and again.dfa == runs["STORE_PLATE_IN_FRIDGE"].dfa


def test_the_stage_writes_the_dfas_and_the_report_shows_table_6_beside_ours(tmp_path, runs):
    from regula import params as P
    from regula.automata.dfa import DFA
    from regula.cedar import household_stage, report_household
    from regula.stages import Paths

    class Work:
        def progress(self, line):
            pass

    params = P.load(Path(__file__).resolve().parents[1] / "params.yaml")
    paths = Paths(root=tmp_path, stage="household")
    household_stage.prepare(params, paths)
    head = household_stage.run(params, paths, Work())
    assert head == {"household_tasks_succeeded": 5}
    out = tmp_path / "data" / "household" / "dfas"
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{t}{x}" for t in TASKS for x in (".json", ".dot", ".svg"))
    saved = json.loads((out / "STORE_PLATE_IN_FRIDGE.json").read_text())
    assert DFA.from_json(saved["dfa"]) == runs["STORE_PLATE_IN_FRIDGE"].dfa
    assert saved["letters"]["open_kitchen_cabinet_1000"] == "[OPEN] <kitchen_cabinet> (1000)"
    lines = report_household.section(Paths(root=tmp_path, stage="report"))
    assert lines[0] == "## Household tasks (CEDAR Table 6)"
    table = "\n".join(lines)
    assert "| COOK_POTATO | file141_1 | `<food_potato> (3002)` |" in table
    assert "| 2 | fail | success (no extra LLM) |" in table  # the paper's row, as printed
    assert "18.548 s ± 14.289" in table and "kitchen_cabinet" in table
    bad = params.model_copy(update={"household": params.household.model_copy(update={"tasks": ["MAKE_TEA"]})})
    with pytest.raises(UnknownNameError):
        household_stage.prepare(bad, paths)
