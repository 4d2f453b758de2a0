"""The demos stage: a killed run resumes, changed inputs replay, fewer episodes leave no stale
files (the episode format and the store itself: tests/test_episodes.py)."""
import json

import pytest

from regula import demos, episodes
from regula.stages import SerialWork
from stage_configs import changed


class Counting(SerialWork):
    """Plays every unit here, noting the seeds it was asked to play."""

    def __init__(self, seeds: list):
        super().__init__()
        self.seeds = seeds

    def map(self, fn, items, **_):
        for item in items:
            self.seeds.append(item["seed"])
            yield fn(item)


def test_killed_run_keeps_finished_episodes_and_resumes(tmp_path, small_params):
    small_params = changed(small_params, {"demos": {"episodes": 3}})
    played = []

    class DiesAfterTwo(SerialWork):
        def map(self, fn, items, **_):
            for i, item in enumerate(items):
                if i == 2:
                    raise KeyboardInterrupt
                played.append(item["seed"])
                yield fn(item)

    with pytest.raises(KeyboardInterrupt):
        demos.generate(small_params, tmp_path / "d", tmp_path / "m", DiesAfterTwo())
    files = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert files == ["episode_00000.jsonl", "episode_00001.jsonl"]
    for f in files:
        episodes.read(tmp_path / "d" / f)  # complete, or this raises

    resumed = []
    metrics = demos.generate(small_params, tmp_path / "d", tmp_path / "m", Counting(resumed), resume=True)
    assert resumed == [2]
    saved = json.loads((tmp_path / "m" / "demos.json").read_text())
    assert saved == metrics
    assert json.loads((tmp_path / "m" / "demos_detail.json").read_text())["episodes"] == 3
    assert (tmp_path / "m" / "demos_episodes.csv").read_text().count("\n") == 4


def test_changed_inputs_are_not_resumed(tmp_path, small_params):
    small_params = changed(small_params, {"demos": {"episodes": 1}})
    demos.generate(small_params, tmp_path / "d", tmp_path / "m")
    small_params = changed(small_params, {"demos": {"max_skills": 10}})
    ran = []
    demos.generate(small_params, tmp_path / "d", tmp_path / "m", Counting(ran), resume=True)
    assert ran == [0]


def test_fewer_episodes_removes_stale_files(tmp_path, small_params):
    demos.generate(small_params, tmp_path / "d", tmp_path / "m")
    small_params = changed(small_params, {"demos": {"episodes": 1}})
    demos.generate(small_params, tmp_path / "d", tmp_path / "m")
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["episode_00000.jsonl"]
