"""Which of the retrieved letters a skill's Σ keeps (`cedar.letters`).

`retrieved` keeps them all: every skill acting on a retrieved noun, the template's letters too.
Over such a Σ the teacher's language counts what every letter consumes: place_furnace's 11
letters (stone consumers, swords, wood) make a language of 310 states by data.yaml's rules,
which no learner recovers at 10% noise within the askings kept here. The paper has the LLM pick
a compact sub-alphabet (§3.1); `rules` is the stand-in for that pick, as the rules teacher is for
the LLM's answers: it keeps the skill's own letter and, among the candidates, the skills that get
what the skill's recipe needs (what it consumes, the tool it requires, the station it needs
nearby), and is wrong on a fixed `noise` share of the other candidates (kept) and of those
(dropped: the world's lacks can bring them back, `cedar.widen_lacked`).
"""
from __future__ import annotations

from regula import envs
from regula.automata.teachers import unit  # the teacher's persistent draw: the stand-ins err alike


def needed(skill: str) -> set:
    """The skills that get what `skill`'s recipe needs (data.yaml): place_furnace -> collect_stone."""
    rules = envs.get("crafter").rules
    recipe = rules.recipe(skill)
    items = set(recipe.require) | set(recipe.uses)
    return {name for name, r in rules.recipes.items()
            if set(r.gives) & items or (r.kind == "place" and r.target in recipe.nearby)}


def choose(skill: str, candidates, objects: dict, noise: float, seed: int, shown=()) -> set:
    """The rules stand-in's pick among `candidates` widened to every skill on their nouns
    (`objects`: skill -> the objects it acts on). `shown`: skills on what the world showed the
    skill's letter lacking; the world's word overrides the chooser's errors on those it needs."""
    nouns = {o for a in candidates for o in objects.get(a, ())}
    pool = set(candidates) | {a for a, obj in objects.items() if obj and set(obj) <= nouns}
    want = needed(skill)
    picked = {a for a in pool - {skill} if (a in want) != (unit("letters", seed, skill, a) < noise)}
    return {skill} | picked | (want & set(shown))
