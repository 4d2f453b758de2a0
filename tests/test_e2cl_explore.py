"""E2CL's exploration on real VirtualHome programs, with scripted proposers in place of the model."""
from regula import envs, roles
from regula.e2cl import explore
from regula.e2cl.samples import end_action

VH = envs.get("virtualhome")
DRINK = VH.program("file286_2")  # 13 lines: walk, open the cupboard, grab the glass, ...


def make(program):
    return VH.make(0, program=program.id)


def test_teacher_guided_exploration_pairs_each_guess_with_its_feedback_and_the_experts_step():
    # the agent guesses the expert's next step but one: the line after it (often not executable yet)
    def propose(contexts):
        return [DRINK.lines[min(len(h) + 1, len(DRINK.lines) - 1)] for _, h in contexts]
    out = explore.teacher_guided(propose, [DRINK], make)
    assert len(out.feedback) == 13 and out.stats["tge_steps"] == 13 and out.stats["tge_expert_failed"] == 0
    # the evolving graph lets most steps be taken one early; pouring before grabbing the water is not
    assert [f.target for f in out.feedback] == ["True"] * 10 + ["Error, Robot agent is not holding water"] + ["True"] * 2
    assert {f.origin for f in out.feedback} == {"tge"} and out.stats["tge_error:Missing Object"] == 1
    # a correction sample for every guess that differed from the expert, its target the expert's step
    assert len(out.correction) == 12  # the last guess equals the last line
    assert out.correction[5].target == DRINK.lines[5] and f"Step 6: {DRINK.lines[6]}" in out.correction[5].source


def test_teacher_guided_tries_a_step_without_taking_it():
    # guessing the expert's step exactly: every guess executes, no correction sample
    out = explore.teacher_guided(lambda cs: [DRINK.lines[len(h)] for _, h in cs], [DRINK], make)
    assert [f.target for f in out.feedback] == ["True"] * 13 and out.correction == []


def test_teacher_free_exploration_keeps_only_corrections_that_execute():
    # the agent skips walking: it grabs the glass straight away, then ends
    plan = ["[GRAB] <water_glass> (1000)", end_action()]
    out = explore.teacher_free(lambda cs: [plan[min(len(h), 1)] for _, h in cs], roles.make("corrector", "rules"),
                               [DRINK], make, max_steps=5)
    assert [f.target for f in out.feedback] == ["Error, Robot agent is not close to water_glass"]
    assert [c.target for c in out.correction] == ["[WALK] <water_glass> (1000)"]
    assert out.stats["tfe_corrected"] == 1 and out.stats["tfe_unfinished"] == 0
    # an agent that never ends stops at max_steps and is counted
    out = explore.teacher_free(lambda cs: ["[GRAB] <cupboard> (229)"] * len(cs), roles.make("corrector", "rules"),
                               [DRINK], make, max_steps=3)
    assert out.stats["tfe_steps"] == 3 and out.stats["tfe_no_correction"] == 3 and out.stats["tfe_unfinished"] == 1
    assert explore.statistics(out.feedback) == {"feedback/tfe": 3}
