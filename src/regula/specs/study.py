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
from collections import Counter, deque
from dataclasses import dataclass

from regula import envs
from regula.automata.compose import _live  # the verifier's live states: from where the DFA can still accept
from regula.automata.dfa import DFA
from regula.cedar.library import Library, SkillWorld
from regula.cedar.rollout import DIGS, FORAGE, Budget, play
from regula.cedar.words import COLLECT, dug, event_holds
from regula.envs import true_props

from .logs import NOT  # an event letter `not_<event>` holds where <event> does not (`not_is_night`: daylight)

CRAFTER = envs.get("crafter")
RULES, BODY_STATS = CRAFTER.rules, CRAFTER.body_stats  # the game's rules, which the study's agents play by
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


IN_AREA = "in_area"  # the event a study's `Area` adds: the player within it


@dataclass(frozen=True)
class Area:
    """The square of half-width `radius` round `center` (the player's start): §4.1's biome, Fig. 6."""
    center: tuple
    radius: int

    def holds(self, pos) -> bool:
        return max(abs(int(pos[0]) - self.center[0]), abs(int(pos[1]) - self.center[1])) <= self.radius


def holds(event: str, inventory: dict, props: set) -> bool:
    """An event letter on a step's inventory and true propositions (`words.event_holds`), `not_<e>`
    its negation."""
    if event.startswith(NOT):
        return not event_holds(event[len(NOT):], inventory, props)
    return event_holds(event, inventory, props)


class Monitor:
    """The specification's DFA run over the word a world's log shows, incrementally. A letter
    leading out of the live states is a violation: counted and not taken (the monitor stays where
    it was, so each later offending letter counts too). `dug`: the collections a step's path made
    on the way (`words.dug`) are letters too, before the step's own."""

    def __init__(self, spec: DFA, actions, dug: bool = False, area=None):
        self.spec, self.live, self.dug, self.area = spec, _live(spec), dug, area
        self.actions = set(actions)
        self.events = [a for a in spec.alphabet if a not in self.actions]
        self.held = {e: False for e in self.events}
        self.state, self.read, self.t, self.fed = spec.initial, 0, 0, 0  # records read, their steps; letters
        self.violations: list[dict] = []  # {"step": primitive step, "letter"}
        self.pos = area.center if area is not None else None  # the player's, as the log last said

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
            if self.dug:
                for letter in dug(e.to_json(), self.actions):
                    self.feed(letter, t)
            if e.success:
                self.feed(e.skill, t)
            props = set(e.props_after)
            if self.area is not None and e.primitives:  # where the step left the player
                self.pos = tuple(e.primitives[-1]["pos"])
            if self.area is not None and self.area.holds(self.pos):
                props.add(IN_AREA)
            for ev in self.events:
                now = holds(ev, e.inventory, props)
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

    def __init__(self, world, spec: DFA, enforce: bool, survival=None, strict: bool = False, area: Area | None = None):
        self.world, self.enforce, self.survival, self.strict = world, enforce, survival, strict
        self.monitor = Monitor(spec, CRAFTER.skill_names(), dug=strict, area=area)
        self.dig = world.controller.dig  # the world's own: `strict` turns it off while a dug letter is forbidden
        self.collections = [a for a in spec.alphabet if a.startswith(COLLECT) and a in self.monitor.actions]
        self.changed: list[dict] = []  # decisions the specification changed: {"step", "asked", "ran"}
        self.retry_at = 0  # `oblige`: the step from which a failed obligation is tried again
        if enforce and strict:
            self._guard()

    def _guard(self) -> None:
        """`strict`, enforced: a primitive `do` that would collect an item whose letter the DFA
        forbids now, or a move out of the area when `not_in_area` is forbidden, is not taken; the
        skill stops there (a failure the agent reads like any other). The world's `act` wrapped:
        every skill's keystrokes step through it."""
        w, act = self.world, self.world.act

        def guarded(action):
            letter = self.collecting() if action == "do" else self.leaving(action)
            if letter is not None and not self.monitor.allowed(letter):
                if w.controller.actions[-1:] == [action]:  # in a skill: not taken, the step's count stays the world's
                    w.controller.actions.pop()
                self.changed.append({"step": w.steps, "asked": action, "ran": []})
                raise CRAFTER.Failed(f"the specification forbids {letter} now", "other", why="specification")
            return act(action)
        w.act = guarded

    def leaving(self, action: str) -> str | None:
        """`not_in_area` when the move `action` would take the player out of the study's area."""
        m, env = self.monitor, self.world.env
        d = CRAFTER.moves.get(action)
        if m.area is None or d is None or NOT + IN_AREA not in m.spec.alphabet:
            return None
        pos = tuple(int(v) for v in env.player.pos)
        return NOT + IN_AREA if m.area.holds(pos) and not m.area.holds((pos[0] + d[0], pos[1] + d[1])) else None

    def collecting(self) -> str | None:
        """The collection letter a `do` now would make (the material faced, its tool held), if any."""
        env = self.world.env
        info = RULES.collect.get(CRAFTER.facing_thing(env))
        if info is None or any(env.player.inventory[k] < n for k, n in info["require"].items()):
            return None
        return next((f"{COLLECT}{item}" for item in info["receive"] if f"{COLLECT}{item}" in self.monitor.actions),
                    None)

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

    def permits(self, skill: str) -> bool:
        """Would `run_skill` run `skill` now without waiting (the composed policy's choice: a skill
        the specification forbids with no enabling word is not one the agent picks)? Always, unenforced."""
        m = self.monitor
        m.catch_up(self.world.events)
        return not self.enforce or m.allowed(skill) or bool(m.enabling(skill))

    def _strictly(self, interrupt):
        """`strict`: paths dig only while every collection letter of the spec is allowed, and the
        skill stops (as a reflex stops it) when an event letter the spec reads changes under it."""
        m, w = self.monitor, self.world
        w.controller.dig = self.dig if all(m.allowed(c) for c in self.collections) else False
        if not m.events:
            return interrupt
        start = {ev: holds(ev, w.inventory, set(true_props(w.props()))) for ev in m.events}

        def changed(world):
            why = interrupt(world) if interrupt is not None else None
            if why:
                return why
            props = set(true_props(world.props()))
            moved = [ev for ev in m.events if holds(ev, world.inventory, props) != start[ev]]
            return f"{moved[0]} changed: the specification decides again" if moved else None
        return changed

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
        if self.enforce and self.strict:
            interrupt = self._strictly(interrupt)
        step = w.run_skill(skill, until=until, interrupt=interrupt)
        m.catch_up(w.events)
        return step


UNDERGROUND = "path"  # the material under a player in the mountain area: crafter's worldgen makes its caves and
# tunnels `path` (and its `tunnels` mask only says where skeletons spawn); rock dug out turns to path too
BLOCKS = tuple(dict.fromkeys(item for r in RULES.recipes.values() if r.kind == "collect"
                             for item in r.gives if item not in BODY_STATS))  # wood, stone, ..., sapling
ITEMS = tuple(RULES.tools)  # what is made: pickaxes and swords
GAINS = ("underground", "overground", "items")  # Table 1's columns: blocks collected under / over ground, items


def gains(delta: dict, underground: bool) -> tuple:
    """What one primitive step gained, as (blocks underground, blocks overground, items made)."""
    blocks = sum(n for k, n in delta.items() if n > 0 and k in BLOCKS)
    items = sum(n for k, n in delta.items() if n > 0 and k in ITEMS)
    return (blocks, 0, items) if underground else (0, blocks, items)


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
    underground: tuple = ()  # per primitive step: the player stood on `UNDERGROUND` after it
    gained: tuple = ()  # per primitive step: `gains`
    actions: int = 0  # high-level skills that succeeded, waiting's noops aside (Table 1's action count)
    positions: tuple = ()  # per primitive step: the player's cell after it
    area: "Area | None" = None


def _track(world) -> list:
    """Per primitive action from now on, whether the player stands underground after it (the
    world's `act` wrapped: the controller and the logged keystrokes all step through it)."""
    under, act = [], world.act

    def tracked(action):
        reward = act(action)
        under.append(world.env.world[world.env.player.pos][0] == UNDERGROUND)
        return reward
    world.act = tracked
    return under


def _trial(seed, shielded, base, shield, under, goals) -> Trial:
    shield.monitor.catch_up(base.events)
    per_step, deltas, positions = [], [], []
    for e in base.events:
        kind = kind_of(e.skill)
        for p in e.primitives:
            per_step.append((kind if p["action"] != "sleep" else "rest", p["health"],
                             p["inventory_delta"].get("diamond", 0) > 0))
            deltas.append(p["inventory_delta"])
            positions.append(tuple(p["pos"]))
    assert len(under) == len(deltas), (len(under), len(deltas))
    actions = sum(e.success and e.skill != "noop" for e in base.events)
    return Trial(seed, shielded, base.steps, base.dead, per_step, shield.monitor.violations, shield.changed, goals,
                 tuple(under), tuple(gains(d, u) for d, u in zip(deltas, under)), actions, tuple(positions),
                 shield.monitor.area)


def play_trial(seed: int, env: dict, library: Library, goal: str, spec: DFA, budget: Budget, horizon: int,
               shielded: bool) -> Trial:
    """One trial: the goal's skill played again and again for `horizon` primitive steps (or death)."""
    base, under, survival, shield = _setup(seed, env, spec, budget, horizon, shielded, False)
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
    return _trial(seed, shielded, base, shield, under, goals)


def _setup(seed, env, spec, budget, horizon, shielded, strict, area: int = 0):
    base = CRAFTER.from_params({**env, "length": horizon}, seed, dig=DIGS[budget.dig])
    under = _track(base)
    square = Area(tuple(int(v) for v in base.env.player.pos), area) if area else None
    # the survival layer gets ready at dusk (drink, eat, stone for walls) but never walls itself in
    # (`shelter_below` 0: no daylight is under it): resting at night is the specification's to ask
    survival = CRAFTER.Survival(base, CRAFTER.SurvivalConfig(swords=(), shelter_below=0.0,
                                                             **(FORAGE if budget.forage else {})))
    survival.start()
    return base, under, survival, Shield(base, spec, enforce=shielded, survival=survival, strict=strict, area=square)


# The explore-and-collect agent's collections: the environment's collect skills but drinking (the
# survival layer's), in data.yaml's order.
COLLECTS = tuple(r for r in RULES.recipes.values() if r.kind == "collect" and not set(r.gives) <= set(BODY_STATS))
MAKES = tuple(r for r in RULES.recipes.values()
              if r.kind == "make" or (r.kind == "place" and r.target in RULES.stations))  # tools; table, furnace
STOCK = 5  # a collectable held this many times is left for others (exploring finds them)
RETRY = 30  # primitive steps before a skill that failed (no route, nothing in reach) is chosen again


def collect_choice(world, shield, failed: dict) -> str:
    """The explore-and-collect agent (§4.1, Fig. 5: "explore the world and collect as many
    different items as possible"), one decision: a station or a tool it does not have yet and can
    make now (its stations seen, what it uses held); else the collectable in view it can collect
    (the tool held) and holds fewest of, while it holds under `STOCK`; else `explore`.
    Only skills the shield permits (`Shield.permits`: the agent composed with the specification)
    and none that failed within `RETRY` steps."""
    props = world.props()
    kept = _choose(world, props, lambda r: shield.permits(r.skill), failed)
    free = _choose(world, props, lambda r: True, failed)
    if kept != free:  # a decision the specification changed
        shield.changed.append({"step": world.steps, "asked": free, "ran": [kept]})
    return kept


def _choose(world, props, permits, failed: dict) -> str:
    inv, now = world.inventory, world.steps

    def ok(r) -> bool:
        return now >= failed.get(r.skill, -RETRY) + RETRY and permits(r)
    for r in MAKES:
        have = props[f"{r.target}_on_map"] if r.kind == "place" else inv[r.target] > 0
        if (not have and all(inv[k] >= n for k, n in r.uses.items())
                and all(props[f"{s}_on_map"] for s in r.nearby) and ok(r)):
            return r.skill
    seen = [r for r in COLLECTS if props[f"{r.target}_in_view"] and all(inv[k] >= n for k, n in r.require.items())
            and all(inv[g] < STOCK for g in r.gives) and ok(r)]
    if seen:
        return min(seen, key=lambda r: (sum(inv[g] for g in r.gives), COLLECTS.index(r))).skill
    return "explore"


NEEDS = ("collect_drink", "eat_cow")  # what the survival layer asks that comes before the night's rest
SHELTER_MARGIN = 40  # night steps left under which the agent does not wall itself in to sleep, and leaves


def night_left(step: int, night_below: float) -> int:
    """Night steps from primitive step `step` on (0 by day)."""
    n = 0
    while n < DAY and is_night_step(step + n, night_below):
        n += 1
    return n


def rested(night_below: float, survival):
    """`until` of the agent's walled-in sleep: energy full and no zombie within 4 (they gather
    round the walls), or the night nearly over (out of the walls while digging is still night's)."""
    return lambda world: ((world.inventory["energy"] >= RULES.items["energy"]["max"]
                           and not survival.zombie_near(world, 4))
                          or night_left(world.steps, night_below) <= SHELTER_MARGIN // 4)


def play_collect_trial(seed: int, env: dict, spec: DFA, budget: Budget, horizon: int, shielded: bool,
                       strict: bool = True, area: int = 0) -> Trial:
    """One trial of the explore-and-collect agent (`collect_choice`) for `horizon` primitive steps
    (or death): the survival layer's skill first when one is due, the shield permits it and it did
    not fail within `RETRY` steps. At night, `SHELTER_MARGIN` steps or more before dawn, with energy
    under its maximum and no fight, drink or meal due, it sleeps walled in (`shelter`) until `rested`, and
    is out again before daylight: the rest of the night is its own."""
    base, under, survival, shield = _setup(seed, env, spec, budget, horizon, shielded, strict, area)
    nb = env["symbols"]["night_below"]
    failed, idle = {}, 0
    while not base.done:
        before = base.steps
        due = survival.survival_skill()
        if ((due is None or due[0] not in FIGHT + NEEDS) and night_left(base.steps, nb) > SHELTER_MARGIN
                and base.inventory["energy"] < RULES.items["energy"]["max"]):
            due = "shelter", rested(nb, survival)  # asleep in the open at night, a zombie hits 7: walled in
        if due is not None and base.steps >= failed.get(due[0], -RETRY) + RETRY and (
                shield.permits(due[0]) or shield.changed.append({"step": base.steps, "asked": due[0], "ran": []})):
            (skill, until), goal = due, None
        else:
            skill, until, goal = collect_choice(base, shield, failed), None, "collect"
        step = shield.run_skill(skill, until=until, interrupt=survival.interrupt(skill, goal))
        if not step.success and (step.cause or {}).get("kind") != "interrupted":
            failed[skill] = base.steps
        idle = idle + 1 if base.steps == before else 0
        if idle >= 3:  # nothing the agent tries moves: let time pass
            shield.wait()
            idle = 0
    return _trial(seed, shielded, base, shield, under, 0)


def bins(trials: list[Trial], width: int, horizon: int, night_below: float) -> list[dict]:
    """Per bin of `width` steps: the steps of each kind summed over the trials (`dead`: steps after a
    trial's death), the trials' mean health (a dead trial's is 0), how many were alive in the bin, the
    diamonds, violations and decisions the specification changed, the bin's steps at night, the
    steps the players stood underground and what they gained (`GAINS`: Fig. 5 (c), (d))."""
    out = []
    for b in range(0, horizon, width):
        end = min(b + width, horizon)
        row = {"start": b, "end": end, "night_steps": sum(is_night_step(i, night_below) for i in range(b, end)),
               **{k: 0 for k in KINDS}, "dead": 0, "health": 0.0, "alive": 0, "diamonds": 0, "violations": 0,
               "changed": 0, "steps_underground": 0, **{g: 0 for g in GAINS}}
        health = 0.0
        for t in trials:
            part = t.per_step[b:end]
            row["alive"] += bool(part)
            row["dead"] += (end - b) - len(part)
            health += sum(h for _, h, _ in part)  # after death: 0
            for kind, _, got in part:
                row[kind] += 1
                row["diamonds"] += got
            row["steps_underground"] += sum(t.underground[b:end])
            for g in t.gained[b:end]:
                for name, n in zip(GAINS, g):
                    row[name] += n
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
    rows, record = [], {"agent": study.agent, "goal": study.goal, "spec": study.spec, "strict": study.strict,
                        "worlds": list(worlds), "days": study.days,
                        "horizon": horizon, "bin": study.bin, "agents": {}}
    for agent in AGENTS:
        if study.agent == "collect":
            trials = [play_collect_trial(w, env, spec, budget, horizon, agent == "with", study.strict, study.area)
                      for w in worlds]
        else:
            trials = [play_trial(w, env, library, study.goal, spec, budget, horizon, agent == "with") for w in worlds]
        for row in bins(trials, study.bin, horizon, nb):
            rows.append({"agent": agent, **row})
        per = [{"world": t.world, "steps": t.steps, "died": t.died, "violations": len(t.violations),
                "changed": len(t.changed), "diamonds": sum(g for *_, g in t.per_step), "goals": t.goals,
                "mean_health": round(sum(h for _, h, _ in t.per_step) / max(1, len(t.per_step)), 3),
                "night_rest": sum(k == "rest" for k, _, _ in _night(t.per_step, nb)),
                "night_mining": sum(k == "mining" for k, _, _ in _night(t.per_step, nb)),
                **{f"steps_{k}": sum(x == k for x, _, _ in t.per_step) for k in KINDS},
                "actions": t.actions, "steps_underground": sum(t.underground),
                **{g: sum(x[i] for x in t.gained) for i, g in enumerate(GAINS)},
                "gained": sum(map(sum, t.gained)),
                **({"steps_outside": sum(not t.area.holds(p) for p in t.positions)} if study.area else {})}
               for t in trials]
        n = len(per)
        record["agents"][agent] = {
            "trials": per,
            "violations": sum(p["violations"] for p in per), "changed": sum(p["changed"] for p in per),
            "diamonds": sum(p["diamonds"] for p in per), "survived": sum(not p["died"] for p in per),
            "mean_steps": round(sum(p["steps"] for p in per) / n, 1),
            "mean_health": round(sum(p["mean_health"] for p in per) / n, 3),
            **{f"steps_{k}": sum(p[f"steps_{k}"] for p in per) for k in KINDS},
            "night_rest": sum(p["night_rest"] for p in per), "night_mining": sum(p["night_mining"] for p in per),
            **{k: sum(p[k] for p in per) for k in ("actions", "steps_underground", *GAINS, "gained")},
            # Table 1's cells: mean and sample standard deviation over the trials
            "per_trial": {k: mean_sd([p[k] for p in per]) for k in ("actions", *GAINS, "gained")}}
        if study.area:  # Fig. 6: the cells the players stood on after each step, from their start, over the trials
            cells = Counter((x - t.area.center[0], y - t.area.center[1]) for t in trials for x, y in t.positions)
            # "x,y,n ...": one line in the JSON, whatever the cells (the report reads it: `cells`)
            record["agents"][agent]["cells"] = " ".join(f"{x},{y},{n}" for (x, y), n in sorted(cells.items()))
            record["agents"][agent]["steps_outside"] = sum(p["steps_outside"] for p in per)
            record["area"] = study.area
    return rows, record


def cells(text: str) -> list[tuple]:
    """A record's `cells` back as (x, y, steps) from the start."""
    return [tuple(int(v) for v in c.split(",")) for c in text.split()]


def mean_sd(values) -> list:
    """[mean, sample standard deviation] rounded to 1 decimal (0 sd for one value)."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return [round(mean, 1), round(sd, 1)]


def _night(per_step, night_below: float):
    return [s for i, s in enumerate(per_step) if is_night_step(i, night_below)]


def is_night_step(i: int, night_below: float) -> bool:
    """Primitive step i (0-based) ends at night: Crafter's daylight after step t is
    1 - |cos(pi (t/300 mod 1 + 0.3))|^3, night where it is under `env.symbols.night_below`
    (0.35: steps 161-259 of each 300)."""
    t = i + 1
    return 1 - abs(math.cos(math.pi * ((t / DAY) % 1 + 0.3))) ** 3 < night_below
