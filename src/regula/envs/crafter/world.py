"""The Crafter adapter: one object that steps the game, keeps what was seen, exposes the
symbolic state and the text observation, runs skills, and logs events.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from regula.errors import UnknownNameError

from . import hurt
from .env import ACTION_INDEX, DeterministicCrafter
from .memory import Memory
from .rules import RULES
from .skills import Controller, Outcome, check_skill
from .symbols import SymbolConfig, is_night, proposition_names, propositions, true_props
from .verbalizer import ascii_view, facing_thing, verbalize


@dataclass
class SkillStep:
    """One high-level step: what was asked, what happened, and the state around it."""

    t: int
    obs: str  # the verbalized observation the skill was chosen on
    skill: str
    success: bool
    reason: str  # why it failed, for people ("" on success)
    cause: dict | None  # why it failed, for programs: {"kind": ..., ...} (regula.envs.base.CAUSE_KINDS)
    actions: list
    steps: int
    props_before: list
    props_after: list
    inventory_delta: dict
    inventory: dict  # after the skill
    unlocked: list
    reward: float
    primitives: list = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(self.__dict__)


class CrafterWorld:
    """A seeded Crafter episode driven by primitive actions or high-level skills."""

    def __init__(self, seed: int = 0, render: bool = False, length: int = 10000,
                 symbols: SymbolConfig | None = None, max_skill_steps: int = 300,
                 explore_steps: int = 40, dig: bool | str = True):
        self.seed = seed
        self.symbols = symbols or SymbolConfig()
        self.env = DeterministicCrafter(seed=seed, render=render, length=length)
        self.controller = Controller(self, max_skill_steps, explore_steps, dig)
        self.reset()

    # -- primitive interface --------------------------------------------------------------
    def reset(self):
        self.image = self.env.reset()
        self.memory = Memory(tuple(self.env.world.area))
        self.memory.observe(self.env.world, self.env.player.pos)
        self.done, self.reward_total, self.steps = False, 0.0, 0
        self.primitive_log: list[dict] = []
        self.events: list[SkillStep] = []
        self.unlocked: list[str] = []
        return self.image

    def act(self, action: str) -> float:
        if action not in ACTION_INDEX:
            raise UnknownNameError("action", action, RULES.actions)
        player = self.env.player
        before = dict(player.inventory)
        facing = facing_thing(self.env)
        near = sorted(self.env.world.nearby(player.pos, RULES.reach)[0])
        around = hurt.before(self.env, action)
        self.image, reward, self.done, info = self.env.step(ACTION_INDEX[action])
        self.steps += 1
        self.reward_total += reward
        self.memory.observe(self.env.world, player.pos)
        unlocked = sorted(a for a, n in player.achievements.items() if n > 0 and a not in self.unlocked)
        self.unlocked += unlocked
        record = {"action": action, "facing": facing, "near": near,
                  "inventory_delta": _delta(before, player.inventory), "unlocked": unlocked,
                  "pos": [int(v) for v in player.pos], "health": int(player.health)}
        took = hurt.hurt(self.env, around)
        if took is not None:  # only where health dropped, so the logs stay small
            record["hurt"] = took
        self.primitive_log.append(record)
        return reward

    @property
    def dead(self) -> bool:
        return self.env.player.health <= 0

    @property
    def inventory(self) -> dict:
        return dict(self.env.player.inventory)

    @property
    def achievements(self) -> dict:
        return dict(self.env.player.achievements)

    # -- symbolic and text views --------------------------------------------------------------
    def props(self) -> dict[str, bool]:
        return propositions(self.env, self.memory, self.symbols)

    def proposition_names(self) -> list[str]:
        return proposition_names(self.symbols)

    def text(self) -> str:
        return verbalize(self.env, self.memory, is_night(self.env, self.symbols))

    def ascii_view(self) -> str:
        """The local view as one character per cell (what a human player reads)."""
        return ascii_view(self.env, self.memory)

    def hidden_count(self, material: str) -> int:
        """Cells of `material` on the whole map, seen or not: for reports, never for agents."""
        return int(self.env.world.count(material))

    # -- stations -----------------------------------------------------------------------------
    def station_partners(self, station: str) -> tuple[str, ...]:
        """Other stations that some recipe needs together with `station`, already seen."""
        partners = {s for r in RULES.recipes.values() if station in r.nearby for s in r.nearby}
        partners.discard(station)
        return tuple(sorted(s for s in partners if self.memory.seen(s)))

    def stations_within_reach(self, pos, stations) -> bool:
        r = RULES.reach
        x, y = pos
        block = self.memory.map[max(x - r, 0):x + r + 1, max(y - r, 0):y + r + 1]
        return all((block == self.memory.ids[s]).any() for s in stations)

    # -- skills ---------------------------------------------------------------------------------
    def run_skill(self, skill: str, until=None, interrupt=None) -> SkillStep:
        """One high-level step. `until(world)` ends it early as a success (an explore that found
        its target); `interrupt(world)`, checked after every primitive action, stops it with
        the reason it returns (a reflex: a zombie next to the agent)."""
        check_skill(skill)
        self.controller.interrupt = interrupt
        try:
            return self._record(skill, lambda: self.controller.run(skill, until))
        finally:
            self.controller.interrupt = None

    def run_skill_primitive(self, action: str) -> SkillStep:
        """One primitive action logged as a high-level step (a human's keystroke, say)."""
        if action not in ACTION_INDEX:
            raise UnknownNameError("action", action, RULES.actions)

        def one():
            self.act(action)
            return Outcome(True, "", [action])
        return self._record(action, one)

    def _record(self, skill: str, run) -> SkillStep:
        obs = self.text()
        before_props = true_props(self.props())
        before_inv = self.inventory
        n_unlocked, r0, first = len(self.unlocked), self.reward_total, len(self.primitive_log)
        outcome = run()
        step = SkillStep(
            t=len(self.events), obs=obs, skill=skill, success=outcome.success, reason=outcome.reason,
            cause=outcome.cause, actions=list(outcome.actions), steps=len(outcome.actions),
            props_before=before_props, props_after=true_props(self.props()),
            inventory_delta=_delta(before_inv, self.inventory), inventory=self.inventory,
            unlocked=self.unlocked[n_unlocked:], reward=round(self.reward_total - r0, 3),
            primitives=self.primitive_log[first:])
        self.events.append(step)
        return step


def _delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before.get(k, 0) for k in sorted(after) if after[k] != before.get(k, 0)}
