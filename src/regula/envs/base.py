"""What every environment adapter provides: a family (`EnvSpec`) and its episodes (`Environment`).

A system (LTLCrit, DiVE, CEDAR, E2CL) asks `regula.envs.get(name)` for the family and
`family.make(seed, ...)` for an episode; it never imports a simulator or an adapter's modules.
The family publishes the vocabularies (primitive actions, skills, propositions and their
descriptions), the scripted expert, and the ground truth the environment itself publishes
(Crafter's data.yaml, VirtualHome's resources). The ground truth is for scoring, and for the
rows a paper itself builds from it (hand-written laws, shortest plans): a learner or a
verifier must not read it.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable


@runtime_checkable
class Environment(Protocol):
    """One seeded episode, driven by high-level skills (or primitive actions), fully logged."""

    seed: int
    steps: int  # primitive steps taken
    events: list  # one record per high-level step (`to_json()` gives the log line)
    unlocked: list  # achievements / goals reached so far, in order

    @property
    def done(self) -> bool: ...

    @property
    def dead(self) -> bool: ...

    def reset(self) -> Any: ...

    def act(self, action: str) -> float:
        """One primitive action; returns its reward."""

    def run_skill(self, skill: str, until: Callable | None = None) -> Any:
        """One high-level step, logged in `events`; `until(env)` may end it early."""

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


def true_props(props: dict[str, bool]) -> list[str]:
    """The propositions that hold, sorted: a letter of a trace."""
    return sorted(k for k, v in props.items() if v)
