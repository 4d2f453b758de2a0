"""A scripted expert: plans with data.yaml's rules and plays Crafter toward a goal.

At every high-level step it first keeps itself alive (fights an adjacent zombie, drinks,
eats, sleeps when low), then replans the shortest skill sequence to the goal from the
current abstract state and runs its first skill; a target it has not seen sends it exploring.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from regula.errors import UnknownNameError

from .planner import AbstractState, shortest_plan
from .rules import RULES
from .skills import FIGHTS, INTERRUPTED
from .symbols import usable_stations
from .world import CrafterWorld

ALL = "all"
EXPLORE = "explore"  # next_goal's answer when no remaining achievement can start now


@dataclass
class ExpertConfig:
    goal: str = "collect_diamond"  # an achievement, or "all" for every achievement
    max_steps: int = 3000  # primitive steps per episode
    max_skills: int = 400  # high-level steps per episode
    max_failures: int = 12  # consecutive failed skills before giving up
    low: int = 3  # survival threshold on drink/food/energy
    fight_within: int = 2  # attack zombies this close (Manhattan distance)
    swords: tuple = ("wood_sword", "stone_sword")  # made on the way when a table is at hand

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


class Expert:
    def __init__(self, world: CrafterWorld, config: ExpertConfig):
        self.world, self.config = world, config

    # -- abstract state ----------------------------------------------------------------
    def placed_stations(self) -> set[str]:
        return usable_stations(self.world.memory)

    def abstract_state(self) -> AbstractState:
        return AbstractState.from_inventory(self.world.inventory, self.placed_stations())

    # -- policy ---------------------------------------------------------------------------
    def next_goal(self) -> str | None:
        if self.config.goal != ALL:
            return None if self.config.goal in self.world.unlocked else self.config.goal
        todo = [a for a in RULES.achievements if a not in self.world.unlocked
                and self.goal_failures.get(a, 0) < 3]
        if not todo:
            return None
        state = self.abstract_state()
        plans = {a: shortest_plan(a, state) for a in todo}
        ready = [a for a in todo if self.can_start(plans[a][0])]
        if not ready:
            return EXPLORE
        return min(ready, key=lambda a: (len(plans[a]), a))

    def can_start(self, skill: str) -> bool:
        """Whether a skill is worth trying now (its creature in view, sleep when tired)."""
        if skill in FIGHTS:
            return FIGHTS[skill] in self.world.memory.creatures.values()
        if skill == "sleep":
            return self.world.inventory["energy"] < RULES.items["energy"]["max"] - 2
        return True

    def zombie_close(self, world) -> str | None:
        pos = tuple(int(v) for v in world.env.player.pos)
        for c, n in world.memory.creatures.items():
            if n == "zombie" and abs(c[0] - pos[0]) + abs(c[1] - pos[1]) <= self.config.fight_within:
                return "zombie close"
        return None

    def danger(self, world) -> str | None:
        """Reflex checked after every primitive action of a non-survival skill."""
        inv, low = world.inventory, self.config.low
        if self.zombie_close(world):
            return "zombie close"
        if inv["drink"] <= low and world.memory.seen("water"):
            return "thirsty"
        if inv["food"] <= low and "cow" in world.memory.creatures.values():
            return "hungry"
        return None

    def survival_skill(self) -> tuple[str, object] | None:
        inv, mem, low = self.world.inventory, self.world.memory, self.config.low
        pos = tuple(int(v) for v in self.world.env.player.pos)
        # Zombies chase and hit every few steps: meet one that is close rather than flee.
        if self.zombie_close(self.world):
            return "defeat_zombie", None
        # Refill with hysteresis: start at `low`, keep going until nearly full.
        full = RULES.items["drink"]["max"] - 1
        if (inv["drink"] <= low or (self.refilling == "drink" and inv["drink"] < full)) \
                and mem.seen("water"):
            self.refilling = "drink"
            return "collect_drink", None
        self.refilling = None
        if inv["food"] <= low:
            if "cow" in mem.creatures.values():
                return "eat_cow", None
            return "explore", (lambda w: "cow" in w.memory.creatures.values())
        if inv["energy"] <= low - 1:
            return "sleep", None
        return None

    def survive(self) -> tuple[str, object] | None:
        """The survival skill due now, if any (it pursues no goal)."""
        survival = self.survival_skill()
        if survival:
            self.current_goal = None
        return survival

    def choose(self) -> tuple[str, object]:
        survival = self.survive()
        if survival:
            return survival
        goal = self.next_goal()
        self.current_goal = goal
        if goal is None:
            return None, None
        if goal == EXPLORE:
            return "explore", None
        arm = self.armament()
        if arm:
            return arm, None
        skill = shortest_plan(goal, self.abstract_state())[0]
        recipe = RULES.recipes.get(skill)
        if recipe is not None and recipe.kind == "collect" and not self.world.memory.seen(recipe.target):
            target = recipe.target
            return "explore", (lambda w: w.memory.seen(target))
        return skill, None

    def armament(self) -> str | None:
        """Make the next better sword when a table is at hand: zombies fall in fewer hits."""
        props = self.world.props()
        for sword in self.config.swords:
            recipe = RULES.recipes[f"make_{sword}"]
            if props[f"has_{sword}"]:
                continue
            if all(props[f"near_{s}"] for s in recipe.nearby) and all(
                    self.world.inventory[k] >= v for k, v in recipe.uses.items()):
                return recipe.skill
            return None
        return None

    def start(self) -> None:
        """Fresh per-episode state; `play` calls it, and so does anyone using only the reflexes."""
        self.goal_failures: dict = {}
        self.refilling = None
        self.current_goal = None

    def play(self) -> EpisodeSummary:
        w, cfg = self.world, self.config
        self.start()
        failures, end = 0, ""
        while True:
            if w.done:
                end = "died" if w.dead else "episode length reached"
                break
            if w.steps >= cfg.max_steps or len(w.events) >= cfg.max_skills:
                end = "step budget"
                break
            if cfg.goal != ALL and cfg.goal in w.unlocked:
                end = "goal reached"
                break
            try:
                skill, until = self.choose()
            except ValueError:
                end = "no plan"
                break
            if skill is None:
                end = "goal reached"
                break
            w.controller.interrupt = (self.danger if self.current_goal is not None
                                      else None if skill == "defeat_zombie" else self.zombie_close)
            step = w.run_skill(skill, until)
            w.controller.interrupt = None
            if step.success or step.reason.startswith(INTERRUPTED):
                failures = 0
                continue
            failures += 1
            if self.current_goal is not None:
                self.goal_failures[self.current_goal] = self.goal_failures.get(self.current_goal, 0) + 1
            if cfg.goal == ALL and self.next_goal() is None:
                end = "goal reached"
                break
            if failures >= cfg.max_failures:
                end = f"stuck: {step.skill} failed {failures} times in a row ({step.reason})"
                break
            if skill != "explore":
                w.run_skill("explore")  # a failed skill usually means the map is not known enough
        if cfg.goal == ALL and not end.startswith(("died", "episode", "step budget", "stuck")):
            end = "goal reached" if self.next_goal() is None else end
        success = (cfg.goal in w.unlocked) if cfg.goal != ALL else len(w.unlocked) == len(RULES.achievements)
        # When each achievement came, from the logs (every skill counts, the reflexes too).
        first_step = {a: i for i, p in enumerate(w.primitive_log, 1) for a in p["unlocked"]}
        first_skill = {a: e.t + 1 for e in w.events for a in e.unlocked}
        return EpisodeSummary(
            seed=w.seed, goal=cfg.goal, success=success, end=end, steps=w.steps, skills=len(w.events),
            reward=round(w.reward_total, 3), achievements=sorted(w.unlocked),
            first_step=first_step, first_skill=first_skill)
