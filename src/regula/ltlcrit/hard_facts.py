"""The critic's reads of the hard laws: the one place LTLCrit's critics learn anything from
Crafter's data.yaml beyond the trajectories they read.

A critic reads `critic.Evidence`: trajectories, the laws in force (the hand-written hard laws
among them) and the shield's conflicts. What else it needs of data.yaml it reads here, through
the functions `RULE_READS` names, each with what it reads and why; the guard test
(tests/test_ground_truth_readers.py) lets these be read for ltlcrit/critic.py, llm_critic.py
and gate.py, and flags any other read of data.yaml from them.
"""
from __future__ import annotations

from regula import envs

CRAFTER = envs.get("crafter")

# What the critic reads of the hard laws: each read, what it reads, and why.
RULE_READS = {
    "hard_laws": "the hand-written hard laws, handed in with the evidence (`Evidence.hard`, the laws the shield "
                 "applies): each action's preconditions, which the efficiency regression chains back from the goal",
    "tools": "which inventory items are tools (data.yaml's `make` recipes): a failure for a missing tool "
             "reads as the proposition has_<tool>, not as a count",
    "resources": "which inventory items are resources (not tools, not body stats): whether a step changed "
                 "what the agent holds",
    "critic_atoms": "the propositions the hard laws' conditions use, where things are, and the goal's own "
                    "proposition (the goal recipe's output): the symbolic critic's abstraction of a state",
    "vocabulary": "each proposition and action in words for the LLM critic's prompt; a skill's line names its "
                  "recipe's target and stations (`make a wood pickaxe at a table`)",
}
# Reads that come in the evidence rather than through a function here.
HANDED_IN = ("hard_laws",)


def tools() -> tuple[str, ...]:
    return tuple(CRAFTER.rules.tools)


def resources() -> tuple[str, ...]:
    return tuple(CRAFTER.rules.resources)


def critic_atoms(model) -> list[str]:
    """The state propositions the symbolic critic reasons over, in the model's order."""
    used = set()
    for law in CRAFTER.hard_laws(model.symbols):
        used |= law.parsed.atoms()
    used -= set(model.actions)
    used |= {f"{m}_on_map" for m in CRAFTER.map_materials}
    goal = _goal_atom(model)
    if goal:
        used.add(goal)
    return [a for a in model.state_atoms if a in used]


def _goal_atom(model) -> str | None:
    """The proposition that holds once the goal is reached, where one exists."""
    recipe = CRAFTER.rules.recipes.get(model.goal)
    if recipe is None:
        return None
    name = f"{recipe.target}_on_map" if recipe.kind == "place" else f"has_{next(iter(recipe.gives))}"
    return name if name in model.state_atoms else None


def vocabulary(model) -> str:
    """Every proposition and action with its meaning, for the LLM critic's prompt."""
    props = "\n".join(f"- {p}: {CRAFTER.describe(p)}" for p in model.state_atoms)
    acts = "\n".join(f"- {a}: {CRAFTER.describe(a)}" for a in model.actions)
    return f"State propositions:\n{props}\n\nActions:\n{acts}"
