"""The ranking planner: its candidates name only the scene's objects, it learns to follow a retrieved
demonstration and to end, its judge corrects a step it thinks fails to the next best it thinks
passes, and exploration keeps which scene each D_f sample came from."""
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from regula.e2cl import explore, ranker
from regula.e2cl.inference import EXECUTABLE, TaskRun, run_tasks
from regula.e2cl.samples import Task, end_action, feedback

NODES = [(5, "light"), (7, "light"), (11, "bathroom"), (319, "home_office"), (356, "chair"), (417, "computer"),
         (426, "tv"), (368, "sofa")]
LIGHT = ("[WALK] <home_office> (319)", "[WALK] <light> (5)", "[SWITCHON] <light> (5)")
WORK = ("[WALK] <home_office> (319)", "[WALK] <chair> (356)", "[SIT] <chair> (356)",
        "[SWITCHON] <computer> (417)")
TV = ("[WALK] <tv> (426)", "[SWITCHON] <tv> (426)", "[WALK] <sofa> (368)", "[SIT] <sofa> (368)")


def program(pid, task, description, lines, nodes=NODES):
    graphs = {"init_graph": {"nodes": [{"id": i, "class_name": c} for i, c in nodes]}}
    return SimpleNamespace(id=pid, task=task, description=description, lines=lines, graphs=lambda: graphs)


TRAIN = [program(1, "Turn on light", "Switch the light on", LIGHT),
         program(2, "Work", "Sit at the desk and use the computer", WORK),
         program(3, "Watch TV", "Turn the television on and sit on the sofa", TV)]


def test_candidates_name_only_the_scenes_objects_and_include_the_demonstration_and_the_end():
    counts = ranker.Counts(TRAIN)
    # a scene without a tv: the retrieved TV script is grounded (the television becomes a class it has)
    scene_nodes = [n for n in NODES if n[1] != "tv"] + [(900, "television")]
    test = program(9, "Watch television", "Turn on the television and sit on the sofa", (), scene_nodes)
    (scene,) = ranker.scenes([test], TRAIN, other_task=False).values()
    assert scene.demonstration[:2] == ("[WALK] <television> (900)", "[SWITCHON] <television> (900)")
    present = {(c, i) for i, c in scene_nodes}
    for history in ([], list(scene.demonstration[:2]), ["[GRAB] <light> (5)"]):
        cands = ranker.candidates(counts, scene, history)
        assert end_action() in cands and set(scene.demonstration) <= set(cands)
        assert all(o in present for c in cands for o in ranker.objects_of(c)), cands
    # after a grab: the put actions for the object grabbed
    assert "[PUTBACK] <light> (5) <sofa> (368)" in ranker.candidates(counts, scene, ["[GRAB] <light> (5)"])


def test_a_training_task_never_retrieves_its_own_task():
    twin = program(4, "Turn on light", "Light on in the office", LIGHT)
    picked = ranker.retrieve([TRAIN[0]], [TRAIN[0], twin, *TRAIN[1:]], other_task=True)
    assert picked != [0] and picked != [1]
    assert ranker.retrieve([TRAIN[0]], TRAIN, other_task=False) == [0]


def test_features_mark_the_demonstrations_next_line_once():
    counts = ranker.Counts(TRAIN)
    scene = ranker.scenes([TRAIN[1]], TRAIN, other_task=False)[2]
    assert scene.demonstration == WORK
    history = list(WORK[:2])
    cands = ranker.candidates(counts, scene, history)
    f = ranker.features(counts, scene, history, cands)
    nxt = ranker.FEATURES.index("demonstration's next line")
    assert [cands[k] for k in np.flatnonzero(f[:, nxt])] == [WORK[2]]
    assert f.shape == (len(cands), len(ranker.FEATURES)) and np.array_equal(f, np.round(f, ranker.DECIMALS))


def test_the_end_action_sees_which_of_the_tasks_and_the_demonstrations_objects_the_plan_has_not_named():
    counts = ranker.Counts(TRAIN)
    scene = ranker.scenes([TRAIN[1]], TRAIN, other_task=False)[2]  # "Work": the task names the computer
    assert scene.task_classes == {"computer"}
    col = {name: ranker.FEATURES.index(name) for name in ranker.FEATURES}
    task_left, demo_left = col["end: the task's objects the plan has not named"], \
        col["end: the demonstration's objects the plan has not named"]
    new_named = col["object named by the task, new to the plan"]

    def end_row(history):
        cands = ranker.candidates(counts, scene, history)
        f = ranker.features(counts, scene, history, cands)
        return f[cands.index(end_action())], f, cands
    row, f, cands = end_row([])
    assert row[task_left] == 0.2 and row[demo_left] == 1.0  # 1 of 3 demo classes is the computer
    assert f[cands.index(WORK[3]), new_named] == 1 and f[cands.index(WORK[1]), new_named] == 0
    row, f, cands = end_row(list(WORK[:2]))  # the office and the chair named
    assert row[task_left] == 0.2 and row[demo_left] == pytest.approx(1 / 3, abs=1e-4)
    row, f, cands = end_row(list(WORK))
    assert row[task_left] == 0 and row[demo_left] == 0
    assert f[cands.index(WORK[3]), new_named] == 0  # the computer is no longer new to the plan
    # only the end action carries them
    assert not np.any(np.delete(f[:, [task_left, demo_left]], cands.index(end_action()), axis=0))


def _runs(programs, make_episode):
    return [TaskRun(explore.task_of(p), make_episode(p), tuple(p.lines)) for p in programs]


class _World:
    """Executes the lines of `ok` and nothing else."""

    def __init__(self, ok):
        self.ok = set(ok)

    def run_skill(self, line):
        good = line in self.ok
        return SimpleNamespace(success=good, cause=None if good else {"error_type": "Object availability"},
                               feedback=EXECUTABLE if good else "no")


def test_trained_on_d_p_it_follows_a_demonstration_and_ends():
    counts = ranker.Counts(TRAIN)
    own = ranker.scenes(TRAIN, TRAIN, other_task=False)  # each its own script as the demonstration
    net, log = ranker.train_ranker(counts, own, TRAIN, seed=0, epochs=60)
    assert log.samples == sum(len(p.lines) + 1 for p in TRAIN) and log.losses[-1] < log.losses[0] / 4
    agent = ranker.RankerAgent(counts, own, net)
    runs = run_tasks(agent, _runs(TRAIN, lambda p: _World(p.lines)), max_steps=8)
    assert [tuple(r.history) for r in runs] == [p.lines for p in TRAIN] and all(r.ended for r in runs)


class _Net(torch.nn.Module):
    """Scores a candidate by a fixed table of its features (no training): here, the demonstration's
    next line first, then the demonstration's lines, the end action last."""

    def forward(self, x):
        return (10 * x[..., 1] + 2 * x[..., 0] - 50 * x[..., 11])[..., None]


class _Judge(torch.nn.Module):
    """Says the first step it judges fails and every later one passes."""

    def __init__(self):
        super().__init__()
        self.judged = 0

    def forward(self, x):
        self.judged += 1
        return torch.tensor([[-1.0 if self.judged == 1 else 1.0]])


def test_speculative_inference_replaces_a_step_judged_to_fail_with_the_next_best_judged_to_pass():
    counts = ranker.Counts(TRAIN)
    scenes = ranker.scenes(TRAIN[:1], TRAIN, other_task=False)
    agent = ranker.RankerAgent(counts, scenes, _Net())
    task = explore.task_of(TRAIN[0])
    best = agent.plan([(task, [])])[0]
    assert best == LIGHT[0]
    agent.judge = _Judge()
    assert agent.feedback([(task, [], best)]) == ["False"]
    assert agent.correct([(task, [], best, "False")]) == [agent._ranked(task, [])[1]]
    # run as Algorithm 1: the correction is executed in place of the step judged to fail
    agent.judge = _Judge()
    (run,) = run_tasks(agent, _runs(TRAIN[:1], lambda p: _World(LIGHT)), max_steps=1, speculative=True)
    record = run.records[0]
    assert record.proposed == LIGHT[0] and record.corrected and record.executed == agent._ranked(task, [])[1]
    assert [v for _, v in record.checked] == ["False", EXECUTABLE]


def test_exploration_keeps_each_d_f_samples_scene_and_the_task_its_identity():
    assert explore.task_of(TRAIN[0]) == Task("Turn on light", "Switch the light on")
    assert explore.task_of(TRAIN[0]).program == 1
    plain = feedback(Task("Turn on light", "Switch the light on"), [], LIGHT[0], EXECUTABLE, "tfe")
    assert feedback(explore.task_of(TRAIN[0]), [], LIGHT[0], EXECUTABLE, "tfe") == plain

    class Fixer:
        def correct(self, task, history, action, text, cause=None, scene=None):
            return None
    worlds = {p.id: _World(p.lines) for p in TRAIN}
    world = lambda p: SimpleNamespace(run_skill=worlds[p.id].run_skill, probe=worlds[p.id].run_skill,  # noqa
                                      graph=lambda: {})
    propose = lambda contexts: ["[WALK] <tv> (426)" for _ in contexts]  # noqa: E731
    found = explore.teacher_guided(propose, TRAIN, world).add(
        explore.teacher_free(propose, Fixer(), TRAIN, world, max_steps=2))
    assert len(found.feedback_scenes) == len(found.feedback) > 0
    assert found.feedback_scenes[:len(LIGHT)] == [1] * len(LIGHT) and set(found.feedback_scenes) == {1, 2, 3}
    # TGE's corrections (the expert's step where the guess differs), each with its scene
    assert len(found.correction_scenes) == len(found.correction) > 0 and set(found.correction_scenes) == {1, 2, 3}


@pytest.mark.parametrize("seed", [0, 1])
def test_the_judge_learns_a_separable_d_f(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(200, 6)).astype(np.float32)
    judge, accuracy = ranker.train_judge(list(x), list(x[:, 0] > 0), seed)
    assert accuracy >= 0.95


def test_the_correction_head_learns_the_fix_d_c_shows_for_a_failed_step():
    # D_c: whatever step failed on an object, the step that executed instead walked to that object
    counts = ranker.Counts(TRAIN)
    own = ranker.scenes(TRAIN, TRAIN, other_task=False)
    cases = []
    for p in TRAIN:
        for t, line in enumerate(p.lines):
            for obj in ranker.objects_of(line)[:1]:
                if not line.startswith("[WALK]"):
                    cases.append((own[p.id], list(p.lines[:t]), line, ranker.line_of("[WALK]", [obj])))
    head, log = ranker.train_corrector(counts, cases, seed=0, epochs=40)
    assert log.samples == len(cases) and log.losses[-1] < log.losses[0]
    agent = ranker.RankerAgent(counts, own, net=_Net(), corrector=head)
    task = explore.task_of(TRAIN[1])  # Work: sitting on the chair failed
    failed = "[SIT] <chair> (356)"
    assert agent._ranked(task, list(WORK[:1]), failed)[0] == "[WALK] <chair> (356)"
    assert failed not in agent._ranked(task, list(WORK[:1]), failed)
    # without the head, the correction is the planner's next best
    assert ranker.RankerAgent(counts, own, _Net())._ranked(task, list(WORK[:1]), failed)[0] == WORK[1]


def _roomed(pid, task, description, lines, nodes, inside, start):
    """A program whose graph places each object in a room (`inside`: id -> room id) and the
    character in `start`."""
    rooms = set(inside.values())
    graph = {"nodes": [{"id": i, "class_name": c, "category": "Rooms" if i in rooms else "Props"} for i, c in nodes]
             + [{"id": 1, "class_name": "character", "category": "Characters"}],
             "edges": [{"from_id": i, "to_id": r, "relation_type": "INSIDE"} for i, r in inside.items()]
             + [{"from_id": 1, "to_id": start, "relation_type": "INSIDE"}]}
    return SimpleNamespace(id=pid, task=task, description=description, lines=lines,
                           graphs=lambda: {"init_graph": graph})


def test_a_step_names_the_instance_in_the_room_the_character_is_in():
    # two lights: 6 in the bathroom (11), 7 in the home office (319); the character starts in the bathroom
    nodes = [(6, "light"), (7, "light"), (11, "bathroom"), (319, "home_office")]
    test = _roomed(9, "Turn on light", "Switch the light on", (), nodes, {6: 11, 7: 319}, start=11)
    (scene,) = ranker.scenes([test], TRAIN[:1], other_task=False).values()
    # the copied light (5) is grounded to the lowest id, as the ranker names it
    assert scene.demonstration == ("[WALK] <home_office> (319)", "[WALK] <light> (6)", "[SWITCHON] <light> (6)")
    office = ["[WALK] <home_office> (319)"]
    assert ranker.named(scene, "[SWITCHON] <light> (6)", []) == "[SWITCHON] <light> (6)"  # the bathroom's
    assert ranker.named(scene, "[SWITCHON] <light> (6)", office) == "[SWITCHON] <light> (7)"
    # a light the history named keeps its id wherever the character goes
    assert ranker.named(scene, "[SWITCHON] <light> (6)", ["[WALK] <light> (6)", *office]) == "[SWITCHON] <light> (6)"
    # the ranker reads an executed history back as it names objects
    assert ranker.canonical(scene, "[WALK] <light> (7)") == "[WALK] <light> (6)"
    counts = ranker.Counts(TRAIN)
    net = _Net()  # follows the demonstration
    agent = ranker.RankerAgent(counts, {9: scene}, net)
    runs = run_tasks(agent, _runs([test], lambda p: _World(["[WALK] <home_office> (319)", "[WALK] <light> (7)",
                                                            "[SWITCHON] <light> (7)"])), max_steps=4)
    assert runs[0].history[:3] == ["[WALK] <home_office> (319)", "[WALK] <light> (7)", "[SWITCHON] <light> (7)"]


def test_a_graph_without_rooms_names_the_lowest_id():
    (scene,) = ranker.scenes([program(9, "Turn on light", "Light", ())], TRAIN[:1], other_task=False).values()
    assert scene.start is None and ranker.instance(scene, "light", ["[WALK] <home_office> (319)"]) == 5
