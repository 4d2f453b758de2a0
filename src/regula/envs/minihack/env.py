"""One seeded MiniHack episode behind the environment interface.

The only module (with `bench`) that imports `minihack` and `nle`. NetHack's actions are
autoregressive: `put on` asks which item, then which hand; `zap` asks which wand, then the
direction. A skill sends its command and `_answer` answers each follow-up prompt from the state
(the item's inventory letter, the direction, `--More--`), so a skill is one call for its caller.

The observation is verbalized here from `screen_descriptions`, `message`, `inv_strs` and
`blstats` (the PyPI language wrapper does not install beside nle 1.3.0).
"""
from __future__ import annotations

import os
import re
import warnings
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Callable

import gymnasium as gym
import numpy as np

with warnings.catch_warnings():  # minihack imports pkg_resources (setuptools<81 keeps it): not the user's concern
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)
    import minihack  # noqa: F401  (registers the MiniHack-* ids)
    from minihack.base import MH_FULL_ACTIONS
from nle import nethack

from regula.errors import RegulaError, UnknownNameError

from ..base import true_props
from .symbols import ACHIEVEMENTS, DIRECTIONS, DIR_WORD, PROPOSITIONS, THINGS, WAND_RANGE, skill_names

OBS_KEYS = ("glyphs", "chars", "screen_descriptions", "message", "inv_strs", "inv_letters",
            "inv_oclasses", "blstats", "tty_chars")
_PLAIN = np.array([ord(c) for c in " .-|#"], dtype=np.uint8)  # rock, floor, walls, corridors
RUNNING, DEATH, SUCCESS = 0, 1, 2  # MiniHack's StepStatus values (info["end_status"])

_DIR_KEY = {"n": "k", "ne": "u", "e": "l", "se": "n", "s": "j", "sw": "b", "w": "h", "nw": "y"}


def _action_name(a) -> str:
    # CompassDirection.N -> "n", CompassDirectionLonger.N -> "far_n"; every other name is unique
    kind = type(a).__name__
    name = a.name.lower()
    return "far_" + name if kind == "CompassDirectionLonger" else name


# MiniHack's full action set (NetHack's less a few meta commands): what every task here accepts
ACTIONS = tuple(_action_name(a) for a in MH_FULL_ACTIONS)
ITEM_CLASSES = {"ring": nethack.RING_CLASS, "wand": nethack.WAND_CLASS}
# object class -> the word the log counts items by (inventory, inventory_delta: Crafter's shape)
CLASS_WORDS = {getattr(nethack, f"{c.upper()}_CLASS"): c for c in (
    "weapon", "armor", "ring", "amulet", "tool", "food", "potion", "scroll", "wand", "coin", "gem",
    "rock", "ball", "chain", "venom")} | {nethack.SPBOOK_CLASS: "spellbook"}
SKILL_BUDGET = 120  # primitive actions one `go_to` may take


@dataclass
class Step:
    """One high-level step, with the fields of the common episode log (Crafter's `SkillStep`)."""

    t: int  # primitive steps before the skill
    obs: str  # the verbalized observation the skill was chosen on
    skill: str
    success: bool
    reason: str  # "" on success
    cause: dict | None  # CAUSE_KINDS dict; None on success
    actions: list  # the primitive actions and keys sent ("key r" for a prompt's answer)
    steps: int  # primitive steps it took (prompts answered included)
    props_before: list
    props_after: list
    inventory_delta: dict  # object class -> change in the count carried
    inventory: dict  # object class -> count carried, after the skill
    unlocked: list  # achievements this step unlocked
    reward: float
    message: str  # NetHack's last message
    primitives: list  # one record per primitive sent: action, message, inventory_delta, unlocked

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _text(a) -> str:
    return bytes(a).rstrip(b"\0").decode("latin-1").strip()


def make_raw(task: dict):
    """The MiniHack env (unwrapped: gymnasium's checkers cost more than NetHack's step)."""
    # NetHack reads the real clock for the moon phase (full moon: Luck +1), Friday the 13th, night
    # and midnight; fixed, NLE derives them from the episode's seed, so a demo is the same any day
    kw = dict(observation_keys=OBS_KEYS, max_episode_steps=task["max_steps"], autopickup=task["autopickup"],
              fix_moon_phase=True)
    if "env_id" in task:
        return gym.make(task["env_id"], **kw).unwrapped
    return gym.make("MiniHack-Skill-Custom-v0", des_file=task["des"], **kw).unwrapped


# Raw envs no live episode holds, by level and options. Making one costs ~30 ms, most of it
# MiniHack compiling the des-file in a subprocess, against ~1 ms for a reset; an episode seeds
# NetHack's RNGs before its reset, so a reused env plays exactly what a new one would (the stages
# minihack_demos and minihack_shield write the same bytes either way).
_IDLE: dict[tuple, list] = {}


def _borrow(task: dict):
    key = (task.get("env_id"), task.get("des"), task["max_steps"], task["autopickup"])
    idle = _IDLE.setdefault(key, [])
    return idle, (idle.pop() if idle else make_raw(task))


class MiniHackEpisode:
    """A seeded episode of one task: `act` sends a primitive action, `run_skill` a high-level one."""

    def __init__(self, task_name: str, task: dict, seed: int = 0):
        self.task_name, self.task, self.seed = task_name, task, seed
        idle, self.env = _borrow(task)
        weakref.finalize(self, idle.append, self.env)  # back to the idle ones when this episode is gone
        # indices into this env's own action tuple (MiniHack's full set, ordered its own way)
        self._key_index = {int(a): i for i, a in enumerate(self.env.actions)}
        self._index = {_action_name(a): i for i, a in enumerate(self.env.actions)}
        self.reset()

    # --- the episode ---
    def reset(self):
        # NetHack's two RNGs from the seed; reseed=False keeps NLE from re-drawing them (identical runs)
        self.env.seed(self.seed, self.seed + 1_000_003, reseed=False)
        # a reused env's score list holds its earlier games, and the end screen shows that list:
        # emptied, it holds this game alone, as a new env's does (`death` reads it)
        with open(os.path.join(self.env.nethack._vardir, "record"), "w"):
            pass
        obs, _ = self.env.reset()
        self.raw = obs
        self.obs = {k: v.copy() for k, v in obs.items()}  # NLE reuses its buffers on the next step
        self.steps = 0
        self.events: list[Step] = []
        self.unlocked: list[str] = []
        self.reward_total = 0.0
        self.end_status = RUNNING
        self.stairs: tuple | None = None
        self._objects: dict[tuple, str] = {}
        self._marks_of = self._inventory_of = self._lava_of = None
        self._sent: list[str] = []
        self._prims: list | None = None
        self.end_screen = ""
        self._lava0 = self.lava_cells()
        self._lava_known = set(self._lava0)  # lava in view, and the agent's square when it floats over lava
        self._lava_x = max((x for _, x in self._lava0), default=None)
        self._remember()
        return self.obs

    @property
    def done(self) -> bool:
        return self.end_status != RUNNING

    @property
    def dead(self) -> bool:
        return self.end_status == DEATH

    @property
    def death(self) -> str:
        """What killed the agent, in NetHack's words ("Burned by molten lava."); "" if alive."""
        found = re.search(r"died in .*? on level \d+\. (.+?) - \[", self.end_screen) if self.dead else None
        return found.group(1) if found else ""

    def act(self, action: str) -> float:
        """One primitive action by its name (`ACTIONS`: "n", "far_e", "puton", "zap", "more", ...)."""
        if action not in self._index:
            raise UnknownNameError("MiniHack action", action, ACTIONS)
        self._sent.append(action)
        return self._step(self._index[action], action)

    def press(self, key: str) -> float:
        """One key, as NetHack's follow-up prompts want it (an item's letter, "r", "y"): "n" here
        is the key n (south-east, or "no"), where `act("n")` is the action north."""
        if len(key) != 1 or ord(key) not in self._key_index:
            raise RegulaError(f"MiniHack key {key!r}: not one key of NetHack's action set")
        self._sent.append(f"key {key}")
        return self._step(self._key_index[ord(key)], f"key {key}")

    def _step(self, index: int, name: str) -> float:
        if self.done:
            return 0.0
        if self._prims is not None:  # inside a skill: log this primitive too
            inv0, unlocked0 = self.inventory_counts(), len(self.unlocked)
            reward = self._env_step(index)
            self._prims.append({"action": name, "message": self.message if not self.done else self.end_screen,
                                "inventory_delta": _delta(inv0, self.inventory_counts()),
                                "unlocked": self.unlocked[unlocked0:]})
            return reward
        return self._env_step(index)

    def _env_step(self, index: int) -> float:
        obs, reward, term, trunc, info = self.env.step(index)
        self.steps += 1
        self.reward_total += float(reward)
        self.end_status = int(info.get("end_status", RUNNING))
        if trunc and self.end_status == RUNNING:
            self.end_status = -1  # MiniHack's ABORTED: the step limit
        if self.done:
            # NetHack's last observation is its end screen, not the level: `obs` (and so `props`
            # and `text`) keep the last level seen; the screen's words are kept apart
            self.end_screen = " ".join(w for r in obs["tty_chars"] for w in bytes(r).decode("latin-1").split())
            if self.end_status == SUCCESS:  # on the stairs, which lie east of the river
                reached = ["cross_lava"] if self.stairs and self._lava_x is not None and self.stairs[1] > self._lava_x else []
                for name in reached + ["reach_stairs"]:
                    if name in self.task["achievements"] and name not in self.unlocked:
                        self.unlocked.append(name)
            return float(reward)
        self.raw = obs  # what a prompt reads
        if int(obs["blstats"][nethack.NLE_BL_DEPTH]) == 0:
            return float(reward)  # a dying dialog ("You die...", "possessions identified?"): no level shown
        # NLE writes every observation into the same buffers: keep a copy of the level
        self.obs = {k: v.copy() for k, v in obs.items()}
        self._remember()
        self._check_achievements()
        return float(reward)

    # --- reading the observation ---
    @property
    def pos(self) -> tuple[int, int]:
        b = self.obs["blstats"]
        return int(b[nethack.NLE_BL_Y]), int(b[nethack.NLE_BL_X])

    @property
    def message(self) -> str:
        return _text(self.obs["message"])

    def _desc(self, y: int, x: int) -> str:
        return _text(self.obs["screen_descriptions"][y, x])

    def _marks(self) -> list[tuple[int, int]]:
        """The cells that show something other than rock, floor and walls (read once a step:
        reading every cell's description in Python is what makes the adapter slow)."""
        if self._marks_of is not self.obs:
            ys, xs = np.nonzero(~np.isin(self.obs["chars"], _PLAIN))
            self._marks_cache = list(zip(ys.tolist(), xs.tolist()))
            self._marks_of = self.obs
        return self._marks_cache

    def cells(self, word: str) -> list[tuple[int, int]]:
        sd = self.obs["screen_descriptions"]
        needle = word.encode()
        return [(y, x) for y, x in self._marks() if needle in bytes(sd[y, x])]

    def lava_cells(self) -> frozenset:
        """The lava in view, read once a step (every step keeps the lava the agent floats over)."""
        if self._lava_of is not self.obs:
            self._lava_cache = frozenset(self.cells("molten lava"))
            self._lava_of = self.obs
        return self._lava_cache

    def _remember(self):
        """Keep what the agent stands on out of sight: the stairs and the items seen."""
        glyphs = self.obs["glyphs"]
        here = self.pos
        # the agent hides the square it is on: lava there is what was lava before it arrived
        lava = self.lava_cells()
        self._lava_known = lava | ({here} & self._lava_known)
        seen_here = re.search(r"You see here (.+?)\.", self.message)  # what the agent stands on
        if seen_here:
            self._objects[here] = seen_here.group(1)
        if "staircase down here" in self.message:
            self.stairs = here
        for y, x in self._marks():
            if (y, x) == here:
                continue
            if nethack.glyph_is_object(int(glyphs[y, x])):
                self._objects[(y, x)] = self._desc(y, x)
            elif chr(int(self.obs["chars"][y, x])) == ">" and self._desc(y, x) == "staircase down":
                self.stairs = (y, x)
        for c in [c for c in self._objects if c != here and c not in set(self._marks())]:
            del self._objects[c]  # picked up by a monster, or burnt: the square shows floor again

    def inventory(self) -> list[tuple[str, int, str]]:
        """(letter, object class, description) of each item carried."""
        o = self.obs
        if self._inventory_of is not o:
            self._inventory = [(chr(int(o["inv_letters"][i])), int(o["inv_oclasses"][i]), _text(o["inv_strs"][i]))
                               for i in np.flatnonzero(o["inv_letters"])]
            self._inventory_of = o
        return self._inventory

    def inventory_counts(self) -> dict[str, int]:
        """Items carried by object class ("ring": 1, "gem": 58): a stack counts its quantity."""
        out: dict[str, int] = {}
        for _, cls, desc in self.inventory():
            n = re.match(r"(\d+) ", desc)
            word = CLASS_WORDS.get(cls, "other")
            out[word] = out.get(word, 0) + (int(n.group(1)) if n else 1)
        return dict(sorted(out.items()))

    def _item(self, kind: str):
        return next((it for it in self.inventory() if it[1] == ITEM_CLASSES[kind]), None)

    def _levitating(self) -> bool:
        return bool(int(self.obs["blstats"][nethack.NLE_BL_CONDITION]) & nethack.BL_MASK_LEV)

    def _neighbours(self, y, x):
        for dy, dx in DIRECTIONS.values():
            yield y + dy, x + dx

    def _monsters(self) -> list[tuple[int, int]]:
        here = self.pos
        g = self.obs["glyphs"]
        return [(y, x) for y, x in self._marks() if (y, x) != here and nethack.glyph_is_monster(int(g[y, x]))]

    def props(self) -> dict[str, bool]:
        y, x = self.pos
        lava = self.lava_cells()
        monsters = self._monsters()
        seen_minotaur = self.cells("minotaur")  # its corpse too ("minotaur corpse")
        minotaur = [c for c in seen_minotaur if c in set(monsters)]  # the monster alone
        b = self.obs["blstats"]
        return {
            "has_ring": self._item("ring") is not None,
            "ring_worn": any(it[1] == nethack.RING_CLASS and "hand)" in it[2] for it in self.inventory()),
            "levitating": self._levitating(),
            "has_wand": self._item("wand") is not None,
            "next_to_lava": any(c in lava for c in self._neighbours(y, x)),
            "lava_in_view": bool(lava),
            "past_lava": self._lava_x is not None and x > self._lava_x,
            "item_here": (y, x) in self._objects,
            "on_stairs": self.stairs == (y, x),
            "stairs_seen": self.stairs is not None,
            "monster_in_view": bool(monsters),
            "monster_adjacent": any(max(abs(my - y), abs(mx - x)) == 1 for my, mx in monsters),
            "minotaur_in_view": bool(seen_minotaur),
            "hp_low": int(b[nethack.NLE_BL_HP]) * 3 < int(b[nethack.NLE_BL_HPMAX]),
            **self._safety_props(y, x, lava, minotaur),
        }

    def _safety_props(self, y: int, x: int, lava: set, minotaur: list) -> dict[str, bool]:
        """What a one-square skill would step into, read before it runs (the shield's laws.yaml)."""
        out = {"over_lava": (y, x) in self._lava_known, "minotaur_alive": bool(minotaur),
               "minotaur_adjacent": any(max(abs(my - y), abs(mx - x)) == 1 for my, mx in minotaur)}
        for d, (dy, dx) in DIRECTIONS.items():
            out[f"lava_{d}"] = (y + dy, x + dx) in lava
        for d, (dy, dx) in DIRECTIONS.items():  # on the ray a wand zapped that way flies along
            out[f"minotaur_{d}"] = any(_on_ray(my - y, mx - x, dy, dx) for my, mx in minotaur)
        return out

    def proposition_names(self) -> list[str]:
        return list(PROPOSITIONS)

    def _check_achievements(self):
        props = self.props()
        msg = self.message
        got = {"pick_up_ring": props["has_ring"], "put_on_ring": props["ring_worn"],
               "pick_up_wand": props["has_wand"],
               "freeze_lava": bool(self._lava0) and len(self.lava_cells()) < len(self._lava0),
               "cross_lava": props["past_lava"],
               "kill_minotaur": bool(re.search(r"You kill (the minotaur|it)", msg)),
               "reach_stairs": self.end_status == SUCCESS}
        for name in self.task["achievements"]:
            if got[name] and name not in self.unlocked:
                self.unlocked.append(name)

    # --- the verbalizer ---
    def text(self) -> str:
        """The observation in words: the message, what is in view (nearest of each kind, with
        distance and direction), the inventory and the status line."""
        y, x = self.pos
        nearest: dict[str, tuple] = {}
        counts: dict[str, int] = {}
        for cy, cx in self._marks():
            if (cy, cx) == (y, x):
                continue
            d = self._desc(cy, cx)
            if d in ("", "wall", "floor of a room", "dark part of a room", "doorway"):
                continue
            counts[d] = counts.get(d, 0) + 1
            dist = max(abs(cy - y), abs(cx - x))
            if d not in nearest or dist < nearest[d][0]:
                nearest[d] = (dist, cy - y, cx - x)
        seen = []
        for d in sorted(nearest, key=lambda k: (nearest[k][0], k)):
            dist, dy, dx = nearest[d]
            where = _where(dist, dy, dx)
            seen.append(f"{d} {where}" + (f" ({counts[d]} in view)" if counts[d] > 1 else ""))
        b = self.obs["blstats"]
        status = [f"HP {int(b[nethack.NLE_BL_HP])}/{int(b[nethack.NLE_BL_HPMAX])}",
                  f"dungeon level {int(b[nethack.NLE_BL_DEPTH])}"]
        if self._levitating():
            status.append("levitating")
        here = self._objects.get((y, x))
        lines = [f"message: {self.message or '(none)'}",
                 "you see: " + ("; ".join(seen) or "nothing of note")]
        if here:
            lines.append(f"here: {here}")
        if self.stairs == (y, x):
            lines.append("here: staircase down")
        lines.append("inventory: " + "; ".join(f"{k} - {s}" for k, _, s in self.inventory()))
        lines.append("status: " + ", ".join(status))
        return "\n".join(lines)

    # --- the low-level controller ---
    def _screen(self) -> str:
        return "\n".join(bytes(r).decode("latin-1") for r in self.raw["tty_chars"])

    def _answer(self, item: str | None = None, direction: str | None = None, limit: int = 8):
        """Answer NetHack's follow-up prompts until none is pending."""
        for _ in range(limit):
            if self.done:
                return
            top = bytes(self.raw["tty_chars"][0]).decode("latin-1")
            if "What do you want to" in top and item is not None:
                self.press(item)
            elif "In what direction" in top and direction is not None:
                self.press(_DIR_KEY[direction])
            elif "Which ring-finger" in top:
                self.press("r")
            elif "Really attack" in top:
                self.press("y")
            elif "Pick up what?" in self._screen():
                self.press(",")  # the menu: select every item, then confirm
                self.act("more")
            elif "--More--" in self._screen():
                self.act("more")
            elif re.search(r"\[[^\]]*\] *$", top.rstrip()) or "What do you want to" in top:
                self.act("esc")  # a prompt this skill has no answer for
            else:
                return

    def _step_towards(self, target: set, through_lava: bool) -> bool | None:
        """One move along a shortest known path to any cell of `target` (None: no path)."""
        start = self.pos
        lava = self.lava_cells()
        chars = self.obs["chars"]
        prev = {start: None}
        queue = deque([start])
        goal = None
        while queue:
            c = queue.popleft()
            if c in target:
                goal = c
                break
            for d, (dy, dx) in DIRECTIONS.items():
                n = (c[0] + dy, c[1] + dx)
                if n in prev or not (0 <= n[0] < 21 and 0 <= n[1] < 79):
                    continue
                ch = chr(int(chars[n]))
                if ch in " |-#" and n not in target:  # rock, walls (and trees/sinks: '#')
                    continue
                if n in lava and not through_lava:
                    continue
                prev[n] = (c, d)
                queue.append(n)
        if goal is None:
            return None
        if goal == start:
            return True
        c = goal
        while prev[c][0] != start:
            c = prev[c][0]
        self.act(prev[c][1])
        self._answer()
        return True

    # --- skills ---
    def run_skill(self, skill: str, until: Callable | None = None, interrupt: Callable | None = None) -> Step:
        t0, obs, before = self.steps, self.text(), true_props(self.props())
        unlocked0, reward0, inv0 = len(self.unlocked), self.reward_total, self.inventory_counts()
        self._sent, self._prims = [], []
        if self.done:
            ok, reason, cause = False, "the episode is over", {"kind": "episode_over", "died": self.dead}
        else:
            try:
                ok, reason, cause = self._run(skill, until, interrupt)
            except RegulaError:  # a refused skill sent nothing: stop logging primitives
                self._prims = None
                raise
            if not ok and cause is None:
                cause = {"kind": "other"}
            if self.done and not ok and cause["kind"] != "episode_over":
                reason, cause = reason + " (the episode ended)", {**cause, "kind": "episode_over", "died": self.dead}
            if self.dead and not ok and self.death:
                reason = f"{reason}: {self.death}"
        inv = self.inventory_counts()
        step = Step(t0, obs, skill, ok, "" if ok else reason, None if ok else cause, list(self._sent),
                    self.steps - t0, before, true_props(self.props()), _delta(inv0, inv), inv,
                    self.unlocked[unlocked0:], round(self.reward_total - reward0, 6), self.message, self._prims)
        self._prims = None
        self.events.append(step)
        return step

    def _run(self, skill: str, until, interrupt):
        verb, _, arg = skill.partition(" ")
        if verb == "go_to":
            return self._go_to(arg, until, interrupt)
        if verb == "pick_up" and not arg:
            return self._pick_up()
        if verb in ("put_on", "remove") and arg == "ring":
            return self._ring(verb)
        if verb == "zap" and arg.startswith("wand "):
            return self._zap(arg.split(" ", 1)[1])
        if verb == "descend" and not arg:
            return self._descend()
        if verb == "fight" and not arg:
            return self._fight()
        if verb == "move":
            return self._move(arg)
        if verb == "wait" and not arg:
            self.act("search")
            self._answer()
            return True, "", None
        raise UnknownNameError("MiniHack skill", skill, skill_names())

    def _go_to(self, thing: str, until, interrupt):
        if thing not in THINGS:
            raise UnknownNameError("MiniHack go_to target", thing, THINGS)
        for n in range(SKILL_BUDGET):
            if until is not None and until(self):
                return True, "", None
            target = self._targets(thing)
            if not target:
                return False, f"no {thing} in view", {"kind": "not_seen", "thing": thing}
            near = THINGS[thing] == "minotaur"  # a monster is reached when next to it
            goal = {n for c in target for n in self._neighbours(*c)} if near else target
            if self.pos in goal:
                return True, "", None
            if self._step_towards(goal, through_lava=self._levitating()) is None:
                return False, f"no known way to the {thing}", {"kind": "no_route", "to": thing}
            if self.end_status == SUCCESS and thing == "stairs":
                return True, "", None  # MiniHack ends the episode on the stairs: its goal
            if self.done:
                return False, "the episode ended", {"kind": "episode_over", "died": self.dead}
            if interrupt is not None and (why := interrupt(self)):
                return False, f"interrupted: {why}", {"kind": "interrupted", "why": why}
        return False, f"{SKILL_BUDGET} step(s) did not reach the {thing}", {"kind": "budget", "steps": SKILL_BUDGET}

    def _targets(self, thing: str) -> set:
        if thing == "stairs":
            return {self.stairs} if self.stairs else set()
        word = THINGS[thing]
        cells = set(self.cells(word))
        cells |= {c for c, d in self._objects.items() if word in d}
        return cells

    def _pick_up(self):
        here = self._objects.get(self.pos)
        if here is None:
            return False, "nothing here to pick up", {"kind": "too_far", "thing": "item"}
        before = len(self.inventory())
        self.act("pickup")
        self._answer()
        if len(self.inventory()) > before:
            self._objects.pop(self.pos, None)
            return True, "", None
        return False, f"picking up failed: {self.message}", {"kind": "no_effect", "skill": "pick_up"}

    def _ring(self, verb: str):
        ring = self._item("ring")
        if ring is None:
            return False, "no ring carried", {"kind": "missing", "item": "ring", "have": 0, "need": 1}
        worn = "hand)" in ring[2]
        if verb == "put_on" and worn:
            return False, "the ring is already worn", {"kind": "no_need", "stat": "ring_worn"}
        if verb == "remove" and not worn:
            return False, "the ring is not worn", {"kind": "no_need", "stat": "ring_worn"}
        self.act("puton" if verb == "put_on" else "remove")
        self._answer(item=ring[0])
        now = "hand)" in (self._item("ring") or ("", 0, ""))[2]
        if now != worn:
            return True, "", None
        return False, f"{verb} ring failed: {self.message}", {"kind": "no_effect", "skill": verb}

    def _zap(self, direction: str):
        if direction not in DIRECTIONS:
            raise UnknownNameError("direction", direction, DIRECTIONS)
        wand = self._item("wand")
        if wand is None:
            return False, "no wand carried", {"kind": "missing", "item": "wand", "have": 0, "need": 1}
        self.act("zap")
        self._answer(item=wand[0], direction=direction)
        if "nothing happens" in self.message.lower() or "You wrest" in self.message:
            return False, f"the wand did nothing: {self.message}", {"kind": "no_effect", "skill": "zap"}
        return True, "", None

    def _descend(self):
        if self.stairs != self.pos:
            return False, "not on the staircase down", {"kind": "too_far", "thing": "stairs"}
        if self._levitating():
            return False, "levitating: cannot reach the stairs", {"kind": "invalid", "thing": "stairs"}
        self.act("down")
        self._answer()
        if self.end_status == SUCCESS:
            return True, "", None
        return False, f"descending failed: {self.message}", {"kind": "no_effect", "skill": "descend"}

    def _move(self, direction: str):
        """One square; nothing stops it from stepping into lava (what lava does is for a
        learner to find out)."""
        if direction not in DIRECTIONS:
            raise UnknownNameError("direction", direction, DIRECTIONS)
        before = self.pos
        self.act(direction)
        self._answer()
        if self.dead:
            return False, "the agent died", {"kind": "episode_over", "died": True}
        if self.done or self.pos != before:
            return True, "", None
        return False, f"did not move: {self.message or 'something is in the way'}", {"kind": "no_effect", "skill": "move"}

    def _fight(self):
        y, x = self.pos
        for d, (dy, dx) in DIRECTIONS.items():
            if (y + dy, x + dx) in set(self._monsters()):
                self.act("fight")
                self.press(_DIR_KEY[d])
                self._answer()
                return True, "", None
        return False, "no monster next to the agent", {"kind": "too_far", "thing": "monster"}


def _delta(before: dict, after: dict) -> dict:
    return {k: after.get(k, 0) - before.get(k, 0) for k in sorted(set(before) | set(after))
            if after.get(k, 0) != before.get(k, 0)}


def _on_ray(ry: int, rx: int, dy: int, dx: int) -> bool:
    """(ry, rx) lies on the ray from the origin in direction (dy, dx), past the origin and within
    the squares every wand's ray reaches (`WAND_RANGE`, what the expert zaps within)."""
    k = max(abs(ry), abs(rx))
    return 0 < k <= WAND_RANGE and (ry, rx) == (k * dy, k * dx)


def _where(dist: int, dy: int, dx: int) -> str:
    if dist <= 1:
        word = "adjacent"
    elif dist <= 3:
        word = "near"
    elif dist <= 7:
        word = "far"
    else:
        word = "very far"
    key = ("n" if dy < 0 else "s" if dy > 0 else "") + ("w" if dx < 0 else "e" if dx > 0 else "")
    return f"{word} {DIR_WORD[key]}" if key else word


__all__ = ["ACHIEVEMENTS", "ACTIONS", "MiniHackEpisode", "PROPOSITIONS", "Step", "make_raw", "skill_names"]
