"""A scripted expert per task: the single demonstration the paper gives DiVE, in skills.

It reads the episode's state (where the minotaur is, which row the lava froze on) the way
Crafter's expert reads its world; a learner reads only the log it leaves."""
from __future__ import annotations

from .symbols import DIRECTIONS, WAND_RANGE


def solve(ep, max_skills: int = 200) -> bool:
    """Play `ep` to its end with skills; True when it reached the stairs (MiniHack's success)."""
    plan = {"lava_cross": _lava_cross, "wand_of_death": _wand_of_death, "quest": _quest,
            "lava_freeze": _lava_freeze}[ep.task_name]
    plan(ep, max_skills)
    return ep.end_status == 2


def _go_down(ep):
    """To the stairs (MiniHack's goal: arriving ends the episode); down them where it does not."""
    ep.run_skill("go_to stairs")
    if ep.done:
        return
    if ep.props()["levitating"]:
        ep.run_skill("remove ring")  # one cannot reach the stairs while floating
    ep.run_skill("descend")


def _lava_cross(ep, max_skills):
    ep.run_skill("go_to ring")
    ep.run_skill("pick_up")
    ep.run_skill("put_on ring")
    _go_down(ep)


def _aligned(ep, cells) -> str | None:
    """The direction of a cell in `cells` on one of the eight lines from the agent, within range."""
    y, x = ep.pos
    for cy, cx in cells:
        dy, dx = cy - y, cx - x
        if (dy == 0 or dx == 0 or abs(dy) == abs(dx)) and 0 < max(abs(dy), abs(dx)) <= WAND_RANGE:
            step = ((dy > 0) - (dy < 0), (dx > 0) - (dx < 0))
            return next(d for d, v in DIRECTIONS.items() if v == step)
    return None


def _wand_of_death(ep, max_skills):
    ep.run_skill("go_to wand")
    ep.run_skill("pick_up")
    while not ep.done and len(ep.events) < max_skills and "kill_minotaur" not in ep.unlocked:
        minotaur = ep.cells("minotaur")
        direction = _aligned(ep, minotaur)
        if direction:
            ep.run_skill(f"zap wand {direction}")
        elif minotaur:
            ep.run_skill("wait")  # it comes down the corridor: wait until it is in line and near
        else:
            ep.run_skill("go_to stairs") if ep.stairs else _walk_east(ep)
    _go_down(ep)


def _walk_east(ep):
    """Down the dark corridor one square (the minotaur and the stairs come into view)."""
    ep.run_skill("wait") if ep.props()["monster_adjacent"] else ep.run_skill("move e")


def _explore_east(ep):
    """One square east (or diagonally past a wall corner) until the stairs come into view."""
    y, x = ep.pos
    lava = ep.lava_cells()
    for d in ("e", "ne", "se"):
        dy, dx = DIRECTIONS[d]
        if chr(int(ep.obs["chars"][y + dy, x + dx])) not in " |-" and (y + dy, x + dx) not in lava:
            ep.run_skill(f"move {d}")
            return
    ep.run_skill("wait")


def _freeze_a_row(ep, max_skills):
    """Wand in hand, a path over the river: zap cold east from the bank (fighting what comes
    close)."""
    if not ep.props()["has_wand"]:
        ep.run_skill("go_to wand")
        ep.run_skill("pick_up")
    while not ep.done and "freeze_lava" not in ep.unlocked and len(ep.events) < max_skills:
        if ep.props()["monster_adjacent"]:
            ep.run_skill("fight")
            continue
        y, x = ep.pos
        if (y, x + 1) in ep.lava_cells():
            ep.run_skill("zap wand e")
        else:
            ep.run_skill("move e")  # to the bank


def _lava_freeze(ep, max_skills):
    _freeze_a_row(ep, max_skills)
    _go_down(ep)


def _quest(ep, max_skills):
    _freeze_a_row(ep, max_skills)
    while not ep.done and len(ep.events) < max_skills and not ep.props()["on_stairs"]:
        if ep.props()["monster_adjacent"]:
            ep.run_skill("fight")
        elif ep.stairs is None:
            _explore_east(ep)
        else:
            ep.run_skill("go_to stairs", interrupt=lambda e: "monster next to the agent"
                         if e.props()["monster_adjacent"] else None)
    if not ep.done:
        ep.run_skill("descend")
