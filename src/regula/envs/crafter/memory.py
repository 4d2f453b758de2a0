"""What the agent has seen so far: a map of materials and the creatures in view.

The controller plans on this map only (not on the hidden world), as an agent with
Crafter's 9x7 local view would.
"""
from __future__ import annotations

import numpy as np

from .rules import RULES

CREATURES = ("cow", "zombie", "skeleton", "plant", "arrow")
DIRECTIONS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
COMPASS = {(-1, 0): "west", (1, 0): "east", (0, -1): "north", (0, 1): "south"}
# Cows wander (a random step half the time) and live on grass, so where one was seen out of
# view is worth walking back to for this many observations: a hungry agent's best lead.
REMEMBER_COWS = 300


def creature_name(obj) -> str:
    return type(obj).__name__.lower()


class Memory:
    """Seen materials (by name id) and the creatures of the last observation."""

    def __init__(self, area=(64, 64)):
        self.names = [None] + list(RULES.materials)
        self.ids = {n: i for i, n in enumerate(self.names)}
        self.map = np.zeros(area, np.int16)  # 0 = never seen
        # The same map as names in nested lists ([x][y]), for `material`: planners ask for one
        # cell at a time, millions of times an episode, and numpy's scalar indexing is slow.
        self.names_grid: list[list[str | None]] = [[None] * area[1] for _ in range(area[0])]
        self._lut = None  # Crafter's material id -> ours, built on the first observation
        self.creatures: dict[tuple[int, int], str] = {}
        self.creature_objs: dict[tuple[int, int], object] = {}
        self.area = area
        self.t = 0  # observations so far
        self.cows: dict[tuple[int, int], int] = {}  # cell -> observation a cow was last seen there

    def view_bounds(self, pos):
        half = np.array(RULES.view) // 2
        lo = np.maximum(np.array(pos) - half, 0)
        hi = np.minimum(np.array(pos) + half + 1, self.area)
        return lo, hi

    def observe(self, world, pos) -> None:
        (x0, y0), (x1, y1) = self.view_bounds(pos)
        # Crafter's material ids are its own; translate through names once per cell block.
        block = world._mat_map[x0:x1, y0:y1]
        if self._lut is None:  # the game's ids are fixed when its world is made
            self._lut = np.zeros(max(world._mat_ids.values()) + 1, np.int16)
            for name, i in world._mat_ids.items():
                self._lut[i] = self.ids.get(name, 0)
        ids = self._lut[block]
        self.map[x0:x1, y0:y1] = ids
        names = self.names
        for x, row in zip(range(x0, x1), ids.tolist()):
            self.names_grid[x][y0:y1] = [names[i] for i in row]
        self.creatures, self.creature_objs = {}, {}
        player = (int(pos[0]), int(pos[1]))
        # The objects in view, from the object map (0: none), in `world.objects` order.
        cells = world._obj_map[x0:x1, y0:y1]
        for i in sorted(i for i in cells.flatten().tolist() if i > 0):
            obj = world._objects[i]
            p = (int(obj.pos[0]), int(obj.pos[1]))
            if p != player:
                self.creatures[p] = creature_name(obj)
                self.creature_objs[p] = obj
        self._remember_cows(x0, y0, x1, y1)

    def _remember_cows(self, x0, y0, x1, y1) -> None:
        """Cells in view hold a cow now or not; out of view, the last sightings stay a while."""
        self.t += 1
        self.cows = {c: t for c, t in self.cows.items()
                     if not (x0 <= c[0] < x1 and y0 <= c[1] < y1) and self.t - t < REMEMBER_COWS}
        self.cows.update((c, self.t) for c, n in self.creatures.items() if n == "cow")

    def nearest_cow(self, pos) -> tuple[int, int] | None:
        """The cell of the cow seen nearest `pos` (in view now, or seen out of view lately)."""
        if not self.cows:
            return None
        return min(self.cows, key=lambda c: (abs(c[0] - pos[0]) + abs(c[1] - pos[1]), c))

    def material(self, pos) -> str | None:
        x, y = pos
        if not (0 <= x < self.area[0] and 0 <= y < self.area[1]):
            return None
        return self.names_grid[x][y]

    def known(self) -> np.ndarray:
        return self.map > 0

    def positions(self, material: str) -> np.ndarray:
        return np.argwhere(self.map == self.ids[material])

    def seen(self, material: str) -> bool:
        return bool((self.map == self.ids[material]).any())
