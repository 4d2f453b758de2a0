"""Counterexample discovery (CEDAR Table 5, Fig. 10): mutants of a correct skill DFA, simulated
in Crafter through the EQ cache, summarised as the paper does."""
import itertools
from math import sqrt

import pandas as pd

from regula.automata.dfa import DFA
from regula.automata.ops import equivalent, minimize
from regula.cedar.caches import EQCache
from regula.cedar.equivalence import CrafterEquivalence
from regula.cedar.mutations import Mutant, discover, mutants, reference
from regula.cedar.report_mutations import average, summary
from stage_configs import cedar_budget
from regula.envs.crafter.planner import accomplishes
from regula.report import papers
from regula.cedar.report_mutations import FIGURE, lines
from regula.stages import Paths

from test_cedar import LETTERS, PLAN, WRONG, chain


def test_mutants_are_wrong_distinct_one_transition_away_and_seeded():
    right = chain(LETTERS, PLAN)
    got = mutants(right, 6, seed=3)
    base = minimize(right)  # the numbering the mutants' states refer to
    assert [m.kind for m in got] == ["added", "removed"] * 3
    assert got == mutants(right, 6, seed=3) and got != mutants(right, 6, seed=4)
    assert len({m.dfa for m in got}) == 6
    for m in got:
        same, witness = equivalent(right, m.dfa)
        assert not same and m.witness == witness and m.distance == len(witness)
        changed = [(s, i) for s in range(m.dfa.size) for i in range(3) if m.dfa.delta[s][i] != base.delta[s][i]]
        assert len(changed) == 1 and m.dfa.delta[changed[0][0]][changed[0][1]] == m.target


def test_a_dfa_without_a_sink_gets_one_and_has_only_removals():
    plus = DFA(("a",), ((1,), (1,)), 0, frozenset({1}))  # a a*
    got = mutants(plus, 5, seed=0)
    assert sorted((m.kind, m.witness) for m in got) == [("removed", ("a",)), ("removed", ("a", "a"))]
    assert all(m.dfa.size == 3 for m in got)


def test_the_reference_skill_dfa_is_the_abstract_rules_language():
    letters = ("collect_wood", "place_table")
    dfa = reference("place_table", letters)
    assert dfa.size == 5  # no wood, one, two (the table's), done, dead
    for n in range(7):
        for word in itertools.product(letters, repeat=n):
            assert dfa.accepts(word) == accomplishes("place_table", word), word


def test_discovery_finds_the_invented_plan_and_misses_the_forgotten_one(tmp_path, small_params):
    right = chain(LETTERS, PLAN)
    # Forgetting that the pickaxe can be made after the plan (the accepting loop) is off every
    # path a policy takes: the rollout stops at the goal.
    done = right.run(PLAN)
    dead = right.size - 1
    forgot = DFA(right.alphabet, tuple(row if s != done else (dead,) + row[1:] for s, row in enumerate(right.delta)),
                 right.initial, right.accepting)
    pair = [Mutant(0, "added", 1, "place_table", 4, WRONG, equivalent(right, WRONG)[1]),
            Mutant(1, "removed", done, "collect_wood", dead, forgot, equivalent(right, forgot)[1])]

    def run():
        oracle = CrafterEquivalence("make_wood_pickaxe", [], 1, cedar_budget(max_skills=6), small_params.env.model_dump(),
                                    EQCache(tmp_path / "eq.json"))
        return discover(pair, [101, 102], oracle, 5)

    rows = run()
    # 5 simulations over 2 mutants: 3 and 2, over the 2 worlds from each mutant's offset, cycling.
    assert [(r["mutant"], r["world"], r["found"]) for r in rows] == [(0, 101, True), (0, 102, True), (0, 101, True),
                                                                   (1, 102, False), (1, 101, False)]
    # The refuted plan's accepted extension: the table needs more than one wood.
    assert rows[0]["counterexample"] == "collect_wood place_table make_wood_pickaxe" and rows[0]["length"] == 3
    assert rows[0]["distance"] == 3 and rows[3]["distance"] == 6 and rows[3]["length"] is None
    # Each (mutant, world) is played once; a rerun reads every rollout back.
    assert [r["played"] for r in rows] == [True, True, False, True, True]
    assert run() == [{**r, "played": False, "steps_played": 0} for r in rows]


ROWS = [{"skill": "a", "kind": "added", "mutant": 0, "found": True, "distance": 2},
        {"skill": "a", "kind": "removed", "mutant": 1, "found": True, "distance": 5},
        {"skill": "a", "kind": "removed", "mutant": 1, "found": False, "distance": 5},
        {"skill": "b", "kind": "added", "mutant": 0, "found": True, "distance": 2}]


def test_rates_and_stds_per_skill_and_length():
    assert summary(ROWS, "skill") == [
        {"skill": "a", "found": 2, "simulations": 3, "rate": 2 / 3, "std": sqrt(2 / 9)},
        {"skill": "b", "found": 1, "simulations": 1, "rate": 1.0, "std": 0.0}]
    assert [(g["distance"], g["found"], g["simulations"]) for g in summary(ROWS, "distance")] == [(2, 2, 2), (5, 1, 2)]


def test_the_average_row_is_the_papers_mean_of_rates_and_of_stds():
    rows = papers.rows("cedar_table5")
    items = [{"rate": v["Accuracy"], "std": v["Standard Error"], "found": 0, "simulations": 110}
             for k, v in rows.items() if k != "Average"]
    got = average(items)
    assert len(items) == 16
    assert (round(got["rate"], 4), round(got["std"], 4)) == (rows["Average"]["Accuracy"], rows["Average"]["Standard Error"])
    # Each item's std is its rate's sqrt(p(1-p)) (110 simulations: 0.9727 is 107/110).
    assert all(abs(sqrt(i["rate"] * (1 - i["rate"])) - i["std"]) < 1e-3 for i in items)


def test_the_report_lines_show_rates_with_wilson_intervals_and_draw_the_figure(tmp_path):
    (tmp_path / "reports").mkdir()
    out = "\n".join(lines(ROWS, Paths(tmp_path)))
    assert "| a | 2/3 (21-94%) | 0.6667 | 0.4714 |" in out
    assert "| Average | 3/4 (30-95%) | 0.8333 | 0.2357 |" in out
    assert "| Emerald Ore | 0.4909 | 0.4999 |" in out and "| Coal Ore | 1.0000 | 0.0000 |" in out
    assert "| 5 | 1/2 (9-91%) | 0.50 |" in out
    assert "0 of the 3 mutants were found in none" in out
    assert (tmp_path / "reports" / FIGURE).exists()
    # The CSV a stage writes reads back as the same lines (found as 0/1, lengths as NaN).
    csv = tmp_path / "rows.csv"
    pd.DataFrame([{**r, "found": int(r["found"]), "length": None} for r in ROWS]).to_csv(csv, index=False)
    assert "\n".join(lines(pd.read_csv(csv), Paths(tmp_path))) == out
    assert lines([], Paths(tmp_path)) == []
