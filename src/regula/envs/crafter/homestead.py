"""A home for the long game: a two-cell pocket with water on its rim and saplings planted round it.

Over 10,000 steps food is what runs out: cows thin out where the player hunts and wander off,
while a ripe plant gives 4 food and ripens again 300 steps later (crafter grows a plant only
while the player is within 18 cells). Three plants give 12 food per 300 steps, what an awake
player eats (half that asleep); water on the rim gives drink; the pocket's walls keep zombies
(which hit only from an orthogonal neighbour) and the cows and zombies that trample plants out.
So a player at home can drink, eat and sleep without ever stepping out.

        P W          a b  the pocket (grass or sand), where the player stays
      D a b P        D    the door: in line with the pocket, so it can be closed from inside
        P S          P    planted saplings, W water, S stone: every side of a plant but the
                          pocket's is walled (stone, water, tree, another plant)

`find_home` ranks such sites on the seen map by the stones they need and the walk; the
controller (`skills.Controller`) builds one (plants, then walls, then goes in and closes the
door), goes home for the night, and lives there (`stay`).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .memory import Memory
from .navigation import reachable
from .shelter import OPEN, pocket

PLANTS = 3  # plant sites a home needs (see above); a fourth one is planted where the rim has one
MAX_PLANTS = 4
MAX_WALLS = 7  # stones placed besides the door: the inventory holds 9
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))
FLOOR = ("grass", "sand")  # pocket cells: never path, the floor of skeletons' tunnels
PATH_NEAR = 4  # cells round the pocket in which tunnel floor (skeletons, arrows) is counted


def _near(c, d=1):
    return [(c[0] + dx * d, c[1] + dy * d) for dx, dy in NEIGHBOURS]


@dataclass(frozen=True)
class Home:
    cells: tuple  # (a, b): a is next to the door
    door: tuple
    water: tuple
    plants: tuple  # cells planted (or to plant) with saplings
    walls: tuple  # open cells to hold stone, the door aside

    def rim(self) -> set:
        return {n for c in self.cells for n in _near(c)} - set(self.cells)

    def guarded(self) -> set:
        """Cells whose material keeps the home shut: the rim and the plants' outer sides."""
        return self.rim() | {n for p in self.plants for n in _near(p)} - set(self.cells)

    def shut(self, memory: Memory, pos) -> bool:
        """The player is in the pocket and it is closed: its plants count as walls (a creature
        cannot step on a plant's cell, and the plant's other sides are walled)."""
        def material(c):
            return "plant" if c in self.plants and memory.creatures.get(c) == "plant" else memory.material(c)
        return tuple(pos) in self.cells and pocket(material, pos) is not None

    def to_json(self) -> dict:
        return {k: [list(c) for c in v] if k != "door" else list(v) for k, v in self.__dict__.items()}


def _site(memory: Memory, a, d, creatures) -> tuple[int, Home] | None:
    """The best home with pocket (a, a + d) and its door at a - d, with its stone count."""
    material = memory.material
    b, door = (a[0] + d[0], a[1] + d[1]), (a[0] - d[0], a[1] - d[1])
    if material(b) not in FLOOR or material(door) not in OPEN or {a, b, door} & set(creatures):
        return None
    rim = sorted({n for c in (a, b) for n in _near(c)} - {a, b})
    kinds = {c: material(c) for c in rim}
    if any(k is None or k == "lava" for k in kinds.values()):
        return None
    water = tuple(c for c in rim if kinds[c] == "water")
    # a plant there already (an earlier try's) is a site half done
    sites = [c for c in rim if c != door and kinds[c] == "grass" and creatures.get(c, "plant") == "plant"]
    if not water or len(sites) < PLANTS:
        return None
    best = None
    for n in range(min(MAX_PLANTS, len(sites)), PLANTS - 1, -1):
        for plants in combinations(sites, n):
            walls, ok = set(), True
            for c in rim:
                if c != door and c not in plants and kinds[c] in OPEN:
                    walls.add(c)
            for p in plants:
                for c in _near(p):
                    if c in (a, b) or c in plants:
                        continue
                    k = material(c)
                    if k is None or k == "lava":
                        ok = False
                        break
                    if k in OPEN:
                        walls.add(c)
                if not ok:
                    break
            if ok and len(walls) <= MAX_WALLS and (best is None or len(walls) - n < best[0]):
                best = (len(walls) - n, Home((a, b), door, water, tuple(plants), tuple(sorted(walls))))
        if best is not None:
            break  # the most plants the site takes
    return best


def find_home(memory: Memory, pos, radius: int = 20) -> Home | None:
    """The site near `pos` on the seen map that costs least (stones to place, the walk there,
    tunnel floor nearby) and can be built: every cell to wall or plant has a side the player
    can walk to from here (the pocket's sides can be faced from inside only in line with it),
    and so has the door. None if there is none within `radius` (Manhattan)."""
    creatures = memory.creatures
    found = []
    px, py = int(pos[0]), int(pos[1])
    for dx in range(-radius, radius + 1):
        for dy in range(-(radius - abs(dx)), radius - abs(dx) + 1):
            a = (px + dx, py + dy)
            if memory.material(a) not in FLOOR:
                continue
            for d in NEIGHBOURS:
                site = _site(memory, a, d, creatures)
                if site is None:
                    continue
                paths = sum(memory.material((a[0] + x, a[1] + y)) == "path"
                            for x in range(-PATH_NEAR, PATH_NEAR + 1) for y in range(-PATH_NEAR, PATH_NEAR + 1))
                found.append((3 * site[0] + abs(dx) + abs(dy) + 5 * paths, site[1].cells, site[1].door, site[1]))
    if not found:
        return None
    walk = np.isin(memory.map, [memory.ids[m] for m in OPEN])
    reach = reachable(walk, (px, py))
    for *_, home in sorted(found, key=lambda f: f[:3]):
        if _buildable(home, reach):
            return home
    return None


def _buildable(home: Home, reach) -> bool:
    """Whether each cell to fill can be faced, in the build's order (plants, walls, then the
    door from inside): a player faces an open cell only by walking toward it from the cell
    behind, so a cell to fill needs a side and the cell beyond it both walkable and reached
    from here, neither of them planted (the walls are open while planting; among the walls
    the order is left to the paths). The pocket's far end may be closed from inside instead
    (`shelter._plan_pocket` does so on entering)."""
    w, h = reach.shape
    plants = set(home.plants)

    def reached(c):
        return 0 <= c[0] < w and 0 <= c[1] < h and bool(reach[c]) and c not in plants

    def approach(c):
        return any(reached(n) and reached((2 * n[0] - c[0], 2 * n[1] - c[1])) for n in _near(c))

    if not any(reached(c) for c in _near(home.door) if c not in home.cells and c not in home.walls):
        return False
    return all(approach(c) for c in home.plants) and all(_in_line(home, c) or approach(c) for c in home.walls)


def _in_line(home: Home, c) -> bool:
    """A rim cell the player faces from inside by walking along the pocket (its far end)."""
    (a, b) = home.cells
    return c == (2 * b[0] - a[0], 2 * b[1] - a[1])
