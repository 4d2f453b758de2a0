"""The VirtualHome adapter: recorded programs replay, every line is checked before the simulator,
and the simulator's failures come back as E2CL's error types with the feedback the agent reads."""
import pytest

from regula import envs
from regula.envs.base import CAUSE_KINDS
from regula.errors import DataError, UnknownNameError

VH = envs.get("virtualhome")
DRINK = "file286_2"  # Drink: walk to the cupboard, open it, grab the glass, pour water, drink


def episode(*lines):
    env = VH.make(0, program=DRINK)
    steps = [env.run_skill(line) for line in lines]
    return env, steps


def test_family_is_registered_and_publishes_programs_and_vocabulary():
    assert "virtualhome" in envs.names() and isinstance(VH, envs.EnvSpec)
    programs = VH.programs()
    assert len(programs) == 518 and len(VH.task_names()) == 26
    drink = programs[DRINK]
    assert drink.task == "Drink" and drink.lines[:2] == ("[WALK] <dining_room> (201)", "[WALK] <cupboard> (229)")
    assert all("(1." not in line for p in programs.values() for line in p.lines)  # ids normalised
    assert len(VH.actions) == 44 and VH.actions[:3] == ("CLOSE", "DRINK", "FIND")
    assert VH.error_types == ("Unflipped Boolean State", "Missing Object", "Enclosed Object", "Invalid Action",
                              "Over-occupied Agent", "Agent Proximity", "Object availability", "Others")
    assert VH.templates["correction"].splitlines()[-3] == "Correction action prefix: {A corrective step would be: }"


def test_a_recorded_program_runs_line_by_line_to_its_final_state():
    env = VH.make(0, program=DRINK)
    assert isinstance(env, envs.Environment) and env.task == "Drink" and not env.goal_reached()
    for line in VH.program(DRINK).lines:
        step = env.run_skill(line)
        assert (step.success, step.feedback, step.cause, step.simulated) == (True, "True", None, True), line
    assert env.goal_reached() and env.steps == 13 and env.executed() == list(VH.program(DRINK).lines)
    record = env.events[5].to_json()
    assert record["parsed"] == "[GRAB] <water_glass> (1000)" and record["reason"] == ""
    assert record["obs"] == ("You are in the dining_room. You hold nothing. "
                             "Close to you: wall.211, cupboard.229, water_glass.1000, food_food.2016.")


def test_goal_is_not_reached_halfway():
    env, steps = episode(*VH.program(DRINK).lines[:8])
    assert all(s.success for s in steps) and not env.goal_reached()


# Each error type provoked in the Drink program's scene: (lines, feedback of the last, its cause).
PROVOKED = {
    "Agent Proximity": (["[GRAB] <water_glass> (1000)"], "Error, Robot agent is not close to water_glass",
                        {"kind": "too_far", "thing": "<water_glass> (1000)"}),
    "Enclosed Object": (["[WALK] <water_glass> (1000)", "[GRAB] <water_glass> (1000)"],
                        "Error, water_glass is inside other closed thing",
                        {"kind": "enclosed", "thing": "<water_glass> (1000)"}),
    "Missing Object": (["[WALK] <cupboard> (229)", "[PUTBACK] <water_glass> (1000) <cupboard> (229)"],
                       "Error, Robot agent is not holding water_glass",
                       {"kind": "missing", "item": "<water_glass> (1000)", "have": 0, "need": 1}),
    "Invalid Action": (["[WALK] <cupboard> (229)", "[GRAB] <cupboard> (229)"], "Error, cupboard is not grabbable",
                       {"kind": "invalid", "thing": "<cupboard> (229)"}),
    "Unflipped Boolean State": (["[WALK] <cupboard> (229)", "[OPEN] <cupboard> (229)", "[OPEN] <cupboard> (229)"],
                                "Error, cupboard is not closed",
                                {"kind": "no_need", "thing": "<cupboard> (229)", "needed": "closed", "stat": "open"}),
    "Over-occupied Agent": (["[WALK] <chair> (356)", "[SIT] <chair> (356)", "[WALK] <cupboard> (229)"],
                            "Error, Robot agent is sitting", {"kind": "occupied", "stat": "sitting"}),
    "Object availability": (["[GRAB] <cup> (99999)"], "cup isn't available in the environment.",
                            {"kind": "not_seen", "thing": "<cup> (99999)", "actual": None}),
    "Others": (["[SLEEP]"], "Error, Robot agent is not lying or sitting", {"kind": "other"}),
}


@pytest.mark.parametrize("error_type", list(PROVOKED))
def test_each_error_type_is_provoked_with_its_cause_and_feedback(error_type):
    lines, feedback, cause = PROVOKED[error_type]
    env, steps = episode(*lines)
    assert all(s.success for s in steps[:-1])
    last = steps[-1]
    assert (last.success, last.feedback, last.cause) == (False, feedback, {"error_type": error_type, **cause})
    assert set(CAUSE_KINDS[last.cause["kind"]][1]) <= set(last.cause)
    assert env.state is not None and env.steps == len(lines)


def test_sitting_twice_is_an_unflipped_state_not_an_occupied_agent():
    _, steps = episode("[WALK] <chair> (356)", "[SIT] <chair> (356)", "[SIT] <chair> (356)")
    assert steps[-1].cause == {"kind": "no_need", "error_type": "Unflipped Boolean State", "stat": "sitting"}


REJECTED = [  # (line, reason, cause, feedback): regula's checks, before the simulator
    ("[GRAB] <cup> (229)", "object 229 is a cupboard, not a cup",
     {"kind": "not_seen", "error_type": "Object availability", "thing": "<cup> (229)", "actual": "cupboard"},
     "cup isn't available in the environment."),
    ("[GRAB] <water_glass> (4242)", "no object with id 4242 in the scene",
     {"kind": "not_seen", "error_type": "Object availability", "thing": "<water_glass> (4242)", "actual": None},
     "water_glass isn't available in the environment."),
    ("[STANDSUP]", "unknown action 'STANDSUP' in '[STANDSUP]'",
     {"kind": "invalid", "error_type": "Invalid Action", "thing": None, "action": "STANDSUP"},
     "Error, STANDSUP is not an action"),
    ("[GRAB]", "GRAB takes 1 objects, '[GRAB]' names 0",
     {"kind": "invalid", "error_type": "Invalid Action", "thing": None, "action": "GRAB"},
     "Error, GRAB takes 1 objects, got 0"),
    ("[LOOKAT_SHORT] <cupboard> (229)", "LOOKAT_SHORT is not executed by the evolving-graph simulator",
     {"kind": "invalid", "error_type": "Invalid Action", "thing": "<cupboard> (229)", "action": "LOOKAT_SHORT"},
     "Error, LOOKAT_SHORT is not supported"),
    ("walk to the kitchen", "cannot parse script line 'walk to the kitchen': expected '[ACTION] <class> (id)' "
     "with zero to two objects, e.g. '[GRAB] <cup> (1000)'",
     {"kind": "other", "error_type": "Others", "line": "walk to the kitchen"}, "Error, cannot parse walk to the kitchen"),
    ("[WALK] <cupboard> (1.229)", None, {"kind": "other", "error_type": "Others", "line": "[WALK] <cupboard> (1.229)"},
     "Error, cannot parse [WALK] <cupboard> (1.229)"),
]


@pytest.mark.parametrize("line,reason,cause,feedback", REJECTED)
def test_bad_lines_are_failed_steps_that_never_reach_the_simulator(line, reason, cause, feedback, monkeypatch):
    env = VH.make(0, program=DRINK)
    monkeypatch.setattr(env, "_simulate", lambda parsed: pytest.fail(f"{line!r} reached the simulator"))
    step = env.run_skill(line)
    assert (step.success, step.simulated, step.cause, step.feedback) == (False, False, cause, feedback)
    if reason is not None:
        assert step.reason == reason
    assert env.steps == 1 and env.events == [step]


def test_unknown_ids_would_crash_the_simulator_itself():
    """Why the checks exist: the simulator fed an unknown id dies inside (AttributeError/TypeError)."""
    from virtualhome_eval.simulation.evolving_graph.scripts import Script, parse_script_line
    env = VH.make(0, program=DRINK)
    with pytest.raises((AttributeError, TypeError)):
        env._executor.execute_one_step(Script([parse_script_line("[WALK] <cup> (99999)", 0)]), env.state)


def test_a_simulator_exception_is_a_failed_step_not_a_crash(monkeypatch):
    env = VH.make(0, program=DRINK)
    monkeypatch.setattr(env._executor, "execute_one_step", lambda *a, **k: 1 / 0)
    step = env.run_skill("[WALK] <cupboard> (229)")
    assert not step.success and step.cause == {"kind": "other", "error_type": "Others",
                                               "simulator_error": "ZeroDivisionError"}


@pytest.mark.parametrize("message,category,cause", [
    ('<character> (65) does not have a free hand when executing "[GRAB] <cup> (3) [4]"', "missing",
     {"kind": "occupied", "error_type": "Over-occupied Agent"}),
    ("<character> (65) is not holding a knife", "missing",
     {"kind": "missing", "error_type": "Missing Object", "item": "knife", "have": 0, "need": 1}),
    ("<microwave> (313) is still on", "satisfied",
     {"kind": "no_effect", "error_type": "Unflipped Boolean State", "thing": "<microwave> (313)", "stat": "on",
      "skill": "OPEN"}),
    ("Door(s) <door> (50), <door> (51) between <bedroom> (73) and <kitchen> (205) is (are) closed", "missing",
     {"kind": "no_route", "error_type": "Others", "to": "<kitchen> (205)"}),
    ("<tv> (426) not lookable", "afford", {"kind": "invalid", "error_type": "Invalid Action", "thing": "<tv> (426)"}),
    ("<character> (65) does not face <tv> (426)", "missing",
     {"kind": "too_far", "error_type": "Agent Proximity", "thing": "<tv> (426)"}),
    ("<cup> (3) cannot be found", "unseen", {"kind": "not_seen", "error_type": "Object availability", "thing": "<cup> (3)"}),
    ("something new", None, {"kind": "other", "error_type": "Others", "thing": None}),
])
def test_simulator_messages_map_to_error_types(message, category, cause):
    from regula.envs.virtualhome.feedback import classify
    assert classify(message, category, "OPEN") == cause


def test_programmer_errors_are_clear_exceptions(tmp_path):
    env = VH.make(0, program=DRINK)
    with pytest.raises(TypeError, match="a script line is a str, not NoneType: None"):
        env.run_skill(None)
    with pytest.raises(VH.ScriptLineError, match=r"cannot parse script line '\[GRAB\] cup'"):
        VH.parse_line("[GRAB] cup")
    with pytest.raises(UnknownNameError, match="unknown program 'file0_0'; valid programs: file1003_2, "):
        VH.make(0, program="file0_0")
    from regula.envs.virtualhome.programs import read_program
    bad = tmp_path / "file1_1.txt"
    bad.write_text("Drink\nI drink\n\n[WALK] <kitchen> (205)\nWALK kitchen\n")
    with pytest.raises(DataError, match=r"file1_1.txt:5: cannot parse script line 'WALK kitchen'"):
        read_program(bad, tmp_path / "file1_1.json")
    graphs = tmp_path / "g.json"
    graphs.write_text('{"init_graph": {"nodes": []}}')
    with pytest.raises(DataError, match=r"g.json: not a graph file with init_graph and final_graph"):
        VH.Program("x", "t", "d", ("[SLEEP]",), bad, graphs).graphs()


def test_seed_picks_the_program_when_none_is_named():
    assert VH.make(3).program.id == VH.make(3).program.id
    assert len({VH.make(s).program.id for s in range(6)}) > 1


def test_props_and_text_follow_the_graph():
    env, _ = episode("[WALK] <cupboard> (229)")
    props = env.props()
    assert sorted(props) == env.proposition_names()
    assert props["close(cupboard.229)"] and props["inside(dining_room.201)"] and not props["holds(water_glass.1000)"]
    assert props["closed(cupboard.229)"] and not props["open(cupboard.229)"]
    env.run_skill("[OPEN] <cupboard> (229)")
    assert env.props()["open(cupboard.229)"] and not env.props()["closed(cupboard.229)"]
    assert VH.describe("holds(water_glass.1000)") == "the agent holds the water_glass 1000"
    assert VH.describe("open(cupboard.229)") == "the cupboard 229 is open"


@pytest.mark.slow
def test_516_of_518_programs_execute_and_reach_their_final_state():
    failed, goals = {}, 0
    for pid, program in VH.programs().items():
        env = VH.make(0, program=pid)
        for line in program.lines:
            step = env.run_skill(line)
            if not step.success:
                failed[pid] = (line, step.cause["error_type"])
                break
        else:
            goals += env.goal_reached()
    assert failed == {"file624_1": ("[GRAB] <bookmark> (1001)", "Over-occupied Agent"),
                      "file688_1": ("[GRAB] <water_glass> (1000)", "Over-occupied Agent")}
    assert goals == 516


def test_probe_says_what_a_step_would_do_and_leaves_the_episode_as_it_was():
    env, _ = episode("[WALK] <dining_room> (201)", "[WALK] <cupboard> (229)")
    before = (env.graph(), env.steps, len(env.events))
    opened = env.probe("[OPEN] <cupboard> (229)")
    assert opened.success and (env.graph(), env.steps, len(env.events)) == before
    grabbed = env.probe("[GRAB] <water_glass> (1000)")  # still inside the closed cupboard
    assert grabbed.cause["error_type"] == "Enclosed Object" and (env.graph(), env.steps) == before[:2]
    assert env.run_skill("[OPEN] <cupboard> (229)").success  # the probe did not open it
