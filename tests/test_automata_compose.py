"""Composition across alphabets (regula.automata.compose), checked on languages: every word up
to a length over the merged alphabet, against the definition read off the parts."""
import itertools
import random

import pytest

from regula.automata.compose import Violation, chain, check, comply, lift, merged_alphabet, project
from regula.automata.dfa import DFA, AlphabetError
from regula.automata.ops import equivalent, minimize


def _random_dfa(alphabet, states, seed):
    rng = random.Random(seed)
    delta = tuple(tuple(rng.randrange(states) for _ in alphabet) for _ in range(states))
    accepting = frozenset(s for s in range(states) if rng.random() < 0.4) or frozenset({states - 1})
    return DFA(tuple(alphabet), delta, 0, accepting)


def _words(alphabet, up_to):
    for n in range(up_to + 1):
        yield from itertools.product(alphabet, repeat=n)


PAIRS = [(_random_dfa("abc", 4, seed), _random_dfa("bcd", 3, seed + 100)) for seed in range(6)]


def test_merged_alphabet_keeps_the_first_order_then_adds_new_letters():
    a, b = PAIRS[0]
    assert merged_alphabet(a, b) == ("a", "b", "c", "d")
    assert merged_alphabet(b, a) == ("b", "c", "d", "a")


@pytest.mark.parametrize("a,b", PAIRS)
def test_lift_reads_foreign_letters_past(a, b):
    sigma = merged_alphabet(a, b)
    lifted = lift(a, sigma)
    assert all(lifted.accepts(w) == a.accepts(project(w, a.alphabet)) for w in _words(sigma, 5))


@pytest.mark.parametrize("a,b", PAIRS)
def test_comply_is_the_intersection_of_both_projections(a, b):
    policy = comply(a, b)
    assert policy.alphabet == merged_alphabet(a, b)
    assert all(policy.accepts(w) == (a.accepts(project(w, a.alphabet)) and b.accepts(project(w, b.alphabet)))
               for w in _words(policy.alphabet, 5))
    assert policy == minimize(policy)  # already minimal


@pytest.mark.parametrize("a,b", PAIRS)
def test_chain_is_a_word_of_the_first_then_one_of_the_second(a, b):
    chained = chain(a, b)

    def by_definition(w):
        return any(a.accepts(project(w[:i], a.alphabet)) and b.accepts(project(w[i:], b.alphabet))
                   for i in range(len(w) + 1))
    assert all(chained.accepts(w) == by_definition(w) for w in _words(chained.alphabet, 5))


def test_comply_with_the_same_alphabet_is_the_plain_intersection():
    a = _random_dfa("ab", 4, 1)
    assert equivalent(comply(a, a), a)[0]


# Fig. 3's example: the skill "mine a diamond" and the specification "sleep at night".
SKILL = DFA.from_table(("collect_iron", "collect_diamond"),
                       {0: {"collect_iron": 1, "collect_diamond": 0}, 1: {"collect_iron": 1, "collect_diamond": 2},
                        2: {"collect_iron": 2, "collect_diamond": 2}}, 0, {2})
# Between `night` and the next `day`, only `sleep`: mining letters at night go to a dead state.
NIGHT = DFA.from_table(("night", "day", "sleep", "collect_iron", "collect_diamond"),
                       {"day": {"night": "night", "day": "day", "sleep": "day", "collect_iron": "day",
                                "collect_diamond": "day"},
                        "night": {"night": "night", "day": "day", "sleep": "night", "collect_iron": "dead",
                                  "collect_diamond": "dead"},
                        "dead": {x: "dead" for x in ("night", "day", "sleep", "collect_iron", "collect_diamond")}},
                       "day", {"day", "night"})


def test_the_compliant_policy_sleeps_through_the_night():
    policy = comply(SKILL, NIGHT)
    assert policy.accepts(("collect_iron", "night", "sleep", "day", "collect_diamond"))
    assert not policy.accepts(("collect_iron", "night", "collect_diamond"))  # mined at night
    assert not policy.accepts(("collect_iron", "night", "sleep", "day"))  # the skill's goal not reached
    assert SKILL.accepts(project(("collect_iron", "night", "collect_diamond"), SKILL.alphabet))


def test_check_names_the_letter_that_broke_a_specification():
    eventually_sleep = DFA.from_table(("sleep",), {0: {"sleep": 1}, 1: {"sleep": 1}}, 0, {1})
    specs = {"sleep at night": NIGHT, "sleep some time": eventually_sleep}
    word = ("collect_iron", "night", "sleep", "collect_diamond", "day")
    assert check(word, specs) == [Violation("sleep at night", word, 3)]
    assert str(check(word, specs)[0]) == ("sleep at night: violated at letter 4 (collect_diamond) of collect_iron, "
                                          "night, sleep, collect_diamond, day")
    early = ("collect_iron", "night")
    assert check(early, specs) == [Violation("sleep some time", early, None)]
    assert "ends before the specification is met" in str(check(early, specs)[0])
    assert check(("night", "sleep", "day", "collect_iron"), specs) == []


def test_lift_refuses_an_alphabet_missing_its_letters():
    with pytest.raises(AlphabetError, match="without collect_diamond"):
        lift(SKILL, ("collect_iron", "night"))


def test_the_dfa_commands_write_the_policy_and_check_words(tmp_path, capsys):
    from regula.cli import main
    SKILL.save(tmp_path / "mine.json")
    NIGHT.save(tmp_path / "sleep_at_night.json")
    out = tmp_path / "out" / "policy.json"
    assert main(["dfa", "comply", str(tmp_path / "mine.json"), str(tmp_path / "sleep_at_night.json"),
                 "--out", str(out), "--no-svg"]) == 0
    assert DFA.load(out) == comply(SKILL, NIGHT)
    assert "complying with sleep_at_night" in (tmp_path / "out" / "policy.dot").read_text()
    assert main(["dfa", "chain", str(tmp_path / "mine.json"), str(tmp_path / "sleep_at_night.json"),
                 "--out", str(tmp_path / "chain.json"), "--no-svg"]) == 0
    assert DFA.load(tmp_path / "chain.json") == chain(SKILL, NIGHT)
    capsys.readouterr()
    spec = ["--spec", str(tmp_path / "sleep_at_night.json")]
    assert main(["dfa", "check", "collect_iron,night,collect_diamond", *spec]) == 1
    assert "sleep_at_night: violated at letter 3 (collect_diamond)" in capsys.readouterr().out
    assert main(["dfa", "check", "night, sleep, day", *spec]) == 0
    assert capsys.readouterr().out == "1 specification(s) checked: the word violates none\n"
    assert main(["dfa", "comply", str(tmp_path / "mine.json"), str(tmp_path / "none.json"), "--out", str(out)]) == 2
    assert "none.json: no such file" in capsys.readouterr().err
    assert main(["dfa", "chain", str(tmp_path / "mine.json"), str(tmp_path / "mine.json"),
                 "--out", str(tmp_path / "chain.txt")]) == 2
    assert "--out must name a .json file" in capsys.readouterr().err


# After `is_night` becomes true, the next of these letters must be `shelter` or `sleep`.
SHELTER_FIRST = DFA.from_table(
    ("is_night", "shelter", "sleep", "eat_cow", "defeat_zombie"),
    {"day": {"is_night": "night", "shelter": "day", "sleep": "day", "eat_cow": "day", "defeat_zombie": "day"},
     "night": {"is_night": "night", "shelter": "day", "sleep": "day", "eat_cow": "bad", "defeat_zombie": "bad"},
     "bad": {x: "bad" for x in ("is_night", "shelter", "sleep", "eat_cow", "defeat_zombie")}},
    "day", {"day", "night"})


def _episode(folder, seed, skills):
    """A logged episode whose steps ran `skills` ((skill, succeeded, night after it), ...)."""
    from regula.episodes import episode, header, write
    steps = [{"type": "step", "skill": skill, "success": ok, "props_after": ["is_night"] if night else [],
              "inventory": {}} for skill, ok, night in skills]
    return write(folder, episode(header(seed, "test", {"seed": seed}, ["is_night"]), steps, {"end": "died"}))


def test_the_verifier_reads_each_logged_episode_as_a_word_over_the_spec(tmp_path, capsys):
    from regula.cli import main
    _episode(tmp_path, 0, [("eat_cow", True, False), ("collect_drink", True, True), ("shelter", True, True),
                           ("eat_cow", True, False)])
    _episode(tmp_path, 1, [("eat_cow", True, True), ("defeat_zombie", False, True), ("defeat_zombie", True, True)])
    SHELTER_FIRST.save(tmp_path / "shelter_first.json")
    capsys.readouterr()
    assert main(["dfa", "check", "--spec", str(tmp_path / "shelter_first.json"), "--log", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    # episode 1: eat_cow, then the night comes (is_night), a failed fight (no letter), a won one
    assert out == [f"{tmp_path / 'episode_00001.jsonl'}: shelter_first: violated at letter 3 (defeat_zombie) of "
                   "eat_cow, is_night, defeat_zombie",
                   "1 specification(s) checked: 1 of 2 episodes violate one or more"]
    assert main(["dfa", "check", "--spec", str(tmp_path / "shelter_first.json"),
                 "--log", str(tmp_path / "episode_00000.jsonl")]) == 0
    assert main(["dfa", "check", "x", "--spec", str(tmp_path / "shelter_first.json"), "--log", str(tmp_path)]) == 2
    assert "give a word or --log episode files (one of the two)" in capsys.readouterr().err
    assert main(["dfa", "check", "--spec", str(tmp_path / "shelter_first.json"), "--log", str(tmp_path / "no")]) == 2


def test_equal_compares_languages_and_names_a_shortest_difference(tmp_path, capsys):
    from regula.cli import main
    SKILL.save(tmp_path / "mine.json")
    comply(SKILL, NIGHT).save(tmp_path / "policy.json")
    capsys.readouterr()
    assert main(["dfa", "equal", str(tmp_path / "mine.json"), str(tmp_path / "mine.json")]) == 0
    assert capsys.readouterr().out == "equal: the same language\n"
    assert main(["dfa", "equal", str(tmp_path / "mine.json"), str(tmp_path / "policy.json"), "--longest", "3"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"only {tmp_path / 'mine.json'} accepts: collect_iron, night, collect_diamond"
    assert out[1].endswith("words of length <= 3 are accepted by exactly one")


def test_a_specification_given_as_a_formula_is_compared_with_a_learned_one(tmp_path, capsys):
    from regula.automata.teachers import formula_dfa
    from regula.cli import main
    spec = tmp_path / "iron_first.json"
    assert main(["dfa", "formula", "F collect_diamond", "!collect_diamond U collect_iron",
                 "--letters", "collect_iron,collect_diamond", "--out", str(spec), "--no-svg"]) == 0
    got = DFA.load(spec)
    # the language by its definition: a diamond, and no diamond before the first iron
    for w in _words(("collect_iron", "collect_diamond"), 6):
        first_iron = w.index("collect_iron") if "collect_iron" in w else len(w)
        assert got.accepts(w) == ("collect_diamond" in w and "collect_diamond" not in w[:first_iron])
    assert got == formula_dfa(["F collect_diamond", "!collect_diamond U collect_iron"],
                              ("collect_iron", "collect_diamond"))
    SKILL.save(tmp_path / "mine.json")
    capsys.readouterr()
    assert main(["dfa", "equal", str(tmp_path / "mine.json"), str(spec)]) == 1  # the skill reads a failed diamond past
    assert capsys.readouterr().out.splitlines()[0] == (f"only {tmp_path / 'mine.json'} accepts: collect_diamond, "
                                                       "collect_iron, collect_diamond")
    assert main(["dfa", "formula", "F z", "--letters", "a,b", "--out", str(tmp_path / "z.json")]) == 2
    assert "names letters outside the alphabet (z)" in capsys.readouterr().err
    assert main(["dfa", "formula", "F (", "--letters", "a", "--out", str(tmp_path / "z.json")]) == 2
    assert not (tmp_path / "z.json").exists()
