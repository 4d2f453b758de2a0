"""AI2-THOR's object metadata as propositions, and a DFA's letters as THOR action dicts.

A letter is `<verb>_<type>`: `pickup_bread`, `open_fridge`, `toggleon_toaster`, `put_fridge`
(the held object into or onto an object of that type). Types are THOR's `objectType`s
lower-cased (`CoffeeMachine` -> `coffeemachine`), so a letter names no instance: the action
goes to the object of that type the frame shows visible (else the first by id), as a person
would say "open the fridge". Propositions are per type too (any object of the type):
`visible_t`, `holding_t`, `open_t`, `on_t`, `sliced_t`, `cooked_t`, `dirty_t`, `filled_t`
(each only for types that can have it) and `t_in_r` (an object of type t sits in or on one of
type r).
"""
from __future__ import annotations

# verb -> (THOR action, the metadata flag an object needs for it); the target is its objectId
VERBS = {
    "pickup": ("PickupObject", "pickupable"),
    "put": ("PutObject", "receptacle"),
    "open": ("OpenObject", "openable"),
    "close": ("CloseObject", "openable"),
    "toggleon": ("ToggleObjectOn", "toggleable"),
    "toggleoff": ("ToggleObjectOff", "toggleable"),
    "slice": ("SliceObject", "sliceable"),
    "cook": ("CookObject", "cookable"),
    "clean": ("CleanObject", "dirtyable"),
}
# proposition prefix -> (the metadata flag it reads, the flag saying the type can have it)
STATES = {
    "open": ("isOpen", "openable"),
    "on": ("isToggled", "toggleable"),
    "sliced": ("isSliced", "sliceable"),
    "cooked": ("isCooked", "cookable"),
    "dirty": ("isDirty", "dirtyable"),
    "filled": ("isFilledWithLiquid", "canFillWithLiquid"),
}


class UnknownLetter(ValueError):
    """A letter that names no verb, or a type the frame does not hold, or one the verb does not fit."""


def type_name(object_type: str) -> str:
    return object_type.lower()


def _by_type(objects: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for obj in sorted(objects, key=lambda o: o["objectId"]):
        out.setdefault(type_name(obj["objectType"]), []).append(obj)
    return out


def proposition_names(objects: list[dict]) -> list[str]:
    """Every proposition the frame's objects can make true, sorted."""
    names = set()
    types = _by_type(objects)
    for t, objs in types.items():
        names.add(f"visible_{t}")
        if any(o.get("pickupable") for o in objs):
            names.add(f"holding_{t}")
        for prefix, (_, can) in STATES.items():
            if any(o.get(can) for o in objs):
                names.add(f"{prefix}_{t}")
        for o in objs:
            for parent in o.get("parentReceptacles") or ():
                names.add(f"{t}_in_{_type_of_id(parent)}")
    return sorted(names)


def _type_of_id(object_id: str) -> str:
    return type_name(object_id.split("|", 1)[0])


def props(objects: list[dict], names: list[str] | None = None) -> dict[str, bool]:
    """The truth of every proposition (of `names`, default the frame's own) in this frame."""
    names = names if names is not None else proposition_names(objects)
    true = set()
    for t, objs in _by_type(objects).items():
        if any(o.get("visible") for o in objs):
            true.add(f"visible_{t}")
        if any(o.get("isPickedUp") for o in objs):
            true.add(f"holding_{t}")
        for prefix, (flag, can) in STATES.items():
            if any(o.get(can) and o.get(flag) for o in objs):
                true.add(f"{prefix}_{t}")
        for o in objs:
            for parent in o.get("parentReceptacles") or ():
                true.add(f"{t}_in_{_type_of_id(parent)}")
    return {n: n in true for n in names}


def letters(objects: list[dict]) -> list[str]:
    """Every letter some object of the frame affords, sorted."""
    out = set()
    for t, objs in _by_type(objects).items():
        for verb, (_, can) in VERBS.items():
            if any(o.get(can) for o in objs):
                out.add(f"{verb}_{t}")
    return sorted(out)


def action(letter: str, objects: list[dict]) -> dict:
    """The THOR action dict for `letter` in this frame: the verb's action on the object of the
    letter's type that is visible (else the first by id) and affords it."""
    verb, _, t = letter.partition("_")
    if verb not in VERBS or not t:
        raise UnknownLetter(f"unknown letter {letter!r}: a letter is <verb>_<type>, verbs {', '.join(VERBS)}")
    name, can = VERBS[verb]
    candidates = [o for o in _by_type(objects).get(t, []) if o.get(can)]
    if not candidates:
        raise UnknownLetter(f"letter {letter!r}: no object of type {t!r} in the frame affords {name}")
    target = next((o for o in candidates if o.get("visible")), candidates[0])
    return {"action": name, "objectId": target["objectId"]}
