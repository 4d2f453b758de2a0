"""The abstract model LTLCrit works in, for Crafter: propositions, actions, goal, milestones.

Actions are the spine's skills. Crafter, unlike the paper's Minecraft set-up, makes an agent
drink, eat, sleep and fight; when `upkeep` is on, the survival layer runs
those before the actor chooses (the same layer for every actor and the expert), so actors
and critics deal with the task. Counts of "task actions" leave out upkeep and exploring, as
the shortest plan computed from data.yaml does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from regula import envs
from regula.errors import UnknownNameError

from . import hard_facts

CRAFTER = envs.get("crafter")

UPKEEP = ("collect_drink", "sleep", "shelter", *CRAFTER.fights)
EXPLORE = "explore"
# The paper's Table 1 columns, as Crafter achievements.
MILESTONES = {"wood tool": "make_wood_pickaxe", "stone tool": "make_stone_pickaxe",
              "iron tool": "make_iron_pickaxe", "diamond": "collect_diamond"}

@dataclass(frozen=True)
class CrafterModel:
    symbols: CRAFTER.SymbolConfig = field(default_factory=CRAFTER.SymbolConfig)
    goal: str = "collect_diamond"

    def __post_init__(self):
        if self.goal not in CRAFTER.rules.achievements:
            raise UnknownNameError("goal", self.goal, CRAFTER.rules.achievements)

    @cached_property
    def state_atoms(self) -> list[str]:
        return CRAFTER.proposition_names(self.symbols)

    @cached_property
    def actions(self) -> list[str]:
        return CRAFTER.skill_names()

    @cached_property
    def atoms(self) -> frozenset:
        return frozenset(self.state_atoms) | frozenset(self.actions)

    def hard_laws(self):
        return CRAFTER.hard_laws(self.symbols)

    @cached_property
    def critic_atoms(self) -> list[str]:
        """The propositions the symbolic critic reasons over: those the hard laws' conditions
        use (what data.yaml says matters), where things are, and the goal (a read of the hard
        laws the critic declares: `hard_facts`)."""
        return hard_facts.critic_atoms(self)

    def is_task_action(self, action: str) -> bool:
        return action not in UPKEEP and action != EXPLORE

    @cached_property
    def optimum(self) -> dict[str, int]:
        """Shortest plan length (task actions) to each milestone and to the goal."""
        out = {name: len(CRAFTER.shortest_plan(a)) for name, a in MILESTONES.items()}
        out["goal"] = len(CRAFTER.shortest_plan(self.goal))
        return out

    def vocabulary(self) -> str:
        """Every proposition and action with its meaning, for the LLM critic's prompt (its
        skills' lines name recipes' stations: a read the critic declares, `hard_facts`)."""
        return hard_facts.vocabulary(self)
