"""Episode files: round trip, atomic writes, clear errors on damage, resume, determinism."""
import json

import pytest

from regula import demos
from regula.errors import DataError
from regula.stages import SerialWork


@pytest.fixture(scope="module")
def episode():
    from regula import params
    p = params.validate({"demos": {"max_steps": 300, "max_skills": 60}})
    return demos.run_episode(demos.episode_inputs(p, 6))


def test_round_trip_and_bytes_are_deterministic(tmp_path, episode):
    path = demos.write_episode(tmp_path / "a", episode)
    again = demos.run_episode(demos.episode_inputs(
        __import__("regula.params").params.validate({"demos": {"max_steps": 300, "max_skills": 60}}), 6))
    path2 = demos.write_episode(tmp_path / "b", again)
    assert path.read_bytes() == path2.read_bytes()
    back = demos.read_episode(path)
    assert back["summary"]["seed"] == 6 and len(back["steps"]) == back["summary"]["skills"]
    first = back["steps"][0]
    for key in ("obs", "props_before", "skill", "success", "inventory", "unlocked", "primitives"):
        assert key in first


def test_truncated_file_is_named(tmp_path, episode):
    path = demos.write_episode(tmp_path, episode)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:5]) + "\n")
    with pytest.raises(DataError, match=rf"{path}: truncated \(no summary line after line 5\)"):
        demos.read_episode(path)
    path.write_text("\n".join(lines[:3]) + '\n{"type": "step", "t":\n')
    with pytest.raises(DataError, match=rf"{path}:4: not valid JSON"):
        demos.read_episode(path)
    path.write_text("")
    with pytest.raises(DataError, match="empty file"):
        demos.read_episode(path)


def test_failed_write_leaves_nothing_half_written(tmp_path, episode, monkeypatch):
    bad = dict(episode, steps=episode["steps"] + [{"type": "step", "x": object()}])
    with pytest.raises(TypeError):
        demos.write_episode(tmp_path, bad)
    assert list(tmp_path.iterdir()) == []


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
    small_params["demos"]["episodes"] = 3
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
        demos.read_episode(tmp_path / "d" / f)  # complete, or this raises

    resumed = []
    metrics = demos.generate(small_params, tmp_path / "d", tmp_path / "m", Counting(resumed), resume=True)
    assert resumed == [2]
    assert metrics["episodes"] == 3
    saved = json.loads((tmp_path / "m" / "demos.json").read_text())
    assert saved == metrics
    assert (tmp_path / "m" / "demos_episodes.csv").read_text().count("\n") == 4


def test_changed_inputs_are_not_resumed(tmp_path, small_params):
    small_params["demos"]["episodes"] = 1
    demos.generate(small_params, tmp_path / "d", tmp_path / "m")
    small_params["demos"]["max_skills"] = 10
    ran = []
    demos.generate(small_params, tmp_path / "d", tmp_path / "m", Counting(ran), resume=True)
    assert ran == [0]


def test_fewer_episodes_removes_stale_files(tmp_path, small_params):
    demos.generate(small_params, tmp_path / "d", tmp_path / "m")
    small_params["demos"]["episodes"] = 1
    demos.generate(small_params, tmp_path / "d", tmp_path / "m")
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["episode_00000.jsonl"]
