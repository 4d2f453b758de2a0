"""Text observation in the spirit of DiVE's verbalizer.

Nearest thing of each kind with direction and distance, what lies next to the player in
each direction, the faced thing, inventory, status and time of day.
"""
from __future__ import annotations

from .memory import COMPASS, Memory
from .rules import BODY_STATS, RULES


def direction_words(dx: int, dy: int) -> str:
    parts = []
    if dy:
        parts.append(f"{abs(dy)} {'north' if dy < 0 else 'south'}")
    if dx:
        parts.append(f"{abs(dx)} {'west' if dx < 0 else 'east'}")
    return ", ".join(parts) if parts else "here"


def nearest_things(env, memory: Memory) -> list[tuple[str, int, int, int]]:
    """(kind, distance, dx, dy) of the nearest of each kind in view, nearest first."""
    px, py = (int(v) for v in env.player.pos)
    (x0, y0), (x1, y1) = memory.view_bounds((px, py))
    best: dict[str, tuple[int, int, int]] = {}
    for i, column in enumerate(memory.map[x0:x1, y0:y1].tolist()):  # lists: numpy per cell is slow
        for j, material in enumerate(column):
            if material > 0:
                name = memory.names[material]
                dx, dy = int(x0 + i - px), int(y0 + j - py)
                d = abs(dx) + abs(dy)
                if d and (name not in best or (d, dx, dy) < best[name]):
                    best[name] = (d, dx, dy)
    for (x, y), name in memory.creatures.items():
        dx, dy = x - px, y - py
        d = abs(dx) + abs(dy)
        if name not in best or (d, dx, dy) < best[name]:
            best[name] = (d, dx, dy)
    rows = [(k, *v) for k, v in best.items()]
    return sorted(rows, key=lambda r: (r[1], r[0]))


def facing_thing(env) -> str:
    p, f = env.player.pos, env.player.facing
    material, obj = env.world[(int(p[0] + f[0]), int(p[1] + f[1]))]
    return type(obj).__name__.lower() if obj is not None else (material or "nothing")


def verbalize(env, memory: Memory, night: bool) -> str:
    player = env.player
    px, py = (int(v) for v in player.pos)
    lines = ["You see:"]
    for name, d, dx, dy in nearest_things(env, memory):
        if name in ("grass", "sand", "path") and d > 1:
            continue  # ground everywhere: only worth saying when adjacent
        lines.append(f"- {name} {d} step{'s' if d != 1 else ''} away ({direction_words(dx, dy)})")
    around = []
    for d, word in COMPASS.items():
        cell = (px + d[0], py + d[1])
        thing = memory.creatures.get(cell) or memory.material(cell) or "edge of the world"
        around.append(f"{word}: {thing}")
    lines.append("Around you: " + ", ".join(around) + ".")
    lines.append(f"You face {facing_thing(env)} ({COMPASS[tuple(int(v) for v in player.facing)]}).")
    inv = [f"{k}: {v}" for k, v in player.inventory.items() if k not in BODY_STATS and v > 0]
    lines.append("Inventory: " + (", ".join(inv) if inv else "empty") + ".")
    stats = ", ".join(f"{k} {player.inventory[k]}/{RULES.items[k]['max']}" for k in BODY_STATS)
    lines.append(f"Status: {stats}" + (", sleeping" if player.sleeping else "") + ".")
    lines.append(f"It is {'night' if night else 'day'} (step {env.step_count}).")
    return "\n".join(lines)


GLYPHS = {"grass": ".", "sand": ":", "path": "_", "water": "~", "stone": "#", "tree": "T",
          "lava": "!", "coal": "c", "iron": "i", "diamond": "D", "table": "B", "furnace": "F",
          None: " "}
CREATURE_GLYPHS = {"cow": "C", "zombie": "Z", "skeleton": "S", "plant": "p", "arrow": "-"}


def ascii_view(env, mem) -> str:
    player = env.player
    (x0, y0), (x1, y1) = mem.view_bounds(player.pos)
    px, py = (int(v) for v in player.pos)
    arrow = {(-1, 0): "<", (1, 0): ">", (0, -1): "^", (0, 1): "v"}[tuple(int(v) for v in player.facing)]
    rows = []
    for y in range(y0, y1):
        row = ""
        for x in range(x0, x1):
            if (x, y) == (px, py):
                row += "@" if not arrow else arrow
            elif (x, y) in mem.creatures:
                row += CREATURE_GLYPHS.get(mem.creatures[(x, y)], "?")
            else:
                row += GLYPHS.get(mem.material((x, y)), "?")
        rows.append(row)
    return "\n".join(rows)
