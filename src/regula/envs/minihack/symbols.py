"""The MiniHack adapter's vocabularies as plain data (no NetHack import): the propositions, the
achievements a task may reward, the things `go_to` finds and the skills."""
from __future__ import annotations

# direction word -> (dy, dx) and NetHack's key for it
DIRECTIONS = {"n": (-1, 0), "ne": (-1, 1), "e": (0, 1), "se": (1, 1), "s": (1, 0),
              "sw": (1, -1), "w": (0, -1), "nw": (-1, -1)}
WAND_RANGE = 7  # a wand's ray flies rn1(7, 7) = 7..13 squares (NetHack 3.6.6's zap.c dobuzz()): zap within 7
DIR_WORD = {"n": "north", "ne": "northeast", "e": "east", "se": "southeast", "s": "south",
            "sw": "southwest", "w": "west", "nw": "northwest"}

# What `go_to <thing>` understands: the word -> the screen description it matches (a substring).
THINGS = {"ring": "ring", "wand": "wand", "stairs": "staircase down", "minotaur": "minotaur",
          "horn": "horn"}
PROPOSITIONS = {
    "has_ring": "the agent carries a ring",
    "ring_worn": "the agent wears a ring",
    "levitating": "the agent is levitating",
    "has_wand": "the agent carries a wand",
    "next_to_lava": "molten lava is next to the agent",
    "lava_in_view": "molten lava is in view",
    "past_lava": "the agent is east of where the lava river was",
    "item_here": "an item lies where the agent stands",
    "on_stairs": "the agent stands on the staircase down",
    "stairs_seen": "the staircase down has been seen",
    "monster_in_view": "a monster is in view",
    "monster_adjacent": "a monster is next to the agent",
    "minotaur_in_view": "the minotaur is in view",
    "hp_low": "the agent's hit points are below a third of their maximum",
    # For the shield's safety laws (laws.yaml): what one skill would step into, read before it runs.
    "over_lava": "the agent floats over (or stands in) molten lava",
    **{f"lava_{d}": f"molten lava lies one square {DIR_WORD[d]} of the agent" for d in DIRECTIONS},
    "minotaur_alive": "the minotaur itself (not its corpse) is in view",
    "minotaur_adjacent": "the minotaur is next to the agent",
    **{f"minotaur_{d}": f"the minotaur is on the line {DIR_WORD[d]} of the agent, within a wand's sure range"
       for d in DIRECTIONS},
}
# In a directional skill's own frame (`MiniHackFamily.relative_props`): what lies the way it goes.
# DiVE reads a subgoal's conditions in this frame, so a demonstration that zapped east teaches
# "the minotaur on the line zapped along", not "the minotaur east".
AHEAD = {"lava_ahead": "molten lava lies one square the way the skill goes",
         "minotaur_ahead": "the minotaur is on the line the skill goes along, within a wand's sure range"}
ACHIEVEMENTS = {
    "pick_up_ring": "a ring entered the inventory",
    "put_on_ring": "the agent put a ring on (levitating)",
    "pick_up_wand": "a wand entered the inventory",
    "freeze_lava": "lava squares turned to ground (a wand of cold)",
    "cross_lava": "the agent stood east of the lava river",
    "kill_minotaur": "the minotaur was killed",
    "reach_stairs": "the agent reached the staircase down (MiniHack's goal: it ends the episode)",
}


def skill_names() -> list[str]:
    return ([f"go_to {t}" for t in THINGS] + ["pick_up", "put_on ring", "remove ring"]
            + [f"zap wand {d}" for d in DIRECTIONS] + [f"move {d}" for d in DIRECTIONS]
            + ["fight", "wait", "descend"])
