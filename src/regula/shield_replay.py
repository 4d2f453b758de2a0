"""Replay recorded episodes through a shield: would the laws have blocked what worked?

A law that blocks a skill which then succeeded in the real game is wrong; counting those on
the demonstrations checks a law file against the environment itself.
"""
from __future__ import annotations

from collections import Counter

from .logic import Shield


def replay(shield: Shield, episodes: list[dict]) -> dict:
    blocked, wrong, steps = 0, [], 0
    per_law: Counter = Counter()
    for ep in episodes:
        shield.reset()
        for step in ep["steps"]:
            state = step["props_before"]
            decision = shield.check(state, step["skill"])
            steps += 1
            if not decision.allowed:
                blocked += 1
                per_law.update(law.label for law in decision.violated)
                if step["success"]:
                    wrong.append({"seed": ep["header"]["seed"], "t": step["t"], "skill": step["skill"],
                                  "laws": [law.formula for law in decision.violated]})
            shield.commit(state, step["skill"])
    return {"steps": steps, "blocked": blocked, "blocked_but_succeeded": len(wrong),
            "wrongly_blocked": wrong[:20], "blocks_per_law": dict(sorted(per_law.items()))}
