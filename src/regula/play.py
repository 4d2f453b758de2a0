"""A human plays Crafter in the terminal; the session can be recorded as a demonstration.

A command is a key (w a s d: move, e: do, z: sleep, t/f/r/p: place table/furnace/stone/
plant, 1-6: make pickaxes and swords, q: quit) or a skill name (`collect_wood`). On a
terminal a key acts as it is pressed and `:` starts a line with a skill name (`keys`);
otherwise each line read is a command (`lines`), as from a file or a pipe.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from . import envs
from .errors import UnknownNameError

KEYS = {"w": "move_up", "a": "move_left", "s": "move_down", "d": "move_right", "e": "do",
        "z": "sleep", "n": "noop", "t": "place_table", "f": "place_furnace", "r": "place_stone",
        "p": "place_plant", "1": "make_wood_pickaxe", "2": "make_stone_pickaxe",
        "3": "make_iron_pickaxe", "4": "make_wood_sword", "5": "make_stone_sword",
        "6": "make_iron_sword"}


def resolve(command: str) -> tuple[str, str]:
    """('action', name) or ('skill', name) for what the player typed."""
    command = command.strip()
    if command in KEYS:
        return "action", KEYS[command]
    crafter = envs.get("crafter")
    if command in crafter.actions:
        return "action", command
    if command in crafter.skill_names():
        return "skill", command
    raise UnknownNameError("command", command, list(KEYS) + crafter.skill_names())


def play(world, read: Callable[[], str], out: TextIO) -> None:
    """Loop until the player types q, the input ends, or the episode ends."""
    while not world.done:
        out.write("\n" + world.ascii_view() + "\n" + world.text() + "\n> ")
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


def lines(stream: TextIO) -> Callable[[], str | None]:
    """Each line of `stream` a command; None at its end."""
    return lambda: stream.readline() or None


@contextmanager
def keys(stream: TextIO, out: TextIO) -> Iterator[Callable[[], str | None]]:
    """Single key presses from the terminal `stream` (cbreak mode: no Enter needed, Ctrl-C
    still interrupts); `:` reads a skill name as a line. The terminal's mode is restored on
    the way out, however the session ends."""
    import termios
    import tty

    fd = stream.fileno()
    saved = termios.tcgetattr(fd)

    def read() -> str | None:
        key = os.read(fd, 1).decode(errors="replace")
        if key in ("", "\x04"):  # end of input, Ctrl-D
            return None
        if key != ":":
            out.write(f"{key}\n" if key.isprintable() else "\n")
            return key if key.isprintable() else ""
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)  # a line, echoed and editable
        try:
            out.write(":")
            out.flush()
            return stream.readline() or None
        finally:
            tty.setcbreak(fd)

    out.write("keys act as pressed; `:` then a skill name and Enter for a skill; q quits\n")
    tty.setcbreak(fd)
    try:
        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
