"""Recorded AI2-THOR frames, read through ai2thor's own `Event`, and the two controllers an
episode can run on.

`frames/` holds real metadata frames (their source and licence in frames/SOURCE.md). A recording
is a start frame and, for each action sent, the frame that came back: `RecordedController`
replays it and refuses any action the recording does not hold, so a test can never pass on a
frame nobody recorded."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from ai2thor.server import Event

from regula.errors import RegulaError

FRAMES = Path(__file__).with_name("frames")


def load_metadata(name: str) -> dict:
    """A recorded frame's metadata (`name`: a file in frames/, without .json)."""
    path = FRAMES / f"{name}.json"
    if not path.is_file():
        known = sorted(p.stem for p in FRAMES.glob("*.json"))
        raise RegulaError(f"no recorded AI2-THOR frame {name!r}; recorded: {', '.join(known)}")
    return json.loads(path.read_text())


def event(metadata: dict) -> Event:
    """The frame as ai2thor's `Event` (a copy: an event never shares its metadata)."""
    return Event(copy.deepcopy(metadata))


class RecordedController:
    """Answers `step(action)` from a recording: [(action dict, metadata after it), ...] in order."""

    def __init__(self, start: dict, recording: list[tuple[dict, dict]] = ()):
        self.last_event = event(start)
        self._recording = list(recording)

    def step(self, action: dict) -> Event:
        if not self._recording:
            raise RegulaError(f"the recording ends before {action}")
        expected, after = self._recording[0]
        if expected != action:
            raise RegulaError(f"the recording holds {expected} next, not {action}")
        self._recording.pop(0)
        self.last_event = event(after)
        return self.last_event


def make_controller(scene: str, **options):
    """ai2thor's real `Controller` on `scene` (an iTHOR scene such as FloorPlan1). It needs the
    Unity build for this platform, which ai2thor downloads on first use from its own servers, and
    an X display (or `platform=CloudRendering`); where it cannot start, one clear error."""
    from ai2thor.controller import Controller
    try:
        return Controller(scene=scene, **options)
    except Exception as exc:  # the build's download, the display, the Unity process: each its own error
        raise RegulaError(f"AI2-THOR could not start scene {scene!r}: {exc}. It needs its Unity build (downloaded "
                          "by ai2thor on first use from AI2-THOR's servers) and an X display or "
                          "platform=CloudRendering; the recorded frames need neither") from exc
