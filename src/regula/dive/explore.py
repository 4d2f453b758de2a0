"""Exploration episodes: fresh experience for the Verifier, from a different behaviour.

The demonstrations come from a planner, so whatever the planner always does looks like a
rule (it always holds 3 wood when it makes a pickaxe, it always has a sword when it mines
stone). An explorer that mostly follows the expert (goal `all`) but takes a uniformly random
skill with probability `epsilon`, and every other one without the expert's habit of making
swords first, reaches the same parts of the game with other inventories, which is what
refutes such candidates. Episodes are in the demonstrations' format.
"""
from __future__ import annotations

import random
from dataclasses import asdict

from regula import envs
from regula.demos import episode_record

CRAFTER = envs.get("crafter")


class Explorer(CRAFTER.Expert):
    def __init__(self, world, config: CRAFTER.ExpertConfig, epsilon: float, seed: int):
        super().__init__(world, config)
        self.epsilon, self.rng = epsilon, random.Random(f"explorer:{seed}")

    def choose(self):
        survival = self.survive()
        if survival:
            return survival
        if self.rng.random() < self.epsilon:
            self.current_goal = None
            return self.rng.choice(CRAFTER.skill_names()), None
        return super().choose()


def explore_episode(env: dict, seed: int, epsilon: float, max_steps: int, max_skills: int) -> dict:
    inputs = {"seed": seed, "env": env, "explorer": {"epsilon": epsilon, "max_steps": max_steps,
                                                     "max_skills": max_skills}}
    world = CRAFTER.from_params(env, seed)
    # Habits differ between explorers: every other one never makes swords and heads straight
    # for the diamond (goal `all` spends its early game on saplings and plants, and rarely
    # reaches the iron where a sword habit would show).
    swords, goal = (CRAFTER.ExpertConfig.swords, "all") if seed % 2 == 0 else ((), "collect_diamond")
    config = CRAFTER.ExpertConfig(goal=goal, max_steps=max_steps, max_skills=max_skills, swords=swords)
    summary = asdict(Explorer(world, config, epsilon, seed).play())
    return episode_record(world, inputs, summary, source="explorer")
