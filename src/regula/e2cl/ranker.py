"""A planner grounded in the scene, that trains in minutes on CPU: it ranks candidate steps.

At each step the candidates are the steps the scene admits and the training data makes plausible:
the lines of a retrieved demonstration (the training program whose task text is nearest by
all-MiniLM-L6-v2, its objects grounded in this scene: `grounding.ground`), each training action on
the objects of that demonstration, of the history and of the scene's classes named in the task text
(only action-class pairs seen in training, or in the demonstration), the two-object put actions for
the object last grabbed, and the end action. Each candidate is scored by a small MLP over
`FEATURES` (its place in the demonstration, the action bigram, whether its object is in the
history or named by the task, ...), trained listwise (softmax cross-entropy over a step's
candidates) on D_p: each training program's steps, its demonstration retrieved from a training
program of another task (what a test task meets). The highest-scoring candidate is the step; the
end action ends the plan. The ranker names an object of a class by its lowest id (or the
demonstration's); the plan names it as an expert does (`named`): the instance the history named,
else the one in the room the character is in.

E2CL on it (`RankerAgent`): a feasibility judge (another small MLP, over the same features, state
features of the history and the action) trained on D_f, the feedback of the ranker's own steps in
exploration, predicts whether a step executes; a correction head (the same features and how a
candidate stands to the failed step: same object, same action, its action on that object) trained
listwise on D_c ranks the steps that replaced a failed one (the expert's in TGE, the corrector's
executed fix in TFE). Under speculative inference a step judged to fail is corrected to the first of
the head's `CORRECTION_POOL` best judged to pass (without a head, of the planner's next best).

Written here, not taken from a library: the scoring is a few hundred weights on hand-made
features of VirtualHome script lines; torch trains them.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from .grounding import ground
from .inference import EXECUTABLE
from .samples import Task, end_action

_OBJECT = re.compile(r"<([^<>]+)> \((\d+)\)")
_WORD = re.compile(r"[a-z]{3,}")
PUTS = ("[PUTBACK]", "[PUTIN]")
UNDO_HOLD = ("[PUTBACK]", "[PUTIN]", "[DROP]", "[PUTOBJBACK]")
POSES = ("[SIT]", "[LIE]", "[STANDUP]", "[WAKEUP]")
FEATURES = ("in demonstration", "demonstration's next line", "distance to the demonstration's next line",
            "action bigram", "object in history", "object in last step", "object-task cosine",
            "object named by the task", "action-object count", "repeats the last step", "in history", "end",
            "end: steps past the demonstration's length", "end: demonstration done",
            "the object has what the action needs", "object named by the task, new to the plan",
            "end: the task's objects the plan has not named", "end: the demonstration's objects the plan has not named")
STATE_FEATURES = ("walked to", "found", "grabbed", "opened", "switched on", "objects held", "sitting or lying",
                  "puts the object it grabbed")
VERSION = 5  # in the stage's keys of the units it made: a change here that changes plans raises it
CORRECTION_POOL = 5  # the candidates after the best a correction is drawn from
NEEDS = 0.95  # a property an action's objects have in this share of its training uses is one it needs
MANY_CLASSES = 10  # an action that took this many classes in training needs no property to be admitted
HIDDEN = 32
DECIMALS = 4  # features and scores as stored or compared: rounded so plans do not depend on BLAS


@lru_cache(maxsize=1 << 16)
def action_of(line: str) -> str:
    return line.split()[0] if line else ""


@lru_cache(maxsize=1 << 16)
def objects_of(line: str) -> tuple[tuple[str, int], ...]:
    return tuple((name, int(i)) for name, i in _OBJECT.findall(line))


def line_of(action: str, objects: Sequence[tuple[str, int]]) -> str:
    return " ".join([action] + [f"<{name}> ({i})" for name, i in objects])


class Counts:
    """What the training programs' scripts say: action bigrams, action-class pairs, arities, and
    the properties (the initial graph's: GRABBABLE, HAS_SWITCH, ...) an action's object has in
    nearly every use (`NEEDS`), so that a class never seen with an action is admitted where the
    scene says it has them."""

    def __init__(self, programs: Sequence):
        self.bigrams, self.after = Counter(), Counter()
        self.pairs, self.classes = Counter(), Counter()
        uses, had, kinds = Counter(), Counter(), {}
        arity: dict[str, int] = {}
        for p in programs:
            props = {n["id"]: n.get("properties", ()) for n in p.graphs()["init_graph"]["nodes"]}
            previous = "<s>"
            for line in (*p.lines, end_action()):
                act = action_of(line)
                self.bigrams[(previous, act)] += 1
                self.after[previous] += 1
                previous = act
                arity[act] = len(objects_of(line))
                for name, node in objects_of(line)[:1]:
                    self.pairs[(act, name)] += 1
                    self.classes[name] += 1
                    uses[act] += 1
                    had.update((act, x) for x in props.get(node, ()))
                    kinds.setdefault(act, set()).add(name)
        self.arity = dict(sorted(arity.items()))
        self.actions = list(self.arity)
        self.needs = {act: frozenset(x for (a, x), k in had.items() if a == act and k >= NEEDS * n)
                      for act, n in uses.items()}
        self.kinds = {act: len(names) for act, names in kinds.items()}

    def admits(self, act: str, properties) -> bool:
        """Whether an object with `properties` may take `act` though training never paired them: it
        has what the action's objects nearly always have, and that is something (or the action
        took many classes: walking, finding)."""
        needs = self.needs.get(act)
        if needs is None or properties is None:
            return False
        return needs <= properties and (bool(needs) or self.kinds[act] >= MANY_CLASSES)

    def bigram(self, previous: str, act: str) -> float:
        return math.log((self.bigrams[(previous, act)] + 0.1) / (self.after[previous] + 4.0))

    def pair(self, act: str, name: str) -> float:
        return math.log((self.pairs[(act, name)] + 0.1) / (self.classes[name] + 1.0))


@dataclass(frozen=True)
class Scene:
    """One program's planning context: its task text's words, its initial graph's classes, the
    retrieved demonstration grounded in it, and the task-class cosines."""

    words: frozenset
    lowest: dict  # class name -> the graph's lowest id of it
    demonstration: tuple
    cosine: dict  # class name -> rounded cosine with the task text
    properties: dict  # class name -> the properties of the graph's lowest id of it
    here: dict  # (class name, room id) -> the class's lowest id inside that room
    room_of: dict  # object id -> the room it is inside (a room: itself)
    start: int | None = None  # the room the character starts in
    demo_objects: frozenset = frozenset()  # the demonstration's (class, id)s

    @property
    def task_classes(self) -> frozenset:
        """The scene's classes the task text names."""
        return _task_classes(self.words, tuple(self.lowest))


@lru_cache(maxsize=1 << 10)
def _task_classes(words: frozenset, names: tuple) -> frozenset:
    return frozenset(n for n in names if any(w in words for w in _class_words(n)))


def rooms_of(nodes: Sequence[dict], edges: Sequence[dict]) -> tuple[dict, dict, int | None]:
    """Each object's room (INSIDE a node of category Rooms; a room is its own), each (class, room)'s
    lowest id, and the character's room."""
    rooms = {n["id"] for n in nodes if n.get("category") == "Rooms"}
    room_of = {i: i for i in rooms}
    for e in edges:
        if e.get("relation_type") == "INSIDE" and e["to_id"] in rooms and e["from_id"] not in rooms:
            room_of.setdefault(e["from_id"], e["to_id"])
    here: dict = {}
    for n in sorted(nodes, key=lambda n: n["id"]):
        if n["id"] in room_of:
            here.setdefault((n["class_name"], room_of[n["id"]]), n["id"])
    start = next((room_of.get(n["id"]) for n in nodes if n["class_name"] == "character"), None)
    return dict(sorted(room_of.items())), here, start


def room_in(scene: Scene, lines: Sequence[str]) -> int | None:
    """The room the character is in after `lines`: that of the last object named that has one."""
    for line in reversed(lines):
        for _, i in reversed(objects_of(line)[:1]):
            if i in scene.room_of:
                return scene.room_of[i]
    return scene.start


def instance(scene: Scene, name: str, lines: Sequence[str]) -> int:
    """The id a step names a class by after `lines`: the one they named last, else the class's
    lowest in the room the character is in, else its lowest. An expert does so: after its own
    history, this names its object in 4,594 of the 4,661 steps of the folds' unseen programs (the
    first object of a step whose class the scene has); the lowest id alone, in 4,211."""
    for line in reversed(lines):
        for other, i in objects_of(line):
            if other == name:
                return i
    return scene.here.get((name, room_in(scene, lines)), scene.lowest[name])


def _cosines(texts: Sequence[str], names: Sequence[str]) -> np.ndarray:
    from regula.rag import embed
    model = embed.model()
    sims = model.encode(list(texts)) @ model.encode([n.replace("_", " ") for n in names]).T
    return np.round(sims, DECIMALS)


def retrieve(queries: Sequence, documents: Sequence, other_task: bool) -> list[int]:
    """Each query program's nearest document program by MiniLM cosine of the task texts (rounded;
    ties to the first); with `other_task`, never one of the query's own task."""
    from .baselines import task_text as text
    sims = _cosines([text(p) for p in queries], [text(d) for d in documents])
    out = []
    for p, row in zip(queries, sims):
        row = row.copy()
        if other_task:
            row[[d.task == p.task for d in documents]] = -9.0
        out.append(int(np.argmax(row)))
    return out


def scenes(queries: Sequence, documents: Sequence, other_task: bool) -> dict[int, Scene]:
    """Each query program's Scene, its demonstration retrieved from `documents`."""
    from .baselines import task_text as text
    picked = retrieve(queries, documents, other_task)
    out = {}
    for p, i in zip(queries, picked):
        nodes = p.graphs()["init_graph"]["nodes"]
        classes = {n["id"]: n["class_name"] for n in nodes}
        lowest: dict[str, int] = {}
        for node_id, name in sorted(classes.items()):
            lowest.setdefault(name, node_id)
        names = sorted(lowest)
        cos = _cosines([text(p)], names)[0]
        props = {n["id"]: frozenset(n.get("properties", ())) for n in nodes}
        room_of, here, start = rooms_of(nodes, p.graphs()["init_graph"].get("edges", ()))
        demo = tuple(ground(documents[i].lines, nodes, similar=True))
        out[p.id] = Scene(frozenset(_WORD.findall(text(p).lower())), lowest, demo,
                          {n: float(c) for n, c in zip(names, cos)}, {n: props[i] for n, i in lowest.items()},
                          here, room_of, start, frozenset(o for line in demo for o in objects_of(line)))
    return out


def aligned(demonstration: tuple, history: Sequence[str]) -> int:
    """The demonstration's next line: after the last history line found in it, in order."""
    j = 0
    for line in history:
        if line in demonstration[j:]:
            j = demonstration.index(line, j) + 1
    return j


@lru_cache(maxsize=1 << 12)
def _class_words(name: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(name.replace("_", " ")))


def _named(scene: Scene, name: str) -> bool:
    return any(w in scene.words for w in _class_words(name))


def canonical(scene: Scene, line: str) -> str:
    """`line` as the ranker names objects (`named`'s inverse): an id that is neither the class's
    lowest nor the demonstration's becomes the lowest."""
    if not line:
        return line
    demo = scene.demo_objects

    def swap(m: re.Match) -> str:
        name, i = m.group(1), int(m.group(2))
        if name in scene.lowest and (name, i) not in demo:
            i = scene.lowest[name]
        return f"<{name}> ({i})"
    return _OBJECT.sub(swap, line)


def named(scene: Scene, line: str, history: Sequence[str]) -> str:
    """A ranked step as the plan names it after `history` (as executed): an object the ranker names
    by its class's lowest id (the scene's, or a copied object grounded to it) is named by `instance`,
    the one the history named or the one in the room the character is in."""
    def swap(m: re.Match) -> str:
        name, i = m.group(1), int(m.group(2))
        if scene.lowest.get(name) == i:
            i = instance(scene, name, history)
        return f"<{name}> ({i})"
    return _OBJECT.sub(swap, line)


def candidates(counts: Counts, scene: Scene, history: Sequence[str]) -> list[str]:
    """The steps the planner chooses from after `history` (the module's doc), sorted."""
    demo = scene.demonstration
    pool = {o for line in (*demo, *history) for o in objects_of(line)}
    pool |= {(name, i) for name, i in scene.lowest.items() if _named(scene, name)}
    in_demo = {o for line in demo for o in objects_of(line)}
    out = set(demo) | {end_action()}
    for act, n in counts.arity.items():
        if n == 0:
            out.add(act)
        elif n == 1:
            out |= {line_of(act, [o]) for o in pool
                    if counts.pairs[(act, o[0])] or o in in_demo or counts.admits(act, scene.properties.get(o[0]))}
    held = [objects_of(h)[0] for h in history if action_of(h) == "[GRAB]" and objects_of(h)]
    if held:
        out |= {line_of(act, [held[-1], o]) for act in PUTS for o in pool if o != held[-1]}
    return sorted(out)


def features(counts: Counts, scene: Scene, history: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """Each candidate's `FEATURES` after `history` (a row each)."""
    demo, nxt = scene.demonstration, aligned(scene.demonstration, history)
    previous = action_of(history[-1]) if history else "<s>"
    seen = {x for h in history for x in objects_of(h)}
    last = set(objects_of(history[-1])) if history else set()
    done = set(history)
    at = {line: k for k, line in reversed(list(enumerate(demo)))}  # a line's first place in it
    named_classes = {o[0] for o in seen}
    task_left = len(scene.task_classes - named_classes)
    demo_classes = {o[0] for o in scene.demo_objects}
    demo_left = len(demo_classes - named_classes) / len(demo_classes) if demo_classes else 0.0
    f = np.zeros((len(cands), len(FEATURES)), np.float32)
    for k, candidate in enumerate(cands):
        act, objs = action_of(candidate), objects_of(candidate)
        row = f[k]
        if candidate in at:
            row[0] = 1
            row[2] = -abs(at[candidate] - nxt) / 5
        row[1] = nxt < len(demo) and candidate == demo[nxt]
        row[3] = counts.bigram(previous, act) / 5
        if objs:
            o = objs[0]
            row[4] = o in seen
            row[5] = o in last
            row[6] = scene.cosine.get(o[0], 0.0)
            row[7] = _named(scene, o[0])
            row[8] = counts.pair(act, o[0]) / 5
            row[14] = counts.admits(act, scene.properties.get(o[0]))
            row[15] = row[7] and o not in seen
        row[9] = bool(history) and candidate == history[-1]
        row[10] = candidate in done
        if act == end_action():
            row[11] = 1
            row[12] = (len(history) - len(demo)) / 5
            row[13] = nxt >= len(demo)
            row[16] = min(task_left, 5) / 5
            row[17] = demo_left
    return np.round(f, DECIMALS)


def state_features(history: Sequence[str], candidate: str, actions: Sequence[str]) -> np.ndarray:
    """What the history did to the candidate's object, what is held, the pose; and the action, one-hot."""
    objs, act = objects_of(candidate), action_of(candidate)
    did = lambda verb, o: any(action_of(h) == verb and o in objects_of(h) for h in history)  # noqa: E731
    f = np.zeros(len(STATE_FEATURES) + len(actions) + 1, np.float32)
    if objs:
        for k, verb in enumerate(("[WALK]", "[FIND]", "[GRAB]", "[OPEN]", "[SWITCHON]")):
            f[k] = did(verb, objs[0])
    f[5] = (sum(action_of(h) == "[GRAB]" for h in history) - sum(action_of(h) in UNDO_HOLD for h in history)) / 2
    poses = [action_of(h) for h in history if action_of(h) in POSES]
    f[6] = bool(poses) and poses[-1] in ("[SIT]", "[LIE]")
    f[7] = len(objs) == 2 and did("[GRAB]", objs[0])
    f[len(STATE_FEATURES) + (actions.index(act) if act in actions else len(actions))] = 1
    return f


def correction_features(counts: Counts, scene: Scene, history: Sequence[str], failed: str,
                        cands: Sequence[str]) -> np.ndarray:
    """Each candidate's `FEATURES` and how it stands to the step judged to fail: the same object,
    the same action, its action (one-hot), and its action on the failed step's object (one-hot)."""
    base = features(counts, scene, history, cands)
    width = len(counts.actions) + 1
    failed_objects, failed_action = objects_of(failed)[:1], action_of(failed)
    extra = np.zeros((len(cands), 2 + 2 * width), np.float32)
    for k, c in enumerate(cands):
        act = action_of(c)
        same = bool(failed_objects) and objects_of(c)[:1] == failed_objects
        slot = counts.actions.index(act) if act in counts.actions else width - 1
        extra[k, 0], extra[k, 1] = same, act == failed_action
        extra[k, 2 + slot] = 1
        extra[k, 2 + width + slot] = same
    return np.concatenate([base, extra], axis=1)


def _mlp(inputs: int, seed: int):
    import torch
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(inputs, HIDDEN), torch.nn.Tanh(), torch.nn.Linear(HIDDEN, 1))


def _padded(groups: list[np.ndarray]):
    """Lists of (candidates x features) as one zero-padded array and its mask."""
    import torch
    width = max(len(g) for g in groups)
    x = np.zeros((len(groups), width, groups[0].shape[1]), np.float32)
    mask = np.zeros((len(groups), width), bool)
    for k, g in enumerate(groups):
        x[k, :len(g)], mask[k, :len(g)] = g, True
    return torch.from_numpy(x), torch.from_numpy(mask)


@dataclass
class TrainLog:
    losses: list
    samples: int


def train_ranker(counts: Counts, scenes_: dict, programs: Sequence, seed: int, epochs: int,
                 batch: int = 16, lr: float = 0.01):
    """The scorer, trained listwise on each program's steps and end action (its Scene from `scenes_`);
    the net and a TrainLog of the mean loss per epoch."""
    groups, gold = [], []
    for p in programs:
        scene = scenes_[p.id]
        lines = [canonical(scene, line) for line in p.lines]
        steps = [*lines, end_action()]
        for t, step in enumerate(steps):
            history = lines[:t]
            cands = candidates(counts, scene, history)
            if step not in cands:
                cands.append(step)
            groups.append(features(counts, scene, history, cands))
            gold.append(cands.index(step))
    return _listwise(groups, gold, seed, epochs, batch, lr)


def train_corrector(counts: Counts, cases: Sequence[tuple], seed: int, epochs: int, batch: int = 16,
                    lr: float = 0.01):
    """The correction head, trained listwise on D_c: each case (scene, history, failed step, the
    correction that executed) ranks the correction first among the candidates other than the
    failed step."""
    groups, gold = [], []
    for scene, history, failed, fix in cases:
        history, failed, fix = [canonical(scene, h) for h in history], canonical(scene, failed), canonical(scene, fix)
        cands = [c for c in candidates(counts, scene, history) if c != failed]
        if fix not in cands:
            cands.append(fix)
        groups.append(correction_features(counts, scene, history, failed, cands))
        gold.append(cands.index(fix))
    return _listwise(groups, gold, seed, epochs, batch, lr)


def _listwise(groups: list, gold: list, seed: int, epochs: int, batch: int, lr: float):
    import torch
    # batches of steps with as many candidates, padded once: padding to the longest step costs 10x
    by_size = sorted(range(len(groups)), key=lambda k: (len(groups[k]), k))
    batches = []
    for i in range(0, len(by_size), batch):
        idx = by_size[i:i + batch]
        batches.append((*_padded([groups[k] for k in idx]), torch.tensor([gold[k] for k in idx])))
    net = _mlp(groups[0].shape[1], seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    rng, losses = random.Random(seed), []
    for _ in range(epochs):
        rng.shuffle(batches)
        total = 0.0
        for x, mask, y in batches:
            scores = net(x).squeeze(-1).masked_fill(~mask, -1e9)
            loss = torch.nn.functional.cross_entropy(scores, y, reduction="sum")
            opt.zero_grad()
            (loss / len(y)).backward()
            opt.step()
            total += loss.item()
        losses.append(round(total / len(groups), DECIMALS))
    return net, TrainLog(losses, len(groups))


def train_judge(rows: list[np.ndarray], executed: list[bool], seed: int, iterations: int = 200, lr: float = 0.01):
    """The feasibility judge: full-batch logistic MLP on D_f's steps; the net and its training accuracy."""
    import torch
    x, y = torch.from_numpy(np.stack(rows)), torch.tensor(executed, dtype=torch.float32)
    net = _mlp(x.shape[1], seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    for _ in range(iterations):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(net(x).squeeze(-1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        accuracy = ((net(x).squeeze(-1) > 0).float() == y).float().mean().item()
    return net, round(accuracy, DECIMALS)


class RankerAgent:
    """E2CL's agent (`inference.SelfCorrecting`) on the ranker: plans the best candidate; with a
    judge, predicts "True" (executes) or "False" and corrects to the next best judged to pass."""

    def __init__(self, counts: Counts, scenes_: dict, net, judge=None, corrector=None):
        self.counts, self.scenes, self.net, self.judge, self.corrector = counts, scenes_, net, judge, corrector

    def _ranked(self, task: Task, history: list, failed: str | None = None) -> list[str]:
        """The candidates best first: by the planner, or, for a correction of `failed`, by the
        correction head (the failed step left out)."""
        import torch
        scene = self.scenes[task.program]
        cands = candidates(self.counts, scene, history)
        if failed is None or self.corrector is None:
            net, x = self.net, features(self.counts, scene, history, cands)
        else:
            cands = [c for c in cands if c != failed]
            net, x = self.corrector, correction_features(self.counts, scene, history, failed, cands)
        with torch.no_grad():
            scores = np.round(net(torch.from_numpy(x)).squeeze(-1).numpy().astype(np.float64), DECIMALS)
        order = sorted(range(len(cands)), key=lambda k: (-scores[k], k))
        return [cands[k] for k in order]

    def judge_row(self, task: Task, history: list, action: str) -> np.ndarray:
        """The judge's input, the history and the step read as the ranker names objects."""
        scene = self.scenes[task.program]
        history, action = [canonical(scene, h) for h in history], canonical(scene, action)
        return np.concatenate([features(self.counts, scene, history, [action])[0],
                               state_features(history, action, self.counts.actions)])

    def _passes(self, task: Task, history: list, action: str) -> bool:
        import torch
        if action == end_action() or self.judge is None:
            return True
        with torch.no_grad():
            score = self.judge(torch.from_numpy(self.judge_row(task, history, action))[None]).item()
        return round(score, DECIMALS) > 0

    def _canonical(self, task: Task, lines: Sequence[str]) -> list[str]:
        scene = self.scenes[task.program]
        return [canonical(scene, line) for line in lines]

    def plan(self, contexts):
        return [named(self.scenes[task.program], self._ranked(task, self._canonical(task, history))[0], history)
                for task, history in contexts]

    def feedback(self, contexts):
        return [EXECUTABLE if self._passes(task, history, action) else "False" for task, history, action in contexts]

    def correct(self, contexts):
        out = []
        for task, history, action, _ in contexts:
            scene, seen = self.scenes[task.program], self._canonical(task, history)
            failed = canonical(scene, action)
            ranked = [c for c in self._ranked(task, seen, failed) if c != failed][:CORRECTION_POOL]
            fix = next((c for c in ranked if self._passes(task, seen, c)), ranked[0] if ranked else failed)
            out.append(named(scene, fix, history) if ranked else action)
        return out
