"""Exploration episodes: fresh experience for the Verifier, from a different behaviour.

The demonstrations come from a planner, so whatever the planner always does looks like a
rule (it always holds 3 wood when it makes a pickaxe, it always has a sword when it mines
stone). An explorer that mostly follows the expert (goal `all`) but takes a uniformly random
skill with probability `epsilon`, and every other one without the expert's habit of making
swords first, reaches the same parts of the game with other inventories, which is what
refutes such candidates. Episodes are in the demonstrations' format (`regula.episodes`); the
explorer's random skills are logged as chosen by `random`.
"""
from __future__ import annotations

import random
from dataclasses import asdict

from regula import envs, episodes
from regula.agents import Decision

CRAFTER = envs.get("crafter")


class Explorer:
    """An agent wrapping the expert: its survival layer first, then a random skill with probability
    `epsilon`, else the expert's step toward its goal (logged as the explorer's)."""

    name = "explorer"

    def __init__(self, world, config: CRAFTER.ExpertConfig, epsilon: float, seed: int):
        self.expert = CRAFTER.Expert(world, config)
        self.config, self.all_done = config, self.expert.all_done  # what play_episode reads
        self.epsilon, self.rng = epsilon, random.Random(f"explorer:{seed}")

    def start(self, world) -> None:
        self.expert.start(world)

    def decide(self, world) -> Decision:
        expert = self.expert
        try:
            due = expert.survival.due()
            if due:
                return due
            if self.rng.random() < self.epsilon:
                skill = self.rng.choice(CRAFTER.skill_names())
                return Decision(skill, None, expert.survival.interrupt(skill, None), by="random")
            return expert.pursue(by=self.name)
        except ValueError:
            return Decision(None, end="no plan")

    def observe(self, world, decision: Decision, step) -> str | None:
        return self.expert.observe(world, decision, step)


def explore_inputs(env: dict, seed: int, epsilon: float, max_steps: int, max_skills: int) -> dict:
    """Everything one exploration episode depends on."""
    return {"seed": seed, "env": env, "explorer": {"epsilon": epsilon, "max_steps": max_steps,
                                                   "max_skills": max_skills}}


def explore_episode(inputs: dict) -> dict:
    """Play one exploration episode (`explore_inputs`); returns the episode."""
    env, seed, cfg = inputs["env"], inputs["seed"], inputs["explorer"]
    epsilon, max_steps, max_skills = cfg["epsilon"], cfg["max_steps"], cfg["max_skills"]
    world = CRAFTER.from_params(env, seed)
    # Habits differ between explorers: every other one never makes swords and heads straight
    # for the diamond (goal `all` spends its early game on saplings and plants, and rarely
    # reaches the iron where a sword habit would show).
    swords, goal = (CRAFTER.ExpertConfig.swords, "all") if seed % 2 == 0 else ((), "collect_diamond")
    config = CRAFTER.ExpertConfig(goal=goal, max_steps=max_steps, max_skills=max_skills, swords=swords)
    notes: dict = {}
    summary = asdict(CRAFTER.play_episode(world, Explorer(world, config, epsilon, seed), notes))
    return episodes.record(world, inputs, summary, "explorer", notes)
