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
    noise, `recipe_clauses` with `calls=CALL`: a library call `call_s` gives what s ends with) for the
    achievement the task's first line names (`make a wooden pickaxe`: its verb, and each part of
    its noun starting a word) among the letters listed; none named: `false`."""
    from regula import envs
    from regula.automata.teachers import recipe_clauses
    from regula.cedar.formula import CALL
    achievements = envs.get("crafter").rules.achievements
    alphabet = letters.split(", ")
    words = re.findall(r"[a-z]+", (description.splitlines() or [""])[0].lower())
    goal = next((a for a in alphabet if a in achievements and words and a.split("_")[0] == words[0]
                 and all(any(w.startswith(p) for w in words[1:]) for p in a.split("_")[1:])), None)
    if goal is None:
        return dumps({"clauses": ["false"]})
    return dumps({"clauses": [c["text"] for c in recipe_clauses(goal, alphabet, calls=CALL)]})


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
