"""Steps per CPU second through the adapter against the raw MiniHack env (`regula bench minihack`)."""
from __future__ import annotations

import time

import numpy as np

from .env import MiniHackEpisode, make_raw

# moves and waiting only: commands that open prompts would time the prompt, not the step
BENCH_ACTIONS = ("n", "ne", "e", "se", "s", "sw", "w", "nw", "search")


def steps_per_second(task: str, level: dict, steps: int = 2000, seed: int = 0) -> dict:
    """The raw env (`env.step`, its observation as MiniHack returns it) and the adapter
    (`MiniHackEpisode.act`: the step plus the memory, the achievements and the end status) on
    one seeded sequence of actions; an ended episode is reset (resets timed apart). `level`:
    the task's entry of tasks.yaml (`spec.task`)."""
    names = np.random.default_rng(seed).choice(BENCH_ACTIONS, steps).tolist()
    raw = make_raw(level)
    index = {a.name.lower() if type(a).__name__ == "CompassDirection" else a.name.lower(): i
             for i, a in enumerate(raw.actions) if type(a).__name__ != "CompassDirectionLonger"}
    clock = time.process_time

    def run(reset, step) -> tuple[float, float, int]:
        stepping = resetting = 0.0
        resets = 0
        t = clock()
        reset()
        resetting += clock() - t
        for a in names:
            t = clock()
            over = step(a)
            stepping += clock() - t
            if over:
                t = clock()
                reset()
                resetting += clock() - t
                resets += 1
        return stepping, resetting, resets + 1

    def raw_reset():
        raw.seed(seed, seed + 1_000_003, reseed=False)
        raw.reset()

    def raw_step(a):
        _, _, term, trunc, _ = raw.step(index[a])
        return term or trunc

    ep = MiniHackEpisode(task, level, seed=seed)

    def adapter_step(a):
        ep.act(a)
        return ep.done

    out = {"task": task, "steps": steps}
    for name, (reset, step) in {"raw_env": (raw_reset, raw_step), "adapter": (ep.reset, adapter_step)}.items():
        stepping, resetting, resets = run(reset, step)
        out[f"{name}_steps_per_s"] = steps / stepping
        out[f"{name}_reset_s"] = resetting / resets
    out["adapter_over_raw_env"] = out["adapter_steps_per_s"] / out["raw_env_steps_per_s"]
    return out
