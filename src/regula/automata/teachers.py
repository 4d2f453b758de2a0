"""Membership teachers (the `teacher` role, `regula.roles.Teacher`): the rule-grounded Crafter
teacher (`rules`) and the LLM teacher (`openai`, through the LLM layer's cache), and the noisy
wrapper evaluation puts around a known language.

`NoisyTeacher` is not a backend of the role: it answers from a truth function the caller
hands it (a random target DFA in `automata_eval`), so it has no knowledge of its own to choose
by name; it is the noise model the `rules` teacher inherits.
"""
from __future__ import annotations

import hashlib
from typing import Callable

from regula import roles

NOISE_KINDS = ("independent", "persistent")


def unit(*parts) -> float:
    """A reproducible number in [0, 1) from the parts (no global RNG, no str-hash salt)."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2 ** 64


class NoisyTeacher:
    """Answers `truth(word)`, wrong with probability `noise`: afresh at each asking
    (independent) or for a fixed set of words every time (persistent)."""

    def __init__(self, truth: Callable[[tuple], bool], noise: float, kind: str = "independent", seed: int = 0):
        if kind not in NOISE_KINDS:
            from regula.errors import UnknownNameError
            raise UnknownNameError("noise kind", kind, NOISE_KINDS)
        if not 0 <= noise < 0.5:
            from regula.errors import ParamsError
            raise ParamsError(f"teacher noise must be in [0, 0.5), got {noise}")
        self.truth, self.noise, self.kind, self.seed = truth, noise, kind, seed
        self.asked = 0

    def member(self, word: tuple, sample: int = 0) -> bool:
        self.asked += 1
        key = (self.seed, tuple(word)) if self.kind == "persistent" else (self.seed, tuple(word), sample)
        answer = bool(self.truth(tuple(word)))
        return (not answer) if unit(*key) < self.noise else answer


def _had(crafter, state, skill: str) -> bool:
    """What `skill` is for is had in abstract `state` (None: a fresh start): the tool it makes, or
    the station it places (`library.SkillWorld._held`, read off the abstract state)."""
    if state is None:
        return False
    recipe = crafter.rules.recipe(skill)
    if recipe.kind == "make":
        return all(state.count(item) > 0 for item in recipe.gives)
    return recipe.kind == "place" and recipe.target in crafter.rules.stations and recipe.target in state.placed


@roles.register("teacher", "rules")
class CrafterRulesTeacher(NoisyTeacher):
    """Does a word of skills accomplish `goal` from a fresh start, by data.yaml's abstract
    rules? (Every skill applicable in turn, and the goal's skill among them.) Letters in
    `ignore` are read past: CEDAR's events (`has_wood`, read off the log) and skills that
    change nothing a recipe needs (`eat_cow`). A letter starting with `calls` (CEDAR's `@s`) calls
    the learned skill s, read as s done from where the word is, by data.yaml's shortest plan
    (a skill gathers what it needs itself). `held`: a call whose tool is held or whose station is
    placed already is done at once, as the executor runs it (`cedar.call_held`); read as a plan, a
    second wooden pickaxe gathers a log the abstract rules never spend, and the teacher said yes to
    make_iron_pickaxe words taking their wood from `@make_wood_pickaxe`, which the world refuted."""

    uses_llm = False

    def __init__(self, goal: str, noise: float = 0.0, kind: str = "independent", seed: int = 0, ignore=(),
                 calls: str = "", held: bool = False):
        from regula import envs
        crafter = envs.get("crafter")
        crafter.rules.recipe(goal)  # an unknown goal fails here, not at the first question
        ignore = frozenset(ignore)
        done = crafter.rules.recipe(goal).skill

        def truth(word):
            state = None  # a fresh start
            for a in word:
                if a in ignore:
                    continue
                steps = [a]
                if held and calls and a.startswith(calls) and _had(crafter, state, a[len(calls):]):
                    continue
                if calls and a.startswith(calls):
                    try:
                        steps = crafter.shortest_plan(a[len(calls):], state)
                    except ValueError:  # no plan from here: the call cannot succeed
                        return False
                for b in steps:
                    state = crafter.after(state, b)
                    if state is None:
                        return False
                    if b == done:
                        return True
            return False

        super().__init__(truth, noise, kind, seed)
        self.goal = goal


@roles.register("teacher", "openai")
class LLMTeacher:
    """Asks an LLM (through `regula.llm`, cached per sample index) whether a word of symbols
    accomplishes a described skill or satisfies a described specification."""

    uses_llm = True

    def __init__(self, client, description: str, role: str = "teacher"):
        self.client, self.description, self.role = client, description, role

    def member(self, word: tuple, sample: int = 0) -> bool:
        from regula import prompts
        msgs = prompts.messages("membership", description=self.description,
                                word=", ".join(word) if word else "(nothing)")
        return self.client.ask_yes_no(msgs, self.role, sample=sample)
