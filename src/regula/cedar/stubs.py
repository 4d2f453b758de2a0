"""The stub server's answers to CEDAR's prompts (`regula.llm.stub_answers` merges them): the
teacher's membership queries (`membership`, the `teacher` role's prompt, which the `membership`
stage also measures) from the `rules` teacher, and the verb choice for a task's sub-alphabet."""
from __future__ import annotations

import re

from regula.llm.stub_fields import bullets, dumps, yes


def membership(description: str, word: str) -> str:
    """The `rules` teacher, for the achievement the task names (`make a wood pickaxe`,
    `make_wood_pickaxe`); a task that names none accomplishes nothing."""
    from regula import envs, roles
    achievements = envs.get("crafter").rules.achievements
    words = [w for w in re.findall(r"[a-z]+", description.lower()) if w not in ("a", "an", "the")]
    goal = "_".join(words) if "_".join(words) in achievements else next(
        (a for a in achievements if re.search(rf"\b{a}\b", description)), None)
    if goal is None:
        return yes(False)
    skills = () if word == "(nothing)" else tuple(word.split(", "))
    return yes(roles.make("teacher", "rules", goal=goal).member(skills))


def membership_formula(description: str, letters: str, counterexample: str) -> str:
    """The teacher as a formula: the `rules` stand-in's clauses from data.yaml's recipes (no
    noise) for the achievement the task names, over the letters listed; none named: `false`."""
    from regula import envs
    from regula.automata.teachers import recipe_clauses
    achievements = envs.get("crafter").rules.achievements
    words = [w for w in re.findall(r"[a-z]+", description.lower()) if w not in ("a", "an", "the")]
    goal = "_".join(words) if "_".join(words) in achievements else None
    alphabet = letters.split(", ")
    if goal is None or envs.get("crafter").rules.recipe(goal).skill not in alphabet:
        return dumps({"clauses": ["false"]})
    return dumps({"clauses": [c["text"] for c in recipe_clauses(goal, alphabet)]})


def alphabet(task: str, verbs: str, nouns: str) -> str:
    """CEDAR's verb choice: the offered verbs that make a Crafter skill with a retrieved noun,
    and those that are a skill alone and named in the task (the first offered, if none)."""
    from regula import envs
    skills = set(envs.get("crafter").skill_names())
    offered = [line.split(":")[0] for line in bullets(verbs)]
    held = [line.split(":")[0] for line in bullets(nouns)]
    chosen = [v for v in offered if any(f"{v}_{n}" in skills for n in held)
              or (v in skills and re.search(rf"\b{v}", task.lower()))]
    return dumps({"verbs": chosen or offered[:1]})


# prompt template -> its answer, from the fields the role filled in
ANSWERS = {"membership": membership, "membership_formula": membership_formula, "cedar_alphabet": alphabet}
