"""MiniHack's hand-written safety laws (laws.yaml) for the LTLCrit shield, checked on load.

The shield reads letters of the current state's propositions plus the proposed skill's atom
(`regula.envs.action_atom`: `move e` -> `move_e`), as on Crafter; the propositions a law needs
to see what one skill would step into (`lava_e`, `minotaur_e`, `over_lava`) are the adapter's
own (symbols.PROPOSITIONS). A law over an unknown atom, or one that contradicts another, stops
the load with one line naming the file and the law."""
from __future__ import annotations

from pathlib import Path

from regula.logic.laws import Law, load_laws

from ..base import action_atom
from .symbols import PROPOSITIONS, skill_names

LAWS_FILE = Path(__file__).parent / "laws.yaml"


def minihack_atoms() -> tuple[list[str], list[str]]:
    """(state propositions, action atoms): laws over MiniHack may use both."""
    return list(PROPOSITIONS), [action_atom(s) for s in skill_names()]


def hard_laws(path: str | Path = LAWS_FILE) -> list[Law]:
    props, actions = minihack_atoms()
    return load_laws(path, set(props) | set(actions), frozenset(actions))
