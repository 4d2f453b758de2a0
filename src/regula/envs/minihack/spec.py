"""The MiniHack family: the paper's three tasks (`tasks.yaml`) as episodes behind the interface.

Nothing here imports `minihack` or `nle` until an episode (or the action list) is asked for, so
`regula.envs.get("minihack")` can describe the family on a machine without NetHack."""
from __future__ import annotations

from functools import cached_property
from pathlib import Path

import yaml

from regula.errors import DataError, UnknownNameError

from .symbols import ACHIEVEMENTS, AHEAD, DIRECTIONS, PROPOSITIONS, skill_names

TASKS: dict = yaml.safe_load((Path(__file__).parent / "tasks.yaml").read_text())
for _name, _task in TASKS.items():  # the data may name only achievements the adapter checks
    if not set(_task["achievements"]) <= set(ACHIEVEMENTS):
        raise DataError(f"minihack/tasks.yaml: {_name}: unknown achievements "
                        f"{sorted(set(_task['achievements']) - set(ACHIEVEMENTS))}")
DEFAULT_TASK = "lava_cross"


def task(name: str) -> dict:
    if name not in TASKS:
        raise UnknownNameError("MiniHack task", name, TASKS)
    return TASKS[name]


class MiniHackFamily:
    name = "minihack"
    rules = None  # NetHack has no rules file: its ground truth is dynamics.yaml (`ground_truth`)
    tasks = tuple(TASKS)

    @cached_property
    def actions(self) -> tuple:
        from .env import ACTIONS
        return ACTIONS

    def make(self, seed: int, task: str = DEFAULT_TASK, **options):
        """An episode of `task` (lava_cross, wand_of_death, quest) from `seed`."""
        spec = dict(globals()["task"](task))
        for key in ("max_steps", "autopickup"):
            if key in options:
                spec[key] = options.pop(key)
        if options:
            raise UnknownNameError("MiniHack option", sorted(options)[0], ("max_steps", "autopickup"))
        from .env import MiniHackEpisode
        return MiniHackEpisode(task, spec, seed=seed)

    def level(self, name: str) -> dict:
        """The task's data (tasks.yaml): its goal, level (des-file or env id), step limit and
        achievements; a copy."""
        return dict(task(name))

    def skill_names(self) -> list[str]:
        return skill_names()

    def proposition_names(self, symbols=None) -> list[str]:
        return list(PROPOSITIONS)

    def describe(self, proposition: str) -> str:
        if proposition not in PROPOSITIONS:
            raise UnknownNameError("MiniHack proposition", proposition, PROPOSITIONS)
        return PROPOSITIONS[proposition]

    def bench(self, task: str = DEFAULT_TASK, steps: int = 2000, seed: int = 0) -> dict:
        """Steps/s through the adapter against the raw env (`regula bench minihack`)."""
        level = globals()["task"](task)
        from .bench import steps_per_second
        return steps_per_second(task, level, steps, seed)

    def ground_truth(self, task: str | None = None) -> tuple:
        """The dynamics DiVE should discover (dynamics.yaml, each fact with the NetHack source that
        makes it true), of one task or all; for scoring only."""
        from .dynamics import load
        if task is not None:
            globals()["task"](task)  # an unknown task is an error, not an empty truth
        facts = load(TASKS)
        return facts if task is None else tuple(f for f in facts if task in f.tasks)

    def fact_element(self, skill: str) -> str:
        """The element a dynamics fact names `skill` by: `zap wand` and `move` stand for every
        direction (dynamics.yaml's words)."""
        from .dynamics import skill_element
        return skill_element(skill)

    def relative_props(self, skill: str, props) -> frozenset:
        """The propositions of `symbols.AHEAD` that hold for a directional skill (`zap wand e`,
        `move ne`) in `props`: `lava_ahead` when `lava_e` holds for `zap wand e`; none for the rest."""
        *_, last = skill.split(" ")
        if last not in DIRECTIONS:
            return frozenset()
        return frozenset(name for name in AHEAD if f"{name.removesuffix('_ahead')}_{last}" in props)

    def fact_attributes(self) -> tuple:
        """dynamics.yaml's attributes (requires, prevented_by, gives, removes, kills, ...)."""
        from .dynamics import ATTRIBUTES
        return tuple(ATTRIBUTES)

    def hard_laws(self, symbols=None) -> list:
        """The hand-written safety laws (laws.yaml) the LTLCrit shield applies; `symbols` is
        Crafter's threshold choice, which MiniHack's propositions do not have."""
        from .laws import hard_laws
        return hard_laws()

    def death_cause(self, episode) -> str:
        """What killed the agent: "lava", "minotaur" or "other"; "" when it is alive."""
        if not episode.dead:
            return ""
        text = episode.death.lower()
        return "lava" if "lava" in text else "minotaur" if "minotaur" in text else "other"

    def expert(self, episode, **kw):
        from .expert import solve
        return solve(episode, **kw)


SPEC = MiniHackFamily()
