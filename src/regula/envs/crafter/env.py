"""A deterministic, optionally image-free Crafter environment.

Two fixes over `crafter.Env`, both needed for trajectories that replay step for step:

* Creature balancing iterates a chunk's objects, a `set` whose order is the objects' memory
  addresses, and picks one with the world's RNG; the same seed then despawns different
  creatures in different processes. We hand the balancer the objects sorted by position
  (positions are unique: one object per cell).
* Rendering at night draws noise from the *world's* RNG, so skipping the image would change
  the game. The image-free mode draws the same numbers without drawing pixels, so a run with
  and without rendering is the same run (tested).

`reset` and `step` are crafter 1.8.3's own (the version pinned), made cheaper for long episodes
and the same game step for step (tested against crafter's): a world generated once is kept (a
deep copy, `WORLDS` of them per process) and copied back when the same seed's episode is reset
again (stages replay the same worlds under many conditions; generating one takes ~0.12 s, a
copy ~2 ms); distances to the player in plain integers; in the image-free mode no
`info["semantic"]` (a map image nothing here reads). The textures (56 PNG files that every
`crafter.Env` reads anew: ~70 ms, a third of making an episode) are read once per process and
shared: nothing writes them, and their resized copies are a cache.
"""
from __future__ import annotations

import copy
import threading
from collections import OrderedDict

import crafter
import crafter.constants
import numpy as np
from crafter import engine, objects, worldgen

from .rules import RULES

WORLDS = 64  # generated worlds kept per process (~35 kB each)
_generated: OrderedDict = OrderedDict()  # (seed, episode, area) -> (world's attributes, player)
_WORLD = object()  # stands for the live world inside a kept copy
_lock = threading.Lock()  # episodes may run in threads


_Textures = engine.Textures


class _SharedTextures:
    """Stands for `engine.Textures` while a `crafter.Env` is made: read on the first call."""

    textures = None

    def __new__(cls, directory):
        if cls.textures is None:
            cls.textures = _Textures(directory)
        return cls.textures


class DeterministicCrafter(crafter.Env):
    def __init__(self, seed: int, render: bool = True, length: int = 10000, **kwargs):
        with _lock:  # crafter.Env looks `engine.Textures` up when made; nothing else does
            engine.Textures = _SharedTextures
            try:
                super().__init__(seed=seed, length=length, **kwargs)
            finally:
                engine.Textures = _Textures
        self.render_images = render

    def _balance_chunk(self, chunk, objs):
        ordered = sorted(objs, key=lambda o: (int(o.pos[0]), int(o.pos[1])))
        super()._balance_chunk(chunk, ordered)

    def reset(self):
        center = (self._world.area[0] // 2, self._world.area[1] // 2)
        self._episode += 1
        self._step = 0
        key = (self._seed, self._episode, tuple(self._world.area))
        with _lock:
            kept = _generated.get(key)
            if kept is not None:
                _generated.move_to_end(key)
        if kept is not None:
            state, self._player = copy.deepcopy(kept, {id(_WORLD): self._world})
            self._world.__dict__.update(state)
            self._update_time()
        else:
            self._world.reset(seed=hash((self._seed, self._episode)) % (2 ** 31 - 1))
            self._update_time()
            self._player = objects.Player(self._world, center)
            self._world.add(self._player)
            worldgen.generate_world(self._world, self._player)
            kept = copy.deepcopy((dict(self._world.__dict__), self._player), {id(self._world): _WORLD})
            with _lock:
                _generated[key] = kept
                while len(_generated) > WORLDS:
                    _generated.popitem(last=False)
        self._last_health = self._player.health
        self._unlocked = set()
        return self._obs()

    def step(self, action):
        self._step += 1
        self._update_time()
        player = self._player
        player.action = crafter.constants.actions[action]
        reach = 2 * max(self._view)
        for obj in self._world.objects:  # the player is the first: it may have moved when others update
            (x, y), (px, py) = obj.pos.tolist(), player.pos.tolist()
            if abs(x - px) + abs(y - py) < reach:
                obj.update()
        if self._step % 10 == 0:
            for chunk, objs in self._world.chunks.items():
                self._balance_chunk(chunk, objs)
        obs = self._obs()
        reward = (player.health - self._last_health) / 10
        self._last_health = player.health
        unlocked = {name for name, count in player.achievements.items()
                    if count > 0 and name not in self._unlocked}
        if unlocked:
            self._unlocked |= unlocked
            reward += 1.0
        dead = player.health <= 0
        over = self._length and self._step >= self._length
        info = {"inventory": player.inventory.copy(), "achievements": player.achievements.copy(),
                "discount": 1 - float(dead), "player_pos": player.pos, "reward": reward}
        if self.render_images:
            info["semantic"] = self._sem_view()
        if not self._reward:
            reward = 0.0
        return obs, reward, dead or over, info

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


class ImageFreeCrafter(crafter.Env):
    """crafter.Env as shipped, minus drawing its image: the cost of crafter's own game, for
    benchmarks (its nights and creatures differ from `DeterministicCrafter`'s, see above)."""

    def _obs(self):
        return None


ACTION_INDEX = {name: i for i, name in enumerate(RULES.actions)}
