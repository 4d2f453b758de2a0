"""A human plays Crafter in the terminal; the session can be recorded as a demonstration.

Each line typed is a key (w a s d: move, e: do, z: sleep, t/f/r/p: place table/furnace/
stone/plant, 1-6: make pickaxes and swords, q: quit) or a skill name (`collect_wood`).
"""
from __future__ import annotations

from typing import Callable, TextIO

from .envs.crafter.rules import RULES
from .envs.crafter.skills import skill_names
from .errors import UnknownNameError

KEYS = {"w": "move_up", "a": "move_left", "s": "move_down", "d": "move_right", "e": "do",
        "z": "sleep", "n": "noop", "t": "place_table", "f": "place_furnace", "r": "place_stone",
        "p": "place_plant", "1": "make_wood_pickaxe", "2": "make_stone_pickaxe",
        "3": "make_iron_pickaxe", "4": "make_wood_sword", "5": "make_stone_sword",
        "6": "make_iron_sword"}
GLYPHS = {"grass": ".", "sand": ":", "path": "_", "water": "~", "stone": "#", "tree": "T",
          "lava": "!", "coal": "c", "iron": "i", "diamond": "D", "table": "B", "furnace": "F",
          None: " "}
CREATURE_GLYPHS = {"cow": "C", "zombie": "Z", "skeleton": "S", "plant": "p", "arrow": "-"}


def ascii_view(world) -> str:
    mem, player = world.memory, world.env.player
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


def resolve(command: str) -> tuple[str, str]:
    """('action', name) or ('skill', name) for what the player typed."""
    command = command.strip()
    if command in KEYS:
        return "action", KEYS[command]
    if command in RULES.actions:
        return "action", command
    if command in skill_names():
        return "skill", command
    raise UnknownNameError("command", command, list(KEYS) + skill_names())


def play(world, read: Callable[[], str], out: TextIO) -> None:
    """Loop until the player types q, the input ends, or the episode ends."""
    while not world.done:
        out.write("\n" + ascii_view(world) + "\n" + world.text() + "\n> ")
        out.flush()
        line = read()
        if line is None or line.strip() in ("q", "quit"):
            break
        if not line.strip():
            continue
        try:
            kind, name = resolve(line)
        except UnknownNameError as exc:
            out.write(f"{exc}\n")
            continue
        if kind == "skill":
            step = world.run_skill(name)
            out.write(f"{name}: {'done' if step.success else 'failed: ' + step.reason} "
                      f"({step.steps} steps)\n")
        else:
            world.run_skill_primitive(name)
    out.write(f"\nepisode over: {world.steps} steps, achievements: {', '.join(world.unlocked) or 'none'}\n")
