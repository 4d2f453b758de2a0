"""The minihack_demos stage: one expert demonstration per MiniHack task in the common episode log,
byte-identical from run to run, its record and report section; its params refused in one line."""
import json

import pytest

from regula import episodes, params, stages
from regula.errors import ParamsError, RegulaError
from regula.report.sections import minihack as section
from regula.stages import Paths

TASKS = ["lava_cross", "wand_of_death", "quest", "lava_freeze"]


def run_stage(root, **minihack):
    return stages.execute("minihack_demos", params.validate({"minihack": minihack}), Paths(root))


def test_one_demonstration_per_task_in_the_episode_log_and_identical_twice(tmp_path):
    headline = run_stage(tmp_path)
    out = tmp_path / "data" / "minihack" / "demos"
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.jsonl"))
    assert files == [f"{t}/episode_00000.jsonl" for t in sorted(TASKS)]
    eps = {t: episodes.read(out / t / "episode_00000.jsonl") for t in TASKS}
    for task, ep in eps.items():
        head, summary = ep["header"], ep["summary"]
        assert head["source"] == "expert" and head["seed"] == 0 and "has_ring" in head["propositions"]
        assert summary["task"] == task and summary["success"] and summary["end"] == "success"
        assert summary["achievements"] == summary["task_achievements"]  # every sub-goal, in the task's order
        assert [a for s in ep["steps"] for a in s["unlocked"]] == summary["achievements"]
        assert episodes.primitive_steps(ep) == summary["steps"] and len(ep["steps"]) == summary["skills"]
    assert [s["skill"] for s in eps["lava_cross"]["steps"]] == ["go_to ring", "pick_up", "put_on ring", "go_to stairs"]
    assert any(s["skill"].startswith("zap wand ") and "kill_minotaur" in s["unlocked"]
               for s in eps["wand_of_death"]["steps"])
    detail = json.loads((tmp_path / "metrics" / "minihack_demos_detail.json").read_text())
    assert [(r["task"], r["seed"], r["success"]) for r in detail["demos"]] == [(t, 0, True) for t in TASKS]
    assert detail["eval_seeds"] == [100, 150] and detail["steps"] == sum(r["steps"] for r in detail["demos"]) > 0
    assert headline == json.loads((tmp_path / "metrics" / "minihack_demos.json").read_text()) == {
        "minihack_demos_success": 4}

    first = {p: p.read_bytes() for p in sorted(out.rglob("*.jsonl"))}
    run_stage(tmp_path)
    assert {p: p.read_bytes() for p in sorted(out.rglob("*.jsonl"))} == first

    lines = "\n".join(section.section(Paths(tmp_path))).splitlines()
    assert lines[0] == "## MiniHack demonstrations (DiVE §4.2, issue 38)"
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| task")]
    assert [r.split(" | ")[0] for r in rows] == [f"| {t}" for t in TASKS]
    assert all(r.endswith("| yes |") for r in rows)


def test_a_task_or_seed_no_longer_listed_leaves_no_file(tmp_path):
    run_stage(tmp_path, tasks=["lava_cross"], demo_seeds=[3, 4])
    run_stage(tmp_path, tasks=["lava_cross"], demo_seeds=[4])
    out = tmp_path / "data" / "minihack" / "demos"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.jsonl")) == ["lava_cross/episode_00004.jsonl"]


def test_a_demonstration_that_fails_stops_the_stage_in_one_line(tmp_path):
    # one skill: the wand is picked up, the minotaur never met, the stairs never reached
    with pytest.raises(RegulaError) as err:
        run_stage(tmp_path, tasks=["wand_of_death"], max_skills=1)
    assert str(err.value).startswith("minihack_demos: the expert did not finish wand_of_death seed 0 (")
    assert "\n" not in str(err.value) and not (tmp_path / "metrics" / "minihack_demos.json").exists()


def test_the_report_leaves_the_section_out_before_the_stage_ran(tmp_path):
    assert section.section(Paths(tmp_path)) == []


@pytest.mark.parametrize("minihack, expected", [
    ({"demo_seeds": [0, 120]}, "params: minihack.demo_seeds [120] lie in minihack.eval [100, 150): a demonstration "
                               "must come from a seed the tables never report on"),
    ({"eval": {"start": 0, "count": 5}}, "params: minihack.demo_seeds [0] lie in minihack.eval [0, 5): a demonstration "
                                         "must come from a seed the tables never report on"),
    ({"tasks": ["lava_crossing"]}, "params: minihack.tasks[0]: 'lava_crossing' is not one of lava_cross, lava_freeze, "
                                   "quest, wand_of_death"),
    ({"tasks": []}, "params: minihack.tasks must list at least one value, got []"),
    ({"demo_seeds": [0, 0]}, "params: minihack.demo_seeds: lists 0 more than once"),
    ({"max_skills": 0}, "params: minihack.max_skills must be >= 1, got 0"),
])
def test_bad_minihack_params_are_one_line(minihack, expected):
    with pytest.raises(ParamsError) as err:
        params.validate({"minihack": minihack})
    assert str(err.value) == expected
