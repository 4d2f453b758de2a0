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
    ok = metrics.PlanResult("Work", tuple(LINES), (True, True, True), tuple(LINES))
    half = metrics.PlanResult("Work", (LINES[0], LINES[2]), (True, False), tuple(LINES))
    assert (ok.executable, ok.affordance, ok.lcs) == (True, 1.0, 1.0)
    assert (half.executable, half.affordance, half.lcs) == (False, 0.5, 2 / 3)
    assert metrics.summarise([ok, half]) == {"plans": 2, "executability": 0.5, "affordance_rate": 0.75,
                                             "lcs": (1 + 2 / 3) / 2}
    assert metrics.summarise([])["executability"] is None


class _Scripted:
    """An agent whose answers are tables: plan by step number, feedback and correction by action."""

    def __init__(self, plans, feedbacks, corrections):
        self.plans, self.feedbacks, self.corrections, self.asked = plans, feedbacks, corrections, []

    def plan(self, task, history):
        return self.plans[len(history)]

    def feedback(self, task, history, action):
        self.asked.append(("feedback", action))
        return self.feedbacks.get(action, "True")

    def correct(self, task, history, action, feedback):
        self.asked.append(("correct", action))
        return self.corrections[action]


def _world(executable):
    return lambda line: line in executable


def test_plain_inference_executes_what_the_agent_proposes_until_the_end_action():
    from regula.e2cl.inference import run_task
    agent = _Scripted([LINES[0], LINES[2], "[END]"], {LINES[2]: "not close"}, {LINES[2]: LINES[1]})
    result, records = run_task(agent, TASK, _world({LINES[0], LINES[1]}), LINES, max_steps=10)
    assert result.steps == (LINES[0], LINES[2]) and result.executed == (True, False)
    assert agent.asked == [] and [r.corrected for r in records] == [False, False]


def test_speculative_inference_executes_a_correction_its_own_check_passes():
    from regula.e2cl.inference import run_task
    agent = _Scripted([LINES[0], LINES[2], "[END]"], {LINES[2]: "not close"}, {LINES[2]: LINES[1]})
    result, records = run_task(agent, TASK, _world({LINES[0], LINES[1]}), LINES, max_steps=10, speculative=True)
    assert result.steps == (LINES[0], LINES[1]) and result.executable
    assert records[1].to_json() == {"proposed": LINES[2], "executed": LINES[1], "success": True,
                                    "predicted": [[LINES[2], "not close"], [LINES[1], "True"]], "corrected": True}


def test_speculative_inference_falls_back_to_the_initial_action_when_no_correction_passes():
    from regula.e2cl.inference import run_task
    bad = "[SIT] <table> (1)"
    agent = _Scripted([LINES[2], "[END]"], {LINES[2]: "not close", bad: "no such object"},
                      {LINES[2]: bad, bad: LINES[1]})
    result, records = run_task(agent, TASK, _world(set()), LINES, max_steps=10, speculative=True)
    assert records[0].executed == LINES[2] and not records[0].corrected
    assert [p[0] for p in records[0].predicted] == [LINES[2], bad]  # one correction (Algorithm 1)
    result, records = run_task(agent, TASK, _world({LINES[1]}), LINES, max_steps=10, speculative=True,
                               max_corrections=2)
    assert records[0].executed == LINES[1] and result.executable


def test_a_plan_that_never_ends_stops_at_max_steps():
    from regula.e2cl.inference import run_task
    agent = _Scripted([LINES[0]] * 5, {}, {})
    result, _ = run_task(agent, TASK, _world({LINES[0]}), LINES, max_steps=3)
    assert result.steps == (LINES[0],) * 3
