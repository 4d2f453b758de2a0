"""Benchmarks that print numbers (speed targets are measured here, not in timed tests)."""
from __future__ import annotations

import time

import numpy as np

from .envs.crafter.env import DeterministicCrafter
from .envs.crafter.expert import Expert, ExpertConfig
from .envs.crafter.world import CrafterWorld


def env_steps_per_second(render: bool, steps: int = 2000, seed: int = 0) -> float:
    env = DeterministicCrafter(seed=seed, render=render)
    env.reset()
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, 17, steps)
    t = time.perf_counter()
    for a in actions:
        _, _, done, _ = env.step(int(a))
        if done:
            env.reset()
    return steps / (time.perf_counter() - t)


def expert_episodes(episodes: int = 5, goal: str = "collect_diamond", max_steps: int = 3000) -> dict:
    t = time.perf_counter()
    steps = successes = 0
    for seed in range(episodes):
        world = CrafterWorld(seed=seed)
        summary = Expert(world, ExpertConfig(goal=goal, max_steps=max_steps)).play()
        steps += summary.steps
        successes += summary.success
    dt = time.perf_counter() - t
    return {"episodes_per_s": episodes / dt, "steps_per_s": steps / dt, "success": successes / episodes,
            "episodes": episodes}


def bench_env(steps: int = 2000, episodes: int = 5) -> dict:
    return {"render_steps_per_s": env_steps_per_second(True, steps),
            "norender_steps_per_s": env_steps_per_second(False, steps),
            **{f"expert_{k}": v for k, v in expert_episodes(episodes).items()}}
