"""Symbolic state: named boolean atomic propositions over a Crafter state.

In the spirit of LTLCrit's Table 3, adapted to Crafter. The milestone thresholds
(`has_2_wood` ...) and the "low" levels come from params (`env.symbols`), not code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import yaml

from .memory import CREATURES, creature_name
from .rules import BODY_STATS, RULES

# Materials a skill walks to (collect targets, stations): `<m>_on_map` says the agent has seen
# one and remembers where, which is what a skill needs (it need not be in view now).
MAP_MATERIALS = tuple(sorted({r.target for r in RULES.recipes.values() if r.kind == "collect"}
                             | set(RULES.stations)))

DEFAULT_THRESHOLDS = {"wood": [1, 2, 3, 4], "stone": [1, 2, 4], "coal": [1], "iron": [1],
                      "diamond": [1], "sapling": [1]}


@dataclass(frozen=True)
class SymbolConfig:
    thresholds: dict = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    low: int = 3  # health/food/drink/energy at or below this are "low"
    night_below: float = 0.35  # daylight below this is night

    def __post_init__(self):
        for item, levels in self.thresholds.items():
            if item not in RULES.resources:
                from regula.errors import UnknownNameError
                raise UnknownNameError("item", item, RULES.resources)
            if not levels or any(int(v) < 1 for v in levels):
                from regula.errors import ParamsError
                raise ParamsError(f"env.symbols.thresholds.{item}: levels must be integers >= 1")

    def has_name(self, item: str, level: int) -> str:
        return f"has_{item}" if level == 1 else f"has_{level}_{item}"


def proposition_names(config: SymbolConfig) -> list[str]:
    """Every proposition the environment defines, in a stable order."""
    names = []
    for item, levels in config.thresholds.items():
        names += [config.has_name(item, int(v)) for v in sorted(set(levels))]
    names += [f"has_{t}" for t in RULES.tools]
    names += [f"near_{s}" for s in RULES.stations]
    things = list(RULES.materials) + list(CREATURES)
    names += [f"facing_{t}" for t in things]
    names += [f"{t}_in_view" for t in things]
    names += [f"{m}_on_map" for m in MAP_MATERIALS]
    names += ["is_night", "is_sleeping"] + [f"{s}_low" for s in BODY_STATS]
    return names


def propositions(env, memory, config: SymbolConfig) -> dict[str, bool]:
    """Evaluate every proposition on the live env (`DeterministicCrafter`) and memory."""
    player, world = env.player, env.world
    inv = player.inventory
    out = {}
    for item, levels in config.thresholds.items():
        for v in sorted(set(levels)):
            out[config.has_name(item, int(v))] = inv[item] >= int(v)
    for tool in RULES.tools:
        out[f"has_{tool}"] = inv[tool] >= 1
    nearby, _ = world.nearby(player.pos, RULES.reach)
    for s in RULES.stations:
        out[f"near_{s}"] = s in nearby
    target = (int(player.pos[0] + player.facing[0]), int(player.pos[1] + player.facing[1]))
    material, obj = world[target]
    facing = creature_name(obj) if obj is not None else material
    things = list(RULES.materials) + list(CREATURES)
    for t in things:
        out[f"facing_{t}"] = facing == t
    (x0, y0), (x1, y1) = memory.view_bounds(player.pos)
    in_view = {memory.names[i] for i in set(memory.map[x0:x1, y0:y1].flatten().tolist())}
    in_view |= set(memory.creatures.values())
    for t in things:
        out[f"{t}_in_view"] = t in in_view
    usable = usable_stations(memory)
    for m in MAP_MATERIALS:
        out[f"{m}_on_map"] = m in usable if m in RULES.stations else memory.seen(m)
    out["is_night"] = is_night(env, config)
    out["is_sleeping"] = bool(player.sleeping)
    for s in BODY_STATS:
        out[f"{s}_low"] = inv[s] <= config.low
    return out


def is_night(env, config: SymbolConfig) -> bool:
    """The `is_night` proposition alone (the text observation says day or night)."""
    return bool(env.world.daylight < config.night_below)


def usable_stations(memory) -> set[str]:
    """Stations seen on the map; one that recipes need with a partner counts only near it.

    A recipe needing several stations needs them within reach of one cell. When they are apart,
    the ones after the first in data.yaml's `nearby` list (the furnace after the table) do not
    count, so planners and laws treat that station as still to be placed next to the first."""
    out = {s for s in RULES.stations if memory.seen(s)}
    for r in RULES.recipes.values():
        if len(r.nearby) > 1 and all(s in out for s in r.nearby) and not colocated(memory, r.nearby):
            out -= set(r.nearby[1:])
    return out


def colocated(memory, stations) -> bool:
    """Is there a cell with every station within reach (Chebyshev distance <= reach)? Reach
    wraps round the map's edges, as the np.roll masks this once grew did (kept: same answers)."""
    r = RULES.reach
    w, h = memory.map.shape
    common = None
    for s in stations:  # the cells within reach of one of its few cells, as a set
        cells = {((x + dx) % w, (y + dy) % h) for x, y in np.argwhere(memory.map == memory.ids[s]).tolist()
                 for dx in range(-r, r + 1) for dy in range(-r, r + 1)}
        common = cells if common is None else common & cells
    return True if common is None else bool(common)  # no stations: nothing to be near


def true_props(props: dict[str, bool]) -> list[str]:
    return sorted(k for k, v in props.items() if v)


def describe(name: str) -> str:
    """One line of English for a proposition or a skill, from the catalogue (catalogue.yaml);
    a name no rule fits reads as its words."""
    for rule in _catalogue():
        m = rule["match"].fullmatch(name)
        if m:
            fields = {k: v for k, v in m.groupdict().items() if v is not None}
            recipe = RULES.recipes.get(name)
            if recipe is not None:
                fields["target"] = recipe.target
                fields["stations"] = " and ".join(_article(s) for s in recipe.nearby)
            return re.sub(r"\{(a:)?(\w+)\}", lambda f: _fill(fields[f.group(2)], bool(f.group(1))), rule["text"])
    return name.replace("_", " ")


def _fill(value: str, article: bool) -> str:
    return _article(value) if article else value.replace("_", " ")


def _article(thing: str) -> str:
    thing = thing.replace("_", " ")
    return f"{'an' if thing[0] in 'aeiou' else 'a'} {thing}"


@lru_cache(maxsize=1)
def _catalogue() -> list[dict]:
    data = yaml.safe_load((Path(__file__).with_name("catalogue.yaml")).read_text())
    return [{"match": re.compile(r["match"]), "text": r["text"]} for r in data["propositions"] + data["skills"]]
