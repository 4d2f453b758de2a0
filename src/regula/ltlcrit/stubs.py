"""The stub server's answers to LTLCrit's prompts (`regula.llm.stub_answers` merges them): the
actors' and SayCan's from DiVE's chain over data.yaml's dynamics, the critic's from data.yaml's
hard laws."""
from __future__ import annotations

import re

from regula.dive.stubs import plan_toward
from regula.llm.stub_fields import bullets, dumps


def _actions(listed: str) -> list[str]:
    return [line.split(":", 1)[0] for line in bullets(listed)]


def actor(goal: str, text: str, state: str, actions: str, feedback: str, history: str = "") -> str:
    """Naive and InnerMonologue actors: the plan's first step, unless it is not listed or was
    refused at this step; else the greedy actor's pick among what is left."""
    from regula import roles
    from regula.ltlcrit.actors import View
    listed = _actions(actions)
    refused = {a for a in listed for line in bullets(feedback) if line.startswith(f"{a} ")}
    left = [a for a in listed if a not in refused] or listed
    plan = plan_toward(goal, text, state)
    if plan and plan[0] in left:
        return dumps({"thought": f"toward {goal}: {' -> '.join(plan)}", "action": plan[0]})
    greedy = roles.make("actor", "greedy")
    greedy.reset(0)
    action = greedy.choose_allowed(View(text, state.split(", "), goal, listed, left, [])).action
    return dumps({"thought": f"no listed step leads to {goal}; the greedy choice", "action": action})


def saycan(goal: str, text: str, state: str, actions: str) -> str:
    """Value 10 for the plan's first step, 5 for its later steps, 1 for exploring, 0 else."""
    plan = plan_toward(goal, text, state)
    return dumps({"values": {a: 10 if plan[:1] == [a] else 5 if a in plan else 1 if a == "explore" else 0
                             for a in _actions(actions)}})


_LAW_LINE = re.compile(r"(.*) \[(hard|soft), [^\]]*\](?:: .*)?")
_STEP_LINE = re.compile(r"\s*\{(.*)\} (\S+) -> (ok|failed: .*?)(?: \[refused first: .*\])?")


def _names(vocabulary: str, heading: str) -> list[str]:
    block = vocabulary.split(f"{heading}:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in bullets(block)]


def _state(listed: str) -> frozenset:
    return frozenset(a for a in listed.split(", ") if a and a != "(nothing)")


def critic(goal: str, vocabulary: str, laws: str, trajectories: str, conflicts: str) -> str:
    """Environment failures: data.yaml's hard law that forbids an action in a state where it
    was seen failing, unless it is a law already. Over-constraint: the removal of a critic law
    that applies in a state where the laws left no action."""
    from regula import envs
    from regula.logic.formula import to_str
    from regula.logic.parser import FormulaError
    from regula.ltlcrit.form import ShapeError, holds, normalise, split
    atoms, actions = _names(vocabulary, "State propositions"), _names(vocabulary, "Actions")
    current = [m.groups() for m in map(_LAW_LINE.fullmatch, bullets(laws)) if m]
    have = {normalise(formula, atoms, actions) for formula, _ in current}
    failed = [(_state(m.group(1)), m.group(2)) for m in map(_STEP_LINE.fullmatch, trajectories.splitlines())
              if m and m.group(3) != "ok"]
    proposals = []
    for law in envs.get("crafter").hard_laws():
        try:
            phi_s, phi_a = split(law.formula, atoms, actions)
        except (FormulaError, ShapeError):
            continue  # it names a proposition these params leave out
        seen = next((skill for state, skill in failed if holds(phi_s, state) and not holds(phi_a, {skill})), None)
        if seen is not None and normalise(law.formula, atoms, actions) not in have:
            proposals.append({"formula": f"G({to_str(phi_s)} -> X({to_str(phi_a)}))", "source": "environment_failure",
                              "explanation": f"{law.explanation}; {seen} failed where it was taken"})
    blocked = [_state(line[1:-1]) for line in bullets(conflicts)]
    remove = [{"formula": formula, "reason": "it applies where the laws left no action"} for formula, kind in current
              if kind == "soft" and any(holds(split(formula, atoms, actions)[0], s) for s in blocked)]
    return dumps({"laws": proposals, "remove": remove})


# prompt template -> its answer, from the fields the role filled in
ANSWERS = {"ltlcrit_actor": actor, "ltlcrit_monologue": actor, "ltlcrit_saycan": saycan, "ltlcrit_critic": critic}
