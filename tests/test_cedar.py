"""CEDAR on Crafter: word extraction, the DFA run as a policy, the world as equivalence oracle,
the MQ/EQ caches."""
import json
import random
from pathlib import Path

import pytest

from regula import envs
from regula.automata.dfa import DFA
from regula.cedar.caches import EQCache, MQCache, RecordedTeacher, hypothesis_key
from regula.cedar.equivalence import CrafterEquivalence
from regula.cedar.rollout import play
from stage_configs import cedar_budget
from regula.cedar.words import event_holds, extract
from regula.errors import DataError
from stage_configs import expert_config

CRAFTER = envs.get("crafter")
ACTIONS = CRAFTER.skill_names()
RECORDED = Path(__file__).parent / "data" / "crafter_expert_101_stone_pickaxe.jsonl"
KEEP = ("t", "skill", "success", "cause", "inventory", "props_after", "unlocked")


def recorded() -> list[dict]:
    return [json.loads(line) for line in RECORDED.read_text().splitlines()]


def test_the_recorded_episode_is_the_expert_on_world_101():
    world = CRAFTER.make(101)
    CRAFTER.play_episode(world, CRAFTER.Expert(world, expert_config(goal="make_stone_pickaxe")))
    assert [{k: e.to_json()[k] for k in KEEP} for e in world.events] == recorded()


def test_word_extraction_on_the_recorded_episode():
    letters = ("collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe")
    got = extract(recorded(), letters, ACTIONS)
    assert got.word == ("collect_wood",) * 4 + ("place_table", "collect_wood", "make_wood_pickaxe",
                                                 "collect_stone", "make_stone_pickaxe")
    assert got.outside == ("make_wood_sword",)  # explore is the runner's, never outside
    # Events follow the step that made them true (any step: the sword took wood, walking took the
    # table out of reach), in Σ's order, once per rise.
    got = extract(recorded(), ("collect_wood", "has_2_wood", "near_table", "place_table"), ACTIONS)
    assert got.word == ("collect_wood", "collect_wood", "has_2_wood", "collect_wood", "collect_wood",
                        "place_table", "near_table", "collect_wood", "has_2_wood", "near_table", "near_table")
    assert got.outside == ("make_wood_sword", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe")


def test_a_failed_step_is_absent_from_the_word():
    steps = recorded()
    steps[5] = {**steps[5], "success": False}  # place_table failed
    letters = ("collect_wood", "place_table", "make_wood_pickaxe")
    assert extract(steps, letters, ACTIONS).word == ("collect_wood",) * 5 + ("make_wood_pickaxe",)


def test_events_read_monitors_off_the_inventory_and_the_rest_off_the_propositions():
    assert event_holds("has_3_stone", {"stone": 3}, set()) and not event_holds("has_3_stone", {"stone": 2}, set())
    assert event_holds("has_wood", {"wood": 1}, set())
    assert event_holds("near_table", {}, {"near_table"}) and not event_holds("is_night", {}, {"near_table"})


def chain(letters: tuple, plan: tuple) -> DFA:
    """Accepts exactly the words that start with `plan` (any continuation)."""
    n = len(plan)
    table = {i: {a: (i + 1 if a == plan[i] else "dead") for a in letters} for i in range(n)}
    table[n] = {a: n for a in letters}
    table["dead"] = {a: "dead" for a in letters}
    return DFA.from_table(letters, table, 0, {n})


PLAN = ("collect_wood", "collect_wood", "collect_wood", "place_table", "make_wood_pickaxe")
LETTERS = ("collect_wood", "make_wood_pickaxe", "place_table")


def test_a_right_hypothesis_played_reaches_the_goal_and_its_word_is_accepted():
    record = play(CRAFTER.make(101, dig=False), chain(LETTERS, PLAN), "make_wood_pickaxe", cedar_budget(), random.Random(0))
    assert record["label"] and record["accepted"] and tuple(record["word"]) == PLAN and record["reached_at"] == 5


def test_a_hypothesis_that_accepts_nothing_explores_the_letters_at_random():
    empty = DFA(LETTERS, ((0, 0, 0),), 0, frozenset())
    a = play(CRAFTER.make(101), empty, "make_wood_pickaxe", cedar_budget(), random.Random(1))
    b = play(CRAFTER.make(101), empty, "make_wood_pickaxe", cedar_budget(), random.Random(1))
    assert a == b and not a["accepted"]
    assert a["label"] == ("make_wood_pickaxe" in a["word"])  # a positive counterexample when it got there


WRONG = chain(LETTERS, ("collect_wood", "place_table", "make_wood_pickaxe"))  # one wood makes a table


def test_a_letter_that_fails_for_lack_of_an_item_refutes_its_word():
    # Placing the table fails (one wood), the edge is dropped, nothing is left to plan; exploring
    # gets the wood it lacked and places the table, then the pickaxe lacks wood (the table took it).
    # On the way an explored make_wood_pickaxe lacked the table: a try, no explore (no world has one),
    # and no refutation (off the hypothesis's path).
    world = CRAFTER.make(101, dig=False)
    record = play(world, WRONG, "make_wood_pickaxe", cedar_budget(max_skills=7), random.Random(0))
    assert record["word"] == ["collect_wood", "collect_wood", "place_table"]
    assert not record["label"] and not record["accepted"]
    assert record["refuted"] == [["collect_wood", "place_table"],
                                 ["collect_wood", "collect_wood", "place_table", "make_wood_pickaxe"]]
    assert [e.skill for e in world.events][3:6] == ["place_table", "make_wood_pickaxe", "place_table"]
    assert record["lacks"]["make_wood_pickaxe"] == ["table", "wood"]


def test_the_world_refutes_the_plan_a_hypothesis_could_not_carry_out(tmp_path, small_params):
    oracle = CrafterEquivalence("make_wood_pickaxe", [101], 1, cedar_budget(max_skills=6), small_params.env.model_dump(),
                                EQCache(tmp_path / "eq.json"))
    labels = {c.word: c.label for c in oracle.observe(WRONG)}
    # The prefixes of the word played, the refuted word, and the refuted word's shortest accepted
    # extension: the counterexample, since no word going on from a missing item does the skill.
    assert {(): False, ("collect_wood",): False, ("collect_wood", "place_table"): False,
            ("collect_wood", "place_table", "make_wood_pickaxe"): False}.items() <= labels.items()
    assert not any(labels.values())  # the goal was not reached
    assert WRONG.accepts(("collect_wood", "place_table", "make_wood_pickaxe"))


def test_the_eq_cache_replays_a_round_without_playing(tmp_path, small_params):
    hyp = chain(LETTERS, PLAN)
    oracle = CrafterEquivalence("make_wood_pickaxe", [101, 102], 2, cedar_budget(), small_params.env.model_dump(),
                                EQCache(tmp_path / "eq.json"))
    first = oracle.observe(hyp)
    assert oracle.played == 2 and oracle.steps_played > 0 and (tmp_path / "eq.json").exists()
    again = CrafterEquivalence("make_wood_pickaxe", [101, 102], 2, cedar_budget(), small_params.env.model_dump(),
                               EQCache(tmp_path / "eq.json"))
    assert again.observe(hyp) == first and again.played == 0 and again.steps_played == 0
    assert again.steps_seen == oracle.steps_seen
    # Another budget is another setting: nothing is read back.
    other = CrafterEquivalence("make_wood_pickaxe", [101], 1, cedar_budget(max_skills=7), small_params.env.model_dump(),
                               EQCache(tmp_path / "eq.json"))
    other.observe(hyp)
    assert other.played == 1


def test_the_hypothesis_key_is_the_language_not_the_numbering():
    a = chain(LETTERS, PLAN)
    b = DFA(a.alphabet, a.delta + ((0, 0, 0),), a.initial, a.accepting)  # an unreachable state more
    assert hypothesis_key(a) == hypothesis_key(b)
    assert hypothesis_key(a) != hypothesis_key(chain(LETTERS, PLAN[1:]))


def test_the_mq_cache_asks_each_word_and_sample_once(tmp_path):
    class Counting:
        asked = 0

        def member(self, word, sample=0):
            self.asked += 1
            return len(word) % 2 == 0

    inner = Counting()
    teacher = RecordedTeacher(inner, "parity", MQCache(tmp_path / "mq.json"))
    assert teacher.member(("a", "b")) and not teacher.member(("a",)) and teacher.member(("a", "b"))
    assert (inner.asked, teacher.asked, teacher.replayed) == (2, 2, 1)
    teacher.cache.save()
    # One entry a line (a cache kept in git diffs by entry), sorted.
    assert (tmp_path / "mq.json").read_text() == '{\n"parity":{\n  "a":{"0":false},\n  "a b":{"0":true}\n}\n}\n'
    again = RecordedTeacher(Counting(), "parity", MQCache(tmp_path / "mq.json"))
    assert again.member(("a", "b")) and again.asked == 0
    assert RecordedTeacher(Counting(), "other", MQCache(tmp_path / "mq.json")).member(("a",)) is False


def test_a_damaged_cache_file_is_named(tmp_path):
    (tmp_path / "eq.json").write_text('{"abc": ')
    with pytest.raises(DataError, match=r"eq.json: not valid JSON .*delete it to record the cache again"):
        EQCache(tmp_path / "eq.json")
