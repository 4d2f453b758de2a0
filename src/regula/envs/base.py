"""What every environment adapter provides: a family (`EnvSpec`) and its episodes (`Environment`).

A system (LTLCrit, DiVE, CEDAR, E2CL) asks `regula.envs.get(name)` for the family and
`family.make(seed, ...)` for an episode; it never imports a simulator or an adapter's modules.
The family publishes the vocabularies (primitive actions, skills, propositions and their
descriptions), the scripted expert, and the ground truth the environment itself publishes
(Crafter's data.yaml, VirtualHome's resources). The ground truth is for scoring, and for the
rows a paper itself builds from it (hand-written laws, shortest plans): a learner or a
verifier must not read it.

Every high-level step an episode runs is one record in `events` (`to_json()` gives it): what
was asked, whether it succeeded, and, when it failed, why twice over: `reason`, a sentence for
people (`missing wood: have 1, place_table uses wood >= 2`), and `cause`, a small JSON-able dict
for programs (`{"kind": "missing", "item": "wood", "have": 1, "need": 2}`; None on success).
Consumers read `cause`, never parse `reason`. Its `kind` is one of `CAUSE_KINDS` below, the same
for every environment, with the fields listed there; an adapter may add fields.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable


# Why a step failed: kind -> (what it means, its fields). E2CL's eight VirtualHome error types map
# onto these: Missing Object -> missing, Object availability -> not_seen, Agent Proximity ->
# too_far, Unflipped Boolean State -> no_effect (or no_need where the state already held),
# Invalid Action -> invalid, Enclosed Object -> enclosed, Over-occupied Agent -> occupied,
# Others -> other. The Crafter adapter emits every kind down to `episode_over` (and never the
# last five: its skills walk to things and check affordances themselves).
CAUSE_KINDS = {
    "missing": ("the agent lacks an item the step uses or requires", ("item", "have", "need")),
    "not_seen": ("a thing the step needs has never been seen (or does not exist)", ("thing",)),
    "not_in_view": ("a thing the step needs is not in view now (creatures move)", ("thing",)),
    "no_route": ("no known way to where the step must happen", ("to",)),
    "no_effect": ("the action ran and the world did not change as it should", ("skill",)),
    "no_need": ("what the step is for already holds (sleeping with full energy)", ("stat",)),
    "woken": ("sleep ended before it was done", ()),
    "no_place": ("no place to do it (nowhere to wall in)", ("what",)),
    "ran_out": ("the step gave up because a body stat ran out (left the shelter)", ("stat",)),
    "nothing_to_explore": ("nothing unseen is reachable with the tools at hand", ()),
    "interrupted": ("the agent's own interrupt stopped the step (a reflex: a zombie close)", ("why",)),
    "budget": ("the step's primitive-action budget ran out", ("steps",)),
    "episode_over": ("the episode had ended (death, or its length)", ("died",)),
    "too_far": ("the agent is not close enough to the target", ("thing",)),
    "invalid": ("the action is not afforded by its target", ("thing",)),
    "enclosed": ("the target is inside something closed", ("thing",)),
    "occupied": ("the agent's hands or body are busy", ()),
    "other": ("anything else (the reason says what)", ()),
}


@runtime_checkable
class Environment(Protocol):
    """One seeded episode, driven by high-level skills (or primitive actions), fully logged."""

    seed: int
    steps: int  # primitive steps taken
    events: list  # one record per high-level step (`to_json()`: the log line, with `reason` and `cause`)
    unlocked: list  # achievements / goals reached so far, in order

    @property
    def done(self) -> bool: ...

    @property
    def dead(self) -> bool: ...

    def reset(self) -> Any: ...

    def act(self, action: str) -> float:
        """One primitive action; returns its reward."""

    def run_skill(self, skill: str, until: Callable | None = None, interrupt: Callable | None = None) -> Any:
        """One high-level step, logged in `events` and returned; `until(env)` may end it early
        as done, `interrupt(env)` (checked after each primitive action) stops it with the reason
        it returns. The record has `success`, `reason` (text) and `cause` (None, or a
        CAUSE_KINDS dict)."""

    def props(self) -> dict[str, bool]:
        """The symbolic state: every atomic proposition and its truth value."""

    def proposition_names(self) -> list[str]: ...

    def text(self) -> str:
        """The observation in words (what an LLM actor reads)."""


@runtime_checkable
class EnvSpec(Protocol):
    """A family of environments: how to make episodes, the vocabularies, and the ground truth."""

    name: str
    actions: tuple  # primitive actions
    rules: Any  # the ground truth the environment publishes (scoring and paper-defined rows only)

    def make(self, seed: int, **options) -> Environment: ...

    def skill_names(self) -> list[str]: ...

    def proposition_names(self, symbols=None) -> list[str]: ...

    def describe(self, proposition: str) -> str:
        """One line of English for a proposition, for prompts and reports."""


@runtime_checkable
class FactSpec(Protocol):
    """What a family gives DiVE's propositional discovery (`regula.dive.facts`), beside `EnvSpec`:
    the facts are propositions before and after a skill, read from the common episode log's
    `props_before` / `props_after`, so the family only says how a fact names a skill and what the
    true facts are. Crafter's DiVE reads inventory transitions instead (`regula.dive.banks`) and
    does not provide this; MiniHack does."""

    def fact_element(self, skill: str) -> str:
        """The element a fact names `skill` by (MiniHack: `zap wand e` -> `zap wand`)."""

    def fact_attributes(self) -> tuple:
        """The attributes a fact of this family may have (its ground truth's vocabulary)."""

    def ground_truth(self, task: str | None = None) -> tuple:
        """The true facts (each with element, attribute, arg, value, when, unless), of one task or
        all; for scoring only."""


def true_props(props: dict[str, bool]) -> list[str]:
    """The propositions that hold, sorted: a letter of a trace."""
    return sorted(k for k, v in props.items() if v)


def action_atom(skill: str) -> str:
    """A skill as an atom of a law: its name with "_" for each space (MiniHack's `move e` ->
    `move_e`); Crafter's skill names are atoms already and map to themselves."""
    return skill.replace(" ", "_")
