"""CEDAR's loop for one skill on a family with propositional facts (MiniHack, through
`regula.envs.FactSpec`): one skill DFA per task, the task's goal as the skill. No family is named
here; the family comes in as an argument, the demonstration and the exploration from the common
episode log.

What stands in for what CEDAR (seed 000, §3.2) has on Crafter:

* Σ (CEDAR: the retriever's nouns and verbs): the distinct skills of the task's one
  demonstration, in the order it first ran them.
* The teacher (CEDAR: an LLM asked "does this word of skills do the task?"; on Crafter its
  stand-in simulates the word by data.yaml's recipes): the word simulated over the facts DiVE
  verified from the demonstration and the exploration (`regula.dive.facts`: `requires`,
  `prevented_by`, `gives`, `removes`; the ground truth is never read). From the
  demonstration's first state each letter in turn must be allowed by the facts (its requirements
  hold, no preventer holds), and its effects are applied; the word does the task once the
  subgoals' actions (DiVE's hierarchy: the task's achievements in the demonstration's order, each
  with the element that unlocked it) have come in that order, the goal's last. Wrapped in
  `NoisyTeacher` with persistent noise: the same words always answered wrong.
* The equivalence oracle (CEDAR: rollouts in Crafter's worlds): the hypothesis played as a policy
  (`play`) on every world of `worlds` (dev seeds) each round; every word a rollout shows is
  labelled by whether the goal happened (its prefixes, and each word whose last letter the world
  refused: False; where the hypothesis accepts some word going on from a refused one, its
  shortest such word: False too, as CEDAR's Crafter oracle does, since the world did not carry
  that word out), each word's label the worlds' majority over every round so far (a tie: False).
  The hypothesis stands when it agrees with all of them.
* The policy (CEDAR §3.3): from the DFA's state, the first letter of a shortest accepted word; a
  letter the world refuses is dropped from that state and the path planned again; with no
  accepting state reachable, seeded random letters of Σ (not one that failed since the last
  success). It ends at the goal, when the DFA accepts what was done (the hypothesis's claim,
  tested), or after `max_skills` letters.

A rollout's random choices are seeded by the task, the hypothesis and the world: the same
hypothesis on the same world plays the same episode, and the whole run is deterministic.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from regula.automata.dfa import DFA
from regula.automata.learning import Counterexample, Learner, LearningError
from regula.automata.ops import shortest_accepted
from regula.automata.policy import DFAPolicy
from regula.automata.teachers import NoisyTeacher
from regula.dive import facts as dive_facts
from regula.dive.fact_agent import Knowledge, hierarchy
from regula.errors import RegulaError

from .caches import hypothesis_key


def demo_word(demo: dict) -> tuple:
    """The demonstration's word: its skills that succeeded, in order (a rollout's word is made
    the same way)."""
    return tuple(s["skill"] for s in demo["steps"] if "props_after" in s and s["success"])


def alphabet(demo: dict) -> tuple:
    """Σ: the distinct skills the demonstration ran, in the order it first ran them."""
    return tuple(dict.fromkeys(s["skill"] for s in demo["steps"] if "props_after" in s))


def goal(spec, task: str) -> str:
    """The skill's goal: the task's last achievement (the level's data lists them in order)."""
    return spec.level(task)["achievements"][-1]


def verified(spec, demo: dict, checks: list[dict], samples: int = 8, verify_samples: int = 16,
             seed: int = 0) -> Knowledge:
    """The facts DiVE verified from the demonstration and the exploration episodes `checks`
    (`facts.discover_and_verify`, as `fact_study` does; no ground truth read)."""
    _, check_bank, _, verdicts = dive_facts.discover_and_verify(spec, [demo], checks, samples, verify_samples, seed)
    return Knowledge((c.fact for c in verdicts.verified), (), check_bank)


class FactTeacher:
    """Does a word of skills do the task from the demonstration's first state, by the facts?
    (`truth`; the module's docstring says how.) `NoisyTeacher(teacher.truth, ...)` is the
    teacher the learner asks."""

    def __init__(self, spec, knowledge: Knowledge, demo: dict):
        first = next((s for s in demo["steps"] if "props_before" in s), None)
        if first is None:
            raise RegulaError(f"the demonstration (seed {demo['header']['seed']}) has no step: no start to "
                              "simulate words from")
        self.spec, self.knowledge = spec, knowledge
        self.start = frozenset(first["props_before"])
        self.actions = [g.action for g in hierarchy(spec, demo).subgoals]

    def _run(self, word):
        """Each letter's element in turn, until one the facts do not allow where it stands (then
        None), each letter's effects applied before the next."""
        state = self.start
        for letter in word:
            element = self.spec.fact_element(letter)
            if self.knowledge.unmet(element, state):
                yield None
                return
            yield element
            state = (state | self.knowledge.gives.get(element, set())) - self.knowledge.removes.get(element, set())

    def refused(self, word) -> int | None:
        """The index of the first letter the facts do not allow where it stands, else None."""
        return next((i for i, element in enumerate(self._run(word)) if element is None), None)

    def truth(self, word) -> bool:
        done = 0
        for element in self._run(word):
            if element is None:
                return False
            while done < len(self.actions) and self.actions[done] == element:
                done += 1
            if done == len(self.actions):
                return True
        return False


def play(spec, task: str, dfa: DFA, seed: int, max_skills: int) -> dict:
    """One rollout of `dfa` as a policy in `task`'s world `seed`: the record (the word of
    letters that succeeded, where the goal happened, the words the world refused, the
    episode's outcome)."""
    ep = spec.make(seed, task=task)
    target, wanted = goal(spec, task), spec.level(task)["achievements"]
    rng = random.Random(f"cedar-facts:{task}:{hypothesis_key(dfa)}:{seed}")
    policy = DFAPolicy(dfa)
    tried = explored = 0
    reached_at = None
    refuted: list = []
    failed_here: set = set()
    while tried < max_skills and not ep.done and target not in ep.unlocked and not policy.done:
        path = policy.plan()
        planned = bool(path)
        if planned:
            letter = path[0]
        else:  # nothing accepting is reachable: explore Σ
            choices = [a for a in dfa.alphabet if a not in failed_here]
            if not choices:
                break
            letter = rng.choice(choices)
            explored += 1
        tried += 1
        step = ep.run_skill(letter)
        if not step.success:
            word = tuple(policy.trace) + (letter,)
            if word not in refuted:
                refuted.append(word)
            if planned:
                policy.fail(letter)
            else:
                failed_here.add(letter)
            continue
        failed_here.clear()
        policy.advance(letter)
        if target in ep.unlocked:
            reached_at = len(policy.trace)
    got = [a for a in wanted if a in ep.unlocked]
    return {"seed": seed, "word": list(policy.trace), "label": target in ep.unlocked, "reached_at": reached_at,
            "refuted": [list(w) for w in refuted], "accepted": dfa.accepts(policy.trace),
            "success": len(got) == len(wanted), "achieved": round(len(got) / len(wanted), 4), "achievements": got,
            "reward": round(ep.reward_total, 4), "steps": ep.steps, "skills": len(ep.events), "explored": explored,
            "death": spec.death_cause(ep)}


def demo_record(demo: dict, target: str) -> dict:
    """The demonstration read as a rollout's record (`play`'s word, goal and refused words): it is
    an episode of the world, so its labels are the world's, given to the learner before it asks."""
    word, refuted, reached_at = [], [], None
    for s in demo["steps"]:
        if "props_after" not in s:
            continue
        if not s["success"]:
            refuted.append(word + [s["skill"]])
            continue
        word.append(s["skill"])
        if reached_at is None and target in (s.get("unlocked") or ()):
            reached_at = len(word)
    return {"word": word, "reached_at": reached_at, "refuted": refuted}


def labelled(record: dict) -> list[tuple[tuple, bool]]:
    """Every word a rollout labels: each prefix of its word (True from the letter that reached
    the goal on), then each word whose last letter the world refused (False), without repeats."""
    word, at = tuple(record["word"]), record["reached_at"]
    out = {word[:i]: at is not None and i >= at for i in range(len(word) + 1)}
    for w in record["refuted"]:
        out.setdefault(tuple(w), False)
    return list(out.items())


class WorldEquivalence:
    """The environment as the equivalence oracle: each round plays the hypothesis on every world
    and returns every word labelled so far, each with the worlds' majority label."""

    def __init__(self, spec, task: str, worlds, max_skills: int):
        self.spec, self.task, self.worlds, self.max_skills = spec, task, tuple(worlds), max_skills
        if not self.worlds:
            raise RegulaError("the equivalence oracle has no worlds to play")
        self.rounds = self.played = self.reached = 0
        self.tally: dict = {}  # word -> [worlds labelling it True, False]

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        self.rounds += 1
        seen = set()
        for world in self.worlds:
            record = play(self.spec, self.task, hypothesis, world, self.max_skills)
            self.played += 1
            self.reached += record["label"]
            words = labelled(record)
            for refused in record["refuted"]:  # no word going on from a refused letter was carried out here
                rest = shortest_accepted(DFA(hypothesis.alphabet, hypothesis.delta, hypothesis.run(refused),
                                             hypothesis.accepting))
                if rest:
                    words.append((tuple(refused) + rest, False))
            for word, label in dict(words).items():
                self.tally.setdefault(word, [0, 0])[0 if label else 1] += 1
                seen.add(word)
        return [Counterexample(w, self.tally[w][0] > self.tally[w][1])
                for w in sorted(seen, key=lambda w: (len(w), w))]


@dataclass
class SkillResult:
    task: str
    goal: str
    letters: tuple
    dfa: DFA
    rounds: int = 0  # equivalence rounds
    membership_words: int = 0  # distinct words asked
    teacher_queries: int = 0
    repairs: int = 0  # teacher answers the world's labels overturned
    restarts: int = 0
    rollouts: int = 0  # equivalence rollouts played
    error: str = ""  # why learning stopped without a hypothesis the world accepts
    facts: list = field(default_factory=list)  # the verified facts the teacher simulated
    demo_word: tuple = ()
    wrong: int = 0  # answers of the noisy teacher that its own truth contradicts, of those asked

    def to_json(self) -> dict:
        accepted = shortest_accepted(self.dfa)
        return {"task": self.task, "goal": self.goal, "letters": list(self.letters), "states": self.dfa.size,
                "rounds": self.rounds, "membership_words": self.membership_words,
                "teacher_queries": self.teacher_queries, "teacher_wrong": self.wrong, "repairs": self.repairs,
                "restarts": self.restarts, "rollouts": self.rollouts, "error": self.error, "facts": self.facts,
                "demo_word": list(self.demo_word), "accepts_demo_word": self.dfa.accepts(self.demo_word),
                "shortest_accepted": None if accepted is None else list(accepted)}


def empty(letters) -> DFA:
    """The DFA that accepts nothing (what a skill learning gave up on is played as)."""
    return DFA(tuple(letters), (tuple([0] * len(letters)),), 0, frozenset())


def learn_skill(spec, task: str, demo: dict, checks: list[dict], worlds, noise: float = 0.1, seed: int = 0,
                max_skills: int = 40, max_rounds: int = 30, max_queries: int = 5000) -> SkillResult:
    """One task's skill DFA: Σ and the teacher from `demo` and the verified facts (`checks`: the
    exploration episodes), the world's rounds on `worlds`."""
    dive_facts.fact_spec(spec)
    letters = alphabet(demo)
    knowledge = verified(spec, demo, checks)
    truth = FactTeacher(spec, knowledge, demo)
    teacher = NoisyTeacher(truth.truth, noise, "persistent", seed=f"{seed}:{task}")
    oracle = WorldEquivalence(spec, task, worlds, max_skills)
    out = SkillResult(task, goal(spec, task), letters, empty(letters), facts=[f.text() for f in knowledge.facts],
                      demo_word=demo_word(demo))
    # The demonstration is the world's first round: its labels are pinned before any question.
    evidence = dict(labelled(demo_record(demo, out.goal)))
    learner = Learner(letters, teacher, oracle, evidence=evidence, max_rounds=max_rounds, max_queries=max_queries)
    try:
        result = learner.learn()
        out.dfa, out.repairs, out.restarts = result.dfa, result.repairs, result.restarts
    except LearningError as exc:
        out.error, out.repairs, out.restarts = str(exc), learner.repairs, learner.restarts
    out.rounds, out.rollouts = oracle.rounds, oracle.played
    out.membership_words, out.teacher_queries = len(learner.answers), learner.teacher_queries
    out.wrong = sum(a != truth.truth(w) for w, a in learner.answers.items())
    return out
