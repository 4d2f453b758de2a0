"""One VirtualHome episode: a program's initial scene graph, stepped one script line at a time on
the evolving-graph simulator, every line checked by regula before the simulator sees it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from virtualhome_eval.simulation.evolving_graph.environment import EnvironmentGraph, EnvironmentState, Relation
from virtualhome_eval.simulation.evolving_graph.execution import ExecutionInfo, ScriptExecutor
from virtualhome_eval.simulation.evolving_graph.scripts import Action, Script, parse_script_line

from . import feedback as fb
from .programs import Program, resource
from .script import ScriptLineError, parse_line

# The simulator's own failure categories (ExecutionInfo.assign_error_type's codes).
_CATEGORY = {0: "time", 1: "missing", 2: "afford", 3: "unseen", 4: "satisfied", 5: "other"}
# Relations that say where the character stands, not what the task changed: left out of the goal check.
_POSITIONAL = {"CLOSE", "FACING"}
# States that come in pairs: a node that has one gets propositions for both.
_PAIRS = (("OPEN", "CLOSED"), ("ON", "OFF"), ("CLEAN", "DIRTY"), ("PLUGGED_IN", "PLUGGED_OUT"))


def vocabulary() -> dict[str, int]:
    """The resources' action list: action -> number of objects (vocabulary.json)."""
    return dict(resource("vocabulary.json")["actions"])


def supported(action: str) -> bool:
    """Whether the evolving-graph simulator executes the action (LOOKAT_SHORT/LONG it does not)."""
    return action in Action.__members__ and Action[action] in ScriptExecutor._action_executors


@dataclass
class Step:
    """One script line: what was asked, what happened, what the agent is told."""

    t: int
    line: str  # as given
    parsed: str | None  # canonical form, None where the text did not parse
    success: bool
    feedback: str  # what the agent reads: "True", or the error text (E2CL's feedback f_t)
    reason: str  # why it failed, for people ("" on success)
    cause: dict | None  # {"kind", "error_type", ...}; None on success
    simulated: bool  # whether the line reached the simulator (False: regula rejected it first)
    obs: str  # the observation the line was chosen on

    def to_json(self) -> dict:
        return dict(self.__dict__)


class VirtualHomeEpisode:
    """A program's task in its initial graph. `run_skill(line)` (and `act(line)`) run one line;
    any text an agent writes is a step (a failed one if it is not a valid line), never an exception."""

    def __init__(self, program: Program, seed: int = 0, max_steps: int | None = None):
        self.seed, self.program, self.max_steps = seed, program, max_steps
        graphs = program.graphs()
        self._graph = EnvironmentGraph(graphs["init_graph"])
        self._final = graphs["final_graph"]
        self._equivalence = resource("class_name_equivalence.json")
        self._executor = ScriptExecutor(self._graph, self._equivalence)
        self._char = next(n for n in self._graph.get_nodes() if n.class_name == "character")
        self._names = self._proposition_names()
        self.reset()

    @property
    def task(self) -> str:
        return self.program.task

    @property
    def description(self) -> str:
        return self.program.description

    @property
    def done(self) -> bool:
        return self.max_steps is not None and self.steps >= self.max_steps

    @property
    def dead(self) -> bool:
        return False

    def reset(self):
        self.state = EnvironmentState(self._graph, self._equivalence, instance_selection=True)
        self.steps = 0
        self.events: list[Step] = []
        self.unlocked: list[str] = []  # VirtualHome has no achievements: see goal_reached()
        return self.text()

    # -- stepping ---------------------------------------------------------------------------
    def act(self, action: str) -> float:
        """One script line (VirtualHome's primitive action, the same as `run_skill`). VirtualHome
        has no reward: 0.0; `goal_reached()` says whether the program's final state holds."""
        self.run_skill(action)
        return 0.0

    def run_skill(self, skill: str, until: Callable | None = None, interrupt: Callable | None = None) -> Step:
        """Run one script line. `until`/`interrupt` are accepted for the interface: a line is atomic."""
        if not isinstance(skill, str):
            raise TypeError(f"a script line is a str, not {type(skill).__name__}: {skill!r}")
        obs = self.text()
        parsed, failure = self._check(skill)
        simulated = failure is None
        if failure is None:
            failure = self._simulate(parsed)
        self.steps += 1
        step = Step(self.steps, skill, None if parsed is None else str(parsed), failure is None,
                    fb.SUCCESS if failure is None else failure.feedback,
                    "" if failure is None else failure.reason,
                    None if failure is None else failure.cause, simulated, obs)
        self.events.append(step)
        return step

    def probe(self, line: str) -> Step:
        """Run one line and undo it: what the environment says of that step here, the episode left
        as it was (E2CL's teacher-guided exploration tries the agent's step at an expert's state).
        The simulator never changes a state in place, so keeping the old one undoes the step."""
        state, steps, logged = self.state, self.steps, len(self.events)
        step = self.run_skill(line)
        self.state, self.steps = state, steps
        del self.events[logged:]
        return step

    def check(self, line: str) -> fb.Failure | None:
        """Why regula would reject the line before the simulator (None: it may run)."""
        return self._check(line)[1]

    def _check(self, text: str):
        try:
            line = parse_line(text)
        except ScriptLineError as e:
            return None, fb.Failure(str(e), fb.cause("Others", line=text),
                                    fb.feedback_text("garbled", line=text.strip()))
        first = "<{}> ({})".format(*line.objects[0]) if line.objects else None
        actions = vocabulary()
        if line.action not in actions:
            return line, fb.Failure(f"unknown action {line.action!r} in {text!r}",
                                    fb.cause("Invalid Action", thing=first, action=line.action),
                                    fb.feedback_text("unknown_action", action=line.action))
        if len(line.objects) != actions[line.action]:
            need, have = actions[line.action], len(line.objects)
            return line, fb.Failure(f"{line.action} takes {need} objects, {text!r} names {have}",
                                    fb.cause("Invalid Action", thing=first, action=line.action),
                                    fb.feedback_text("arity", action=line.action, need=need, have=have))
        if not supported(line.action):
            return line, fb.Failure(f"{line.action} is not executed by the evolving-graph simulator",
                                    fb.cause("Invalid Action", thing=first, action=line.action),
                                    fb.feedback_text("unsupported", action=line.action))
        for name, node_id in line.objects:
            node = self.state.get_node(node_id)
            if node is None or node.class_name != name:
                actual = None if node is None else node.class_name
                reason = (f"no object with id {node_id} in the scene" if node is None
                          else f"object {node_id} is a {actual}, not a {name}")
                return line, fb.Failure(reason, fb.cause("Object availability", thing=f"<{name}> ({node_id})",
                                                         actual=actual),
                                        fb.feedback_text("unavailable", name=name))
        return line, None

    def _simulate(self, line) -> fb.Failure | None:
        info = ExecutionInfo()
        self._executor.info = info  # a fresh one a step: the simulator's messages accumulate
        script = Script([parse_script_line(str(line), self.steps)])
        try:
            ok, state = self._executor.execute_one_step(script, self.state)
        except Exception as e:  # regula's checks should make this unreachable: report it, don't die
            return fb.Failure(f"the simulator raised {type(e).__name__}: {e}",
                              fb.cause("Others", simulator_error=type(e).__name__),
                              fb.feedback_text("simulator", message=f"{line.action} failed"))
        if ok:
            self.state = state
            return None
        message = info.messages[0] if info.messages else f"{line} failed"
        return fb.from_simulator(message, _CATEGORY.get(info.error_type), line.action)

    # -- state ----------------------------------------------------------------------------
    def graph(self) -> dict:
        """The current scene graph as a dict ({"nodes": [...], "edges": [...]})."""
        return self.state.to_dict()

    def executed(self) -> list[str]:
        """The lines that ran, in order (the successful steps' canonical form)."""
        return [e.parsed for e in self.events if e.success]

    def goal_reached(self) -> bool:
        """Whether the graph now equals the program's final graph: every node's states and every
        relation but where the character stands (CLOSE, FACING). All 516 programs that execute
        reach it when replayed."""
        return _goal_view(self.state.to_dict()) == _goal_view(self._final)

    def _node(self, node_id: int):
        return self.state.get_node(node_id)

    def _related(self, relation: str) -> list:
        return sorted(self.state.get_nodes_from(self._char, Relation[relation]), key=lambda n: n.id)

    def _proposition_names(self) -> list[str]:
        names = {"sitting", "lying"}
        for node in self._graph.get_nodes():
            if node.id == self._char.id:
                continue
            ref = _ref(node)
            names |= {f"close({ref})", f"holds({ref})"}
            if node.category == "Rooms":
                names.add(f"inside({ref})")
            states = {s.name for s in node.states}
            for pair in _PAIRS:
                if states & set(pair):
                    names |= {f"{s.lower()}({ref})" for s in pair}
        return sorted(names)

    def proposition_names(self) -> list[str]:
        return list(self._names)

    def props(self) -> dict[str, bool]:
        true = set()
        char = self._node(self._char.id)
        true |= {s.name.lower() for s in char.states if s.name in ("SITTING", "LYING")}
        for node in self._related("CLOSE"):
            true.add(f"close({_ref(node)})")
        for rel in ("HOLDS_RH", "HOLDS_LH"):
            true |= {f"holds({_ref(n)})" for n in self._related(rel)}
        true |= {f"inside({_ref(n)})" for n in self._related("INSIDE")}
        for name in self._names:
            if "(" in name and name.split("(")[0] not in ("close", "holds", "inside"):
                state, ref = name[:-1].split("(")
                node = self._node(int(ref.rsplit(".", 1)[1]))
                if any(s.name.lower() == state for s in node.states):
                    true.add(name)
        return {name: name in true for name in self._names}

    def text(self) -> str:
        """Where the agent is, what it holds and what it is close to, in words."""
        rooms = [n.class_name for n in self._related("INSIDE")]
        held = [_ref(n) for rel in ("HOLDS_RH", "HOLDS_LH") for n in self._related(rel)]
        close = [_ref(n) for n in self._related("CLOSE")]
        char = self._node(self._char.id)
        posture = [s.name.lower() for s in char.states if s.name in ("SITTING", "LYING")]
        return (f"You are in the {', '.join(rooms) or 'house'}" + (f", {posture[0]}" if posture else "")
                + f". You hold {', '.join(held) or 'nothing'}. Close to you: {', '.join(close) or 'nothing'}.")


def _ref(node) -> str:
    return f"{node.class_name}.{node.id}"


def _goal_view(graph: dict):
    states = {(n["id"], frozenset(n["states"])) for n in graph["nodes"]}
    edges = {(e["from_id"], e["relation_type"], e["to_id"]) for e in graph["edges"]
             if e["relation_type"] not in _POSITIONAL}
    return states, edges
