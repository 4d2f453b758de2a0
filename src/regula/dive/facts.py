"""DiVE's discovery and verification over propositions, for any family that says how a fact names a
skill and what its true facts are (`regula.envs.FactSpec`; MiniHack does, Crafter's DiVE reads
inventory transitions instead, `banks.py`). No family is named here: the family comes in as an
argument, the experiences from the common episode log.

* The action-level bank B^A (seed 004, §3.1) at the skill level: one `Step` per high-level step
  of an episode, with the propositions true before and after it (`props_before` / `props_after`),
  whether it succeeded and why not (`cause.kind`), under the element the family names the skill by.
* The statistical discoverer (§3.1's three steps: bank, sample the element's successful
  experiences, keep what holds across all of the sample): `requires p` (p held before every one),
  `gives p` (p false before and true after in every one), `removes p` (true before, false after),
  `prevented_by p` (p held before every sampled failure the world refused, `no_effect` /
  `invalid` / `too_far` / `missing`, and before no success).
* The Verifier (§3.1): a candidate is kept only if it holds across freshly sampled experiences of
  its element (from the verification bank: the demonstrations and further episodes) and conflicts
  with no other kept one; each rejection keeps its reason and evidence. Holding is not enough for
  a requirement: a proposition true in a share b of all states is held by n successes by chance
  with probability b^n, and above `chance` (0.05, Crafter's Verifier's) nothing shows it is needed;
  and of two requirements one implies in every state, only the more specific stays (Crafter's rule).
* `score`: precision and recall against the family's ground truth, a fact matching on element,
  attribute, arg, value, `when` and `unless`; each missed true fact with why it was missed.

* Subgoal conditions (`discover_conditions`, `verify_conditions`, below): what held before every
  step that unlocked an achievement, read in the skill's own frame, which the agent of
  `fact_agent.py` needs beside the facts.

Nothing here asks an LLM; the LLM discoverer on these facts is a later step.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from regula.errors import RegulaError

# What the statistical discoverer can say: the rest of a family's attributes (MiniHack's kills,
# ends, freezes, reaches, crossable_when) are outcomes of terrain and creatures, not of a skill's
# propositions before and after.
READ = ("requires", "gives", "removes", "prevented_by")
REFUSED = ("no_effect", "invalid", "too_far", "missing")  # failures the world decided (not a budget or an interrupt)


@dataclass(frozen=True, order=True)
class Fact:
    element: str
    attribute: str
    arg: str
    value: int | None = None
    when: tuple = ()
    unless: tuple = ()

    def text(self) -> str:
        out = f"{self.element} {self.attribute} {self.arg}" + (f" {self.value}" if self.value is not None else "")
        out += f" when {' & '.join(self.when)}" if self.when else ""
        return out + (f" unless {' | '.join(self.unless)}" if self.unless else "")

    @classmethod
    def of(cls, truth) -> "Fact":
        """A ground-truth fact of the family (any object with these fields) as a `Fact`."""
        return cls(truth.element, truth.attribute, truth.arg, truth.value, tuple(truth.when), tuple(truth.unless))


@dataclass(frozen=True)
class Step:
    element: str
    skill: str
    seed: int
    t: int
    before: frozenset
    after: frozenset
    success: bool
    cause: str = ""  # the failure's cause kind ("" on success)
    unlocked: tuple = ()  # achievements the step unlocked

    def where(self) -> str:
        return f"seed {self.seed}, step {self.t} ({self.skill})"


@dataclass
class Bank:
    steps: dict = field(default_factory=dict)  # element -> [Step]
    names: set = field(default_factory=set)  # every proposition some experience saw true

    def successes(self, element: str) -> list[Step]:
        return [x for x in self.steps.get(element, []) if x.success]

    def refused(self, element: str) -> list[Step]:
        return [x for x in self.steps.get(element, []) if not x.success and x.cause in REFUSED]

    def states(self) -> list[frozenset]:
        return [x.before for xs in self.steps.values() for x in xs]

    def size(self) -> int:
        return sum(len(v) for v in self.steps.values())


def fact_spec(spec):
    """The family, if it provides what this module reads (`FactSpec`); else one line saying so."""
    from regula.envs import FactSpec
    if not isinstance(spec, FactSpec):
        raise RegulaError(f"environment {getattr(spec, 'name', spec)!r} gives no propositional facts "
                          "(fact_element, fact_attributes, ground_truth): DiVE's facts module cannot read it")
    return spec


def bank(spec, episodes: list[dict]) -> Bank:
    """B^A at the skill level from episodes in the common log (a step without `props_after`, the
    summary, is not one)."""
    spec = fact_spec(spec)
    out = Bank()
    for ep in episodes:
        seed = ep["header"]["seed"]
        for s in ep["steps"]:
            if "props_after" not in s:
                continue
            x = Step(spec.fact_element(s["skill"]), s["skill"], seed, s["t"], frozenset(s["props_before"]),
                     frozenset(s["props_after"]), bool(s["success"]), (s.get("cause") or {}).get("kind", ""),
                     tuple(s.get("unlocked") or ()))
            out.steps.setdefault(x.element, []).append(x)
            out.names |= x.before | x.after
    return out


def read_sample(element: str, sample: list[Step], refused: list[Step], successes: list[Step]) -> list[Fact]:
    """What holds across every step of `sample` (successes of `element`), and what held before
    every refusal of it and before none of its successes."""
    out = [Fact(element, "requires", p) for p in sorted(frozenset.intersection(*(x.before for x in sample)))]
    out += [Fact(element, "gives", p) for p in sorted(frozenset.intersection(*(x.after - x.before for x in sample)))]
    out += [Fact(element, "removes", p) for p in sorted(frozenset.intersection(*(x.before - x.after for x in sample)))]
    if refused:
        ok = frozenset().union(*(x.before for x in successes))
        out += [Fact(element, "prevented_by", p)
                for p in sorted(frozenset.intersection(*(x.before for x in refused)) - ok)]
    return out


@dataclass(frozen=True)
class Candidate:
    fact: Fact
    support: int  # sampled experiences it was read from

    def to_json(self) -> dict:
        return {"fact": self.fact.text(), "support": self.support}


class Discoverer:
    """The statistical discoverer on propositions (no network)."""

    def __init__(self, samples: int = 8, seed: int = 0):
        self.samples, self.seed = samples, seed

    def discover(self, b: Bank, step: int = 0) -> list[Candidate]:
        rng = random.Random(f"discover-facts:{self.seed}:{step}")
        found: list[Candidate] = []
        for element in sorted(b.steps):
            successes = b.successes(element)
            if not successes:
                continue
            sample = rng.sample(successes, min(self.samples, len(successes)))
            refused = b.refused(element)
            refused = rng.sample(refused, min(self.samples, len(refused)))
            found += [Candidate(f, len(sample)) for f in read_sample(element, sample, refused, successes)]
        return found


@dataclass
class Verdicts:
    verified: list = field(default_factory=list)  # [Candidate]
    rejected: list = field(default_factory=list)  # [(Candidate, reason, evidence)]

    def reason(self, fact: Fact) -> str | None:
        return next((f"{r} ({e})" if e else r for c, r, e in self.rejected if c.fact == fact), None)

    def to_json(self) -> dict:
        return {"verified": [c.fact.text() for c in self.verified],
                "rejected": [{"fact": c.fact.text(), "reason": r, "evidence": e} for c, r, e in self.rejected]}


class Verifier:
    def __init__(self, samples: int = 16, seed: int = 0, chance: float = 0.05):
        self.samples, self.seed, self.chance = samples, seed, chance

    def verify(self, candidates: list[Candidate], b: Bank, step: int = 0) -> Verdicts:
        rng = random.Random(f"verify-facts:{self.seed}:{step}")
        out = Verdicts()
        states = b.states()
        holding = []
        for c in sorted({c.fact: c for c in candidates}.values(), key=lambda c: c.fact):
            f = c.fact
            if f.arg not in b.names:
                out.rejected.append((c, f"names {f.arg!r}, which no experience saw true", ""))
                continue
            successes = b.successes(f.element)
            if not successes:
                out.rejected.append((c, f"no successful {f.element} to check against", ""))
                continue
            fresh = rng.sample(successes, min(self.samples, len(successes)))
            problem = _counterexample(f, fresh)
            if problem is None and f.attribute == "requires":
                share = sum(f.arg in s for s in states) / len(states)
                if share ** len(successes) > self.chance:
                    problem = (f"{f.arg} holds in {share:.0%} of all states: {len(successes)} successes holding it "
                               f"are chance (p={share ** len(successes):.2f})", "")
            if problem is None and f.attribute == "prevented_by" and not b.refused(f.element):
                problem = (f"no refused {f.element} to check against", "")
            if problem is None and f.attribute == "prevented_by":
                bad = next((x for x in b.refused(f.element) if f.arg not in x.before), None)
                if bad is not None:
                    problem = (f"refused without {f.arg}: something else prevents it", bad.where())
            if problem:
                out.rejected.append((c, *problem))
            else:
                holding.append(c)
        kept = _resolve_conflicts(holding, out)
        out.verified = sorted(_most_specific(kept, states, out), key=lambda c: c.fact)
        return out


def _counterexample(f: Fact, fresh: list[Step]) -> tuple[str, str] | None:
    for x in fresh:
        if f.attribute == "requires" and f.arg not in x.before:
            return (f"succeeded without {f.arg}", x.where())
        if f.attribute == "gives" and f.arg not in x.after:
            return (f"succeeded and {f.arg} did not hold after", x.where())
        if f.attribute == "removes" and f.arg in x.after:
            return (f"succeeded and {f.arg} still held after", x.where())
        if f.attribute == "prevented_by" and f.arg in x.before:
            return (f"succeeded with {f.arg}", x.where())
    return None


def _resolve_conflicts(holding: list[Candidate], out: Verdicts) -> list[Candidate]:
    """`gives p` against `removes p`, and `requires p` against `prevented_by p`, of one element:
    neither can be right, both go."""
    keys = {(c.fact.element, c.fact.attribute, c.fact.arg) for c in holding}
    other = {"gives": "removes", "removes": "gives", "requires": "prevented_by", "prevented_by": "requires"}
    kept = []
    for c in holding:
        f = c.fact
        if (f.element, other[f.attribute], f.arg) in keys:
            out.rejected.append((c, f"conflicts with {f.element} {other[f.attribute]} {f.arg}", ""))
        else:
            kept.append(c)
    return kept


def _most_specific(kept: list[Candidate], states: list[frozenset], out: Verdicts) -> list[Candidate]:
    """Crafter's Verifier's rule (`verify._minimal`): a requirement that another kept requirement of
    the same element implies in every state (a monster in view, whenever one is adjacent) cannot
    be told apart from it by any experience; the weaker claim goes, the most specific stays.
    Requirements true in exactly the same states are both kept."""
    def implies(a: str, b: str) -> bool:
        return all(b in s for s in states if a in s)

    reqs = [c for c in kept if c.fact.attribute == "requires"]
    drop = []
    for c in reqs:
        stronger = [o for o in reqs if o is not c and o.fact.element == c.fact.element and o not in drop
                    and implies(o.fact.arg, c.fact.arg) and not implies(c.fact.arg, o.fact.arg)]
        if stronger:
            drop.append(c)
            out.rejected.append((c, f"implied by {stronger[0].fact.text()} in every state: no experience tells "
                                 "them apart", ""))
    return [c for c in kept if c not in drop]


def score(found, truth) -> dict:
    """Precision and recall of `found` (Facts) against `truth` (Facts); precision also within the
    elements the truth speaks of, and recall within what the discoverer can say (`READ`)."""
    found, truth = set(found), set(truth)
    hit = found & truth
    named = {f for f in found if f.element in {t.element for t in truth}}
    sayable = {t for t in truth if t.attribute in READ}

    def ratio(a, b):
        return round(a / b, 4) if b else None

    return {"found": len(found), "correct": len(hit), "truth": len(truth),
            "precision": ratio(len(hit), len(found)), "recall": ratio(len(hit), len(truth)),
            "precision_named": ratio(len(hit & named), len(named)), "recall_sayable": ratio(len(hit & sayable),
                                                                                            len(sayable))}


def why_missed(fact: Fact, discovered: set, verdicts: Verdicts, demo: Bank, check: Bank) -> str:
    """Why a true fact is not among the verified ones, from the experiences."""
    if fact.attribute not in READ:
        return f"`{fact.attribute}` is an outcome of a terrain or creature, which the discoverer does not read"
    if fact.when or fact.unless:
        return "holds under a condition the discoverer does not propose"
    if fact not in discovered:
        if not demo.successes(fact.element):
            return f"the demonstration has no successful {fact.element}"
        if fact.attribute == "prevented_by" and not demo.refused(fact.element):
            return f"the demonstration has no {fact.element} the world refused"
        return "the demonstration's sample did not show it"
    return f"rejected: {verdicts.reason(fact)}"


def discover_and_verify(spec, demos: list[dict], checks: list[dict], samples: int = 8, verify_samples: int = 16,
                        seed: int = 0, chance: float = 0.05) -> tuple[Bank, Bank, list[Candidate], Verdicts]:
    """The demonstrations' bank, the verification bank (demonstrations and `checks`), the
    discovered candidates and the Verifier's verdicts on them."""
    demo_bank, check_bank = bank(spec, demos), bank(spec, demos + checks)
    candidates = Discoverer(samples, seed).discover(demo_bank)
    return demo_bank, check_bank, candidates, Verifier(verify_samples, seed, chance).verify(candidates, check_bank)


def learn(spec, task: str, demos: list[dict], checks: list[dict], samples: int = 8, verify_samples: int = 16,
          seed: int = 0, chance: float = 0.05) -> dict:
    """Discover facts from `demos`, verify them on the demos and `checks` (further episodes of
    the task) and score both sets against the family's ground truth of `task`: a JSON-able record
    (counts, scores, the verified facts, the rejections and each missed fact with why)."""
    spec = fact_spec(spec)
    truth = {Fact.of(t) for t in spec.ground_truth(task)}
    attributes = set(spec.fact_attributes())
    if not set(READ) <= attributes:
        raise RegulaError(f"environment {spec.name!r} has no attributes {sorted(set(READ) - attributes)}")
    demo_bank, check_bank, candidates, verdicts = discover_and_verify(spec, demos, checks, samples,
                                                                      verify_samples, seed, chance)
    discovered = {c.fact for c in candidates}
    verified = {c.fact for c in verdicts.verified}
    return {"task": task, "demos": len(demos), "checks": len(checks), "bank": demo_bank.size(),
            "check_bank": check_bank.size(), "discovered": score(discovered, truth),
            "verified": score(verified, truth), "verified_facts": sorted(f.text() for f in verified),
            "rejected": verdicts.to_json()["rejected"],
            "missed": {t.text(): why_missed(t, discovered, verdicts, demo_bank, check_bank)
                       for t in sorted(truth - verified)},
            "wrong": sorted(f.text() for f in verified - truth)}


# Subgoal conditions: what must hold for a subgoal's action to unlock its achievement. A step's
# success says only that the world let it run (a zap into an empty corridor succeeds); the unlock
# is the outcome the hierarchy wants. Conditions are read in the skill's own frame (the family's
# `relative_props`: the minotaur on the line the wand is zapped along), so one demonstration that
# zapped east teaches a condition that holds for any direction.

def relative(spec, skill: str, props) -> frozenset:
    """`props` with the family's propositions relative to `skill`'s argument added."""
    rel = getattr(spec, "relative_props", None)
    return frozenset(props) | (rel(skill, props) if rel else frozenset())


@dataclass(frozen=True)
class Condition:
    achievement: str
    element: str
    prop: str

    def text(self) -> str:
        return f"{self.element} unlocks {self.achievement} when {self.prop}"


def discover_conditions(spec, b: Bank) -> list[Condition]:
    """For each achievement some step of `b` unlocked: what held (in the step's frame) before every
    step that unlocked it, of the element that did."""
    out = []
    unlocks: dict = {}
    for element, xs in sorted(b.steps.items()):
        for x in xs:
            for a in x.unlocked:
                unlocks.setdefault((a, element), []).append(relative(spec, x.skill, x.before))
    for (a, element), befores in sorted(unlocks.items()):
        out += [Condition(a, element, p) for p in sorted(frozenset.intersection(*befores))]
    return out


def verify_conditions(spec, candidates: list[Condition], b: Bank, chance: float = 0.05) -> tuple[list, list]:
    """(kept, [(condition, reason)]): a condition stays if it held before every step of `b` that
    unlocked its achievement and is not chance: it holds before a share s of all the element's
    steps, and s^n (n unlocking steps holding it) must stay under `chance`."""
    kept, rejected = [], []
    for c in candidates:
        steps = b.steps.get(c.element, [])
        unlocking = [x for x in steps if c.achievement in x.unlocked]
        frames = [relative(spec, x.skill, x.before) for x in steps]
        bad = next((x for x in unlocking if c.prop not in relative(spec, x.skill, x.before)), None)
        share = sum(c.prop in f for f in frames) / len(frames) if frames else 1.0
        if not unlocking:
            rejected.append((c, f"no {c.element} unlocked {c.achievement} to check against"))
        elif bad is not None:
            rejected.append((c, f"unlocked {c.achievement} without {c.prop} ({bad.where()})"))
        elif share ** len(unlocking) > chance:
            rejected.append((c, f"{c.prop} holds before {share:.0%} of {c.element}'s steps: {len(unlocking)} "
                                f"unlock(s) holding it are chance (p={share ** len(unlocking):.2f})"))
        else:
            kept.append(c)
    return kept, rejected
