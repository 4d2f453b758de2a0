"""Crafter behind `regula.envs`' interface: what systems may use of the adapter.

Beside the interface's members (`make`, vocabularies, `describe`, `rules`), Crafter publishes
what its systems need and what data.yaml defines: shortest plans, the hard laws derived from
the recipes, the scripted expert and its parts, and the names of its skill groups.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import crafter
import yaml

from . import census
from .env import DeterministicCrafter, ImageFreeCrafter
from .expert import ALL, EpisodeSummary, Expert, ExpertConfig, Failures, play_episode
from .laws import affordance_laws, crafter_atoms, hard_laws, precondition_laws
from .memory import CREATURES
from .navigation import MOVES
from .planner import AbstractState, accomplishes, achievement_names, after, shortest_plan, shortest_plans
from .rules import BODY_STATS, RULES
from .skills import FIGHTS, Failed, skill_names
from .survival import RIPE_WAIT, Survival, SurvivalConfig
from .symbols import MAP_MATERIALS, SymbolConfig, describe, proposition_names, usable_stations
from .verbalizer import facing_thing
from .world import CrafterWorld


class Crafter:
    name = "crafter"
    rules = RULES  # data.yaml: scoring, and the rows the papers build from it
    actions = tuple(RULES.actions)
    body_stats = BODY_STATS
    creatures = CREATURES  # objects the observation names (`facing_cow`), beside the map's materials
    map_materials = MAP_MATERIALS  # what `<m>_on_map` propositions exist for
    fights = FIGHTS  # skill -> the creature it walks to
    moves = dict(MOVES)  # move action -> its (dx, dy)
    all_goals = ALL  # the expert's goal meaning "every achievement"

    # The members that reveal a rule of data.yaml (a recipe, a precondition, a plan, a station a
    # recipe needs, said in words): scoring and the rows a paper builds from data.yaml read them,
    # a learner or a verifier may not (regula/readers.yaml says who may; the guard in
    # tests/test_ground_truth_readers.py wraps each, on the class and as a global of this module).
    # The rest are vocabularies (names of actions, skills, achievements, propositions) and the
    # game and its scripted expert, which read the rules as they play.
    rule_readers = ("rules", "shortest_plan", "shortest_plans", "accomplishes", "after", "hard_laws",
                    "precondition_laws", "affordance_laws", "describe", "usable_stations")

    # The scripted expert (an agent that plans with data.yaml), its types, and the parts other
    # agents compose: the survival layer (any agent may use it) and the failure bookkeeping.
    Expert = Expert
    ExpertConfig = ExpertConfig
    Survival = Survival
    SurvivalConfig = SurvivalConfig
    RIPE_WAIT = RIPE_WAIT  # SurvivalConfig.ripe_wait as measured (`regula bench survival --ripe-wait`)
    Failures = Failures
    Failed = Failed  # what a skill raises to stop with a reason (a wrapper of the world's `act` may too)
    SymbolConfig = SymbolConfig

    def play_episode(self, world: CrafterWorld, agent, notes: dict | None = None) -> EpisodeSummary:
        """One episode of the expert or an agent built on its parts (`expert.play_episode`)."""
        return play_episode(world, agent, notes)

    @staticmethod
    def facing_thing(env) -> str:
        """What the player faces in a simulator: a creature's name, else the material."""
        return facing_thing(env)

    def end_cause(self, episode: dict) -> str:
        """Why an episode log ended: its killing blow's cause, or how it ended alive (`census.py`)."""
        return census.end_cause(episode)

    def census(self, episodes: list[dict]) -> dict[str, dict[str, int]]:
        """{"deaths": {cause: n}, "alive": {end: n}} over episode logs: every stage counts so."""
        return census.census(episodes)

    def make(self, seed: int, **options) -> CrafterWorld:
        """An episode: `render`, `length`, `symbols` (a SymbolConfig), `max_skill_steps`,
        `explore_steps` as in `CrafterWorld`."""
        return CrafterWorld(seed=seed, **options)

    def from_params(self, env: dict, seed: int, render: bool = False, dig: bool | str = True) -> CrafterWorld:
        """An episode configured by params.yaml's `env` section (`dig` as in `CrafterWorld`)."""
        return CrafterWorld(seed=seed, render=render, length=env["length"], symbols=self.symbols(env),
                            max_skill_steps=env["skills"]["max_steps"],
                            explore_steps=env["skills"]["explore_steps"], dig=dig)

    def symbols(self, env: dict | None = None) -> SymbolConfig:
        """The propositions' settings from params.yaml's `env` section (defaults without one)."""
        if env is None:
            return SymbolConfig()
        sym = env["symbols"]
        return SymbolConfig(thresholds=sym["thresholds"], low=sym["low"], night_below=sym["night_below"])

    def simulator(self, seed: int, render: bool = True, length: int = 10000, raw: bool = False) -> crafter.Env:
        """The bare game (gym-style `step(int)`), with the determinism fixes: for benchmarks.
        `raw`: crafter.Env as shipped instead (without its image unless `render`)."""
        if raw:
            return crafter.Env(seed=seed, length=length) if render else ImageFreeCrafter(seed=seed, length=length)
        return DeterministicCrafter(seed=seed, render=render, length=length)

    def skill_names(self) -> list[str]:
        return skill_names()

    def achievement_names(self) -> list[str]:
        return achievement_names()

    def proposition_names(self, symbols: SymbolConfig | None = None) -> list[str]:
        return proposition_names(symbols or SymbolConfig())

    def describe(self, proposition: str) -> str:
        """A proposition's or a skill's line of English; a skill's names its recipe's target and
        stations (`make a wood pickaxe at a table`): a rule, said in words."""
        return describe(proposition)

    def global_alphabet(self) -> dict[str, dict[str, str]]:
        """CEDAR's Σ_global: {actions|objects|events: {symbol: one line}} (alphabet.yaml)."""
        return _data("alphabet.yaml")

    def alphabet_targets(self) -> list[dict]:
        """Annotated tasks with their target sub-alphabets, for RAG's Table 4 (alphabet_targets.yaml)."""
        return _data("alphabet_targets.yaml")["targets"]

    def atoms(self, symbols: SymbolConfig | None = None) -> tuple[list[str], list[str]]:
        """(state propositions, action atoms): what laws over Crafter may use."""
        return crafter_atoms(symbols)

    def usable_stations(self, memory) -> set[str]:
        """The stations seen that recipes can use (one needed with a partner counts only near it)."""
        return usable_stations(memory)

    # -- from data.yaml (ground truth) ---------------------------------------------------------
    def shortest_plan(self, goal: str, start: AbstractState | None = None) -> list[str]:
        return shortest_plan(goal, start)

    def shortest_plans(self) -> dict[str, list[str]]:
        return shortest_plans()

    def accomplishes(self, goal: str, word) -> bool:
        return accomplishes(goal, word)

    def after(self, state: AbstractState | None, skill: str) -> AbstractState | None:
        """The abstract state once `skill` is done in `state` (None: a fresh start); None when it
        cannot be done there. What `accomplishes` walks, for building a skill's DFA from it."""
        return after(state or AbstractState.from_inventory({}), skill)

    def hard_laws(self, symbols: SymbolConfig | None = None) -> list:
        return hard_laws(symbols)

    def precondition_laws(self, symbols: SymbolConfig | None = None) -> tuple[list, list[str]]:
        return precondition_laws(symbols)

    def affordance_laws(self) -> list:
        return affordance_laws()


@lru_cache(maxsize=None)
def _data(name: str):
    return yaml.safe_load(Path(__file__).with_name(name).read_text())


SPEC = Crafter()
