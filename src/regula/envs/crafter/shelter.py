"""Closing the player in for the night: a pocket of at most three cells with walls all round.

Zombies hit only from an orthogonally adjacent cell, walk only on grass, sand and path, and
spawn at least 6 cells away; a pocket whose rim is none of those keeps them out. (Arrows
also fly over water and lava, which count as walls here: skeletons keep to the tunnels.)
Placing a stone needs the player to face a free cell, and turning toward a free cell walks
into it, so a single cell can never be closed from inside: the last open side is always the
one the player came from. A pocket of two cells can (walk to its end, step back, face the
entrance, place). `plan_enclosure` ranks two-cell pockets near the player by the stones and
digs they need, then searches each of the best exactly, over (position, facing, which of its
walls are placed, which of its cells are dug). No library plans over Crafter's turn-or-move
semantics with a changing map, hence this small search.
"""
from __future__ import annotations

from .memory import DIRECTIONS, Memory

OPEN = frozenset({"grass", "sand", "path"})  # where zombies, and the player, walk
MAX_POCKET = 3  # cells; too few for a creature to spawn in (zombies 6, skeletons 7 cells away)
STONE_MAX = 9
LEAVE_AT_HEALTH = 4  # out of 9: with food or drink gone, leave the shelter to fetch it
DARK_BELOW = 0.35  # daylight under which zombies outnumber one per chunk: time to be walled in
_MOVES = tuple((f"move_{name}", d) for name, d in DIRECTIONS.items())


def pocket(material, pos, limit: int = MAX_POCKET) -> set | None:
    """The open cells reachable from `pos` (pos included) if they are at most `limit` and all
    known, else None. `material(cell)` gives a cell's material or None for unknown."""
    seen, todo = {tuple(pos)}, [tuple(pos)]
    while todo:
        x, y = todo.pop()
        for _, (dx, dy) in _MOVES:
            cell = (x + dx, y + dy)
            if cell in seen:
                continue
            m = material(cell)
            if m is None:
                return None
            if m in OPEN:
                seen.add(cell)
                if len(seen) > limit:
                    return None
                todo.append(cell)
    return seen


def enclosed(memory: Memory, pos) -> bool:
    return pocket(memory.material, pos) is not None


def plan_enclosure(memory: Memory, pos, facing, stones: int, can_dig: bool,
                   radius: int = 5, candidates: int = 8):
    """Primitive actions that end with the player walled in, or None.

    Works on the seen map within `radius` of `pos`; creatures in view block their cells (they
    move, so the caller re-plans when the world disagrees). `can_dig`: the player may collect
    stone (it holds a pickaxe), which opens a pocket cell and gives a stone to place.
    Returns [(action, expected position, expected facing)], as `plan_path` does.
    """
    pos, facing = (int(pos[0]), int(pos[1])), (int(facing[0]), int(facing[1]))
    ranked = sorted(_pockets(memory, pos, stones, can_dig, radius))
    best = None
    for estimate, cells, walls, digs in ranked[:candidates]:
        if best is not None and estimate >= len(best):
            break
        plan = _plan_pocket(memory, pos, facing, stones, cells, walls, digs)
        if plan is not None and (best is None or len(plan) < len(best)):
            best = plan
    return best


def _pockets(memory, pos, stones, can_dig, radius):
    """(estimated cost, pocket cells, open walls to place, stone cells to dig) near `pos`."""
    creatures = set(memory.creatures)
    for dx in range(-radius, radius + 1):
        for dy in range(-radius, radius + 1):
            a = (pos[0] + dx, pos[1] + dy)
            for _, d in _MOVES[1::2]:  # right and down: each pocket once
                b = (a[0] + d[0], a[1] + d[1])
                cells = (a, b)
                kinds = [memory.material(c) for c in cells]
                if any(c in creatures for c in cells) or not all(
                        k in OPEN or (k == "stone" and can_dig) for k in kinds):
                    continue
                rim = {(c[0] + e[0], c[1] + e[1]) for c in cells for _, e in _MOVES} - set(cells)
                if any(memory.material(c) is None for c in rim):
                    continue
                walls = tuple(sorted(c for c in rim if memory.material(c) in OPEN))
                digs = tuple(c for c, k in zip(cells, kinds) if k == "stone")
                if len(walls) > stones + len(digs) or any(c in creatures for c in walls):
                    continue
                walk = abs(dx) + abs(dy)
                yield walk + 2 * len(walls) + 2 * len(digs), cells, walls, digs


def _plan_pocket(memory, pos, facing, stones, cells, walls, digs, margin: int = 2):
    """Shortest actions that place every wall in `walls`, dig every cell in `digs` and end in
    the pocket `cells` (breadth-first over position, facing, walls placed, cells dug)."""
    xs = [pos[0]] + [c[0] for c in walls + cells]
    ys = [pos[1]] + [c[1] for c in walls + cells]
    box = (min(xs) - margin, max(xs) + margin, min(ys) - margin, max(ys) + margin)
    creatures = set(memory.creatures)
    wall_bit = {c: 1 << i for i, c in enumerate(walls)}
    dig_bit = {c: 1 << i for i, c in enumerate(digs)}
    done_walls, done_digs = (1 << len(walls)) - 1, (1 << len(digs)) - 1

    def passable(cell, placed, dug):
        if cell in dig_bit:
            return bool(dug & dig_bit[cell])
        if cell in wall_bit and placed & wall_bit[cell]:
            return False
        return memory.material(cell) in OPEN and cell not in creatures

    start = (pos, facing, 0, 0)
    parent = {start: None}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            p, face, placed, dug = node
            if placed == done_walls and dug == done_digs and p in cells:
                return _unwind(parent, node)
            have = stones - bin(placed).count("1") + bin(dug).count("1")
            for action, nxt in _successors(p, face, placed, dug, have, box, passable, wall_bit, dig_bit,
                                           memory, creatures):
                if nxt not in parent:
                    parent[nxt] = (node, action)
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return None


def _successors(p, face, placed, dug, have, box, passable, wall_bit, dig_bit, memory, creatures):
    for name, d in _MOVES:
        target = (p[0] + d[0], p[1] + d[1])
        if not (box[0] <= target[0] <= box[1] and box[2] <= target[1] <= box[3]):
            continue
        if memory.material(target) == "lava":
            continue  # never step into lava
        if passable(target, placed, dug):
            yield name, (target, d, placed, dug)
        elif face != d:
            yield name, (p, d, placed, dug)  # a blocked move only turns
    front = (p[0] + face[0], p[1] + face[1])
    if front in creatures:
        return
    if front in wall_bit and not placed & wall_bit[front] and have > 0:
        yield "place_stone", (p, face, placed | wall_bit[front], dug)
    elif front in dig_bit and not dug & dig_bit[front] and have < STONE_MAX:
        yield "do", (p, face, placed, dug | dig_bit[front])


def _unwind(parent, node):
    out = []
    while parent[node] is not None:
        prev, action = parent[node]
        out.append((action, node[0], node[1]))
        node = prev
    return out[::-1]
