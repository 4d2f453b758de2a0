"""CEDAR's household tasks (seed 000, §4 "iTHOR Tasks", Appendix A.7, Table 6) on VirtualHome's
evolving-graph simulator: MAKE_1_TOAST, MAKE_COFFEE, COOK_POTATO, MAKE_SALAD, STORE_PLATE_IN_FRIDGE,
each learned as a DFA through the same pipeline as the Crafter skills (issue 37).

- **Scene** (`household_tasks.yaml`): a shipped program's initial graph; an object it lacks is injected
  as recorded data (the file names it, where it stands and why) and the episode states it
  (`Scene.injected`, `Scene.description`).
- **Σ by RAG**: the task text ranks the scene's object classes (MiniLM cosine blended with BM25,
  `regula.rag.retrieve.Retriever`, documents: the class, its other names from the simulator's
  class_name_equivalence.json, its properties); the top `k` nouns, grounded into script lines
  `[VERB] <class> (id)` by what they afford (`verbs` of household_tasks.yaml: GRAB needs GRABBABLE, PUTIN a
  grabbable object and a container, ...). A letter's LTLf atom is the line in lower case
  (`[PUTIN] <food_bread> (2009) <toaster> (292)` -> `putin_food_bread_2009_toaster_292`).
- **The teacher as a formula** (`RecipeFormula`, the stand-in for the LLM's one call): LTLf clauses
  from the task's recipe: the last step eventually, each step not before the one it needs
  (`!b U a`), wrong on round(noise x clauses) of them (dropped or negated, chosen by the seed, as
  `RulesFormula`). The logic core compiles them (`teachers.compile_clauses`); every membership
  query is the monitor's verdict, never code run from an answer.
- **Equivalence**: first against the formula's own language, the world's labels pinned over it
  (no environment step: the paper's code-based oracle), then by the world: the hypothesis's
  shortest accepted word played line by line on a fresh episode. A line the simulator refuses, or
  a word that ends without the goal, is a counterexample (the word, False) with what the
  simulator said; the teacher is called again with it while `max_calls` allow (its second call),
  else the learner learns around it. The environment's feedback names the closed container an
  object is in (the plate in the kitchen cabinet): a container outside Σ widens Σ with its
  letters, as Crafter's rollouts widen it with what a letter lacked.
"""
from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from regula.automata import teachers
from regula.automata.dfa import DFA
from regula.automata.learning import Counterexample, Learner, LearningError
from regula.automata.ops import difference, equivalent, shortest_accepted, union
from regula.errors import DataError, ParamsError, RegulaError, UnknownNameError

DATA = Path(__file__).with_name("household_tasks.yaml")
# Scene nodes RAG never retrieves: the house's structure, not objects of a task.
_STRUCTURE = {"Rooms", "Walls", "Floor", "Floors", "Ceiling", "Doors", "Windows", "Lamps", "Characters", "Decor"}
_LINE = re.compile(r"^\[(?P<verb>[A-Z_]+)\](?P<objects>(?:\s*<[a-z0-9_\-]+>)*)\s*$")


@dataclass(frozen=True)
class Task:
    name: str
    text: str
    scene: str  # the shipped program whose initial graph the task starts from
    inject: tuple  # ({class_name, id, on, states, why}, ...)
    goal: tuple  # (("food_bread", "INSIDE", "toaster"), ("toaster", "ON"), ...)
    recipe: tuple  # (("WALK", ("food_bread",)), ...)


@lru_cache(maxsize=None)
def _data() -> dict:
    try:
        return yaml.safe_load(DATA.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise DataError(f"{DATA}: cannot read the household tasks ({e})") from None


def _step(text: str, where: str) -> tuple:
    m = _LINE.match(text.strip())
    if m is None:
        raise DataError(f"{DATA}: {where}: recipe step {text!r} is not '[VERB] <class> ...'")
    return m["verb"], tuple(re.findall(r"<([a-z0-9_\-]+)>", m["objects"]))


@lru_cache(maxsize=None)
def tasks() -> dict[str, Task]:
    out = {}
    verbs = _data().get("verbs") or {}
    for name, t in (_data().get("tasks") or {}).items():
        try:
            recipe = tuple(_step(s, name) for s in t["recipe"])
            goal = tuple(tuple(g) for g in t["goal"])
            task = Task(name, str(t["text"]), str(t["scene"]), tuple(t.get("inject") or ()), goal, recipe)
        except (KeyError, TypeError) as e:
            raise DataError(f"{DATA}: task {name}: missing or malformed field ({e})") from None
        if len(set(recipe)) != len(recipe):
            raise DataError(f"{DATA}: task {name}: a recipe step repeats (the formula orders first occurrences)")
        bad = [v for v, _ in recipe if v not in verbs]
        if bad:
            raise DataError(f"{DATA}: task {name}: verb {bad[0]} is not one of verbs: {', '.join(verbs)}")
        out[name] = task
    return out


def task(name: str) -> Task:
    table = tasks()
    if name not in table:
        raise UnknownNameError("household task", name, table)
    return table[name]


# -- the scene ---------------------------------------------------------------------------------
class Scene:
    """A task's initial graph: the shipped program's, with the recorded injections. Stands in for a
    `Program` where `VirtualHomeEpisode` reads one (`task`, `description`, `graphs()`)."""

    def __init__(self, t: Task):
        self.spec = t
        self.program = _vh().program(t.scene)
        graph = copy.deepcopy(self.program.graphs()["init_graph"])
        props = _vh().rules.properties
        ids = {n["id"]: n for n in graph["nodes"]}
        self.injected: list[dict] = []
        for item in t.inject:
            cls, node_id, on = item["class_name"], int(item["id"]), item["on"]
            if node_id in ids:
                raise DataError(f"{DATA}: task {t.name}: injected id {node_id} is already node "
                                f"{ids[node_id]['class_name']} of {t.scene}")
            if cls not in props:
                raise DataError(f"{DATA}: task {t.name}: {cls} is not an object class of the simulator")
            surface = self._lowest(graph, on)
            room = next((e["to_id"] for e in graph["edges"] if e["from_id"] == surface
                         and e["relation_type"] == "INSIDE" and ids[e["to_id"]]["category"] == "Rooms"), None)
            if room is None:
                raise DataError(f"{DATA}: task {t.name}: {on} ({surface}) is in no room of {t.scene}")
            node = {"id": node_id, "class_name": cls, "category": "placable_objects",
                    "properties": list(props[cls]), "states": list(item.get("states") or []),
                    "prefab_name": None, "bounding_box": None}
            graph["nodes"].append(node)
            ids[node_id] = node
            graph["edges"] += [{"from_id": node_id, "relation_type": "ON", "to_id": surface},
                               {"from_id": node_id, "relation_type": "INSIDE", "to_id": room}]
            self.injected.append({"object": f"<{cls}> ({node_id})", "on": f"<{on}> ({surface})",
                                  "room": f"<{ids[room]['class_name']}> ({room})", "why": item.get("why", "")})
        self.graph = graph
        self.nodes = ids

    @property
    def task(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        said = "; ".join(f"{i['object']} injected on {i['on']} in {i['room']}" for i in self.injected)
        return f"{self.spec.text} (scene of {self.spec.scene}" + (f"; {said})" if said else ")")

    def graphs(self) -> dict:
        return {"init_graph": copy.deepcopy(self.graph), "final_graph": copy.deepcopy(self.graph)}

    @staticmethod
    def _lowest(graph: dict, cls: str) -> int:
        found = sorted(n["id"] for n in graph["nodes"] if n["class_name"] == cls)
        if not found:
            raise DataError(f"{DATA}: no {cls} in the scene")
        return found[0]

    def node(self, cls: str) -> int:
        """The node a class name stands for in this task: the scene's lowest id of it."""
        return self._lowest(self.graph, cls)

    def objects(self) -> dict[str, dict]:
        """Object class -> {properties, doc}: what RAG ranks (the house's structure left out)."""
        props, same = _vh().rules.properties, _vh().rules.class_name_equivalence
        out: dict = {}
        for n in sorted(self.graph["nodes"], key=lambda n: n["id"]):
            if n["category"] in _STRUCTURE or n["class_name"] in out:
                continue
            have = sorted(set(props.get(n["class_name"], ())) | set(n["properties"]))
            other = ", ".join(s.replace("_", " ") for s in same.get(n["class_name"], ()))
            out[n["class_name"]] = {"properties": have, "doc": (f"also called {other}; " if other else "")
                                    + ", ".join(p.lower().replace("_", " ") for p in have)}
        return out

    def line(self, verb: str, classes) -> str:
        return " ".join([f"[{verb}]"] + [f"<{c}> ({self.node(c)})" for c in classes])

    def episode(self):
        return _vh().episode(self)

    def goal_holds(self, graph: dict) -> bool:
        """The task's goal checked on a graph: each [from, REL, to] edge and each [node, STATE]."""
        states = {n["id"]: set(n["states"]) for n in graph["nodes"]}
        edges = {(e["from_id"], e["relation_type"], e["to_id"]) for e in graph["edges"]}
        for g in self.spec.goal:
            if len(g) == 3:
                if (self.node(g[0]), g[1], self.node(g[2])) not in edges:
                    return False
            elif g[1] not in states.get(self.node(g[0]), ()):
                return False
        return True

    def enclosing(self, graph: dict, node_id: int) -> int | None:
        """The closed container (not a room) the node is INSIDE, if any: what the agent sees when
        the simulator says the object is inside a closed thing."""
        nodes = {n["id"]: n for n in graph["nodes"]}
        for e in graph["edges"]:
            if e["from_id"] == node_id and e["relation_type"] == "INSIDE":
                box = nodes[e["to_id"]]
                if box["category"] != "Rooms" and "CLOSED" in box["states"]:
                    return box["id"]
        return None


def _vh():
    """The VirtualHome family (`regula.envs`: only the adapter imports the simulator)."""
    from regula import envs
    return envs.get("virtualhome")


def atom(line: str) -> str:
    """A script line as an LTLf atom (the law syntax's atoms are `[a-z_][a-z0-9_]*`)."""
    return re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", line.lower())).strip("_")


# -- Σ by RAG ------------------------------------------------------------------------------------
def nouns(scene: Scene, k: int, lexical_weight: float) -> list[dict]:
    """The scene's object classes ranked for the task text: [{name, score, cosine}], best first."""
    from regula.rag.alphabet import GlobalAlphabet
    from regula.rag.retrieve import Retriever
    objects = scene.objects()
    catalogue = GlobalAlphabet({"objects": {c: o["doc"] for c, o in objects.items()}}, ())
    ranked = Retriever(catalogue, lexical_weight).rank(scene.spec.text, ("objects",))
    return [{"name": s.name, "score": s.score, "cosine": s.cosine} for s in ranked[:k]]


def letters(scene: Scene, classes) -> tuple[str, ...]:
    """Σ over the classes: every verb of household_tasks.yaml each class affords, grounded on its node."""
    verbs = _data()["verbs"]
    objects = scene.objects()
    have = {c: set(objects[c]["properties"]) if c in objects else set() for c in classes}
    out = set()
    for verb, spec in verbs.items():
        need = set(spec.get("needs") or ())
        dest = set(spec.get("into") or spec.get("onto") or ())
        for c in classes:
            if not need <= have[c]:
                continue
            if not dest:
                out.add(scene.line(verb, (c,)))
                continue
            out |= {scene.line(verb, (c, d)) for d in classes if d != c and have[d] & dest}
    return tuple(sorted(out))


# -- the teacher as a formula --------------------------------------------------------------------
class RecipeFormula:
    """The stand-in's formula from the task's recipe (the LLM's one call), wrong on round(noise x
    clauses) clauses. `refine(clauses, word, label, feedback)` (a second call, with the
    counterexample and what the simulator said): a step refused because its object is inside a
    closed container gets that container walked to and opened before the walk to the object; the
    wrong clauses whose true text refuses the word are restored; with neither, the word itself is
    excluded (`!word`)."""

    uses_llm = False

    def __init__(self, scene: Scene, noise: float = 0.0, seed: int = 0):
        if not 0 <= noise < 0.5:
            raise ParamsError(f"teacher noise must be in [0, 0.5), got {noise}")
        self.scene, self.noise, self.seed = scene, noise, seed
        self.recipe = [scene.line(v, cs) for v, cs in scene.spec.recipe]
        self.truth = self.clauses_of(self.recipe)
        n = round(noise * len(self.truth))
        name = scene.spec.name
        order = sorted(range(len(self.truth)), key=lambda i: teachers.unit(seed, name, self.truth[i]["text"]))
        self.wrong = {i: "dropped" if teachers.unit(seed, name, self.truth[i]["text"], "how") < 0.5 else "negated"
                      for i in order[:n]}
        self.excluded: list[str] = []

    @staticmethod
    def clauses_of(recipe) -> list[dict]:
        atoms = [atom(s) for s in recipe]
        out = [{"why": f"the goal's last step: {recipe[-1]} eventually", "text": f"F {atoms[-1]}"}]
        for i in range(1, len(recipe)):
            out.append({"why": f"{recipe[i]} needs {recipe[i - 1]} before it",
                        "text": f"!{atoms[i]} U {atoms[i - 1]}"})
        return out

    def formula(self) -> list[str]:
        out = []
        for i, c in enumerate(self.truth):
            how = self.wrong.get(i)
            if how is None:
                out.append(c["text"])
            elif how == "negated":
                out.append(f"!({c['text']})")
        return out + self.excluded

    def refine(self, clauses, word, label: bool, feedback: dict | None, alphabet) -> list[str]:
        feedback = feedback or {}
        fixed = False
        box, failed = feedback.get("enclosed_by"), feedback.get("line")
        if box and failed and not label:
            obj = re.findall(r"<([a-z0-9_\-]+)>", failed)[0]
            box_cls = re.findall(r"<([a-z0-9_\-]+)>", box)[0]
            walk_obj = self.scene.line("WALK", (obj,))
            opens = [self.scene.line("WALK", (box_cls,)), self.scene.line("OPEN", (box_cls,))]
            if walk_obj in self.recipe and not set(opens) & set(self.recipe):
                at = self.recipe.index(walk_obj)
                self.recipe[at:at] = opens
                old = {c["text"]: i for i, c in enumerate(self.truth)}
                self.truth = self.clauses_of(self.recipe)
                keep = {c["text"]: i for i, c in enumerate(self.truth)}
                texts = {i: t for t, i in old.items()}
                self.wrong = {keep[texts[i]]: how for i, how in self.wrong.items() if texts[i] in keep}
                fixed = True
        refuting = {i for i in self.wrong  # a wrong clause whose true text refuses the non-member
                    if not label and not teachers.accepts(teachers.compile_clauses([self.truth[i]["text"]], alphabet), word)}
        if refuting:
            self.wrong = {i: how for i, how in self.wrong.items() if i not in refuting}
            fixed = True
        if not fixed and word:
            exact = teachers.word_formula(word)
            if label:  # a member refused (the loop never asks with one): each clause, or exactly this word
                return [f"({c}) | {exact}" for c in self.formula()]
            self.excluded.append(f"!{exact}")
        return self.formula()


class HouseholdTeacher:
    """The teacher role for one task: called for a formula (`ask`, `refine`: each a call, at most
    `max_calls`), compiled over the current Σ's atoms, answering every membership query."""

    def __init__(self, source: RecipeFormula, max_calls: int = 2):
        if max_calls < 1:
            raise ParamsError(f"household.max_calls must be >= 1, got {max_calls}")
        self.source, self.max_calls = source, max_calls
        self.calls: list[dict] = []
        self.queries = 0
        self.atoms: tuple = ()
        self.clauses: list[str] = []
        self._mon = None
        self._answers: dict = {}

    @property
    def can_call(self) -> bool:
        return len(self.calls) < self.max_calls

    def _take(self, clauses, atoms, why: str, **extra) -> None:
        self.atoms, self.clauses = tuple(atoms), list(clauses)
        self._mon = teachers.compile_clauses(self.clauses, self.atoms)  # FormulaError: a bad clause
        self._answers = {}
        self.calls.append({"why": why, "clauses": list(clauses), "letters": len(atoms), **extra})

    def ask(self, atoms) -> None:
        self._take(self.source.formula(), atoms, "first")

    def refine(self, atoms, word, label: bool, feedback: dict | None) -> None:
        clauses = self.source.refine(self.clauses, tuple(word), label, feedback, tuple(atoms))
        self._take(clauses, atoms, "counterexample", counterexample=list(word), label=label,
                   feedback=feedback or {})

    def widen(self, atoms) -> None:
        """The same formula read over a wider Σ (no call): a letter no clause names is free."""
        self.atoms = tuple(atoms)
        self._mon = teachers.compile_clauses(self.clauses, self.atoms)
        self._answers = {}

    def member(self, word, sample: int = 0) -> bool:
        word = tuple(word)
        self.queries += 1
        got = self._answers.get(word)
        if got is None:
            got = self._answers[word] = teachers.accepts(self._mon, word)
        return got

    def dfa(self) -> DFA:
        return teachers.monitor_dfa(self._mon, self.atoms)


def _words_dfa(words, alphabet) -> DFA:
    """The finite language `words` as a DFA over `alphabet` (a trie; missing moves to a sink)."""
    table: dict = {(): {}}
    for w in words:
        for i, a in enumerate(w):
            table.setdefault(tuple(w[:i]), {})[a] = tuple(w[:i + 1])
            table.setdefault(tuple(w[:i + 1]), {})
    return DFA.from_table(alphabet, table, (), {tuple(w) for w in words})


class _AskAgain(Exception):
    """The world refuted the formula's policy and the teacher may be called again."""

    def __init__(self, word, feedback):
        super().__init__("ask again")
        self.word, self.feedback = word, feedback


@dataclass
class Rollout:
    word: list  # the policy's lines, as played
    steps: list  # [{line, success, message}] up to the first refusal
    goal: bool
    feedback: dict  # what the world said of the failure ({} on success)


class WorldEquivalence:
    """The formula's language (the world's labels pinned over it), then the world: one rollout of
    the hypothesis's shortest accepted word on a fresh episode of the scene."""

    def __init__(self, scene: Scene, teacher: HouseholdTeacher, labels: dict, by_atom: dict, max_rounds: int):
        self.scene, self.teacher, self.labels, self.by_atom = scene, teacher, labels, by_atom
        self.max_rounds = max_rounds
        self.rounds = 0  # world rounds (rollouts)
        self.formula_rounds = 0
        self.rollouts: list[Rollout] = []

    def target(self, alphabet) -> DFA:
        target = self.teacher.dfa()
        yes = [w for w, y in self.labels.items() if y]
        no = [w for w, y in self.labels.items() if not y]
        if no:
            target = difference(target, _words_dfa(no, alphabet))
        if yes:
            target = union(target, _words_dfa(yes, alphabet))
        return target

    def play(self, word) -> Rollout:
        ep = self.scene.episode()
        steps = []
        for a in word:
            line = self.by_atom[a]
            step = ep.run_skill(line)
            steps.append({"line": line, "success": step.success, "message": step.reason})
            if not step.success:
                feedback = {"line": line, "message": step.reason, "error_type": (step.cause or {}).get("error_type")}
                obj = re.findall(r"\((\d+)\)", line)
                box = self.scene.enclosing(ep.graph(), int(obj[0])) if obj else None
                if box is not None:
                    feedback["enclosed_by"] = f"<{self.scene.nodes[box]['class_name']}> ({box})"
                return Rollout([self.by_atom[x] for x in word], steps, False, feedback)
        goal = self.scene.goal_holds(ep.graph())
        return Rollout([self.by_atom[x] for x in word], steps, goal,
                       {} if goal else {"message": "every line ran, the goal does not hold"})

    def observe(self, hyp: DFA) -> list[Counterexample]:
        same, witness = equivalent(hyp, self.target(hyp.alphabet))
        if not same:  # the teacher's own language: its answer, not a fact of the world
            self.formula_rounds += 1
            return [Counterexample(witness, not hyp.accepts(witness), trusted=False)]
        word = shortest_accepted(hyp)
        if word is None or self.rounds >= self.max_rounds:
            return []  # nothing to play, or no rollout left: the hypothesis stands as it is
        self.rounds += 1
        r = self.play(word)
        self.rollouts.append(r)
        self.labels[tuple(word)] = r.goal
        if not r.goal and self.teacher.can_call:
            raise _AskAgain(tuple(word), r.feedback)
        return [Counterexample(tuple(word), r.goal)]


@dataclass
class HouseholdRun:
    task: str
    scene: str
    injected: list
    nouns: list  # RAG's ranked nouns [{name, score, cosine}]
    letters: list  # Σ's script lines, the last alphabet
    alphabets: list  # every Σ's size, in order
    dfa: DFA
    atoms: dict  # atom -> script line
    calls: list  # the teacher's calls
    queries: int  # membership queries the compiled formula answered
    world_rounds: int  # rollouts in the simulator (EQ by the world)
    formula_rounds: int  # EQ rounds the formula's language answered
    rollouts: list
    outcome_before: str  # the first rollout's: success | fail
    outcome_after: str  # after the counterexample fix: success | fail | "" (no fix)
    success: bool  # the final DFA's policy reached the goal in the simulator
    policy: list  # its shortest accepted word, as lines
    seconds: float  # wall time for the DFA: Σ, calls, learning, rollouts
    rag_seconds: float  # of it, Σ by RAG (the process's first task loads MiniLM)
    error: str = ""

    def to_json(self) -> dict:
        return {"task": self.task, "scene": self.scene, "injected": self.injected, "nouns": self.nouns,
                "letters": self.letters, "alphabets": self.alphabets, "states": self.dfa.size,
                "calls": self.calls, "teacher_calls": len(self.calls), "queries": self.queries,
                "world_rounds": self.world_rounds, "formula_rounds": self.formula_rounds,
                "rollouts": [r.__dict__ for r in self.rollouts], "outcome_before": self.outcome_before,
                "outcome_after": self.outcome_after, "success": self.success, "policy": self.policy,
                "error": self.error}  # no wall time: it changes on every run (`regula bench household`)


def learn_task(name: str, k: int = 5, lexical_weight: float = 0.3, noise: float = 0.0, seed: int = 0,
               max_calls: int = 2, max_rounds: int = 6) -> HouseholdRun:
    """Learn one household task's DFA (see the module's docstring)."""
    if k < 1:
        raise ParamsError(f"household.k must be >= 1, got {k}")
    start = time.perf_counter()
    scene = Scene(task(name))
    ranked = nouns(scene, k, lexical_weight)
    classes = [n["name"] for n in ranked]
    lines = letters(scene, classes)
    rag_seconds = time.perf_counter() - start
    source = RecipeFormula(scene, noise, seed)
    outside = sorted(set(source.recipe) - set(lines))
    if outside:
        raise RegulaError(f"{name}: RAG's Σ (k={k}: {', '.join(classes)}) lacks the recipe's {', '.join(outside)}")
    teacher = HouseholdTeacher(source, max_calls)
    by_atom = {atom(s): s for s in lines}
    teacher.ask(tuple(by_atom))
    labels: dict = {}
    alphabets = [len(lines)]
    oracle = None
    rollouts: list = []
    world_rounds = formula_rounds = 0
    error = ""
    result = None
    while True:
        oracle = WorldEquivalence(scene, teacher, labels, by_atom, max_rounds - world_rounds)
        learner = Learner(tuple(by_atom), teacher, oracle, evidence=dict(labels))
        try:
            result = learner.learn()
        except _AskAgain as again:
            world_rounds += oracle.rounds
            formula_rounds += oracle.formula_rounds
            rollouts += oracle.rollouts
            box = again.feedback.get("enclosed_by")
            box_cls = re.findall(r"<([a-z0-9_\-]+)>", box)[0] if box else None
            if box_cls and box_cls not in classes:  # what the refusal showed lacking joins Σ
                classes.append(box_cls)
                lines = letters(scene, classes)
                by_atom = {atom(s): s for s in lines}
                alphabets.append(len(lines))
            teacher.refine(tuple(by_atom), again.word, False, again.feedback)
            continue
        except LearningError as exc:
            error = str(exc)
        world_rounds += oracle.rounds
        formula_rounds += oracle.formula_rounds
        rollouts += oracle.rollouts
        break
    dfa = result.dfa if result is not None else teacher.dfa()
    policy = shortest_accepted(dfa)
    final = oracle.play(policy) if policy is not None else None
    success = bool(final is not None and final.goal)
    if final is not None and (not rollouts or rollouts[-1].word != final.word):
        rollouts.append(final)  # the final policy's own rollout, when learning ended without it
        world_rounds += 1
    fixed = len(teacher.calls) > 1 or len(rollouts) > 1
    before = "success" if rollouts and rollouts[0].goal else "fail"
    return HouseholdRun(name, scene.spec.scene, scene.injected, ranked, list(lines), alphabets, dfa,
                        dict(by_atom), teacher.calls, teacher.queries, world_rounds, formula_rounds, rollouts,
                        before, ("success" if success else "fail") if fixed else "", success,
                        [by_atom[a] for a in policy] if policy is not None else [],
                        time.perf_counter() - start, rag_seconds, error)
