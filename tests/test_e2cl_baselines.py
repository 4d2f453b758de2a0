"""E2CL's planners that train nothing: retrieval copies the nearest training program's script, remapped
ids name the scene's objects, a copied script is cut at the step cap and then does not end."""
from types import SimpleNamespace

import pytest

from regula.e2cl import baselines as B
from regula.e2cl.grounding import ground

LIGHT = ("[WALK] <light> (411)", "[SWITCHON] <light> (411)")
TV = ("[WALK] <tv> (426)", "[SWITCHON] <tv> (426)")
SOFA = ("[WALK] <sofa> (368)", "[SIT] <sofa> (368)")


def program(pid, task, description, lines, nodes=()):
    graphs = {"init_graph": {"nodes": [{"id": i, "class_name": c} for i, c in nodes]}}
    return SimpleNamespace(id=pid, task=task, description=description, lines=lines, graphs=lambda: graphs)


TRAIN = [program("a", "Turn on light", "Switch the light on in the room", LIGHT),
         program("b", "Watch TV", "Turn the television on and watch a show", TV),
         program("c", "Relax on sofa", "Sit down on the couch and rest", SOFA)]


@pytest.mark.parametrize("retriever", B.RETRIEVERS)
def test_retrieval_copies_the_nearest_training_programs_script(retriever):
    tests = [program("t1", "Watch television", "Turn on the television to watch a show", ()),
             program("t2", "Turn on lamp", "Switch the lamp light on", ())]
    assert B.scripts(f"retrieval_{retriever}", tests, TRAIN) == [TV, LIGHT]


def test_tfidf_ties_go_to_the_first_training_program():
    assert B.tfidf_nearest(["nothing shared"], ["a b c", "d e f"]) == [0]
    assert B.tfidf_nearest(["switch light"], ["watch tv", "switch the light", "switch the light"]) == [1]


def test_grounding_names_the_scenes_object_of_that_class():
    nodes = [{"id": 7, "class_name": "light"}, {"id": 5, "class_name": "light"}, {"id": 426, "class_name": "tv"},
             {"id": 411, "class_name": "wall"}]
    lines = ["[WALK] <light> (411)", "[PUTBACK] <cup> (3) <tv> (426)", "[SWITCHON] <light> (411)"]
    # 411 is a wall here: the scene's lowest light id; the tv is kept; a class the scene lacks keeps its id
    assert ground(lines, nodes) == ["[WALK] <light> (5)", "[PUTBACK] <cup> (3) <tv> (426)",
                                     "[SWITCHON] <light> (5)"]


class _World:
    def __init__(self, executable):
        self.executable = set(executable)

    def run_skill(self, line):
        ok = line in self.executable
        return SimpleNamespace(success=ok, cause=None if ok else {"error_type": "Object availability"})


def test_a_copied_script_ends_unless_the_cap_cuts_it():
    target = program("t", "Turn on light", "Light on", LIGHT)
    run = B.play(target, LIGHT, lambda p: _World(LIGHT), max_steps=2)
    assert run.ended and run.result().executable and run.result().lcs == 1.0
    run = B.play(target, LIGHT + TV, lambda p: _World(LIGHT + TV), max_steps=3)
    assert not run.ended and not run.result().executable and run.result().executable_any
    assert [r.executed for r in run.records] == list(LIGHT + TV[:1])


def test_the_ceiling_is_the_best_copy_per_test_program():
    tests = [program("t", "x", "y", LIGHT + SOFA)]
    assert B.ceiling(tests, TRAIN, max_steps=20) == 0.5  # LIGHT or SOFA: 2 of 4 lines
    assert B.ceiling([], TRAIN, max_steps=20) is None


def test_grounding_gives_a_class_the_scene_lacks_its_nearest_named_class():
    nodes = [{"id": 1001, "class_name": "washing_machine"}, {"id": 1000, "class_name": "laundry_detergent"},
             {"id": 5, "class_name": "kitchen"}, {"id": 426, "class_name": "tv"}]
    lines = ["[WALK] <dishwasher> (170)", "[GRAB] <dish_soap> (171)", "[PUTBACK] <dish_soap> (171) <dishwasher> (170)",
             "[SWITCHON] <tv> (426)"]
    grounded = ground(lines, nodes, similar=True)
    # no dishwasher here: the washing machine; no dish soap: the detergent; the tv is the scene's already
    assert grounded == ["[WALK] <washing_machine> (1001)", "[GRAB] <laundry_detergent> (1000)",
                        "[PUTBACK] <laundry_detergent> (1000) <washing_machine> (1001)", "[SWITCHON] <tv> (426)"]
    assert ground(lines, nodes) == lines  # ids only: the missing classes keep theirs (and fail)


def test_grounded_retrieval_copies_the_nearest_script_then_grounds_it():
    nodes = [(9, "lamp"), (3, "television")]
    tests = [program("t", "Watch television", "Turn on the television to watch a show", (), nodes)]
    assert B.scripts("retrieval_minilm_grounded", tests, TRAIN) == [
        ("[WALK] <television> (3)", "[SWITCHON] <television> (3)")]
