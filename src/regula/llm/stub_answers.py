"""What the local test server (`stub_server.py`) answers each role's prompt with.

The role is recognised by its prompt template (src/regula/prompts/*.yaml): each template,
read backwards, is a pattern whose fields are the values the role filled in. The answer is
computed by the rule-grounded stand-ins that already exist, from those values alone, in the
role's answer schema: the `rules` teacher and feedback predictor, DiVE's statistical
discoverer and symbolic evolver (over data.yaml's dynamics for LTLCrit's actors), and
data.yaml's hard laws for the critic. So answers are meaningful, deterministic and
byte-stable, and a pipeline run against the server exercises every LLM path without a model.
"""
from __future__ import annotations

import json
import re
import string
from functools import lru_cache

from regula import prompts

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


def _dumps(value: dict) -> str:
    return json.dumps(value, sort_keys=True)


def _yes(value: bool) -> str:
    return "Yes." if value else "No."


def _bullets(text: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def _counts(text: str, sep: str) -> dict[str, int]:
    """`wood: 4, sapling: 1` (sep ': ', name first) or `4 wood, 1 sapling` (sep ' ', count first)."""
    out = {}
    for part in filter(None, text.split(", ")):
        a, b = part.split(sep, 1)
        name, n = (a, b) if sep == ": " else (b, a)
        out[name] = int(n)
    return out


def _inventory(observation: str) -> dict[str, int]:
    """The items held, from the verbalizer's `Inventory: wood: 4, sapling: 1.` line."""
    m = re.search(r"^Inventory: (.*)\.$", observation, re.M)
    return {} if m is None or m.group(1) == "empty" else _counts(m.group(1), ": ")


# -- yes/no roles ------------------------------------------------------------------------------

def membership(description: str, word: str) -> str:
    """The `rules` teacher, for the achievement the task names (`make a wood pickaxe`,
    `make_wood_pickaxe`); a task that names none accomplishes nothing."""
    from regula import envs, roles
    achievements = envs.get("crafter").rules.achievements
    words = [w for w in re.findall(r"[a-z]+", description.lower()) if w not in ("a", "an", "the")]
    goal = "_".join(words) if "_".join(words) in achievements else next(
        (a for a in achievements if re.search(rf"\b{a}\b", description)), None)
    if goal is None:
        return _yes(False)
    skills = () if word == "(nothing)" else tuple(word.split(", "))
    return _yes(roles.make("teacher", "rules", goal=goal).member(skills))


def feedback(obs: str, skill: str) -> str:
    """The `rules` feedback predictor on the inventory the observation shows (before the step)."""
    from regula import roles
    step = {"skill": skill, "inventory": _inventory(obs), "inventory_delta": {}}
    return _yes(roles.make("feedback", "rules").predict(step))


# -- DiVE's chain over dynamics (the symbolic evolver), for the evolver and LTLCrit's actors -------

class _Situation:
    """What `DiveAgent.chain` reads of an agent (its knowledge, inventory, explored map),
    rebuilt from a prompt, so the symbolic evolver's own chaining answers."""

    def __init__(self, knowledge, inventory: dict, on_map: set):
        from types import SimpleNamespace
        self.knowledge, self.world, self._on_map = knowledge, SimpleNamespace(inventory=inventory), on_map

    def on_map(self, thing: str) -> bool:
        return thing in self._on_map

    def chain(self, skill: str, depth: int = 0, seen: frozenset = frozenset()):
        from regula.dive.agent import DiveAgent
        return DiveAgent.chain(self, skill, depth, seen)


@lru_cache(maxsize=None)
def _rules_knowledge():
    from regula.dive.agent import Knowledge
    from regula.dive.dynamics import ground_truth
    return Knowledge.of(ground_truth())


def _plan(goal: str, observation: str, state: str) -> list[str]:
    """The chain toward `goal` over data.yaml's dynamics, from the inventory the observation
    shows and the things the propositions say are on the map; [] when there is none."""
    from regula.dive.agent import SKILL_OF
    on_map = {p[: -len("_on_map")] for p in state.split(", ") if p.endswith("_on_map")}
    situation = _Situation(_rules_knowledge(), _inventory(observation), on_map)
    return situation.chain(SKILL_OF.get(goal, goal)) or []


def _actions(listed: str) -> list[str]:
    return [line.split(":", 1)[0] for line in _bullets(listed)]


def actor(goal: str, text: str, state: str, actions: str, feedback: str, history: str = "") -> str:
    """Naive and InnerMonologue actors: the plan's first step, unless it is not listed or was
    refused at this step; else the greedy actor's pick among what is left."""
    from regula import roles
    from regula.ltlcrit.actors import View
    listed = _actions(actions)
    refused = {a for a in listed for line in _bullets(feedback) if line.startswith(f"{a} ")}
    left = [a for a in listed if a not in refused] or listed
    plan = _plan(goal, text, state)
    if plan and plan[0] in left:
        return _dumps({"thought": f"toward {goal}: {' -> '.join(plan)}", "action": plan[0]})
    greedy = roles.make("actor", "greedy")
    greedy.reset(0)
    action = greedy.choose_allowed(View(text, state.split(", "), goal, listed, left, [])).action
    return _dumps({"thought": f"no listed step leads to {goal}; the greedy choice", "action": action})


def saycan(goal: str, text: str, state: str, actions: str) -> str:
    """Value 10 for the plan's first step, 5 for its later steps, 1 for exploring, 0 else."""
    plan = _plan(goal, text, state)
    return _dumps({"values": {a: 10 if plan[:1] == [a] else 5 if a in plan else 1 if a == "explore" else 0
                              for a in _actions(actions)}})


def evolver(goal: str, dynamics: str, held: str, known: str, skills: str) -> str:
    """The symbolic evolver's chain over the dynamics the prompt lists."""
    from regula.dive.agent import Knowledge
    from regula.dive.dynamics import Dynamic
    facts = []
    for line in _bullets(dynamics):
        element, attribute, rest = line.split(" ", 2)
        value, arg = rest.split(" ", 1) if attribute == "requires" else (1, rest)
        facts.append(Dynamic(element, attribute, arg, int(value)))
    inventory = {} if held == "nothing" else _counts(held, " ")
    on_map = set() if known == "nothing" else set(known.split(", "))
    plan = _Situation(Knowledge.of(facts), inventory, on_map).chain(goal)
    return _dumps({"strategies": [{"steps": plan, "why": f"each step provides what the next needs, up to {goal}"}]
                   if plan else []})


def cot(observation: str, unlocked: str, todo: str, known: str, dynamics: str, skills: str) -> str:
    """DiVE's CoT baselines: the first step of the chain, over data.yaml's dynamics, toward the
    first achievement not yet unlocked that has one; else explore."""
    from regula.dive.agent import SKILL_OF
    on_map = set() if known == "nothing" else set(known.split(", "))
    situation = _Situation(_rules_knowledge(), _inventory(observation), on_map)
    for goal in todo.split(", "):
        plan = situation.chain(SKILL_OF.get(goal, goal))
        if plan:
            return _dumps({"thought": f"toward {goal}: {' -> '.join(plan)}", "skill": plan[0]})
    return _dumps({"thought": "nothing left within reach; explore", "skill": "explore"})


# -- DiVE's discoverer ------------------------------------------------------------------------

_TRANSITION = re.compile(r"facing (.*); within reach: (.*); holding: (.*); inventory change: (.*); facing after: (.*)")


def discoverer(element: str, n: str, transitions: str, attributes: str) -> str:
    """The statistical discoverer's reading of the transitions shown; what can be placed or
    made is read off the game's action names (the banks it reads them from are not shown)."""
    from regula import envs
    from regula.dive.banks import Transition
    from regula.dive.discover import read_sample
    actions = envs.get("crafter").actions
    sample = []
    for line in _bullets(transitions):
        facing, near, held, change, after = _TRANSITION.fullmatch(line).groups()
        inventory = {} if held == "nothing" else _counts(held, " ")
        sample.append(Transition(element, 0, 0, 0, facing, () if near == "nothing" else tuple(near.split(", ")),
                                 inventory, {} if change == "no change" else {k: int(v) for k, v in
                                                                             (p.split(" ") for p in change.split(", "))},
                                 (), True, "" if after == "unknown" else after))
    placed = {a[len("place_"):] for a in actions if a.startswith("place_")}
    tools = {a[len("make_"):] for a in actions if a.startswith("make_")}
    held = {k for x in sample for k in (*x.inventory, *x.delta)}
    found = read_sample(element, sample, tools, placed, held) if sample else []
    return _dumps({"dynamics": [{"attribute": d.attribute, "arg": d.arg, "value": d.value} for d in found]})


# -- LTLCrit's critic -------------------------------------------------------------------------

_LAW_LINE = re.compile(r"(.*) \[(hard|soft), [^\]]*\](?:: .*)?")
_STEP_LINE = re.compile(r"\s*\{(.*)\} (\S+) -> (ok|failed: .*?)(?: \[refused first: .*\])?")


def _names(vocabulary: str, heading: str) -> list[str]:
    block = vocabulary.split(f"{heading}:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(":", 1)[0] for line in _bullets(block)]


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
    current = [m.groups() for m in map(_LAW_LINE.fullmatch, _bullets(laws)) if m]
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
    blocked = [_state(line[1:-1]) for line in _bullets(conflicts)]
    remove = [{"formula": formula, "reason": "it applies where the laws left no action"} for formula, kind in current
              if kind == "soft" and any(holds(split(formula, atoms, actions)[0], s) for s in blocked)]
    return _dumps({"laws": proposals, "remove": remove})


def alphabet(task: str, verbs: str, nouns: str) -> str:
    """CEDAR's verb choice: the offered verbs that make a Crafter skill with a retrieved noun,
    and those that are a skill alone and named in the task (the first offered, if none)."""
    from regula import envs
    skills = set(envs.get("crafter").skill_names())
    offered = [line.split(":")[0] for line in _bullets(verbs)]
    held = [line.split(":")[0] for line in _bullets(nouns)]
    chosen = [v for v in offered if any(f"{v}_{n}" in skills for n in held)
              or (v in skills and re.search(rf"\b{v}", task.lower()))]
    return _dumps({"verbs": chosen or offered[:1]})


def corrector(source: str) -> str:
    """E2CL's corrector, from the correction sample's text alone: walk to the object the feedback
    says the agent is not close to; anything else, the failed step again (no scene to read)."""
    action = re.search(r"Initial Action:\nStep \d+: (.*)", source)
    feedback = re.search(r"Feedback: (.*)", source)
    line = action.group(1).strip() if action else ""
    far = re.search(r"is not close to (\S+)", feedback.group(1)) if feedback else None
    thing = re.search(rf"<{re.escape(far.group(1))}> \(\d+\)", line) if far else None
    return f"[WALK] {thing.group(0)}" if thing else line


def planner(example: str, source: str) -> str:
    """E2CL's prompting baseline: the example's step at the same position, then the end action."""
    steps = re.findall(r"^Step \d+: (.*)$", example, re.M)
    done = len(re.findall(r"^Step \d+: ", source.split("Interaction history:")[-1], re.M))
    return steps[done] if done < len(steps) else "[END]"


# prompt template -> its answer, from the fields the role filled in
ANSWERS = {"membership": membership, "feedback": feedback, "ltlcrit_actor": actor, "ltlcrit_monologue": actor,
           "ltlcrit_saycan": saycan, "ltlcrit_critic": critic, "dive_discover": discoverer, "dive_evolve": evolver,
           "dive_cot": cot, "cedar_alphabet": alphabet, "e2cl_corrector": corrector,
           "e2cl_planner": planner}
