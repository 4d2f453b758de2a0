"""Shortest primitive-action plans on the seen map.

Search runs over (position, facing) because Crafter's actions act on the faced cell and a
move into a blocked cell only turns the player. Cells the player may dig (a collectable
material whose `leaves` is walkable and whose tools it holds) are passable at extra cost.
No library fits a grid search with Crafter's turn-or-move semantics, hence this small one.
"""
from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from .memory import DIRECTIONS, Memory
from .rules import RULES

MOVES = tuple((f"move_{name}", d) for name, d in DIRECTIONS.items())


def diggable(inventory: dict | None) -> set[str]:
    """Materials a path may go through by collecting them with the tools held; None: none (a
    walker that must not pick anything up on the way)."""
    out = set()
    if inventory is None:
        return out
    for material, info in RULES.collect.items():
        if info["leaves"] in RULES.walkable and info.get("probability", 1) == 1 and all(
                inventory.get(k, 0) >= v for k, v in info["require"].items()):
            if material not in RULES.walkable:
                out.add(material)
    return out


def plan_path(memory: Memory, start, facing, goal: Callable[[tuple, tuple], bool],
              inventory: dict | None, avoid: set | None = None, max_cost: int = 400):
    """Cheapest primitive actions from (start, facing) to a state where `goal(pos, facing)`.

    Returns a list of (action, expected position, expected facing) — possibly empty — or None
    when no known route exists. The expectations let the caller re-plan as soon as the world
    disagrees (a creature in the way, a cell that was not what the map said).
    """
    walkable = set(RULES.walkable)
    dig = diggable(inventory)
    blocked = set(memory.creatures) | (avoid or set())
    lanes = fire_lanes(memory)
    grid, (w, h) = memory.names_grid, memory.area  # memory.material inlined: the loop is hot
    push, pop = heapq.heappush, heapq.heappop
    start, facing = tuple(int(v) for v in start), tuple(int(v) for v in facing)
    if goal(start, facing):
        return []
    best = {(start, facing): 0}
    parent: dict = {}
    heap = [(0, 0, start, facing)]
    tie = 0
    far = 1 << 30
    while heap:
        cost, _, pos, face = pop(heap)
        node = (pos, face)
        if cost > best.get(node, far) or cost > max_cost:
            continue
        if goal(pos, face):
            actions = []
            while node in parent:
                node, acts = parent[node]
                actions[:0] = acts
            return actions
        for name, d in MOVES:
            tx, ty = target = (pos[0] + d[0], pos[1] + d[1])
            material = grid[tx][ty] if 0 <= tx < w and 0 <= ty < h else None
            moves = False  # into `target` (else the move only turns toward it)
            if material in walkable and target not in blocked:
                moves = True
            elif material in dig and target not in blocked:
                # Dig through: turn (unless already facing it), do, move. Turning only is
                # pushed below like any blocked cell.
                steps = 2 if face == d else 3
                dug, c = (target, d), cost + steps
                if c < best.get(dug, far):
                    best[dug] = c
                    parent[dug] = (node, [(name, pos, d), ("do", pos, d), (name, target, d)][3 - steps:])
                    push(heap, (c, tie, target, d))
                tie += 1
            elif material == "lava" or material is None:
                continue  # never step into lava; nothing is known beyond the map
            nxt = (target, d) if moves else (pos, d)
            if nxt == node:
                continue
            c = cost + 1 + (lanes.get(target, 0) if moves else 0)  # action lists only for a better route
            if c < best.get(nxt, far):
                best[nxt] = c
                parent[nxt] = (node, [(name, nxt[0], d)])
                push(heap, (c, tie, nxt[0], d))
            tie += 1
    return None


ARROW_RANGE = 5  # crafter's skeletons shoot at a player this close (Manhattan), along the longer axis
LANE_COST = 4  # extra cost of stepping into a skeleton's line of fire: each arrow takes 2 health


def fire_lanes(memory: Memory) -> dict:
    """Cells in line with a skeleton in view, within its range, with nothing between to stop an
    arrow (arrows fly over what players walk on, water and lava): where its next arrow lands."""
    flies = set(RULES.walkable) | {"water", "lava"}
    lanes: dict = {}
    for (x, y), kind in memory.creatures.items():
        if kind != "skeleton":
            continue
        for dx, dy in DIRECTIONS.values():
            for k in range(1, ARROW_RANGE + 1):
                cell = (x + k * dx, y + k * dy)
                if memory.material(cell) not in flies:
                    break
                lanes[cell] = LANE_COST
    return lanes


def reachable(passable: np.ndarray, start) -> np.ndarray:
    """Cells of `passable` connected to `start` (start included) by 4-neighbour steps. The
    explorer asks at every target it tries, often on the same map from the same cell: the last
    answer is kept, and the search runs on flat lists (numpy's per-cell indexing is slow)."""
    global _last
    key = (passable.shape, passable.dtype.str, passable.tobytes(), int(start[0]), int(start[1]))
    last = _last  # read once: episodes may run in threads
    if last is None or last[0] != key:
        last = _last = key, _flood(passable, start)
    return last[1].copy()


_last = None  # (key, cells) of the last `reachable` answer


def _flood(passable: np.ndarray, start) -> np.ndarray:
    w, h = passable.shape
    free = passable.ravel().tolist()
    seen = bytearray(w * h)
    first = int(start[0]) * h + int(start[1])
    seen[first] = 1
    todo = [first]
    while todo:
        i = todo.pop()
        y = i % h
        for j in (i + h if i + h < w * h else -1, i - h, i + 1 if y + 1 < h else -1, i - 1 if y else -1):
            if j >= 0 and free[j] and not seen[j]:
                seen[j] = 1
                todo.append(j)
    return np.frombuffer(seen, dtype=bool).reshape(w, h)
