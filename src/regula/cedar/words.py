"""Word extraction (CEDAR §3.2): from an episode's log to a word over the sub-alphabet Σ.

A log line is one high-level step (a `SkillStep.to_json()` of the Crafter adapter, as the
demonstrations and rollouts record it). A succeeded step whose skill is a letter of Σ gives
that letter; a failed step gives nothing (the paper: an invoked action absent from the log is a
failure). After each succeeded step, every event letter that became true is appended, in Σ's
order. Succeeded skills that are not letters are returned apart (`outside`): symbols Σ lacks,
which tell the learner to widen it. `explore` is the runner's own means of finding things and
is neither.

With `dug=True` (rollouts whose paths dig, `CrafterWorld(dig="stuck")`) a step's primitive `do`s
that collected something the step itself is not for read as that collection's letter
(`collect_stone` for rock dug through on the way, before the step's own letter, failed steps
included): the word still names every item's source, as the teacher's rules count them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# has_wood, has_3_stone: bounded counts as milestone monitors, read off the inventory.
_MONITOR = re.compile(r"has_(?:(?P<n>\d+)_)?(?P<item>[a-z_]+)")
ASIDE = "(aside)"  # a step run outside the word (`library._Aside`): only what it dug can be a letter
TRANSPARENT = ("explore", ASIDE)  # executed by the rollout runner, never a letter
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


COLLECT = "collect_"  # `collect_<item>`: the skill a `do` that gained <item> did


def dug(step: dict, actions) -> list[str]:
    """The collections (`collect_<item>`, where that is an action) a step's primitive `do`s made
    on the way: all of them, except the last of the step's own item when it succeeded."""
    got = [f"{COLLECT}{item}" for p in step.get("primitives", ()) if p["action"] == "do"
           for item, n in p["inventory_delta"].items() if n > 0 and f"{COLLECT}{item}" in actions]
    if step["success"] and step["skill"] in got:
        del got[len(got) - 1 - got[::-1].index(step["skill"])]
    return got


def extract(steps, letters, actions, dug_letters: bool = False, dug_calls: bool = False) -> Extracted:
    """The word over `letters` the log `steps` shows; `actions` are the skill names (letters
    that are not actions are events); `dug_letters`: collections on the way are letters too (`dug`);
    `dug_calls`: one whose letter Σ holds only as the library's call (`@collect_stone`) is that
    call (digging had the tool the call would fetch: the call would only have collected), not a
    symbol outside Σ that leaves the DFA counting short."""
    letters = tuple(letters)
    actions = set(actions)
    events = [a for a in letters if a not in actions]
    word, outside = [], []
    held = {e: False for e in events}
    for step in steps:
        for got in dug(step, actions) if dug_letters else ():
            if got not in letters and dug_calls and MACRO + got in letters:
                got = MACRO + got
            (word if got in letters else outside).append(got)
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
