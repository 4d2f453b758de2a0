"""The death census: the adapter records why a primitive step took health (`hurt`), and an
episode's end cause is its killing blow's cause by precedence, or how it ended alive.

tests/data/deaths/<cause>.json are short recorded situations (a seed and primitive actions from
reset, default settings) that end in death by that cause; replayed, they must die the same way."""
import json
import random
from pathlib import Path

import pytest

from regula import envs
from regula.envs.crafter.census import census, end_cause
from regula.envs.crafter.world import CrafterWorld
from regula.report.sections.census import census_table

CRAFTER = envs.get("crafter")
DEATHS = sorted((Path(__file__).parent / "data" / "deaths").glob("*.json"))


def replay(seed: int, actions: list[str]) -> CrafterWorld:
    world = CrafterWorld(seed=seed)
    for a in actions:
        world.act(a)
    return world


def as_episode(world: CrafterWorld, end: str) -> dict:
    return {"steps": [{"primitives": world.primitive_log}], "summary": {"end": end}}


def check_hurt_records(log: list[dict]) -> None:
    """`hurt` is on exactly the steps whose health dropped, says by how much, and names a cause."""
    health = 9
    for p in log:
        if p["health"] < health:
            assert p["hurt"]["health"] == p["health"] - health and p["hurt"]["by"], p
        else:
            assert "hurt" not in p, p
        health = p["health"]


def test_the_dataset_covers_every_cause_found():
    # fatigue never kills first here: energy runs out after food unless the agent eats, and
    # starvation outranks it; it is recorded beside starvation (starvation.json).
    assert [d.stem for d in DEATHS] == ["arrow", "lava", "starvation", "thirst", "zombie", "zombie_at_map_edge"]


@pytest.mark.parametrize("file", DEATHS, ids=lambda f: f.stem)
def test_a_recorded_death_replays_to_its_cause(file):
    case = json.loads(file.read_text())
    assert len(case["actions"]) <= 600
    world = replay(case["seed"], case["actions"])
    assert world.dead and world.steps == len(case["actions"])
    log = world.primitive_log
    check_hurt_records(log)
    assert log[-1]["hurt"] == case["killing_blow"]
    assert sum("hurt" in p for p in log) == case["hurts"]
    assert end_cause(as_episode(world, "died")) == case["cause"] == CRAFTER.end_cause(as_episode(world, "died"))


def test_a_slow_death_names_every_necessity_at_zero():
    case = json.loads((Path(__file__).parent / "data" / "deaths" / "starvation.json").read_text())
    log = replay(case["seed"], case["actions"]).primitive_log
    assert [p["hurt"] for p in log if "hurt" in p][-4:] == [{"health": -1, "by": ["starvation", "fatigue"]}] * 4
    assert log[-1]["inventory_delta"] == {"health": -1}


def test_random_play_records_every_health_drop_with_a_cause():
    rng = random.Random(0)
    world = CrafterWorld(seed=4)
    while not world.done and world.steps < 1500:
        world.act(rng.choice(CRAFTER.actions))
    check_hurt_records(world.primitive_log)
    assert any("hurt" in p for p in world.primitive_log)


def test_a_step_that_took_no_health_has_no_hurt():
    world = replay(0, ["noop"] * 20)
    assert all(p["health"] == 9 and "hurt" not in p for p in world.primitive_log)


def death(*by, health=0) -> dict:
    last = {"health": health, **({"hurt": {"health": -2, "by": list(by)}} if by else {})}
    return {"steps": [{"primitives": [{"health": 9}]}, {"primitives": [last]}], "summary": {"end": "died"}}


@pytest.mark.parametrize("by, cause", [
    (("zombie", "thirst"), "zombie"), (("thirst", "lava"), "lava"), (("arrow", "zombie"), "zombie"),
    (("starvation", "thirst"), "thirst"), (("fatigue", "starvation"), "starvation"), (("fatigue",), "fatigue"),
    ((), "unknown")])
def test_the_killing_blow_is_named_by_precedence(by, cause):
    assert end_cause(death(*by)) == cause


def test_a_death_the_log_does_not_show_is_unknown():
    assert end_cause({"steps": [], "summary": {"end": "died"}}) == "unknown"


@pytest.mark.parametrize("end, cause", [
    ("goal reached", "goal"), ("step budget", "budget"), ("episode length reached", "length"),
    ("stuck: explore failed 12 times in a row", "stopped"), ("no plan", "stopped")])
def test_an_episode_that_ended_alive_is_named_by_its_end(end, cause):
    alive = {"steps": [{"primitives": [{"health": 3, "hurt": {"health": -2, "by": ["zombie"]}}]}], "summary": {"end": end}}
    assert end_cause(alive) == cause


def test_census_counts_every_cause_with_zeros():
    eps = [death("zombie"), death("zombie", "thirst"), death("lava"), death(),
           {"steps": [], "summary": {"end": "step budget"}}]
    assert census(eps) == CRAFTER.census(eps) == {
        "deaths": {"lava": 1, "zombie": 2, "arrow": 0, "thirst": 0, "starvation": 0, "fatigue": 0, "unknown": 1},
        "alive": {"goal": 0, "budget": 1, "length": 0, "stopped": 0}}


def test_the_report_table_has_a_row_per_agent_with_the_share_died():
    c = census([death("zombie"), death("thirst"), death("zombie"), {"steps": [], "summary": {"end": "goal reached"}}])
    records = {"demos": {"episodes": 4, **c}, "ltlcrit": None,
               "dive": {"agent": {"dive": {"episodes": 4, **c}, "old": {"episodes": 4}}}}
    table = census_table(records)
    died = "died (95% interval)"
    assert table[["stage", "agent", "episodes", "zombie", "thirst", "goal", died]].values.tolist() == [
        ["demos", "scripted expert (demonstrations)", 4, 2, 1, 1, "3/4 (30-95%)"],
        ["dive", "`dive`", 4, 2, 1, 1, "3/4 (30-95%)"]]


def test_the_report_and_the_adapter_name_the_same_causes_in_the_same_order():
    from regula.envs.crafter import census as adapter
    from regula.report.sections import census as report
    assert (report.DEATHS, report.ALIVE) == (adapter.DEATHS, adapter.ALIVE_ENDS)
    table = census_table({"demos": {"episodes": 1, "deaths": {"zombie": 1}, "alive": {}}})
    assert list(table.columns) == ["stage", "agent", "episodes", *report.DEATHS, *report.ALIVE, "died (95% interval)"]
