"""DiVE's params section (`dive`): dynamics discovered from data/demos, verified, evolved into strategies.

`SECTIONS` is what `regula.params` composes into the schema (one registry line there names this
module); `LLM_RUN` is the default overlay (section -> mapping) of the stage's `_llm` twin (`llm_runs.dive`).
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from regula.schema import AtLeast1, AtLeast0, Count0, Count1, WORLDS, Listed, Rate, Section, Seed, one_of

from . import CONDITIONS

# The names params may give; each equals the registry of the code that defines it (a test checks).
DISCOVERERS = ("openai", "statistical")  # regula.roles.names("discoverer")
EVOLVERS = ("openai", "symbolic")  # regula.roles.names("evolver")


class Dive(Section):  # DiVE: dynamics discovered from data/demos, verified, scored against data.yaml
    TRAINED = {"DiVE's exploration worlds": ("explore_seed", "explore_episodes")}
    EVALUATED = "agent_episodes"

    discoverer: Annotated[str, one_of(DISCOVERERS)] = "statistical"
    samples: AtLeast1 = 8  # successful transitions the Discoverer reads per action and step
    inject: Rate = 0.3  # wrong candidates added per discovered one
    verify_samples: AtLeast1 = 16  # fresh transitions the Verifier checks each candidate on
    chance: Rate = 0.05  # a requirement held this likely by chance has no evidence
    steps: AtLeast0 = 0  # discovery steps (step i reads the first i demonstrations); 0: one per demonstration
    explore_episodes: Count0 = 12
    explore_seed: Seed = 1000
    epsilon: Rate = 0.3  # the explorer's share of random skills
    explore_max_steps: AtLeast1 = 3000
    explore_max_skills: AtLeast1 = 300
    evolver: Annotated[str, one_of(EVOLVERS)] = "symbolic"
    max_tokens: AtLeast1 = 512  # LLM answer length for the discoverer and evolver roles
    # the agents (regula.dive.agent's doc maps each to the paper's row); cot, cot_dynamics ask the LLM
    conditions: Annotated[list[Annotated[str, one_of(CONDITIONS)]], Listed] = Field(
        default_factory=lambda: ["dive", "no_evolver", "no_verifier", "no_verifier_no_evolver", "no_dynamics",
                                 "human_dynamics", "manual_dynamics", "manual_dynamics_no_evolver", "random",
                                 "expert", "human_dynamics_evolved", "dive_no_survival"])
    worlds: Annotated[str, one_of(WORLDS)] = "eval"  # the seeds.<worlds> range the agents play
    agent_episodes: Count1 = 20  # its first worlds (at most its count)
    agent_max_steps: AtLeast1 = 10000
    agent_max_skills: AtLeast1 = 3000
    bootstrap: Count1 = 1000  # resamples of the episodes for the pooled score's 95% interval (seeded by `seed`)
    score_groups: AtLeast1 = 4  # groups of consecutive worlds whose pooled scores give the score's mean ± std
    # processes that play a condition's (and the exploration's) episodes at once (each seeded from
    # its world: every output is the same for any count); a condition that asks the LLM plays here
    workers: AtLeast1 = 2


SECTIONS = {"dive": Dive}
LLM_RUN = {"dive": {
    "discoverer": "openai", "evolver": "openai", "steps": 2, "max_tokens": 256, "explore_episodes": 4,
    "conditions": ["dive", "cot", "cot_dynamics"], "agent_episodes": 20, "agent_max_skills": 12}}
