"""Word extraction (CEDAR §3.2): from an episode's log to a word over the sub-alphabet Σ.

A log line is one high-level step (a `SkillStep.to_json()` of the Crafter adapter, as the
demonstrations and rollouts record it). A succeeded step whose skill is a letter of Σ gives
that letter; a failed step gives nothing (the paper: an invoked action absent from the log is a
failure). After each succeeded step, every event letter that became true is appended, in Σ's
order. Succeeded skills that are not letters are returned apart (`outside`): symbols Σ lacks,
which tell the learner to widen it. `explore` is the runner's own means of finding things and
is neither.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# has_wood, has_3_stone: bounded counts as milestone monitors, read off the inventory.
_MONITOR = re.compile(r"has_(?:(?P<n>\d+)_)?(?P<item>[a-z_]+)")
TRANSPARENT = ("explore",)  # executed by the rollout runner, never a letter
MACRO = "@"  # `@s`: the library's skill s run as its DFA policy (regula.cedar.library)


def is_macro(letter: str) -> bool:
    return letter.startswith(MACRO)


@dataclass(frozen=True)
class Extracted:
    word: tuple
    outside: tuple  # succeeded skills that are not letters, in order


def event_holds(event: str, inventory: dict, props: set) -> bool:
    """A monitor (`has_3_stone`) on the inventory when it names an item the inventory has;
    any other event (`near_table`, `is_night`) from the step's true propositions."""
    m = _MONITOR.fullmatch(event)
    if m and m["item"] in inventory:
        return inventory[m["item"]] >= int(m["n"] or 1)
    return event in props


def extract(steps, letters, actions) -> Extracted:
    """The word over `letters` the log `steps` shows; `actions` are the skill names (letters
    that are not actions are events)."""
    letters = tuple(letters)
    actions = set(actions)
    events = [a for a in letters if a not in actions]
    word, outside = [], []
    held = {e: False for e in events}
    for step in steps:
        if not step["success"]:
            continue
        skill = step["skill"]
        if skill in letters:
            word.append(skill)
        elif skill not in TRANSPARENT:
            outside.append(skill)
        props = set(step.get("props_after", ()))
        for e in events:
            now = event_holds(e, step.get("inventory", {}), props)
            if now and not held[e]:
                word.append(e)
            held[e] = now
    return Extracted(tuple(word), tuple(outside))
