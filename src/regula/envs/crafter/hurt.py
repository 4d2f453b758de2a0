"""Why the player lost health in one primitive step, read from the game around the step.

Crafter (crafter/objects.py) takes health in four ways; each leaves a mark the adapter reads
before and after the step, so the causes are exact, not guessed from the amount:

* lava: walking onto lava sets health to 0 (`Player._move`): the player stands on lava after;
* zombie: a zombie next to the player hits (2, or 7 asleep) and sets its cooldown to 5, which it
  does only from a cooldown of 0: a zombie near the player whose cooldown went from 0 to 5;
* arrow: an arrow whose next cell holds an object hits it (2) and is removed; the player is the
  world's first object, so it has moved before any arrow flies: an arrow near the player,
  removed by the step, that pointed at the player's cell after it;
* starvation, thirst, fatigue: `_degen_or_regen_health` takes 1 when its counter `_recover`
  falls under -15 while food, drink or energy (awake) is at 0, and resets the counter: the
  counter went from below 0 to exactly 0 with a necessity at 0 after the step (the clamp leaves
  0 for one that fell under). Each necessity at 0 is a cause. Energy counts only awake: asleep
  during the step means asleep before it, or choosing `sleep` (energy at 0 is under its maximum).

Causes are listed in `CAUSES` order, which is also the precedence that names a killing blow.
"""
from __future__ import annotations

from dataclasses import dataclass

from crafter.objects import Arrow, Zombie

CAUSES = ("lava", "zombie", "arrow", "thirst", "starvation", "fatigue")
NEAR = 3  # a zombie or arrow that can reach the player in one step is within 3 cells of it
NECESSITIES = (("thirst", "drink"), ("starvation", "food"), ("fatigue", "energy"))


@dataclass
class Before:
    """What the step may change that the causes are read from."""

    health: int
    recover: float
    asleep: bool
    zombies: list  # [(zombie, its cooldown)]
    arrows: list


def before(env, action: str) -> Before:
    player = env.player
    objs = _near(env.world, player.pos)
    return Before(health=int(player.health), recover=player._recover, asleep=player.sleeping or action == "sleep",
                  zombies=[(o, o.cooldown) for o in objs if isinstance(o, Zombie)],
                  arrows=[o for o in objs if isinstance(o, Arrow)])


def hurt(env, b: Before) -> dict | None:
    """{"health": change (negative), "by": [causes]} when the step took health, else None."""
    player = env.player
    change = int(player.health) - b.health
    if change >= 0:
        return None
    pos = tuple(int(v) for v in player.pos)
    by = set()
    if env.world[player.pos][0] == "lava":
        by.add("lava")
    if any(cool == 0 and z.cooldown == 5 for z, cool in b.zombies):
        by.add("zombie")
    if any(a.removed and tuple(int(v) for v in a.pos + a.facing) == pos for a in b.arrows):
        by.add("arrow")
    if b.recover < 0 and player._recover == 0:
        inv = player.inventory
        by |= {cause for cause, stat in NECESSITIES
               if inv[stat] == 0 and not (stat == "energy" and b.asleep)}
    return {"health": change, "by": [c for c in CAUSES if c in by]}


def _near(world, pos) -> list:
    """The objects within `NEAR` cells (a square) of `pos`. Not `world.nearby`: its slice starts
    at pos - NEAR, which near the map's left or top edge is negative and selects nothing."""
    x, y = (int(v) for v in pos)
    cells = world._obj_map[max(x - NEAR, 0):x + NEAR + 1, max(y - NEAR, 0):y + NEAR + 1]
    return [world._objects[i] for i in cells.flatten().tolist() if i > 0]
