"""Walling in for the night: the pocket test, the planner, and the skill in the real game."""
import numpy as np
import pytest

from regula.envs.crafter.expert import Expert, play_episode
from stage_configs import expert_config
from regula.envs.crafter.survival import Survival, SurvivalConfig
from regula.envs.crafter.shelter import enclosed, plan_enclosure, pocket
from regula.envs.crafter.world import CrafterWorld
from crafter_scene import paint


def grid(rows: list[str]):
    """A material function from a picture: g grass, s stone, w water, t tree, ? unknown."""
    names = {"g": "grass", "s": "stone", "w": "water", "t": "tree", "p": "path"}

    def material(cell):
        x, y = cell
        if not (0 <= y < len(rows) and 0 <= x < len(rows[y])) or rows[y][x] == "?":
            return None
        return names[rows[y][x]]
    return material


def test_pocket_is_the_closed_open_region_around_the_player():
    closed = grid(["sssss",
                   "sggss",
                   "sssss"])
    assert pocket(closed, (1, 1)) == {(1, 1), (2, 1)}
    # water and trees hold zombies off too
    assert pocket(grid(["wtw", "tgt", "wsw"]), (1, 1)) == {(1, 1)}
    leaking = grid(["sssss",
                    "sgggg",
                    "sssss"])
    assert pocket(leaking, (1, 1)) is None  # four cells, and open at the edge
    assert pocket(grid(["s?s", "sgs", "sss"]), (1, 1)) is None  # unknown is not a wall


def _flat_world(seed=1, stones=0, pickaxe=False, stone_block=False):
    """A world whose 15x15 square around the player is bare grass (optionally a block of
    stone south of it), creatures removed, holding `stones`."""
    world = CrafterWorld(seed=seed)
    world.env.player.inventory["stone"] = stones
    world.env.player.inventory["wood_pickaxe"] = int(pickaxe)
    paint(world, (7, 7), lambda dx, dy: "stone" if stone_block and abs(dx) <= 3 and 1 <= dy <= 5 else "grass",
          clear=9)
    return world


def _true_pocket(world):
    w = world.env.world
    return pocket(lambda c: w[c][0] if 0 <= c[0] < w.area[0] and 0 <= c[1] < w.area[1] else None,
                  tuple(int(v) for v in world.env.player.pos))


def test_open_grass_needs_stones_and_six_of_them_close_a_pocket():
    world = _flat_world(stones=5)
    p, f = world.env.player.pos, world.env.player.facing
    assert plan_enclosure(world.memory, p, f, 5, can_dig=False) is None  # two cells have six sides
    world.env.player.inventory["stone"] = 6
    step = world.run_skill("shelter", until=lambda w: True)
    assert step.success, step.reason
    assert world.inventory["stone"] == 0
    assert len(_true_pocket(world)) == 2  # the game's own map, not the agent's memory


def test_a_pickaxe_digs_a_pocket_into_rock_and_uses_the_stone_it_digs():
    world = _flat_world(stones=0, pickaxe=True, stone_block=True)
    step = world.run_skill("shelter", until=lambda w: True)
    assert step.success, step.reason
    cells = _true_pocket(world)
    assert cells is not None and all(world.env.world[c][0] == "path" for c in cells)
    assert step.actions.count("do") == step.actions.count("place_stone") + world.inventory["stone"]


def test_no_stone_and_no_pickaxe_is_a_named_failure():
    world = _flat_world(stones=0)
    step = world.run_skill("shelter")
    assert not step.success and step.reason.startswith("no place to wall in")


def test_a_zombie_cannot_reach_a_walled_in_player():
    from crafter import objects
    world = _flat_world(stones=6)
    assert world.run_skill("shelter", until=lambda w: True).success
    env = world.env
    px, py = (int(v) for v in env.player.pos)
    zombies = [objects.Zombie(env.world, np.array((px + dx, py + dy)), env.player)
               for dx, dy in ((3, 0), (-3, 1), (0, 3))]
    for z in zombies:
        env.world.add(z)
    health = env.player.health
    for _ in range(60):
        world.act("noop")
        for z in zombies:
            if z.health > 0:
                assert np.abs(z.pos - env.player.pos).sum() >= 2
    assert env.player.health >= health


def _at_step(world, step):
    world.env._step = step
    world.env._update_time()


def test_evening_is_when_daylight_falls():
    world = CrafterWorld(seed=0)
    for step in range(0, 600, 7):
        _at_step(world, step)
        now = world.env.world.daylight
        _at_step(world, step + 1)
        assert world.env.evening == (world.env.world.daylight < now) or abs(world.env.world.daylight - now) < 1e-3
        _at_step(world, step)


@pytest.mark.parametrize("step,expected", [(60, None), (200, "shelter")])
def test_the_expert_shelters_when_it_is_dark(step, expected):
    world = CrafterWorld(seed=0)
    survival = Survival(world)
    _at_step(world, step)
    choice = survival.survival_skill()
    assert (choice[0] if choice else None) == expected
    assert Survival(world, SurvivalConfig(shelter=False)).survival_skill() is None


def test_the_shelter_is_left_only_once_zombies_stop_spawning():
    world = CrafterWorld(seed=0)  # no zombie in view
    survival = Survival(world)
    _at_step(world, 290)  # dawn, daylight 0.70: crafter still spawns zombies under 0.83
    assert 0.55 < world.env.world.daylight < 0.83 and not survival.dark_over(world)
    _at_step(world, 310)
    assert 0.85 <= world.env.world.daylight < 0.95 and survival.dark_over(world)


def test_a_failed_shelter_is_not_retried_at_once():
    world = _flat_world(stones=0)
    survival = Survival(world, SurvivalConfig(shelter_retry=30))
    _at_step(world, 200)
    assert survival.survival_skill()[0] == "shelter"
    assert not world.run_skill("shelter").success
    assert not survival.may_shelter() and survival.survival_skill() is None
    assert not enclosed(world.memory, tuple(int(v) for v in world.env.player.pos))
    world.run_skill("explore")  # 30 primitive steps later it may try again
    while sum(e.steps for e in world.events[1:]) < 30:
        world.run_skill_primitive("noop")
    assert survival.may_shelter()


def test_an_agent_that_cannot_act_ends_the_episode_instead_of_spinning():
    # Walled in by rock with no pickaxe: every skill fails without a step. DiVE's agents keep
    # playing through failures (max_failures is huge), so only the idle count ends this.
    world = _flat_world()
    px, py = (int(v) for v in world.env.player.pos)
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        world.env.world[(px + dx, py + dy)] = "stone"
    world.memory.observe(world.env.world, world.env.player.pos)
    summary = play_episode(world, Expert(world, expert_config(goal="all", max_failures=10 ** 6, max_idle=20)))
    assert summary.end.startswith("stuck: 20 skills in a row could not act")
    assert summary.steps < 20


def _walled_in_at_night(seed=1):
    """On bare grass with 6 stones, walled in as it gets dark (crafter's step 180: daylight 0.16)."""
    world = _flat_world(seed=seed, stones=6)
    _at_step(world, 180)
    world.env.player.inventory["energy"] = 3  # tired: it sleeps in there
    assert world.run_skill("shelter", until=lambda w: True).success
    assert len(_true_pocket(world)) == 2
    return world


def _zombie_by_the_wall(world):
    """A zombie on the grass just outside a wall of the pocket, next to the wall the player faces."""
    from crafter import objects
    env = world.env
    p, f = env.player.pos, np.array(env.player.facing)
    cells = _true_pocket(world)
    for step in (f, -f, np.array((f[1], f[0])), -np.array((f[1], f[0]))):
        wall = p + step
        out = wall + step
        if tuple(int(v) for v in wall) not in cells and env.world[out][0] == "grass" and env.world[out][1] is None:
            zombie = objects.Zombie(env.world, out, env.player)
            env.world.add(zombie)
            world.memory.observe(env.world, env.player.pos)
            return zombie
    raise AssertionError("no grass outside the walls")


def test_a_zombie_by_the_wall_neither_hurts_nor_wakes_the_player_nor_breaks_the_night_off():
    # crafter's Zombie hits only at Manhattan distance 1 (`objects.Zombie.update`), which a wall
    # between rules out; a sleeping player wakes only when hurt (`Player._wake_up_when_hurt`).
    world = _walled_in_at_night()
    _zombie_by_the_wall(world)
    survival = Survival(world)
    health = world.env.player.health
    step = world.run_skill("shelter", until=survival.dark_over, interrupt=survival.reflex)
    assert step.success, step.reason  # slept the night through, not broken off
    assert world.env.player.health >= health
    assert all("hurt" not in p for p in step.primitives)
    assert "wake_up" in world.unlocked
    assert world.env.world.daylight >= survival.config.dawn_above
