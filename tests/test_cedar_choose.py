"""`cedar.letters: rules`: the stand-in's pick of a skill's Σ among the retrieved letters."""
import pytest

from regula import envs, params
from regula.cedar.choose import choose, needed
from regula.errors import ParamsError
from regula.rag.alphabet import GlobalAlphabet

CRAFTER = envs.get("crafter")
ALPHABET = GlobalAlphabet.of("crafter")
OBJECTS = {a: ALPHABET.split_skill(a).objects for a in sorted(CRAFTER.skill_names())}
# place_furnace's first Σ in the release (the retrieved letters, library calls back to plain names)
FURNACE = ("make_stone_pickaxe", "make_wood_pickaxe", "place_table", "collect_wood", "make_iron_pickaxe",
           "make_iron_sword", "make_stone_sword", "make_wood_sword", "place_furnace")


def test_needed_reads_what_the_recipe_consumes_requires_and_needs_nearby():
    assert needed("place_furnace") == {"collect_stone"}  # four stones; data.yaml asks no table nearby
    assert needed("make_iron_pickaxe") == {"collect_wood", "collect_coal", "collect_iron", "place_table",
                                           "place_furnace"}
    assert needed("collect_diamond") == {"make_iron_pickaxe"}
    assert needed("collect_stone") == {"make_wood_pickaxe"}
    assert needed("collect_wood") == set()


def test_noiseless_pick_is_the_skill_and_what_it_needs_among_the_candidates():
    # RAG brought no skill on stone: the pick is the skill alone, until the world shows stone lacking
    assert choose("place_furnace", FURNACE, OBJECTS, 0.0, 0) == {"place_furnace"}
    widened = FURNACE + ("collect_stone", "place_stone")  # the skills on what its letter lacked (learn.py)
    assert choose("place_furnace", widened, OBJECTS, 0.0, 0) == {"place_furnace", "collect_stone"}
    # candidates widen to every skill on their nouns: collect_iron brings nothing new, table brings place_table
    assert choose("make_iron_pickaxe", ("make_iron_pickaxe", "collect_iron", "make_wood_pickaxe", "place_table"),
                  OBJECTS, 0.0, 0) == {"make_iron_pickaxe", "collect_iron", "place_table"}


def test_noisy_pick_is_wrong_on_a_fixed_share_and_keeps_the_skill():
    everything = tuple(OBJECTS)
    picks = [choose("make_iron_pickaxe", everything, OBJECTS, 0.3, seed) for seed in range(40)]
    assert all("make_iron_pickaxe" in p for p in picks)
    assert picks[0] == choose("make_iron_pickaxe", everything, OBJECTS, 0.3, 0)  # persistent, as the teacher
    want = needed("make_iron_pickaxe") | {"make_iron_pickaxe"}
    wrong = sum(len(p ^ want) for p in picks) / (40 * (len(everything) - 1))
    assert 0.2 < wrong < 0.4
    assert len({frozenset(p) for p in picks}) > 30


def test_unknown_chooser_is_a_params_error():
    with pytest.raises(ParamsError, match="cedar.letters.*retrieved.*rules"):
        params.load("params.yaml", {"cedar.letters": "llm"})


def test_what_the_world_showed_lacking_overrides_a_wrong_drop():
    # at seed 0 the stand-in's 10% drops make_iron_pickaxe from collect_diamond's Σ, every time
    candidates = ("collect_diamond", "make_iron_pickaxe")
    assert choose("collect_diamond", candidates, OBJECTS, 0.1, 0) == {"collect_diamond"}
    # collect_diamond failed for lack of an iron pickaxe: the skills on it come back, those it needs kept
    assert choose("collect_diamond", candidates, OBJECTS, 0.1, 0, shown=("make_iron_pickaxe",)) == {
        "collect_diamond", "make_iron_pickaxe"}
    assert choose("place_furnace", FURNACE, OBJECTS, 0.0, 0, shown=("collect_stone", "place_stone")) == {
        "place_furnace", "collect_stone"}


def _language_states(goal: str, letters, held: bool = False) -> int:
    """States of the minimal DFA of the rules teacher's noiseless language over `letters` (its
    truth, `CrafterRulesTeacher`, run on every abstract inventory state the letters reach;
    `held`: a call for what is held done at once, as the teacher with `held` reads it)."""
    from regula.automata.teachers import _had
    from regula.automata.dfa import DFA
    from regula.automata.ops import minimize
    from regula.cedar.stage import _read_past
    from regula.envs.crafter.planner import AbstractState
    done, ignore = CRAFTER.rules.recipe(goal).skill, _read_past(ALPHABET)

    def step(state, a):
        if state in ("accept", "reject") or a in ignore:
            return state
        if held and a.startswith("@") and _had(CRAFTER, state, a[1:]):
            return state
        try:
            steps = CRAFTER.shortest_plan(a[1:], state) if a.startswith("@") else [a]
        except ValueError:
            return "reject"
        for b in steps:
            state = CRAFTER.after(state, b)
            if state is None or b == done:
                return "reject" if state is None else "accept"
        return state

    order = [AbstractState.from_inventory({})]
    index, rows = {order[0]: 0}, []
    while len(rows) < len(order):
        row = []
        for a in letters:
            nxt = step(order[len(rows)], a)
            row.append(index.setdefault(nxt, len(order)))
            if row[-1] == len(order):
                order.append(nxt)
        rows.append(tuple(row))
    accepting = frozenset(i for i, s in enumerate(order) if s == "accept")
    return minimize(DFA(tuple(letters), tuple(rows), 0, accepting)).size


def test_a_compact_sigma_is_what_makes_place_furnace_learnable():
    """Why `letters: rules` (docs/cedar.md): over the retrieved Σ the teacher's language counts what every
    letter consumes. place_furnace's first retrieved Σ (library calls as the release had them)
    admits no word at all, since no letter gets stone; widened by stone's skills it is a language
    of 310 states; the stand-in's pick, a stone-collecting call and the skill, is one of 7."""
    first = ("@make_stone_pickaxe", "@make_wood_pickaxe", "@place_table", "collect_wood", "make_iron_pickaxe",
             "make_iron_sword", "make_stone_sword", "make_wood_sword", "place_furnace")
    assert _language_states("place_furnace", first) == 1  # accepts nothing
    widened = first + ("@collect_stone", "place_stone")  # what session 14's widen_lacked gave it
    assert _language_states("place_furnace", widened) == 310
    assert _language_states("place_furnace", ("@collect_stone", "place_furnace")) == 7


def test_make_iron_pickaxes_language_over_the_picked_sigma_is_25_states_read_as_the_executor_runs_calls():
    """docs/cedar.md (development runs): what the learner faces for make_iron_pickaxe at 10% noise;
    the teacher reading held calls as `call_held` runs them, or as plans."""
    letters = ("@collect_coal", "@collect_iron", "@make_wood_pickaxe", "@place_furnace", "@place_table",
               "collect_wood", "make_iron_pickaxe")
    assert _language_states("make_iron_pickaxe", letters, held=True) == 25
    assert _language_states("make_iron_pickaxe", letters) == 29
