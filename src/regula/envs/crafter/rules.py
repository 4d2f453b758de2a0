"""Crafter's own rules, read from the game's `data.yaml` (never re-typed here).

Everything the controller, the symbols and the planner know about recipes comes from
`crafter.constants`, which is the parsed `data.yaml` that ships with the game.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import crafter.constants as _c

from regula.errors import UnknownNameError

# Which items are resources one accumulates (as opposed to body stats and tools).
BODY_STATS = ("health", "food", "drink", "energy")


@dataclass(frozen=True)
class Recipe:
    """One high-level skill seen as an abstract operator: needs, consumes, gives."""

    skill: str
    kind: str  # collect | place | make
    target: str  # material to face (collect), thing placed (place), tool made (make)
    require: dict  # items that must be held and are kept (tools)
    uses: dict  # items consumed
    gives: dict  # items received
    nearby: tuple = ()  # stations that must be within reach (make)
    where: tuple = ()  # materials a placed thing can go on (place)
    probability: float = 1.0


class Rules:
    """Typed view of data.yaml."""

    actions: list = list(_c.actions)
    materials: list = list(_c.materials)
    walkable: list = list(_c.walkable)
    items: dict = dict(_c.items)
    achievements: list = list(_c.achievements)
    collect: dict = dict(_c.collect)
    place: dict = dict(_c.place)
    make: dict = dict(_c.make)
    # The local view that Crafter renders: 9 columns, 7 rows (2 rows hold the inventory).
    view: tuple = (9, 7)
    # `Player._make` looks for stations with `world.nearby(pos, 1)`: the 3x3 square.
    reach: int = 1

    @cached_property
    def recipes(self) -> dict[str, Recipe]:
        out: dict[str, Recipe] = {}
        for material, info in self.collect.items():
            for item in info["receive"]:
                skill = f"collect_{item}"
                out[skill] = Recipe(
                    skill, "collect", material, dict(info["require"]), {}, dict(info["receive"]),
                    probability=float(info.get("probability", 1.0)))
        for thing, info in self.place.items():
            out[f"place_{thing}"] = Recipe(
                f"place_{thing}", "place", thing, {}, dict(info["uses"]), {},
                nearby=tuple(info.get("nearby", ())), where=tuple(info["where"]))
        for tool, info in self.make.items():
            out[f"make_{tool}"] = Recipe(
                f"make_{tool}", "make", tool, {}, dict(info["uses"]), {tool: info["gives"]},
                nearby=tuple(info["nearby"]))
        return out

    @cached_property
    def stations(self) -> tuple[str, ...]:
        """Placed materials that recipes need nearby (table, furnace)."""
        names = {n for r in self.recipes.values() for n in r.nearby}
        return tuple(sorted(names))

    @cached_property
    def resources(self) -> tuple[str, ...]:
        """Inventory items that are neither body stats nor tools."""
        tools = set(self.make)
        return tuple(k for k in self.items if k not in BODY_STATS and k not in tools)

    @cached_property
    def tools(self) -> tuple[str, ...]:
        return tuple(self.make)

    def recipe(self, skill: str) -> Recipe:
        try:
            return self.recipes[skill]
        except KeyError:
            raise UnknownNameError("skill", skill, self.recipes) from None

    def material_of(self, item: str) -> str:
        """The material one collects to receive `item` (wood -> tree)."""
        return self.recipe(f"collect_{item}").target

    def check_material(self, name: str) -> str:
        if name not in self.materials:
            raise UnknownNameError("material", name, self.materials)
        return name


RULES = Rules()
