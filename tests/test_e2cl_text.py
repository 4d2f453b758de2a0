"""E2CL's sample texts (Figure 7's layout) and plan metrics (§3.1)."""
from functools import lru_cache

from hypothesis import given, strategies as st

from regula.e2cl import metrics, samples

TASK = samples.Task("Work", "I walk to the office. I sit down in the chair.")
LINES = ["[WALK] <home_office> (319)", "[WALK] <chair> (356)", "[SIT] <chair> (356)"]


def test_expert_planning_slices_every_prefix_and_ends_with_the_end_action():
    d_p = samples.expert_planning(TASK, LINES)
    assert [s.target for s in d_p] == [*LINES, "[END]"]
    assert d_p[2].source == (
        "### Instruction:\n"
        "Give the next step of the household task. Task: Work. Description: I walk to the office. "
        "I sit down in the chair.\n\n"
        "### Input:\nInteraction history:\nStep 1: [WALK] <home_office> (319)\nStep 2: [WALK] <chair> (356)\n"
        "Next action prefix: Step 3:\n\n### Output:")
    assert {s.kind for s in d_p} == {"planning"} and {s.origin for s in d_p} == {"expert"}


def test_feedback_and_correction_sources_carry_the_action_and_the_feedback():
    fb = samples.feedback(TASK, LINES[:1], "[SIT] <chair> (356)", "The agent is not close to <chair> (356).", "tge")
    assert fb.source.endswith("Initial Action:\nStep 2: [SIT] <chair> (356)\nFeedback prefix: Feedback:\n\n"
                              "### Output:")
    assert fb.target == "The agent is not close to <chair> (356)."
    c = samples.correction(TASK, LINES[:1], "[SIT] <chair> (356)", "The agent is not close to <chair> (356).",
                           LINES[1], "tge")
    assert "Environment feedback:\nFeedback: The agent is not close to <chair> (356).\n" \
           "Correction action prefix: A corrective step would be:" in c.source
    assert c.target == LINES[1] and c.kind == "correction"


def test_nat_samples_say_the_steps_outcome_and_keep_its_context():
    from regula.e2cl import pipeline
    from regula.e2cl.explore import Exploration
    d_p = samples.expert_planning(TASK, LINES)
    good = samples.with_outcome(d_p[2], "success")
    assert good.source == d_p[2].source.replace("household task. Task:", "household task. Give a step that succeeds. "
                                                "Task:")
    assert good.source == samples.planning_source(TASK, LINES[:2], "success") and good.target == LINES[2]
    failed = samples.feedback(TASK, LINES[:1], "[SIT] <chair> (356)", "The agent is not close to <chair> (356).", "tge")
    executed = samples.feedback(TASK, LINES[:1], LINES[1], "True", "tge")
    assert samples.context(failed) == (TASK, LINES[:1], "[SIT] <chair> (356)")
    bad = samples.with_outcome(failed, "failure")
    assert (bad.kind, bad.target, bad.origin) == ("planning", "[SIT] <chair> (356)", "tge")
    assert bad.source == samples.planning_source(TASK, LINES[:1], "failure")
    nat = pipeline.training_set("nat", d_p, Exploration([failed, executed], [], {}))
    assert [s.source for s in nat] == [*(samples.with_outcome(s, "success").source for s in d_p), bad.source]
    assert pipeline.training_set("bc", d_p, Exploration([failed], [], {})) == d_p
    # a correction sample reads back to its failed step's context (the ranker's D_c); its fix is the target
    correction = samples.correction(TASK, LINES[:1], "[SIT] <chair> (356)", "x", LINES[1], "tfe")
    assert samples.context(correction) == (TASK, LINES[:1], "[SIT] <chair> (356)")
    other = samples.Sample("summary", "text", "t", TASK.name)
    try:
        samples.context(other)
    except ValueError as exc:
        assert str(exc) == "no planning context in a summary sample"
    else:
        raise AssertionError("a sample of no known kind has no planning context")


def _lcs_reference(a, b):
    @lru_cache(maxsize=None)
    def f(i, j):
        if i == len(a) or j == len(b):
            return 0
        return f(i + 1, j + 1) + 1 if a[i] == b[j] else max(f(i + 1, j), f(i, j + 1))
    return f(0, 0)


@given(st.lists(st.sampled_from("abcd"), max_size=9), st.lists(st.sampled_from("abcd"), max_size=9))
def test_lcs_is_the_longest_common_subsequence(a, b):
    assert metrics.lcs_length(a, b) == _lcs_reference(tuple(a), tuple(b))


def test_plan_metrics():
    ok = metrics.PlanResult("Work", tuple(LINES), (True, True, True), tuple(LINES), ended=True)
    half = metrics.PlanResult("Work", (LINES[0], LINES[2]), (True, False), tuple(LINES), ended=True)
    assert (ok.executable, ok.affordance, ok.lcs) == (True, 1.0, 1.0)
    assert (half.executable, half.affordance, half.lcs) == (False, 0.5, 2 / 3)
    assert metrics.summarise([ok, half]) == {"plans": 2, "executability": 0.5, "executability_any": 0.5,
                                             "ended": 1.0, "repeats": 0.0, "affordance_rate": 0.75,
                                             "lcs": (1 + 2 / 3) / 2}
    assert metrics.summarise([])["executability"] is None
    empty = metrics.PlanResult("Work", (), (), tuple(LINES), ended=True)  # ended at once: did nothing
    assert (empty.executable, empty.affordance, empty.lcs) == (False, 0.0, 0.0)


def test_a_looping_plan_that_never_ends_is_not_executable():
    loop = metrics.PlanResult("Work", (LINES[0],) * 20, (True,) * 20, tuple(LINES), ended=False)
    assert (loop.executable, loop.executable_any, loop.repeats, loop.affordance) == (False, True, True, 1.0)
    cut = metrics.PlanResult("Work", tuple(LINES), (True, True, True), tuple(LINES), ended=False)
    assert not cut.executable and cut.executable_any and not cut.repeats  # every step ran, but never ended
    assert metrics.summarise([loop, cut]) == {"plans": 2, "executability": 0.0, "executability_any": 1.0,
                                              "ended": 0.0, "repeats": 0.5, "affordance_rate": 1.0,
                                              "lcs": (1 / 20 + 1.0) / 2}


class _Scripted:
    """An agent whose answers are tables: plan by step number, feedback and correction by action."""

    def __init__(self, plans, feedbacks, corrections):
        self.plans, self.feedbacks, self.corrections, self.asked = plans, feedbacks, corrections, []

    def plan(self, contexts):
        return [self.plans[len(history)] for _, history in contexts]

    def feedback(self, contexts):
        self.asked += [("feedback", action) for _, _, action in contexts]
        return [self.feedbacks.get(action, "True") for _, _, action in contexts]

    def correct(self, contexts):
        self.asked += [("correct", action) for _, _, action, _ in contexts]
        return [self.corrections[action] for _, _, action, _ in contexts]


class _World:
    """An episode where the lines in `executable` execute, the others fail as Agent Proximity."""

    def __init__(self, executable):
        self.executable, self.ran = set(executable), []

    def run_skill(self, line):
        from types import SimpleNamespace
        self.ran.append(line)
        ok = line in self.executable
        return SimpleNamespace(success=ok, cause=None if ok else {"error_type": "Agent Proximity"})


def _run(agent, executable, **options):
    from regula.e2cl.inference import TaskRun, run_tasks
    (run,) = run_tasks(agent, [TaskRun(TASK, _World(executable), tuple(LINES))], **options)
    return run.result(), run.records


def test_plain_inference_executes_what_the_agent_proposes_until_the_end_action():
    agent = _Scripted([LINES[0], LINES[2], "[END]"], {LINES[2]: "not close"}, {LINES[2]: LINES[1]})
    result, records = _run(agent, {LINES[0], LINES[1]}, max_steps=10)
    assert result.steps == (LINES[0], LINES[2]) and result.executed == (True, False)
    assert agent.asked == [] and [r.corrected for r in records] == [False, False]
    assert records[1].error_type == "Agent Proximity"


def test_speculative_inference_executes_a_correction_its_own_check_passes():
    agent = _Scripted([LINES[0], LINES[2], "[END]"], {LINES[2]: "not close"}, {LINES[2]: LINES[1]})
    result, records = _run(agent, {LINES[0], LINES[1]}, max_steps=10, speculative=True)
    assert result.steps == (LINES[0], LINES[1]) and result.executable
    assert records[1].to_json() == {"proposed": LINES[2], "executed": LINES[1], "success": True, "error_type": None,
                                    "checked": [[LINES[2], "not close"], [LINES[1], "True"]], "corrected": True}


def test_speculative_inference_falls_back_to_the_initial_action_when_no_correction_passes():
    bad = "[SIT] <table> (1)"
    agent = _Scripted([LINES[2], "[END]"], {LINES[2]: "not close", bad: "no such object"},
                      {LINES[2]: bad, bad: LINES[1]})
    result, records = _run(agent, set(), max_steps=10, speculative=True)
    assert records[0].executed == LINES[2] and not records[0].corrected
    assert [c[0] for c in records[0].checked] == [LINES[2], bad]  # one correction (Algorithm 1)
    result, records = _run(agent, {LINES[1]}, max_steps=10, speculative=True, max_corrections=2)
    assert records[0].executed == LINES[1] and result.executable


def test_the_check_can_be_other_feedback_than_the_agents_own():
    agent = _Scripted([LINES[2], "[END]"], {}, {LINES[2]: LINES[1]})  # its own check passes everything
    truth = lambda contexts, episodes: ["True" if a in episodes[0].executable else "Error" for _, _, a in contexts]
    result, records = _run(agent, {LINES[1]}, max_steps=10, speculative=True, check=truth)
    assert records[0].executed == LINES[1] and result.executable and agent.asked == [("correct", LINES[2])]


def test_a_plan_that_never_ends_stops_at_max_steps():
    agent = _Scripted([LINES[0]] * 5, {}, {})
    result, _ = _run(agent, {LINES[0]}, max_steps=3)
    assert result.steps == (LINES[0],) * 3
    assert not result.ended and not result.executable and result.executable_any and result.repeats


def test_a_plan_that_ends_is_executable_when_every_step_executed():
    agent = _Scripted([LINES[0], LINES[1], "[END]"], {}, {})
    result, _ = _run(agent, {LINES[0], LINES[1]}, max_steps=3)
    assert result.ended and result.executable and result.affordance == 1.0
    result, _ = _run(agent, {LINES[0]}, max_steps=3)  # ended, one of its two steps failed
    assert result.ended and not result.executable and result.affordance == 0.5
    result, _ = _run(agent, {LINES[0], LINES[1]}, max_steps=2)  # the end action comes after the cap
    assert not result.ended and not result.executable


def test_tasks_run_side_by_side_one_batch_a_round():
    from regula.e2cl.inference import TaskRun, run_tasks
    agent = _Scripted([LINES[0], LINES[1], "[END]"], {}, {})
    calls = []
    plan = agent.plan
    agent.plan = lambda contexts: calls.append(len(contexts)) or plan(contexts)
    runs = run_tasks(agent, [TaskRun(TASK, _World(LINES), tuple(LINES)) for _ in range(4)], max_steps=10)
    assert calls == [4, 4, 4] and all(r.result().executable for r in runs)
