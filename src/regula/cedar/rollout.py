"""A skill DFA run as a policy in Crafter (CEDAR §3.3), and the word the run's log shows.

From the DFA's current state the runner executes the first letter of a shortest path to an
accepting state. A letter that fails in the world is dropped from that state and the path is
planned again; a skill that fails because its target was never seen first sends the agent
exploring. Paths do not dig (`CrafterWorld(dig=False)`): an item comes only from the letter
that collects it, as the words assume. With `Budget.dig = "stuck"` they dig where no walking route
is known (out of a shelter's walls, through rock to water: without it the iron tier's rollouts
end walled in, or starve), and what digging collected is read into the word as its letter
(`words.dug`), so the word still says where every item came from. An event letter cannot be
executed: it is only ever read off the log. When no
accepting state is reachable (a hypothesis that accepts nothing, say) the runner explores the
letters, seeded: a letter that gets what a failed letter lacked first, then the failed letter
again, else at random. That is how a rollout finds words the hypothesis wrongly rejects.

Keeping alive between letters is the environment's part, not the word's, as it is the scripted
expert's: `Budget.upkeep` (the survival layer), `arm` (its swords), `seek` (its explore, which
stops at the target). Library calls (`call_retry`, `call_held`) are run as a caller wants them:
until the skill's goal, and not at all when what the skill is for is had already.

The run ends when the skill's goal is reached, when the DFA accepts what was done (so the
word is the hypothesis's claim, checked by the world), or when the budget is spent. The world
labels every prefix of the word (did the goal happen by then?), and every word that a letter
failed on for lack of an item (the word with that letter is not one that does the skill, as
the paper treats an invoked action absent from the log), and on the hypothesis's path every word
whose make letter found no station (table, furnace: no fresh world has one, so no letter of the
word placed it): all of them go to the learner.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass

from regula import envs
from regula.automata.dfa import DFA
from regula.automata.policy import DFAPolicy

from .words import MACRO, extract, is_macro

CRAFTER = envs.get("crafter")
FIND = ("not_seen", "no_route")  # failures that exploring may cure
# A letter that failed for lack of an item would fail in every world after the same word: a
# fact of the skill's language. Other failures (a target not found) are this world's.
REFUTES = ("missing",)
# Stations (table, furnace) are in no fresh world: one never seen was placed by no letter of the word, so a make
# letter that failed for want of one fails after the same word in every world (but where a skeleton's arrow turned
# the station into path: 3 of make_iron_pickaxe's 14,125 False labels in the release run; the worlds' majority
# outvotes such a label when the word comes again). Exploring cannot find one, and without the refutation a
# teacher's noisy "yes" to a furnace-less make_iron_pickaxe word was never corrected.
# Only on the hypothesis's path: exploring (no accepting state) tries make letters at random, and refuting there
# pinned some 500 random words of up to 25 letters in make_iron_pickaxe's first 60 rollouts (dev).
STATIONS = frozenset(CRAFTER.rules.stations)
FRESH = 0.5  # exploring: the chance of drawing among letters not yet done in the rollout


@dataclass(frozen=True, kw_only=True)
class Budget:
    """A rollout's sizes and switches, every one from params' `cedar` section (`stage.budget`)."""

    max_skills: int  # letters tried per rollout (explores not counted)
    explore_tries: int  # explores before a letter whose target is unseen counts as failed
    # Crafter skills (explores too) a rollout runs in all, those library skills (`@s`) run for it included: each
    # call plays its own rollout, so without a cap nested calls multiply (40 x 40 x 40 for a
    # skill calling a skill calling a skill). Enforced by `library.SkillWorld`.
    max_calls: int
    # The survival layer the expert and LTLCrit's agents share (`Survival`: fight a close zombie, drink,
    # eat, sleep; no swords or walls, which would spend the items the words count), run between letters
    # and not part of the word. Without it a rollout dies within ~250 steps, before the iron tier's words end.
    upkeep: bool
    # Paths: "never" dig (an item only from its letter) | "stuck": dig where walking cannot get
    # there | "always": through rock and trees as the expert's do (short paths, fewer nights);
    # what was dug is read into the word as its `collect_` letter.
    dig: str
    # With digging: a dug item whose `collect_` letter Σ holds only as a call reads as the call (`words.extract`).
    dug_calls: bool
    # With upkeep: swords as the expert makes them (a zombie falls in 3 hits with a wooden one, 2 with a stone
    # one, 5 bare-handed), from wood and stone the survival layer gathers for them itself, so the items the word counts
    # stay as the word left them (`library.SkillWorld._arm`).
    arm: bool
    # Exploring for a letter whose target was never seen stops once it is seen, as the expert's does (else the
    # explore walks its full `explore_steps`, and a rollout spends a day's light looking past what it wanted).
    seek: bool
    # A library skill's call whose DFA accepted without its goal happening drops the edge that got there and
    # plans on: the skill was learned on fresh worlds, where a wrong shortcut (a teacher's noisy "yes" to
    # `shelter`, say) can fail for want of a pickaxe and so is never refuted, yet succeed mid-episode and end the
    # call empty-handed. Only calls: a top-level rollout ends where its DFA accepts (that is the claim it tests).
    call_retry: bool
    # A call of a library skill that makes a tool or places a station is done at once when the agent already holds
    # the tool or has seen such a station (`library.SkillWorld`): tools are needed, never spent, and a make letter
    # walks to a seen station. Else every call replays its skill from a fresh world's start (@collect_iron made a
    # second stone pickaxe, table and all: 200-300 steps a call on dev, and the night came before the iron).
    call_held: bool
    # With upkeep: the survival layer eats sooner (a cow within 6 cells when food is under 8) and gets ready for the night
    # from daylight 0.9 (`FORAGE`). A word through library calls meets more nights than the expert's shortest plan;
    # entering the shelter with food 3-4 it came out at 0, and 10 of 20 dev rollouts of the iron word starved.
    forage: bool

    def __post_init__(self):
        if self.dig not in DIGS:
            from regula.errors import UnknownNameError
            raise UnknownNameError("cedar.dig", self.dig, DIGS)

    def key(self) -> dict:
        """What names the budget in the EQ cache (`upkeep` and `dig` only when not off: caches from
        before them stay valid)."""
        out = asdict(self)
        if not self.upkeep:
            del out["upkeep"]
        if self.dig == "never":
            del out["dig"]
        for off in ("dug_calls", "arm", "seek", "call_retry", "call_held", "forage"):
            if not out[off]:
                del out[off]
        return out

    @property
    def digs(self) -> bool:
        return self.dig != "never"


DIGS = {"never": False, "stuck": "stuck", "always": True}  # Budget.dig -> CrafterWorld(dig=...)
FORAGE = {"snack_below": 8, "snack_within": 6, "dusk_below": 0.9}  # `Budget.forage`: the survival layer's SurvivalConfig


def obtains(letter: str) -> str:
    """The thing a letter's skill gets or places (`@collect_iron`, `place_table`: iron, table)."""
    return letter.lstrip(MACRO).partition("_")[2]


def _seen(cause: dict):
    """Until the thing a letter failed for is on the seen map (None: the failure names none)."""
    thing = cause.get("thing") if cause.get("kind") == "not_seen" else None
    return (lambda w: w.memory.seen(thing)) if thing else None


def _unplaced(cause: dict) -> bool:
    """A station never seen: no letter of the word placed one (`STATIONS`)."""
    return cause.get("kind") == "not_seen" and cause.get("thing") in STATIONS


def goal_reached(world, goal: str) -> bool:
    return goal in world.unlocked


def play(world, dfa: DFA, goal: str, budget: Budget, rng: random.Random, call: bool = False) -> dict:
    """One rollout of `dfa` toward achievement `goal` in `world`; the record the EQ cache keeps. `call`:
    a library skill run for a word above it (`Budget.call_retry` applies)."""
    actions = set(CRAFTER.skill_names()) | {a for a in dfa.alphabet if is_macro(a)}
    letters = [a for a in dfa.alphabet if a in actions]
    policy = DFAPolicy(dfa)
    tried = explores = 0
    reached_at = None  # letters in the word when the goal happened
    refuted: list = []  # words whose last letter failed for lack of an item
    missing: set = set()  # what failed letters lacked (an item, a thing never seen): symbols Σ may lack
    lacks: dict = {}  # the same per letter
    failed_here: set = set()  # random letters that failed since the last success
    wanted: set = set()  # what letters failed for since the last success: letters that get it come first
    retry: list = []  # letters that failed for a missing thing, to try again once something succeeded
    came_from = [dfa.initial]  # the state before the last letter the policy advanced on (`Budget.call_retry`)

    def follow():
        """The policy along the letters the last step added to the word (the skill, then events it
        made true; with digging, what it dug first)."""
        nonlocal reached_at
        word = extract([e.to_json() for e in world.events], dfa.alphabet, actions, budget.digs, budget.dug_calls).word
        for letter in word[len(policy.trace):]:
            came_from[0] = policy.state
            policy.advance(letter)
        if reached_at is None and goal_reached(world, goal):
            reached_at = len(policy.trace)

    while tried < budget.max_skills and not world.done and not goal_reached(world, goal):
        if policy.done:
            if not (call and budget.call_retry and policy.trace):
                break
            # accepted, yet no goal: that last edge is no way to it from here (`Budget.call_retry`)
            policy.state = came_from[0]
            policy.dropped.add((came_from[0], policy.trace[-1]))
        path = policy.plan()
        symbol = path[0] if path else None
        if symbol is not None and symbol not in actions:  # an event first: nothing to execute toward it
            policy.fail(symbol)
            continue
        planned = symbol is not None
        if not planned:
            choices = [a for a in letters if a not in failed_here]
            if not choices:
                break
            # Exploring chains backwards from what the world said was missing: a letter that gets
            # the missing thing (`table`: place_table, @place_table), then the letter that lacked it.
            getting = [a for a in choices if obtains(a) in wanted]
            again = [a for a in retry if a in choices]
            # Else letters not yet done in this rollout come first: new skills open new ones.
            fresh = [a for a in choices if a not in policy.trace]
            if getting:
                symbol = rng.choice(getting)
            elif again:
                symbol = again[-1]
            else:
                symbol = rng.choice(fresh if fresh and rng.random() < FRESH else choices)
        tried += 1
        step = world.run_skill(symbol)
        if budget.digs:  # a failed letter's path may have dug something: a letter of the word
            follow()
        if not step.success and (step.cause or {}).get("kind") in FIND and explores < budget.explore_tries \
                and not _unplaced(step.cause):
            explores += 1
            world.run_skill("explore", until=_seen(step.cause) if budget.seek else None)
            if budget.digs:
                follow()
            tried -= 1  # the same letter again, after looking around
            continue
        if not step.success:
            cause = step.cause or {}
            if cause.get("kind") in ("missing", "not_seen"):
                missing.add(cause.get("item") or cause.get("thing"))
                lacks.setdefault(symbol, set()).add(cause.get("item") or cause.get("thing"))
                if not planned:
                    wanted.add(cause.get("item") or cause.get("thing"))
                    retry.append(symbol)
            # a call's own failure refutes nothing above it (the skill gathers what it needs itself)
            refutes = cause.get("kind") in REFUTES or planned and _unplaced(cause) and not is_macro(symbol)
            if refutes and list(policy.trace) + [symbol] not in refuted:
                refuted.append(list(policy.trace) + [symbol])
            if planned:
                policy.fail(symbol)
            else:
                failed_here.add(symbol)
            continue
        failed_here.clear()
        wanted.clear()
        retry = [a for a in retry if a != symbol]
        explores = 0
        follow()
    found = extract([e.to_json() for e in world.events], dfa.alphabet, actions, budget.digs, budget.dug_calls)
    return {"word": list(found.word), "label": goal_reached(world, goal), "reached_at": reached_at,
            "refuted": refuted, "missing": sorted(missing), "lacks": {a: sorted(x) for a, x in sorted(lacks.items())},
            "accepted": dfa.accepts(found.word),
            "outside": list(found.outside),
            "steps": world.steps, "skills": len(world.events)}


def labelled(record: dict) -> list[tuple[tuple, bool]]:
    """Every word a rollout labels: each prefix of its word (True from the letter that reached
    the goal on), then each refuted word (False), without repeats."""
    word, at = tuple(record["word"]), record["reached_at"]
    out = {word[:i]: at is not None and i >= at for i in range(len(word) + 1)}
    for w in record["refuted"]:
        out.setdefault(tuple(w), False)
    return list(out.items())
