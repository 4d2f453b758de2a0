"""What the local test server (`stub_server.py`) answers each role's prompt with.

The role is recognised by its prompt template (src/regula/prompts/*.yaml): each template,
read backwards, is a pattern whose fields are the values the role filled in. The answer is
computed by the rule-grounded stand-ins that already exist, from those values alone, in the
role's answer schema: the `rules` teacher and feedback predictor, DiVE's statistical
discoverer and symbolic evolver (over data.yaml's dynamics for LTLCrit's actors), and
data.yaml's hard laws for the critic. So answers are meaningful, deterministic and
byte-stable, and a pipeline run against the server exercises every LLM path without a model.

The answers to a system's prompts live in its package (`<system>/stubs.py`, its `ANSWERS`);
here are the shared stages' (feedback) and the recognition.
"""
from __future__ import annotations

import importlib
import re
import string
from functools import lru_cache

from regula import prompts
from regula.llm.stub_fields import inventory_of, yes

# Each system's answers, from its own package (a module with an `ANSWERS` dict). One line per system.
SYSTEM_STUBS = (
    "regula.ltlcrit.stubs",
    "regula.dive.stubs",
    "regula.cedar.stubs",
    "regula.e2cl.stubs",
)


def _pattern(template: str) -> re.Pattern:
    """str.format read backwards: literal text as is, each field a named group (a repeated
    field must repeat its value)."""
    out, seen = [], set()
    for literal, field, _, _ in string.Formatter().parse(template):
        out.append(re.escape(literal))
        if field is not None:
            out.append(f"(?P={field})" if field in seen else f"(?P<{field}>.*?)")
            seen.add(field)
    return re.compile("".join(out), re.S)


@lru_cache(maxsize=None)
def _patterns() -> dict[str, tuple[re.Pattern, re.Pattern]]:
    return {name: (_pattern(prompts.load(name)["system"]), _pattern(prompts.load(name)["user"]))
            for name in ANSWERS}


def recognise(messages: list) -> tuple[str, dict] | None:
    """(template name, its fields) of a role's prompt; re-asks keep the first two messages."""
    if len(messages) < 2:
        return None
    system, user = (str(m.get("content", "")) for m in messages[:2])
    for name, (sys_re, user_re) in _patterns().items():
        s, u = sys_re.fullmatch(system), user_re.fullmatch(user)
        if s and u:
            return name, {**s.groupdict(), **u.groupdict()}
    return None


def answer(messages: list) -> str:
    found = recognise(messages)
    if found is None:
        return ("This test server answers only regula's role prompts (" + ", ".join(ANSWERS)
                + "); this prompt matches none of them.")
    name, fields = found
    return ANSWERS[name](**fields)


# -- yes/no roles of the shared stages ---------------------------------------------------------

def feedback(obs: str, skill: str) -> str:
    """The `rules` feedback predictor on the inventory the observation shows (before the step)."""
    from regula import roles
    step = {"skill": skill, "inventory": inventory_of(obs), "inventory_delta": {}}
    return yes(roles.make("feedback", "rules").predict(step))


def _merged() -> dict:
    answers = {"feedback": feedback}
    for module in SYSTEM_STUBS:
        for name, fn in importlib.import_module(module).ANSWERS.items():
            if name in answers:
                raise ValueError(f"{module} answers the prompt template {name!r}, which is answered already")
            answers[name] = fn
    return answers


# prompt template -> its answer, from the fields the role filled in
ANSWERS = _merged()
