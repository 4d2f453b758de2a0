"""Counterexample discovery (CEDAR Appendix A.6, Table 5 and Fig. 10): how often does playing a
wrong skill DFA in the world turn up a counterexample?

A correct skill DFA is mutated by one transition on its minimal complete DFA, whose rejecting
sink is where every word that cannot do the skill goes (one is added when it has none):

* removed: a transition from a live state to a live state is sent to the sink (a way to do the
  skill is forgotten);
* added: a transition from a live state to the sink is sent to a live state, accepting or not
  (an impossible way is invented).

Mutants whose language equals the original's are not wrong and are dropped, as are repeats of
a language already drawn. Each mutant keeps a shortest word that tells it from the original
(`ops.equivalent`): the length of the earliest place it is wrong.

A simulation plays one mutant as a policy on one world through the EQ cache (`CrafterEquivalence`),
and finds a counterexample when a word the world labelled (every prefix of the rollout's word,
the refuted words and their accepted extensions) is one the mutant labels otherwise.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from regula import envs
from regula.automata.dfa import DFA
from regula.automata.ops import equivalent, minimize

from .caches import hypothesis_key
from .equivalence import CrafterEquivalence

CRAFTER = envs.get("crafter")
KINDS = ("added", "removed")


@dataclass(frozen=True)
class Mutant:
    id: int
    kind: str  # added | removed
    state: int  # the state of the original's minimal DFA whose transition was changed
    letter: str
    target: int  # where the transition goes now (the sink for `removed`)
    dfa: DFA
    witness: tuple  # a shortest word the mutant and the original disagree on

    @property
    def distance(self) -> int:
        return len(self.witness)


def reference(goal: str, letters) -> DFA:
    """The minimal DFA of the words over `letters` that do `goal` by data.yaml's abstract rules
    (`accomplishes`): a breadth-first walk over the abstract state. A correct skill DFA
    to mutate where no learned one is at hand; it reads ground truth, so it scores, never learns."""
    letters, skill = tuple(letters), CRAFTER.rules.recipe(goal).skill
    start, done, dead = "start", "done", "dead"
    table: dict = {}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if state in table:
            continue
        row = table[state] = {}
        for a in letters:
            if state in (done, dead):
                row[a] = state
                continue
            nxt = CRAFTER.after(None if state == start else state, a)
            row[a] = dead if nxt is None else done if a == skill else nxt
            if row[a] not in table:
                queue.append(row[a])
    return minimize(DFA.from_table(letters, table, start, {done}))


def _with_sink(dfa: DFA) -> tuple[DFA, int]:
    """`dfa` minimised, and its rejecting sink (appended when there is none)."""
    dfa = minimize(dfa)
    for s, row in enumerate(dfa.delta):
        if s not in dfa.accepting and all(t == s for t in row):
            return dfa, s
    sink = dfa.size
    return DFA(dfa.alphabet, dfa.delta + ((sink,) * len(dfa.alphabet),), dfa.initial, dfa.accepting), sink


def _candidates(dfa: DFA, sink: int, rng: random.Random) -> dict[str, list]:
    """Every one-transition change of each kind, as (state, letter index, new target), shuffled."""
    live = [s for s in range(dfa.size) if s != sink]
    out = {"removed": [(s, i, sink) for s in live for i, t in enumerate(dfa.delta[s]) if t != sink],
           "added": [(s, i, t) for s in live for i, old in enumerate(dfa.delta[s]) if old == sink for t in live]}
    for changes in out.values():
        rng.shuffle(changes)
    return out


def mutants(dfa: DFA, n: int, seed: int) -> list[Mutant]:
    """Up to `n` wrong DFAs, each one transition away from `dfa`, of distinct languages; the kinds
    alternate (added, removed, ...) while both have changes left. Fewer than `n` when the DFA
    has fewer distinct wrong neighbours."""
    base, sink = _with_sink(dfa)
    pools = _candidates(base, sink, random.Random(seed))
    seen = {hypothesis_key(base)}
    out: list[Mutant] = []
    turn = 0
    while len(out) < n and any(pools.values()):
        kind = KINDS[turn % 2] if pools[KINDS[turn % 2]] else KINDS[(turn + 1) % 2]
        s, i, t = pools[kind].pop()
        delta = list(base.delta)
        delta[s] = delta[s][:i] + (t,) + delta[s][i + 1:]
        mutant = DFA(base.alphabet, tuple(delta), base.initial, base.accepting)
        key = hypothesis_key(mutant)
        if key in seen:
            continue
        seen.add(key)
        _, witness = equivalent(base, mutant)
        turn += 1
        out.append(Mutant(len(out), kind, s, base.alphabet[i], t, mutant, witness))
    return out


def discover(mutants: list[Mutant], worlds, oracle: CrafterEquivalence, simulations: int, work=None) -> list[dict]:
    """One row per simulation, `simulations` in all (the paper's 110 per skill), split evenly over
    the mutants (the first ones get one more when it does not divide). A mutant's j-th simulation
    plays worlds[(id * share + j) mod len(worlds)], so one mutant never plays a world twice while
    its share is at most the worlds given. `oracle` gives the skill, the rollout budget, the
    environment and the EQ cache; every rollout goes through that cache, so a rerun plays nothing.
    `work` (a `regula.stages.Work`): the rollouts are played ahead as its units (`prefetch`)."""
    worlds, rows = list(worlds), []
    share = -(-simulations // len(mutants))
    plan = [(m, [worlds[(m.id * share + j) % len(worlds)]
                 for j in range(simulations // len(mutants) + (m.id < simulations % len(mutants)))]) for m in mutants]
    if work is not None:
        oracle.prefetch([(m.dfa, world) for m, mine in plan for world in mine], work, name="mutant")
    for m, mine in plan:
        # One world a round: this mutant's worlds in order, each labelled as the learner's EQ would.
        probe = CrafterEquivalence(oracle.goal, mine, 1, oracle.budget, oracle.env, oracle.cache,
                                   library=oracle.library, pending=oracle.pending)
        for world in mine:
            played, steps = probe.played, probe.steps_played
            wrong = sorted((c.word for c in probe.observe(m.dfa) if m.dfa.accepts(c.word) != c.label),
                           key=lambda w: (len(w), w))
            rows.append({"skill": oracle.goal, "mutant": m.id, "kind": m.kind, "distance": m.distance,
                         "world": world, "found": bool(wrong), "length": len(wrong[0]) if wrong else None,
                         "counterexample": " ".join(wrong[0]) if wrong else "",
                         "played": probe.played > played, "steps_played": probe.steps_played - steps})
    return rows
