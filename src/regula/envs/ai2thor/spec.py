"""The AI2-THOR family: episodes on a real controller or a recorded one, the letters and
propositions a frame affords."""
from __future__ import annotations

from . import symbols
from .env import ThorEpisode
from .frames import RecordedController, load_metadata, make_controller

KITCHEN = "kitchen"  # the recorded frame the family describes itself by


class Thor:
    name = "ai2thor"
    rules = None  # THOR publishes no rules: its verdicts come back with every action
    actions = tuple(sorted({a for a, _ in symbols.VERBS.values()}))

    def make(self, seed: int, scene: str | None = None, controller=None, recorded: str | None = None,
             recording=(), max_steps: int | None = None, **options) -> ThorEpisode:
        """An episode on `controller`; else on the recorded frame `recorded` (with its
        `recording`); else on a real controller for `scene` (needs the Unity build)."""
        if controller is None:
            if recorded is not None:
                controller = RecordedController(load_metadata(recorded), recording)
            else:
                controller = make_controller(scene or "FloorPlan1", **options)
        return ThorEpisode(controller, seed=seed, max_steps=max_steps)

    def skill_names(self) -> list[str]:
        """The letters the recorded kitchen frame affords (a real scene has its own: `letters`)."""
        return symbols.letters(load_metadata(KITCHEN)["objects"])

    def proposition_names(self, symbols_: str | None = None) -> list[str]:
        """The propositions of a recorded frame (`symbols_`: its name; default the kitchen)."""
        return symbols.proposition_names(load_metadata(symbols_ or KITCHEN)["objects"])

    def describe(self, proposition: str) -> str:
        for prefix, _ in symbols.STATES.items():
            if proposition.startswith(prefix + "_"):
                return f"the {proposition[len(prefix) + 1:]} is {prefix}"
        if proposition.startswith(("visible_", "holding_")):
            what, _, t = proposition.partition("_")
            return f"the agent sees the {t}" if what == "visible" else f"the agent holds the {t}"
        t, _, r = proposition.partition("_in_")
        return f"the {t} is in or on the {r}"


SPEC = Thor()
