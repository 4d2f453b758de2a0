"""Episode logs (regula.episodes): one format, round trip, atomic writes, clear errors on
damage, and the one resume rule every stage uses."""
import json

import pytest

from regula import demos, episodes, params as params_mod
from regula.envs import CAUSE_KINDS
from regula.episodes import EpisodeStore
from regula.errors import DataError, EmptyEpisodeError


@pytest.fixture(scope="module")
def episode():
    p = params_mod.validate({"demos": {"max_steps": 300, "max_skills": 60}})
    return demos.run_episode(demos.episode_inputs(p, 6))


def test_round_trip_and_bytes_are_deterministic(tmp_path, episode):
    path = episodes.write(tmp_path / "a", episode)
    p = params_mod.validate({"demos": {"max_steps": 300, "max_skills": 60}})
    path2 = episodes.write(tmp_path / "b", demos.run_episode(demos.episode_inputs(p, 6)))
    assert path.name == "episode_00006.jsonl" and path.read_bytes() == path2.read_bytes()
    back = episodes.read(path)
    assert back == json.loads(json.dumps(episode))
    head = back["header"]
    assert head["format"] == episodes.FORMAT and head["source"] == "expert" and head["seed"] == 6
    assert head["inputs"] == params_mod.fingerprint(demos.episode_inputs(p, 6))
    assert back["summary"]["seed"] == 6 and len(back["steps"]) == back["summary"]["skills"]
    for step in back["steps"]:
        for key in ("obs", "props_before", "props_after", "skill", "success", "reason", "cause", "inventory",
                    "inventory_delta", "unlocked", "primitives", "by"):
            assert key in step
        assert step["by"] in ("expert", "survival")
        assert (step["cause"] is None) == step["success"]
        assert step["cause"] is None or step["cause"]["kind"] in CAUSE_KINDS


def test_damage_is_named_by_file_and_line(tmp_path, episode):
    path = episodes.write(tmp_path, episode)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:5]) + "\n")
    with pytest.raises(DataError, match=rf"{path}: truncated \(no summary line after line 5\)"):
        episodes.read(path)
    path.write_text("\n".join(lines[:3]) + '\n{"type": "step", "t":\n')
    with pytest.raises(DataError, match=rf"{path}:4: not valid JSON"):
        episodes.read(path)
    path.write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(DataError, match=rf"{path}:1: expected the episode header, got 'step'"):
        episodes.read(path)
    path.write_text("\n".join(lines + lines[1:2]) + "\n")
    with pytest.raises(DataError, match=rf"{path}:{len(lines) + 1}: a 'step' line after the summary line"):
        episodes.read(path)
    path.write_text("")
    with pytest.raises(DataError, match="empty file"):
        episodes.read(path)


def test_failed_write_leaves_nothing_half_written(tmp_path, episode):
    bad = dict(episode, steps=episode["steps"] + [{"type": "step", "x": object()}])
    with pytest.raises(TypeError):
        episodes.write(tmp_path, bad)
    assert list(tmp_path.iterdir()) == []


# -- the store: one resume rule -----------------------------------------------------------------
def _inputs(seed, setting=1):
    return {"seed": seed, "setting": setting}


def _play(log):
    def play(inputs):
        log.append(inputs["seed"])
        step = {"type": "step", "t": 0, "skill": "noop", "success": True, "reason": "", "cause": None, "by": "test",
                "steps": inputs.get("steps", 1)}
        return episodes.episode(episodes.header(inputs["seed"], "test", inputs, ["p"]), [step],
                                {"seed": inputs["seed"], "setting": inputs["setting"]})
    return play


def test_store_writes_each_episode_as_it_ends_and_a_killed_run_keeps_them(tmp_path):
    store, played = EpisodeStore(tmp_path / "s"), []
    play = _play(played)

    def dies_at_2(inputs):
        if inputs["seed"] == 2:
            raise KeyboardInterrupt
        return play(inputs)

    with pytest.raises(KeyboardInterrupt):
        store.play([_inputs(s) for s in range(4)], dies_at_2)
    assert sorted(p.name for p in store.directory.iterdir()) == ["episode_00000.jsonl", "episode_00001.jsonl"]
    played.clear()
    seen = []
    out = store.play([_inputs(s) for s in range(4)], play, progress=lambda done, total, ep: seen.append(done))
    assert played == [2, 3] and seen == [1, 2, 3, 4]
    assert [e["summary"]["seed"] for e in out] == [0, 1, 2, 3]
    assert out == store.read_all()  # kept and played ones alike, as read back from their files


def test_store_replays_changed_inputs_damaged_files_and_other_formats(tmp_path):
    store, played = EpisodeStore(tmp_path), []
    store.play([_inputs(s) for s in range(3)], _play(played))
    played.clear()
    store.play([_inputs(0), _inputs(1, setting=2), _inputs(2)], _play(played))
    assert played == [1]
    text = store.path(2).read_text().splitlines()
    store.path(2).write_text("\n".join(text[:-1]) + "\n" + text[-1][:10])  # torn summary line
    head = json.loads(text[0])
    store.path(0).write_text("\n".join([json.dumps({**head, "seed": 0, "format": 1})] + text[1:]) + "\n")
    played.clear()
    out = store.play([_inputs(0), _inputs(1, setting=2), _inputs(2)], _play(played))
    assert played == [0, 2] and out[1]["summary"]["setting"] == 2
    played.clear()
    store.play([_inputs(0)], _play(played), resume=False)  # resume off: everything is played again
    assert played == [0]


def test_store_removes_other_seeds_and_temporaries(tmp_path):
    store = EpisodeStore(tmp_path)
    store.play([_inputs(s) for s in range(3)], _play([]))
    (tmp_path / ".tmp-abc.jsonl").write_text("half")
    store.play([_inputs(0)], _play([]))
    assert [p.name for p in tmp_path.iterdir()] == ["episode_00000.jsonl"]


def test_store_refuses_an_episode_for_another_seed(tmp_path):
    with pytest.raises(DataError, match="asked for seed 1, got seed 0"):
        EpisodeStore(tmp_path).play([_inputs(1)], lambda i: _play([])(_inputs(0)))


def test_an_episode_that_never_acted_is_an_error_naming_file_who_and_world(tmp_path):
    store = EpisodeStore(tmp_path / "ltlcrit" / "greedy")
    with pytest.raises(EmptyEpisodeError, match=r"ltlcrit/greedy/episode_00001\.jsonl: test on world 1 took 0 "
                                                 r"primitive steps: the agent never acted"):
        store.play([_inputs(0), {**_inputs(1), "steps": 0}], _play([]))
    # kept as written (a file to read), and still an error when resumed rather than a row
    played = []
    with pytest.raises(EmptyEpisodeError, match="on world 1 took 0 primitive steps"):
        store.play([_inputs(0), {**_inputs(1), "steps": 0}], _play(played))
    assert played == []


def test_row_mode_returns_idle_episodes_and_refuses_a_row_of_them_only(tmp_path):
    store = EpisodeStore(tmp_path / "random")
    out = store.play([_inputs(0), {**_inputs(1), "steps": 0}], _play([]), idle="row")
    assert [episodes.primitive_steps(e) for e in out] == [1, 0]
    with pytest.raises(EmptyEpisodeError, match=r"random: test took 0 primitive steps on every one of its 2 worlds: "
                                                 r"the agent never acted .*, so the row measures nothing"):
        store.play([{**_inputs(s), "steps": 0} for s in (0, 1)], _play([]), idle="row")
    with pytest.raises(ValueError, match="idle must be one of"):
        store.play([_inputs(0)], _play([]), idle="ignore")


def test_a_real_agent_that_never_moves_is_refused(tmp_path):
    """LTLCrit's greedy actor with no laws (the old Table 2 baseline): every make_* action it
    cycles through fails at once, 0 primitive steps in 10 decisions."""
    from regula import roles
    from regula.ltlcrit.model import CrafterModel
    from regula.ltlcrit.rollout import rollout
    from stage_configs import rollout_config
    model, cfg, actor = CrafterModel(goal="place_table"), rollout_config(max_skills=10, upkeep=False), roles.make(
        "actor", "greedy")
    ep = rollout(actor, [], 100, model, cfg)
    assert (ep["summary"]["steps"], ep["summary"]["actor_actions"]) == (0, 10)
    with pytest.raises(EmptyEpisodeError, match=r"ltlcrit:greedy on world 100 took 0 primitive steps"):
        EpisodeStore(tmp_path).play([{"seed": 100}], lambda i: rollout(actor, [], i["seed"], model, cfg))


def test_forked_map_keeps_the_order_runs_closures_in_other_processes_and_passes_errors_on():
    import os
    import time

    base = 10  # a closure's free variable: the forked workers inherit it, nothing is pickled

    def slow_first(n):
        time.sleep(0.3 if n == 0 else 0)  # the first item ends last
        return n + base, os.getpid()

    out = list(episodes.forked_map(slow_first, list(range(6)), workers=2))
    assert [n for n, _ in out] == list(range(10, 16))
    assert os.getpid() not in {pid for _, pid in out}
    assert {pid for _, pid in episodes.forked_map(slow_first, [1, 2], workers=1)} == {os.getpid()}

    def fails_at_3(n):
        if n == 3:
            raise DataError("world 3 is broken")
        return n

    with pytest.raises(DataError, match="world 3 is broken"):
        list(episodes.forked_map(fails_at_3, list(range(6)), workers=2))


def test_store_plays_in_workers_the_same_files_and_warms_only_what_it_plays(tmp_path):
    played, warmed = [], []
    one = EpisodeStore(tmp_path / "one").play([_inputs(s) for s in range(5)], _play(played))
    (tmp_path / "two").mkdir()
    EpisodeStore(tmp_path / "two").write(one[0])  # kept: neither played nor warmed
    seen = []
    two = EpisodeStore(tmp_path / "two").play([_inputs(s) for s in range(5)], _play(played), workers=2,
                                              warm=lambda i: warmed.append(i["seed"]),
                                              progress=lambda done, total, ep: seen.append(ep["header"]["seed"]))
    assert two == one and seen == [0, 1, 2, 3, 4] and warmed == [1, 2, 3, 4]
    assert {p.name: p.read_bytes() for p in (tmp_path / "one").iterdir()} == {
        p.name: p.read_bytes() for p in (tmp_path / "two").iterdir()}
    assert played == [0, 1, 2, 3, 4]  # the workers' appends stayed in the workers
    EpisodeStore(tmp_path / "three").play([_inputs(s) for s in range(2)], _play([]),
                                          warm=lambda i: warmed.append(i["seed"]))
    assert warmed == [1, 2, 3, 4]  # one process: nothing to warm
