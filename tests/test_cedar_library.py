"""CEDAR's skill manager: learned skills called as letters `@s` (by the world and by the rules
teacher), templates by verb with the noun substituted, the backward-chaining explorer, and
Table 2 / Fig. 8's summaries."""
import random

import pytest

from regula import envs
from regula.automata.dfa import DFA
from regula.automata.teachers import CrafterRulesTeacher
from regula.cedar import tasks
from regula.cedar.library import Library, Skill, SkillWorld
from regula.cedar.rollout import play
from stage_configs import cedar_budget
from regula.errors import DataError, UnknownNameError

CRAFTER = envs.get("crafter")


def chain(letters, plan) -> DFA:
    """Accepts exactly the words that start with `plan`."""
    n = len(plan)
    table = {i: {a: (i + 1 if a == plan[i] else "dead") for a in letters} for i in range(n)}
    table[n] = {a: n for a in letters}
    table["dead"] = {a: "dead" for a in letters}
    return DFA.from_table(letters, table, 0, {n})


WOOD = Skill("collect_wood", "chop a tree for wood", chain(("collect_wood",), ("collect_wood",)))
TABLE = Skill("place_table", "build a crafting table",
              chain(("collect_wood", "place_table"), ("collect_wood", "place_table")),
              {("collect_wood", "place_table"): True, ("place_table",): False})


def test_only_a_skill_learned_as_more_than_its_own_letter_is_called():
    lib = Library([WOOD, TABLE])
    assert not WOOD.composite and TABLE.composite
    assert lib.callable(["place_table", "collect_wood", "make_wood_pickaxe"]) == (
        "@place_table", "collect_wood", "make_wood_pickaxe")
    assert Library().key == "" and Library([WOOD]).key == "" and len(lib.key) == 8
    with pytest.raises(UnknownNameError, match="unknown library skill 'place_furnace'"):
        lib.skill("place_furnace")


def test_the_rules_teacher_reads_a_call_as_the_skill_done_from_there():
    teacher = CrafterRulesTeacher("make_wood_pickaxe", calls="@")
    assert teacher.member(("@place_table", "collect_wood", "make_wood_pickaxe"))
    assert not teacher.member(("place_table", "collect_wood", "make_wood_pickaxe"))  # no wood for the table
    assert not teacher.member(("@place_table", "make_wood_pickaxe"))  # the table used the wood
    assert CrafterRulesTeacher("collect_stone", calls="@").member(("@make_wood_pickaxe", "collect_stone"))
    # Without `calls` an `@` letter is no skill at all.
    assert not CrafterRulesTeacher("collect_stone").member(("@make_wood_pickaxe", "collect_stone"))


def test_the_rules_teacher_with_held_reads_a_call_for_what_is_held_as_done_at_once():
    """make_iron_pickaxe's wood from `@make_wood_pickaxe` with a pickaxe held: read as a plan, the
    second pickaxe is a no-op of the abstract rules that leaves its log; the executor's `call_held`
    does nothing, and the world refuted the word (docs/cedar.md)."""
    word = ("@collect_coal", "@collect_iron", "@place_furnace", "@make_wood_pickaxe", "make_iron_pickaxe")
    gather = word[:3] + ("collect_wood", "make_iron_pickaxe")
    plan, held = (CrafterRulesTeacher("make_iron_pickaxe", calls="@", held=h) for h in (False, True))
    assert plan.member(word) and not held.member(word)
    assert plan.member(gather) and held.member(gather)
    assert not held.member(word[:2] + ("collect_wood", "make_iron_pickaxe"))  # no furnace
    # a station placed already: the second call is done at once
    assert CrafterRulesTeacher("make_wood_pickaxe", calls="@", held=True).member(
        ("@place_table", "@place_table", "collect_wood", "make_wood_pickaxe"))


def test_a_called_skill_runs_its_dfa_and_is_one_letter_of_the_word_above():
    base = CRAFTER.make(101, dig=False)
    world = SkillWorld(base, Library([TABLE]), cedar_budget(), random.Random(0))
    above = chain(("@place_table", "collect_wood", "make_wood_pickaxe"),
                  ("@place_table", "collect_wood", "make_wood_pickaxe"))
    record = play(world, above, "make_wood_pickaxe", cedar_budget(), random.Random(0))
    assert record["label"] and record["word"] == ["@place_table", "collect_wood", "make_wood_pickaxe"]
    done = [e.skill for e in base.events if e.success and e.skill != "explore"]
    # The table's DFA asks one wood: the place fails, and its policy gets another before placing it.
    assert done == ["collect_wood", "collect_wood", "place_table", "collect_wood", "make_wood_pickaxe"]
    assert [e.skill for e in world.events if e.skill != "explore"] == record["word"]


def test_a_called_skill_that_cannot_succeed_fails_without_refuting_the_word_above():
    never = Skill("place_table", "build a crafting table", chain(("place_table",), ("place_table",)))
    world = SkillWorld(CRAFTER.make(101, dig=False), Library([never]), cedar_budget(max_skills=3), random.Random(0))
    step = world.run_skill("@place_table")
    assert not step.success and step.cause == {"kind": "no_effect", "skill": "@place_table"}


def test_a_rollout_runs_at_most_max_calls_crafter_skills_at_every_level_together():
    # The above word is the table's skill called 3 times: 3 x 2 skills, capped at 4 in all.
    budget = cedar_budget(max_calls=4)
    base = CRAFTER.make(101, dig=False)
    world = SkillWorld(base, Library([TABLE]), budget, random.Random(0))
    above = chain(("@place_table",), ("@place_table",) * 3)
    record = play(world, above, "never", budget, random.Random(0))
    assert not record["label"] and world.calls == [4] and world.done
    assert len(base.events) == 4  # explores count: each is a Crafter skill run


def test_a_template_is_a_skill_with_the_verb_its_noun_substituted():
    pickaxe = Skill("make_iron_pickaxe", "craft an iron pickaxe",
                    chain(("@collect_iron", "collect_wood", "make_iron_pickaxe"),
                          ("@collect_iron", "collect_wood", "make_iron_pickaxe")),
                    {("@collect_iron", "collect_wood", "make_iron_pickaxe"): True, ("make_iron_pickaxe",): False})
    lib = Library([WOOD, TABLE, pickaxe])
    assert lib.template("make_iron_sword", "craft an iron sword") is pickaxe
    assert lib.template("eat_cow", "eat a cow") is None  # no stored skill has the verb
    mapping = Library.substitution(pickaxe, "make_iron_sword", CRAFTER.skill_names())
    assert mapping == {"make_iron_pickaxe": "make_iron_sword"}
    letters, answers = Library.adapt(pickaxe, mapping)
    assert letters == ("@collect_iron", "collect_wood", "make_iron_sword")
    assert answers == {("@collect_iron", "collect_wood", "make_iron_sword"): True, ("make_iron_sword",): False}


def test_the_library_round_trips_through_its_files(tmp_path):
    root = tmp_path / "lib"
    TABLE.dfa.save(root / "skills" / "place_table.json")
    lib = Library([TABLE])
    lib.save(root, [{"name": "place_table", "description": TABLE.description, "dfa": "skills/place_table.json",
                     "reached": True}, {"name": "collect_stone", "description": "mine stone", "reached": False}])
    back = Library.load(root)
    assert list(back.skills) == ["place_table"]  # a skill not learned is listed, not stored
    assert back.skill("place_table").examples == TABLE.examples and back.skill("place_table").dfa == TABLE.dfa
    with pytest.raises(DataError, match="no skill library"):
        Library.load(tmp_path / "none")


def test_exploring_chains_back_from_what_a_failed_letter_lacked():
    # A hypothesis that accepts nothing: every letter is exploration. The pickaxe lacks wood and a
    # table, so the explorer gets them and tries it again.
    letters = ("collect_wood", "make_wood_pickaxe", "place_table")
    empty = DFA(letters, ((0, 0, 0),), 0, frozenset())
    reached = [play(CRAFTER.make(w, dig=False), empty, "make_wood_pickaxe", cedar_budget(max_skills=12),
                    random.Random(w))["label"] for w in (101, 102, 103)]
    assert reached == [True, True, True]


def test_table2_cells_and_the_query_budget():
    rows = [{"task": "t", "condition": c, "trial": i, "template": None, "teacher_queries": q, "eq_rounds": 2,
             "learned": True, "success": s}
            for c, q, s, i in (("library", 10, True, 0), ("library", 30, False, 1), ("scratch", 100, True, 0),
                               ("scratch", 100, True, 1))]
    cells = {c["condition"]: c for c in tasks.summary(rows)}
    assert cells["library"]["teacher_queries"] == {"mean": 20.0, "std": 10.0}
    assert (cells["library"]["successes"], cells["scratch"]["successes"]) == (1, 2)
    from regula.cedar.report_tasks import table2
    base = tasks.baseline_summary([{"task": "t", "actor": "greedy_goal", "success": s, "steps": n, "first": f}
                                   for s, n, f in ((False, 90, {}), (True, 30, {"t": 7}))])
    assert base == [{"task": "t", "actor": "greedy_goal", "episodes": 2, "successes": 1,
                     "decisions": {"mean": 7.0, "std": 0.0}, "steps": {"mean": 60.0, "std": 30.0}}]
    shown = table2({"tasks": list(cells.values()), "baseline": base}).set_index("row")["t"]
    assert shown["CEDAR (with the skill library): teacher askings"] == "20 ± 10; 1/2 (9-91%)"
    assert shown["CEDAR w/o S.L. (learned from scratch): EQ rounds"] == "2 ± 0"
    planner = ("free-form planner, no DFA (LTLCrit's greedy actor aimed at the goal, `greedy_goal`; a rule-grounded "
               "stand-in for the paper's LLM planner, under data.yaml's hard laws)")
    assert shown[f"{planner}: decisions to the goal"] == "7 ± 0; 1/2 (9-91%)"
    assert shown[f"{planner}: primitive steps per episode"] == "60 ± 30"
    skills = [{"skill": s, "teacher_queries": q, "reached": r} for s, q, r in (
        ("place_table", 5, True), ("collect_stone", 7, True), ("place_furnace", 9, False), ("collect_iron", 1, True))]
    base = [{"task": "collect_diamond", "first": {"place_table": 4, "collect_stone": 8}},
            {"task": "collect_diamond", "first": {"place_table": 6}}]
    curve = {c["milestone"]: c for c in tasks.budget_curve(skills, base)}
    assert [curve[m]["cedar_queries"] for m in ("table", "stone", "furnace", "iron", "diamond")] == [
        5, 12, None, None, None]  # the furnace was not learned: nothing after it counts as reached
    assert (curve["table"]["baseline_queries"], curve["stone"]["baseline_queries"]) == (5.0, 8.0)
    assert (curve["stone"]["baseline_reached"], curve["iron"]["baseline_queries"]) == (1, None)
