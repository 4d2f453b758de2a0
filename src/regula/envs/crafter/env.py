"""A deterministic, optionally image-free Crafter environment.

Two fixes over `crafter.Env`, both needed for trajectories that replay step for step:

* Creature balancing iterates a chunk's objects, a `set` whose order is the objects' memory
  addresses, and picks one with the world's RNG; the same seed then despawns different
  creatures in different processes. We hand the balancer the objects sorted by position
  (positions are unique: one object per cell).
* Rendering at night draws noise from the *world's* RNG, so skipping the image would change
  the game. The image-free mode draws the same numbers without drawing pixels, so a run with
  and without rendering is the same run (tested).
"""
from __future__ import annotations

import crafter
import numpy as np

from .rules import RULES


class DeterministicCrafter(crafter.Env):
    def __init__(self, seed: int, render: bool = True, length: int = 10000, **kwargs):
        super().__init__(seed=seed, length=length, **kwargs)
        self.render_images = render

    def _balance_chunk(self, chunk, objs):
        ordered = sorted(objs, key=lambda o: (int(o.pos[0]), int(o.pos[1])))
        super()._balance_chunk(chunk, ordered)

    def _obs(self):
        if self.render_images:
            return self.render()
        # LocalView._light -> _noise draws uniform(32, 127, canvas.shape[:2]) from the world RNG
        # when daylight < 0.5; draw the same amount so the RNG stream is unchanged.
        if self._world.daylight < 0.5:
            unit = self._size // self._view
            grid = np.array(self._local_view._grid)
            self._world.random.uniform(32, 127, tuple(grid * unit))
        return None

    # Accessors the adapter needs; crafter keeps these private.
    @property
    def world(self):
        return self._world

    @property
    def player(self):
        return self._player

    @property
    def step_count(self) -> int:
        return self._step

    @property
    def evening(self) -> bool:
        """Daylight is falling: crafter's daylight is 1 - |cos(pi * p)|^3, p = step/300 % 1 + 0.3."""
        return 0.5 <= (self._step / 300) % 1 + 0.3 < 1.0


ACTION_INDEX = {name: i for i, name in enumerate(RULES.actions)}
