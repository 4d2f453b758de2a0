"""One AI2-THOR episode behind the environment interface: a DFA's letter is one THOR action on the
controller, every step logged with THOR's own verdict (`lastActionSuccess`, `errorMessage`).

The controller is anything with `step(dict) -> Event` and `last_event`: ai2thor's real
`Controller` where its Unity build runs (`make_controller`), or `RecordedController`, which
answers from recorded metadata frames (tests and machines without the build)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import symbols


@dataclass
class Step:
    t: int
    letter: str
    action: dict | None  # the THOR action dict sent (None: the letter named nothing in the frame)
    success: bool
    reason: str  # THOR's errorMessage, or why the letter could not be sent ("" on success)
    cause: dict | None  # CAUSE_KINDS dict; None on success

    def to_json(self) -> dict:
        return dict(self.__dict__)


class ThorEpisode:
    """An episode on `controller`; `run_skill(letter)` (and `act`) send one THOR action."""

    def __init__(self, controller, seed: int = 0, max_steps: int | None = None):
        self.controller, self.seed, self.max_steps = controller, seed, max_steps
        self.reset()

    @property
    def done(self) -> bool:
        return self.max_steps is not None and self.steps >= self.max_steps

    @property
    def dead(self) -> bool:
        return False

    @property
    def objects(self) -> list[dict]:
        return self.controller.last_event.metadata["objects"]

    def reset(self):
        self.steps = 0
        self.events: list[Step] = []
        self.unlocked: list[str] = []
        return self.text()

    def act(self, action: str) -> float:
        self.run_skill(action)
        return 0.0

    def run_skill(self, skill: str, until: Callable | None = None, interrupt: Callable | None = None) -> Step:
        """One letter, one THOR action (atomic: `until`/`interrupt` are accepted for the interface)."""
        self.steps += 1
        try:
            action = symbols.action(skill, self.objects)
        except symbols.UnknownLetter as exc:
            thing = skill.partition("_")[2]
            step = Step(self.steps, skill, None, False, str(exc), {"kind": "not_seen", "thing": thing})
        else:
            meta = self.controller.step(action).metadata
            ok = bool(meta["lastActionSuccess"])
            reason = "" if ok else (meta.get("errorMessage") or f"{action['action']} failed")
            step = Step(self.steps, skill, action, ok, reason,
                        None if ok else {"kind": "other", "thor_error": reason})
        self.events.append(step)
        return step

    def proposition_names(self) -> list[str]:
        return symbols.proposition_names(self.objects)

    def props(self) -> dict[str, bool]:
        return symbols.props(self.objects)

    def text(self) -> str:
        visible = sorted({symbols.type_name(o["objectType"]) for o in self.objects if o.get("visible")})
        held = sorted({symbols.type_name(o["objectType"]) for o in self.objects if o.get("isPickedUp")})
        return (f"You see: {', '.join(visible) or 'nothing'}. "
                f"You hold: {', '.join(held) or 'nothing'}.")
