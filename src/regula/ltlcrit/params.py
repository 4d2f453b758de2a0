"""LTLCrit's params section (`ltlcrit`): shielded actors, a critic inducing laws from trajectories.

`SECTIONS` is what `regula.params` composes into the schema (one registry line there names this
module); `LLM_RUN` is the default overlay (section -> mapping) of the stage's `_llm` twin (`llm_runs.ltlcrit`).
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from regula.schema import AtLeast0, AtLeast1, Count1, WORLDS, Distinct, Listed, Section, achievements, one_of

# The names params may give; each equals the registry of the code that defines it (a test checks).
ACTORS = ("greedy", "greedy_goal", "inner_monologue", "naive", "random", "saycan")  # regula.roles.names("actor")
CRITICS = ("openai", "symbolic")  # regula.roles.names("critic")
FALLBACKS = ("ranked", "uniform")  # regula.ltlcrit.rollout.FALLBACKS
EFFICIENCY = ("restrict", "plan")  # regula.ltlcrit.critic.EFFICIENCY


class Ltlcrit(Section):  # shielded actors, a critic inducing laws from trajectories
    EVALUATED = "episodes"

    goal: Annotated[str, one_of(achievements)] = "collect_diamond"  # the task: one achievement
    worlds: Annotated[str, one_of(WORLDS)] = "eval"  # the seeds.<worlds> range the actors and the expert play
    episodes: Count1 = 40  # its first worlds (at most its count)
    actors: Annotated[list[Annotated[str, one_of(ACTORS)]], Listed] = Field(default_factory=lambda: ["random", "greedy"])
    critic: Annotated[str, one_of(CRITICS)] = "symbolic"
    # The symbolic critic's efficiency laws. restrict: block the actions the rollouts show wasted,
    # leaving the choice among the rest to the actor (the paper's critic) | plan: laws
    # `G(state -> action)` regressed from the goal through the hard laws, which together spell a
    # plan and leave the actor one action (an option, not the paper's)
    efficiency: Annotated[str, one_of(EFFICIENCY)] = "restrict"
    # Actors run again with the critic reading data/demos besides their rollouts: an ablation, not
    # in the paper (whose critic reads the actor's own trajectories only); []: none.
    demos_ablation: Annotated[list[Annotated[str, one_of(ACTORS)]], Distinct] = Field(
        default_factory=lambda: ["greedy"])
    hard_laws: bool = True  # shield with data.yaml's hard laws (SayCan's affordance filter)
    iterations: AtLeast0 = 5  # critic rounds at most
    patience: AtLeast1 = 2  # stop after this many rounds without a better success rate / fewer actions
    max_replans: AtLeast0 = 3  # refused proposals per decision, then `fallback` picks among the allowed
    # ranked: the actor's own ranking restricted to the allowed actions (the paper's actor keeps
    # choosing until its choice passes; this is its choice among what passes), a uniform draw
    # where it names none of them | uniform: a seeded uniform draw over the allowed actions
    fallback: Annotated[str, one_of(FALLBACKS)] = "ranked"
    max_skills: AtLeast1 = 150
    max_steps: AtLeast1 = 3000
    upkeep: bool = True  # the survival layer drinks, eats, sleeps and fights
    history: AtLeast0 = 6  # InnerMonologue: past steps kept in the prompt
    max_tokens: AtLeast1 = 1024  # LLM answer length for the actor and critic roles
    # processes that play an iteration's episodes at once (each seeded from its world: every output
    # is the same for any count); an LLM actor's always play here, one after another
    workers: AtLeast1 = 2


SECTIONS = {"ltlcrit": Ltlcrit}
LLM_RUN = {"ltlcrit": {
    "actors": ["random", "greedy", "naive", "saycan", "inner_monologue"], "critic": "openai",
    "demos_ablation": [], "episodes": 40, "iterations": 1, "max_replans": 0, "max_skills": 6,
    "max_tokens": 256}}
