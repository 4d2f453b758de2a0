"""A scripted expert: plans with data.yaml's rules and plays Crafter toward a goal.

At every high-level step it first lets the survival layer keep it alive (`survival.py`), then
replans the shortest skill sequence to the goal from the current abstract state and runs its
first skill; a target it has not seen sends it exploring.
Its parts serve other agents too (DiVE's, the explorers): the `Failures` bookkeeping and
`play_episode`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from regula.agents import GOAL, Budget, Decision, run_episode
from regula.errors import UnknownNameError

from .planner import AbstractState, shortest_plan
from .rules import RULES
from .skills import FIGHTS, PLANT_RIPE_AFTER
from .survival import Survival, SurvivalConfig
from .symbols import usable_stations
from .world import CrafterWorld

ALL = "all"
EXPLORE = "explore"  # next_goal's answer when no remaining achievement can start now
# Goal `all`'s order among the achievements that can start now: a creature in view first (it
# walks off), then the tool tiers, which bring most of the rest on the way (the sapling is
# planted, walled in with the first stones, as soon as a pickaxe digs them, so it grows while
# the tiers go on; the iron sword's iron is mined where the pickaxe's was, before the diamond
# is searched for), then what is left. The planted sapling is eaten when ripe, or gone back to
# and waited for once `PLANT_DUE` steps have passed since it was planted.
ORDER = ("eat_cow", "defeat_zombie", "defeat_skeleton", "collect_wood", "place_table", "make_wood_pickaxe",
         "make_wood_sword", "collect_sapling", "place_plant", "collect_stone", "place_stone", "make_stone_pickaxe",
         "make_stone_sword", "collect_drink", "collect_coal", "place_furnace", "collect_iron", "make_iron_pickaxe",
         "make_iron_sword", "eat_plant", "collect_diamond", "wake_up")
PLANT_DUE = 1000
SKELETON_HEALTH = 6  # health under which a skeleton is left alone (each arrow takes 2)


@dataclass(kw_only=True)
class ExpertConfig(SurvivalConfig):
    """The expert's goal and budgets, always given by its caller (from params where params holds
    them); its survival layer's knobs are `SurvivalConfig`'s."""

    goal: str  # an achievement, or "all" for every achievement
    max_steps: int  # primitive steps per episode
    max_skills: int  # high-level steps per episode
    max_failures: int = 12  # consecutive failed skills before giving up (`Failures`)
    max_idle: int = 50  # consecutive skills that took no primitive step before giving up
    # Goal `all`: with nothing left, live on at a home (homestead.py) until the step budget
    # instead of ending the episode (Crafter's score counts an episode's unlocks, its length
    # counts survival).
    live_on: bool = False
    # With the survival layer's `home`: once one is built, stay there until the step budget
    # (the home as life support; the pursuit of goals stops where it is).
    retire: bool = False

    def __post_init__(self):
        if self.goal != ALL and self.goal not in RULES.achievements:
            raise UnknownNameError("goal", self.goal, list(RULES.achievements) + [ALL])


@dataclass
class EpisodeSummary:
    seed: int
    goal: str
    success: bool
    end: str  # why the episode ended
    steps: int
    skills: int
    reward: float
    achievements: list = field(default_factory=list)
    first_step: dict = field(default_factory=dict)  # achievement -> primitive step first unlocked
    first_skill: dict = field(default_factory=dict)  # achievement -> high-level step first unlocked


class Failures:
    """An episode's failed and idle skills, and the ends they call for. A failed skill sends
    the agent exploring (the map is usually not known enough), unless it went for a creature
    (it walked off: the skill walks back to where one was seen); a goal that failed
    `GIVE_UP_AFTER` times is given up on; too many failures in a row, or skills that could not
    act, end the episode as stuck, and so does nothing being left (`all_done`). The goal a
    step was toward is its decision's `info["goal"]` (none: a step toward no goal)."""

    GIVE_UP_AFTER = 3

    def __init__(self, config: ExpertConfig, all_done: Callable[[], bool]):
        self.config, self.all_done = config, all_done
        self.start()

    def start(self) -> None:
        self.per_goal: dict = {}
        self.in_a_row = self.idle = 0  # failed skills in a row, skills in a row that took no step

    def given_up(self, goal: str) -> bool:
        return self.per_goal.get(goal, 0) >= self.GIVE_UP_AFTER

    def after(self, world: CrafterWorld, decision: Decision, step) -> str | None:
        """Count the step just run; a string ends the episode with that reason."""
        cfg = self.config
        self.idle = 0 if step.steps else self.idle + 1
        if self.idle >= cfg.max_idle:  # nothing it tries can act (walled in without a pickaxe, say)
            return f"stuck: {self.idle} skills in a row could not act ({step.skill}: {step.reason})"
        if step.success or step.cause["kind"] == "interrupted":
            self.in_a_row = 0
            return None
        if decision.skill in ("eat_plant", "shelter") and step.cause["kind"] == "budget":
            return None  # waited next to an unripe plant, or at home: waiting on is no failure
        self.in_a_row += 1
        goal = decision.info.get("goal")
        if goal is not None:
            self.per_goal[goal] = self.per_goal.get(goal, 0) + 1
        if self.all_done() and not world.done and not cfg.live_on and not (cfg.commute and world.controller.home):  # a death after the last unlock is a death
            return GOAL
        if self.in_a_row >= cfg.max_failures and not ((cfg.retire or cfg.commute) and world.controller.home is not None):
            # retired: a failed errand (a cow not found) ends back at home, not the episode
            return f"stuck: {step.skill} failed {self.in_a_row} times in a row ({step.reason})"
        if decision.skill != "explore" and decision.skill not in FIGHTS:
            # A creature that got away is looked for where it was, not at the frontier. The
            # failed step's own checks stop this walk too: unchecked, zombies hit it all the way.
            world.run_skill("explore", interrupt=decision.interrupt)
        return None


class Expert:
    """The scripted expert as an agent (`regula.agents`): the survival layer first, else the
    first skill of the shortest plan to its next goal."""

    name = "expert"  # who chose a step, in the episode log (`survival` for the survival layer)

    def __init__(self, world: CrafterWorld, config: ExpertConfig):
        self.world, self.config = world, config
        self.survival = Survival(world, config)
        self.failures = Failures(config, self.all_done)

    def abstract_state(self) -> AbstractState:
        placed = usable_stations(self.world.memory)
        if self.world.controller.live_plants():
            placed = placed | {"plant"}  # a planted sapling still there: eat_plant needs no other
        return AbstractState.from_inventory(self.world.inventory, placed)

    def next_goal(self) -> str | None:
        if self.config.goal != ALL:
            return None if self.config.goal in self.world.unlocked else self.config.goal
        todo = [a for a in RULES.achievements if a not in self.world.unlocked and not self.failures.given_up(a)]
        if not todo:
            return None
        state = self.abstract_state()
        plans = {a: shortest_plan(a, state) for a in todo}
        ready = [a for a in todo if self.can_start(plans[a][0])]
        if not ready:
            return EXPLORE
        rank = {a: i for i, a in enumerate(ORDER)}
        if "eat_plant" in ready and self.plant_due():
            rank["eat_plant"] = -1
        return min(ready, key=lambda a: (rank[a], len(plans[a]), a))

    def plant_due(self) -> bool:
        """A planted sapling is (nearly) ripe, or has waited `PLANT_DUE` steps for a visit."""
        ctl = self.world.controller
        return any(ctl.plant_growth(c) >= PLANT_RIPE_AFTER - 30 or self.world.steps - ctl.planted_at(c) >= PLANT_DUE
                   for c in ctl.live_plants())

    def all_done(self) -> bool:
        """Goal `all`, and no achievement left to try."""
        return self.config.goal == ALL and self.next_goal() is None

    def can_start(self, skill: str) -> bool:
        """Whether a skill is worth trying now (its creature in view, sleep when tired)."""
        if skill == "eat_plant" and self.world.controller.live_plants():
            return True  # the skill goes back to the planted sapling
        if skill == "defeat_skeleton" and (not any(self.world.inventory[t] for t in RULES.tools if t.endswith("_sword"))
                                           or self.world.inventory["health"] < SKELETON_HEALTH):
            return False  # arrows hurt: meet skeletons armed and healthy
        if skill in FIGHTS:
            return FIGHTS[skill] in self.world.memory.creatures.values()
        if skill == "sleep":
            return self.world.inventory["energy"] < RULES.items["energy"]["max"] - 2
        return True

    def pursue(self, by: str | None = None) -> Decision:
        """The step toward the next goal (chosen `by` this agent's name unless given): the
        plan's first skill, or exploring for the target it has not seen."""
        goal = self.next_goal()
        retired = self.config.retire and self.world.controller.home is not None
        if retired or goal is None and self.config.goal == ALL and (self.config.live_on or self.survival.commuting()):
            # At home (retired, or nothing left) until the step budget: the skill leaves only
            # for food when nothing there ripens in time, and the survival layer fetches it.
            until = lambda w: False  # noqa: E731
            return Decision("shelter", until, self.survival.interrupt("shelter", None), by=by or self.name)
        if goal is None:
            return Decision(None, end=GOAL)
        skill, until = "explore", None
        if goal != EXPLORE:
            skill = shortest_plan(goal, self.abstract_state())[0]
            recipe = RULES.recipes.get(skill)
            if recipe is not None and recipe.kind == "collect" and not self.world.memory.seen(recipe.target):
                target = recipe.target
                skill, until = "explore", (lambda w: w.memory.seen(target))
        return Decision(skill, until, self.survival.interrupt(skill, goal), by=by or self.name, info={"goal": goal})

    # -- the Agent interface (regula.agents) -----------------------------------------------
    def start(self, world: CrafterWorld) -> None:
        self.survival.start()
        self.failures.start()
        world.controller.plants.clear()

    def decide(self, world: CrafterWorld) -> Decision:
        try:
            return self.survival.due() or self.pursue()
        except ValueError:
            return Decision(None, end="no plan")

    def observe(self, world: CrafterWorld, decision: Decision, step) -> str | None:
        return self.failures.after(world, decision, step)


def play_episode(world: CrafterWorld, agent, notes: dict | None = None) -> EpisodeSummary:
    """Play one episode with an agent built on the expert's parts: its `config` sets the goal
    and the budgets, its `all_done()` says whether goal `all` has nothing left. `notes`, if
    given, gets who chose each step (`regula.agents.run_episode`)."""
    cfg = agent.config
    end = run_episode(world, agent, Budget(cfg.max_steps, cfg.max_skills, None if cfg.goal == ALL else cfg.goal),
                      notes)
    if not end.startswith(("died", "episode", "step budget", "stuck")) and agent.all_done():
        end = GOAL
    success = (cfg.goal in world.unlocked) if cfg.goal != ALL else len(world.unlocked) == len(RULES.achievements)
    # When each achievement came, from the logs (every skill counts, the survival layer's too).
    first_step = {a: i for i, p in enumerate(world.primitive_log, 1) for a in p["unlocked"]}
    first_skill = {a: e.t + 1 for e in world.events for a in e.unlocked}
    return EpisodeSummary(
        seed=world.seed, goal=cfg.goal, success=success, end=end, steps=world.steps, skills=len(world.events),
        reward=round(world.reward_total, 3), achievements=sorted(world.unlocked),
        first_step=first_step, first_skill=first_skill)
