"""The membership stage's words: one-edit variations of the shortest plan, each with the class of
the edit that made it, and the teacher's answers scored per class."""
from regula import envs
from regula.membership import WORD_CLASSES, score, words_for

CRAFTER = envs.get("crafter")


def _subsequence(short, long) -> bool:
    it = iter(long)
    return all(any(a == b for b in it) for a in short)


def test_each_word_is_the_edit_its_class_names():
    for goal in ("make_wood_pickaxe", "make_stone_pickaxe"):
        plan = CRAFTER.shortest_plan(goal)
        words = words_for(goal, 40, seed=0)
        assert words[0] == {"goal": goal, "word": plan, "truth": True, "kind": "plan"}
        assert {w["kind"] for w in words} <= set(WORD_CLASSES)
        for w in words[1:]:
            word, kind = w["word"], w["kind"]
            assert w["truth"] == CRAFTER.accomplishes(goal, tuple(word))
            if kind == "too_short":
                assert len(word) < len(plan) and word == plan[:len(word)]
            elif kind == "wrong_order":
                assert sorted(word) == sorted(plan) and word != plan
            elif kind == "missing_precondition":
                assert len(word) == len(plan) - 1 and _subsequence(word, plan)
            else:
                assert kind == "extra_letters" and len(word) == len(plan) + 1 and _subsequence(plan, word)


def test_the_classes_are_read_off_the_draws_the_stage_always_made():
    """The words are those the stage drew before it kept their classes (the recorded answers and
    the LLM cache are keyed by them)."""
    words = words_for("place_table", 8, seed=0)
    plan = ["collect_wood", "collect_wood", "place_table"]
    assert [(w["word"], w["truth"], w["kind"]) for w in words] == [
        (plan, True, "plan"),
        (["collect_wood", "place_stone", "collect_wood", "place_table"], False, "extra_letters"),
        (["defeat_skeleton", *plan], False, "extra_letters"),
        (["make_wood_sword", *plan], False, "extra_letters"),
        (["collect_wood", "place_table"], False, "missing_precondition"),
        ([*plan, "collect_stone"], True, "extra_letters"),
        (["collect_wood", *plan], True, "extra_letters"),
        ([*plan, "place_table"], True, "extra_letters")]


def test_scores_per_class_count_wrong_and_unusable_answers():
    rows = [{"kind": "too_short", "truth": False, "answer": True},
            {"kind": "too_short", "truth": False, "answer": False},
            {"kind": "too_short", "truth": True, "answer": None}]
    s = score(rows)
    assert (s["n"], s["accuracy"], s["false_yes"], s["false_no"], s["unusable"]) == (3, 0.3333, 1, 0, 1)
