"""What a params section is made of: the value rules and types every section uses, shared by
the project's schema (`regula.params`) and the systems' sections, each in its own package
(`regula.<system>.params`).

A rule fails with a `PydanticCustomError` carrying one line; `regula.params.describe` prefixes
it with the dotted key. This module imports no system: a system's section imports it, and
`regula.params` composes the sections.
"""
from __future__ import annotations

from typing import Annotated, Callable, ClassVar, Iterable

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from .errors import RegulaError


def error(message: str) -> PydanticCustomError:
    return PydanticCustomError("regula", "{message}", {"message": message})


def one_of(names: Iterable[str] | Callable[[], Iterable[str]]):
    """A name among `names` (or `names()`, read when a value is checked)."""
    def check(value: str) -> str:
        allowed = sorted(names() if callable(names) else names)
        if value not in allowed:
            raise error(f"{value!r} is not one of {', '.join(allowed)}")
        return value
    return AfterValidator(check)


def within(low: float, high: float):
    def check(value: float) -> float:
        if not low <= value <= high:
            raise error(f"must be within {low}..{high}, got {value}")
        return value
    return AfterValidator(check)


def _odd(value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise error(f"must be odd and >= 1, got {value}")
    return value


def checked_by(check: Callable[[object], object]):
    """Run a check that lives with the code relying on it; its RegulaError becomes the error."""
    def run(value):
        try:
            check(value)
        except RegulaError as exc:
            raise error(str(exc)) from None
        return value
    return AfterValidator(run)


def _distinct(values: list) -> list:
    """No entry twice."""
    twice = sorted({str(v) for v in values if values.count(v) > 1})
    if twice:
        raise error(f"lists {', '.join(twice)} more than once")
    return values


def _listed(values: list) -> list:
    """A list a stage iterates over: at least one entry, none twice."""
    if not values:
        raise error("must list at least one value, got []")
    return _distinct(values)


Listed = AfterValidator(_listed)
Distinct = AfterValidator(_distinct)


def _noise(value: float) -> float:
    if not 0 <= value < 0.5:  # a teacher wrong half the time or more carries no signal
        raise error(f"must be in [0, 0.5), got {value}")
    return value


def achievements():
    """Crafter's achievement names, from the adapter (read when a value is first checked)."""
    from regula import envs
    return envs.get("crafter").achievement_names()


def goals():
    """An expert's goals: an achievement, or every one."""
    from regula import envs
    return [*achievements(), envs.get("crafter").all_goals]


# Every int has a bound, checked before anything is allocated: a budget or size fits the C and
# numpy layers (Crafter's world seed is numpy's, under 2**32); a count of things each held in
# memory (episodes, worlds, targets, resamples) stays far under what a list of them would cost.
MAX_INT = 2 ** 31 - 1
MAX_COUNT = 1_000_000
AtLeast0 = Annotated[int, Field(ge=0, le=MAX_INT)]
AtLeast1 = Annotated[int, Field(ge=1, le=MAX_INT)]
Count0 = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Count1 = Annotated[int, Field(ge=1, le=MAX_COUNT)]
# also an episode file's name (episode_<seed>.jsonl); a seed plus an episode index stays an int
Seed = Annotated[int, Field(ge=0, le=MAX_INT - MAX_COUNT)]
Odd = Annotated[int, Field(le=MAX_COUNT), AfterValidator(_odd)]  # a majority vote never ties
Rate = Annotated[float, within(0, 1)]
Noise = Annotated[float, AfterValidator(_noise)]  # a teacher's error rate
Name = Annotated[str, Field(min_length=1)]

# The world ranges an evaluation may play (`seeds.<worlds>`).
WORLDS = ("dev", "eval")
# The names params may give for roles and kinds that more than one section uses. Each equals
# the registry of the code that defines it (a test checks), but lives here: every stage
# imports the schema, and DVC's deps follow imports, so reading them from the code that
# defines them would make every stage depend on it.
TEACHERS = ("openai", "rules")  # regula.roles.names("teacher")
NOISE_KINDS = ("independent", "persistent")  # regula.automata.teachers.NOISE_KINDS


class Section(BaseModel):
    """A params section: strict types, no key the schema does not name. A system's section may
    declare, for `regula.params`' world checks, `TRAINED`: the worlds it learns from, as
    {what: (first-seed key, count key)}, which no evaluation may play; `EVALUATED`: the count
    key of the episodes it plays on its `worlds` range, which may not exceed that range."""

    model_config = ConfigDict(strict=True, extra="forbid")
    TRAINED: ClassVar[dict[str, tuple[str, str]]] = {}
    EVALUATED: ClassVar[str | None] = None
