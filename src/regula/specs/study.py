"""CEDAR's specification studies on Crafter (seed 000 §4.1, Fig. 4): one agent pursuing a goal with a
specification and the same agent without it, on the same worlds, binned over the in-game days.

The agent is CEDAR's: the goal's learned skill DFA (data/cedar_skills, `library.json`) run as a
policy (`rollout.play`) on a `SkillWorld`, again each time it is done ("keep collecting
diamonds"), until the horizon or its death. Both agents keep the survival layer's reflexes (fight
a close zombie, drink, eat, get ready at dusk, sleep when energy runs out) but not its night
shelter: else the environment would already rest at night and the specification would change
nothing.

The specification is a DFA over Crafter's letters (`specs` stage: learned with the person's
answers). Both agents' words (`words.extract`'s reading: a succeeded skill that is a letter, an
event letter as it becomes true) are read by a `Monitor` of it; a letter after which no word
can be accepted any more is a violation. With the specification, a `Shield` stands between the
agent and the world and reads the same DFA: before any skill, a state the DFA does not accept is
led to acceptance by the DFA's shortest word of action letters (after nightfall: `shelter`,
Crafter's walled-in sleep: the paper's bed), and a skill whose letter would violate it runs only
after the shortest word that makes it allowed, else it is refused and the agent waits. Each such
decision is counted (credit: what the specification changed). The shield names no letter of the
specification (it plans on the DFA, the agent's policy composed with it as CEDAR's intersection
is), but that `shelter` ends when the survival layer's own shelter would.
"""
from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

from regula import envs
from regula.automata.compose import _live  # the verifier's live states: from where the DFA can still accept
from regula.automata.dfa import DFA
from regula.cedar.library import Library, SkillWorld
from regula.cedar.rollout import DIGS, FORAGE, Budget, play
from regula.cedar.words import event_holds

CRAFTER = envs.get("crafter")
FIGHT = ("defeat_zombie", "defeat_skeleton")  # what waiting still does when the survival layer says so
WAIT = 10  # primitive noops a refused skill waits before the agent chooses again
# What a primitive step was spent on, by the Crafter skill it ran in (the paper's action kinds).
CATEGORIES = {"rest": ("shelter", "sleep"),
              "mining": ("collect_wood", "collect_stone", "collect_coal", "collect_iron", "collect_diamond"),
              "crafting": ("place_table", "place_furnace", "place_stone", "make_wood_pickaxe", "make_stone_pickaxe",
                           "make_iron_pickaxe", "make_wood_sword", "make_stone_sword", "make_iron_sword"),
              "survival": ("collect_drink", "eat_cow", "eat_plant", "defeat_zombie", "defeat_skeleton",
                           "collect_sapling", "place_plant"),
              "explore": ("explore",), "wait": ("noop",)}
KINDS = tuple(CATEGORIES)
_KIND = {skill: kind for kind, skills in CATEGORIES.items() for skill in skills}


def kind_of(skill: str) -> str:
    return _KIND.get(skill, "explore")


class Monitor:
    """The specification's DFA run over the word a world's log shows, incrementally. A letter
    leading out of the live states is a violation: counted and not taken (the monitor stays where
    it was, so each later offending letter counts too)."""

    def __init__(self, spec: DFA, actions):
        self.spec, self.live = spec, _live(spec)
        self.actions = set(actions)
        self.events = [a for a in spec.alphabet if a not in self.actions]
        self.held = {e: False for e in self.events}
        self.state, self.read, self.t, self.fed = spec.initial, 0, 0, 0  # records read, their steps; letters
        self.violations: list[dict] = []  # {"step": primitive step, "letter"}

    def allowed(self, letter: str) -> bool:
        return letter not in self.spec.alphabet or self.spec.step(self.state, letter) in self.live

    def feed(self, letter: str, step: int) -> None:
        if letter not in self.spec.alphabet:
            return
        self.fed += 1
        nxt = self.spec.step(self.state, letter)
        if nxt in self.live:
            self.state = nxt
        else:
            self.violations.append({"step": step, "letter": letter})

    def catch_up(self, events) -> None:
        """Read the log's records not read yet (`events`: the world's SkillSteps)."""
        for e in events[self.read:]:
            self.t += e.steps
            t = self.t
            if e.success:
                self.feed(e.skill, t)
            props = set(e.props_after)
            for ev in self.events:
                now = event_holds(ev, e.inventory, props)
                if now and not self.held[ev]:
                    self.feed(ev, t)
                self.held[ev] = now
        self.read = len(events)

    def enabling(self, letter: str | None) -> list | None:
        """The shortest word of the DFA's action letters (no events: the agent cannot make them
        happen) after which `letter` is allowed (None: after which the DFA accepts); None when
        there is none."""
        acts = [a for a in self.spec.alphabet if a in self.actions]
        parent = {self.state: None}
        queue = deque([self.state])
        while queue:
            s = queue.popleft()
            if (s in self.spec.accepting) if letter is None else (self.spec.step(s, letter) in self.live):
                path = []
                while parent[s] is not None:
                    s, a = parent[s]
                    path.append(a)
                return path[::-1]
            for a in acts:
                t = self.spec.step(s, a)
                if t in self.live and t not in parent:
                    parent[t] = (s, a)
                    queue.append(t)
        return None


class _Refused:
    """A skill the shield did not run: a failure the rollout reads like any other."""

    def __init__(self, skill: str, world):
        self.skill, self.success, self.steps = skill, False, 0
        self.reason = f"the specification forbids {skill} now"
        self.cause = {"kind": "other", "why": "specification"}
        self.inventory = world.inventory
        self.props_after = list(world.events[-1].props_after) if world.events else []

    def to_json(self) -> dict:
        return {"skill": self.skill, "success": False, "cause": self.cause, "inventory": self.inventory,
                "props_after": self.props_after, "steps": 0}


class Shield:
    """A Crafter world seen through the specification: `run_skill` runs what the agent asks only
    when the DFA allows it now, first running the enabling word (`Monitor.enabling`) when that
    makes it allowed; everything else is the world's. With `enforce` off it only monitors."""

    def __init__(self, world, spec: DFA, enforce: bool, survival=None):
        self.world, self.enforce, self.survival = world, enforce, survival
        self.monitor = Monitor(spec, CRAFTER.skill_names())
        self.changed: list[dict] = []  # decisions the specification changed: {"step", "asked", "ran"}
        self.retry_at = 0  # `oblige`: the step from which a failed obligation is tried again

    def __getattr__(self, name):
        return getattr(self.world, name)

    def wait(self) -> None:
        """`WAIT` primitive steps of nothing, but a fight the survival layer says is due now."""
        w, end = self.world, self.world.steps + WAIT
        while not w.done and w.steps < end:
            self.monitor.catch_up(w.events)
            due = self.survival.survival_skill() if self.survival is not None else None
            before = w.steps
            if due is not None and due[0] in FIGHT and (not self.enforce or self.monitor.allowed(due[0])):
                w.run_skill(due[0])
            if w.steps == before:  # no fight, or one that took no step: time passes all the same
                w.run_skill_primitive("noop")
        self.monitor.catch_up(w.events)

    def _run(self, path) -> list:
        """Run the specification's letters `path` until one fails; those run."""
        w, ran = self.world, []
        for letter in path:
            if not self.monitor.allowed(letter):  # an event since the path was planned moved the DFA on
                break
            # a letter the survival layer also runs ends when it would end it (`shelter`: the night over)
            # and stops for what stops it there (a zombie close: the fight comes first)
            if self.survival is not None:
                until = self.survival.dark_over if letter == "shelter" else None
                step = w.run_skill(letter, until=until, interrupt=self.survival.interrupt(letter, None))
            else:
                step = w.run_skill(letter)
            ran.append(letter)
            self.monitor.catch_up(w.events)
            if not step.success or w.done:
                break
        return ran

    def oblige(self, skill: str) -> None:
        """The DFA in a state it does not accept (after nightfall: not slept yet): its shortest
        accepting word of action letters first, as CEDAR's composed policy plans; tried again
        only `WAIT` x 3 steps after it failed."""
        m, w = self.monitor, self.world
        # (no letter read yet: the empty word, which LTLf's G accepts and the DFA may not, obliges nothing)
        if m.state in m.spec.accepting or m.fed == 0 or w.steps < self.retry_at or skill in FIGHT:
            return  # a fight the survival layer asks for comes first
        path = m.enabling(None)
        if path:
            ran = self._run(path)
            self.changed.append({"step": w.steps, "asked": skill, "ran": ran})
            last = w.events[-1] if w.events else None
            if m.state not in m.spec.accepting and (last is None or (last.cause or {}).get("kind") != "interrupted"):
                self.retry_at = w.steps + 3 * WAIT

    def run_skill(self, skill: str, until=None, interrupt=None):
        w, m = self.world, self.monitor
        m.catch_up(w.events)
        if self.enforce:
            self.oblige(skill)
        if self.enforce and not m.allowed(skill) and not w.done:
            ran = self._run(m.enabling(skill) or [])
            if not m.allowed(skill):  # the enabling word failed (no place to wall in): wait
                self.wait()
                self.changed.append({"step": w.steps, "asked": skill, "ran": ran + ["wait"]})
                return _Refused(skill, w)
            self.changed.append({"step": w.steps, "asked": skill, "ran": ran})
        step = w.run_skill(skill, until=until, interrupt=interrupt)
        m.catch_up(w.events)
        return step


@dataclass(frozen=True)
class Trial:
    world: int
    shielded: bool
    steps: int
    died: bool
    per_step: list  # (kind, health, a diamond gained) per primitive step
    violations: list
    changed: list
    goals: int  # times the goal's skill was done


def play_trial(seed: int, env: dict, library: Library, goal: str, spec: DFA, budget: Budget, horizon: int,
               shielded: bool) -> Trial:
    """One trial: the goal's skill played again and again for `horizon` primitive steps (or death)."""
    base = CRAFTER.from_params({**env, "length": horizon}, seed, dig=DIGS[budget.dig])
    # the survival layer gets ready at dusk (drink, eat, stone for walls) but never walls itself in
    # (`shelter_below` 0: no daylight is under it): resting at night is the specification's to ask
    survival = CRAFTER.Survival(base, CRAFTER.SurvivalConfig(swords=(), shelter_below=0.0,
                                                             **(FORAGE if budget.forage else {})))
    survival.start()
    shield = Shield(base, spec, enforce=shielded, survival=survival)
    rng = random.Random(f"study:{goal}:{seed}")  # the same draws with and without the specification
    skill = library.skill(goal)
    goals = idle = 0
    while not base.done:
        before = base.steps
        world = SkillWorld(shield, library, budget, random.Random(rng.getrandbits(64)), start=len(base.events),
                           survival=survival, goal=goal)
        record = play(world, skill.dfa, goal, budget, random.Random(rng.getrandbits(64)))
        goals += bool(record["label"])
        idle = idle + 1 if base.steps == before else 0
        if idle >= 3:  # nothing the agent tries moves: let time pass
            shield.wait()
    shield.monitor.catch_up(base.events)
    per_step = []
    for e in base.events:
        kind = kind_of(e.skill)
        for p in e.primitives:
            per_step.append((kind if p["action"] != "sleep" else "rest", p["health"],
                             p["inventory_delta"].get("diamond", 0) > 0))
    return Trial(seed, shielded, base.steps, base.dead, per_step, shield.monitor.violations, shield.changed, goals)


def bins(trials: list[Trial], width: int, horizon: int, night_below: float) -> list[dict]:
    """Per bin of `width` steps: the steps of each kind summed over the trials (`dead`: steps after a
    trial's death), the trials' mean health (a dead trial's is 0), how many were alive in the bin, the
    diamonds, violations and decisions the specification changed, and the bin's steps at night."""
    out = []
    for b in range(0, horizon, width):
        end = min(b + width, horizon)
        row = {"start": b, "end": end, "night_steps": sum(is_night_step(i, night_below) for i in range(b, end)),
               **{k: 0 for k in KINDS}, "dead": 0, "health": 0.0, "alive": 0, "diamonds": 0, "violations": 0,
               "changed": 0}
        health = 0.0
        for t in trials:
            part = t.per_step[b:end]
            row["alive"] += bool(part)
            row["dead"] += (end - b) - len(part)
            health += sum(h for _, h, _ in part)  # after death: 0
            for kind, _, got in part:
                row[kind] += 1
                row["diamonds"] += got
            row["violations"] += sum(b < v["step"] <= end for v in t.violations)
            row["changed"] += sum(b < c["step"] <= end for c in t.changed)
        row["health"] = round(health / ((end - b) * len(trials)), 3) if trials else 0.0
        out.append(row)
    return out


def budget(params) -> Budget:
    """The rollouts' budget from params' `cedar` section, as the cedar_skills stage builds it
    (`cedar.stage.budget`; not imported: that module brings RAG and LTLCrit into this stage's deps)."""
    cfg = params.cedar
    return Budget(max_skills=cfg.max_skills, explore_tries=cfg.explore_tries, max_calls=cfg.max_calls,
                  upkeep=cfg.upkeep, dig=cfg.dig, dug_calls=cfg.dug_calls, arm=cfg.arm, seek=cfg.seek,
                  call_retry=cfg.call_retry, call_held=cfg.call_held, forage=cfg.forage)


DAY = 300  # Crafter's day in primitive steps (daylight's period)
AGENTS = ("without", "with")  # the agent without the specification, and shielded by it


def run_study(study, params, library: Library, spec: DFA, budget: Budget) -> tuple[list[dict], dict]:
    """Both agents on the study's worlds: (per-bin rows, one per agent and bin; the record of
    totals and per-trial numbers)."""
    from regula.stages import world_seeds
    horizon = study.days * DAY
    worlds = world_seeds(params, "eval", study.trials)
    env = params.env.model_dump()
    nb = params.env.symbols.night_below
    rows, record = [], {"goal": study.goal, "spec": study.spec, "worlds": list(worlds), "days": study.days,
                        "horizon": horizon, "bin": study.bin, "agents": {}}
    for agent in AGENTS:
        trials = [play_trial(w, env, library, study.goal, spec, budget, horizon, agent == "with") for w in worlds]
        for row in bins(trials, study.bin, horizon, nb):
            rows.append({"agent": agent, **row})
        per = [{"world": t.world, "steps": t.steps, "died": t.died, "violations": len(t.violations),
                "changed": len(t.changed), "diamonds": sum(g for *_, g in t.per_step), "goals": t.goals,
                "mean_health": round(sum(h for _, h, _ in t.per_step) / max(1, len(t.per_step)), 3),
                "night_rest": sum(k == "rest" for k, _, _ in _night(t.per_step, nb)),
                "night_mining": sum(k == "mining" for k, _, _ in _night(t.per_step, nb)),
                **{f"steps_{k}": sum(x == k for x, _, _ in t.per_step) for k in KINDS}} for t in trials]
        n = len(per)
        record["agents"][agent] = {
            "trials": per,
            "violations": sum(p["violations"] for p in per), "changed": sum(p["changed"] for p in per),
            "diamonds": sum(p["diamonds"] for p in per), "survived": sum(not p["died"] for p in per),
            "mean_steps": round(sum(p["steps"] for p in per) / n, 1),
            "mean_health": round(sum(p["mean_health"] for p in per) / n, 3),
            **{f"steps_{k}": sum(p[f"steps_{k}"] for p in per) for k in KINDS},
            "night_rest": sum(p["night_rest"] for p in per), "night_mining": sum(p["night_mining"] for p in per)}
    return rows, record


def _night(per_step, night_below: float):
    return [s for i, s in enumerate(per_step) if is_night_step(i, night_below)]


def is_night_step(i: int, night_below: float) -> bool:
    """Primitive step i (0-based) ends at night: Crafter's daylight after step t is
    1 - |cos(pi (t/300 mod 1 + 0.3))|^3, night where it is under `env.symbols.night_below`
    (0.35: steps 161-259 of each 300)."""
    t = i + 1
    return 1 - abs(math.cos(math.pi * ((t / DAY) % 1 + 0.3))) ** 3 < night_below
