"""The VirtualHome family: episodes over the programs `virtualhome-eval` ships, the action
vocabulary, E2CL's error types and templates, and the ground truth (resources, programs)."""
from __future__ import annotations

import random
from types import MappingProxyType

from regula.errors import UnknownNameError

from . import feedback
from .env import VirtualHomeEpisode, vocabulary
from .programs import Program, program, programs, resource
from .script import ScriptLine, ScriptLineError, parse_line


class Rules:
    """What the simulator publishes (its resources/ folder), read lazily: scoring and paper-defined
    rows only, never a learner."""

    @property
    def vocabulary(self) -> dict:
        return resource("vocabulary.json")

    @property
    def properties(self) -> dict:
        return resource("properties_data.json")

    @property
    def class_name_equivalence(self) -> dict:
        return resource("class_name_equivalence.json")

    @property
    def object_states(self) -> dict:
        return resource("object_states.json")


class VirtualHome:
    name = "virtualhome"
    rules = Rules()
    actions = tuple(vocabulary())  # the resources' action list (script lines' [ACTION])
    error_types = feedback.ERROR_TYPES  # E2CL's eight, Appendix C.1
    templates = MappingProxyType(feedback.TEMPLATES)  # Appendix A's data templates
    success_feedback = feedback.SUCCESS  # "True"
    Program = Program
    ScriptLine = ScriptLine
    ScriptLineError = ScriptLineError

    def make(self, seed: int, program: str | None = None, max_steps: int | None = None) -> VirtualHomeEpisode:
        """An episode of `program` (an id such as "file1003_2"); without one, a program drawn with
        `seed`. The simulator itself is deterministic: the seed only picks the program."""
        if program is None:
            program = random.Random(seed).choice(sorted(programs()))
        return VirtualHomeEpisode(self.program(program), seed=seed, max_steps=max_steps)

    def episode(self, program, max_steps: int | None = None) -> VirtualHomeEpisode:
        """An episode of anything shaped like a `Program` (`task`, `description`, `graphs()`): a
        scene a caller built from a shipped one (CEDAR's household tasks inject objects into a
        program's initial graph)."""
        return VirtualHomeEpisode(program, max_steps=max_steps)

    def programs(self) -> dict[str, Program]:
        """Every shipped program by id (ground truth: expert trajectories and scoring)."""
        return programs()

    def program(self, program_id: str) -> Program:
        return program(program_id)

    def task_names(self) -> list[str]:
        return sorted({p.task for p in programs().values()})

    def parse_line(self, text: str) -> ScriptLine:
        """The strict reading of a script line: raises ScriptLineError naming the line."""
        return parse_line(text)

    def skill_names(self) -> list[str]:
        """An episode's steps are script lines; their verbs are the actions."""
        return list(self.actions)

    def proposition_names(self, symbols: str | None = None) -> list[str]:
        """The propositions of one program's scene (`symbols`: its id; default the first program):
        they name the scene's nodes, so they depend on the graph."""
        return self.make(0, program=symbols or next(iter(programs()))).proposition_names()

    def describe(self, proposition: str) -> str:
        if proposition in ("sitting", "lying"):
            return f"the agent is {proposition}"
        if "(" not in proposition or not proposition.endswith(")"):
            raise UnknownNameError("proposition", proposition, ["sitting", "lying", "<pred>(<class>.<id>)"])
        pred, ref = proposition[:-1].split("(", 1)
        thing = ref.replace(".", " ")
        words = {"close": f"the agent is close to the {thing}", "holds": f"the agent holds the {thing}",
                 "inside": f"the agent is in the {thing}"}
        return words.get(pred, f"the {thing} is {pred.replace('_', ' ')}")


SPEC = VirtualHome()
