"""The home (homestead.py): where one can be built, and that the one the controller builds in the
real game keeps zombies out and its plants walled in."""
import numpy as np
from crafter import objects

from regula.envs.crafter.homestead import MAX_WALLS, PLANTS, find_home
from regula.envs.crafter.memory import Memory
from regula.envs.crafter.shelter import OPEN
from regula.envs.crafter.world import CrafterWorld
from crafter_scene import paint

NAMES = {"g": "grass", "s": "stone", "w": "water", "t": "tree", "a": "sand"}


def memory(rows: list[str]) -> Memory:
    """A seen map from a picture (x along a row, y down the rows); '?' is unseen."""
    mem = Memory(area=(len(rows[0]), len(rows)))
    for y, row in enumerate(rows):
        for x, ch in enumerate(row):
            if ch != "?":
                mem.names_grid[x][y] = NAMES[ch]
                mem.map[x, y] = mem.ids[NAMES[ch]]
    return mem


def test_no_water_no_home():
    assert find_home(memory(["g" * 12] * 12), (6, 6)) is None


def test_sand_between_the_water_and_the_grass_leaves_no_plant_site():
    rows = ["w" * 12, "a" * 12, "a" * 12] + ["g" * 12] * 9
    assert find_home(memory(rows), (6, 6)) is None  # saplings grow on grass only


def test_a_home_by_water_closes_when_built_as_planned():
    rows = ["w" * 12] + ["g" * 12] * 11
    mem = memory(rows)
    home = find_home(mem, (6, 6))
    assert home is not None
    assert len(home.plants) >= PLANTS and len(home.walls) <= MAX_WALLS
    assert home.water and all(mem.material(c) == "water" for c in home.water)
    assert all(mem.material(c) == "grass" for c in home.plants)
    # built as planned: plants on their cells, stone on the walls and, from inside, the door
    for c in (*home.walls, home.door):
        mem.names_grid[c[0]][c[1]] = "stone"
    mem.creatures = {c: "plant" for c in home.plants}
    assert home.shut(mem, home.cells[0]) and home.shut(mem, home.cells[1])
    # every side of a plant but the pocket's is closed: nothing walks up to it
    for p in home.plants:
        for n in ((p[0] + 1, p[1]), (p[0] - 1, p[1]), (p[0], p[1] + 1), (p[0], p[1] - 1)):
            assert n in home.cells or n in home.plants or mem.material(n) not in OPEN


def _lakeside_world(seed=1, sand=False):
    """A world whose 31x31 square round the player is grass south of a lake whose shore is 3
    cells north (a beach of sand along it if `sand`), creatures removed, the player holding a
    wood pickaxe, 9 stones and 4 saplings, at step 40 (broad day)."""
    world = CrafterWorld(seed=seed)
    env = world.env
    paint(world, (15, 15), lambda dx, dy: "water" if dy <= -3 else "sand" if sand and dy == -2 else "grass", clear=18)
    inv = env.player.inventory
    inv["wood_pickaxe"], inv["stone"], inv["sapling"] = 1, 9, 4
    env._step = 40
    env._update_time()
    world.memory.observe(env.world, env.player.pos)
    return world


def test_shelter_builds_no_home_unless_the_survival_layer_says_so():
    # a random actor's `shelter` in broad day by water, a pickaxe held: a pocket, as ever
    world = _lakeside_world()
    assert not world.controller.can_build_home()
    assert world.run_skill("shelter", until=lambda w: True).success
    assert world.controller.home is None and world.controller.home_tries == []


def test_the_controller_builds_a_home_zombies_cannot_enter():
    world = _lakeside_world()
    control = world.controller
    control.homes = True  # as the survival layer's `home` sets it
    assert control.can_build_home() and control.building_time()
    step = world.run_skill("shelter", until=lambda w: True)
    assert step.success, step.reason
    home = control.home
    assert home is not None and control.home_tries[-1][2] == "built"
    env = world.env
    pos = tuple(int(v) for v in env.player.pos)
    assert pos in home.cells
    game = env.world
    plants = {tuple(int(v) for v in o.pos) for o in game.objects if isinstance(o, objects.Plant)}
    assert set(home.plants) <= plants
    # the game's own map: the pocket's rim is water, stone or a plant, and so are the plants' sides
    for cell in home.guarded():
        assert cell in plants or game[cell][0] not in OPEN, (cell, game[cell][0])
    zombies = [objects.Zombie(game, np.array((pos[0] + dx, pos[1] + dy)), env.player)
               for dx, dy in ((4, 2), (-4, 3), (1, 5))]
    for z in zombies:
        game.add(z)
    for _ in range(80):
        world.act("noop")
        for z in zombies:
            assert np.abs(z.pos - env.player.pos).sum() >= 2
    alive = {tuple(int(v) for v in o.pos) for o in game.objects if isinstance(o, objects.Plant)}
    assert set(home.plants) <= alive  # zombies next to a plant kill it: none got there


def test_a_site_out_of_view_is_looked_for_along_the_water():
    # the shore in view has a beach (no grass at the water: no site); 6 cells east and west,
    # out of view, the grass reaches the water
    world = _lakeside_world(sand=True)
    env = world.env
    px, py = (int(v) for v in env.player.pos)
    for x in (*range(px - 15, px - 5), *range(px + 6, px + 16)):
        env.world[(x, py - 2)] = "grass"
    world.memory.observe(env.world, env.player.pos)
    world.controller.homes = True
    assert find_home(world.memory, (px, py)) is None
    unseen = {(x, y) for x in range(px - 15, px + 16) for y in range(py - 15, py + 16)
              if world.memory.material((x, y)) is None}
    step = world.run_skill("shelter", until=lambda w: True)
    assert step.success, step.reason
    home = world.controller.home
    assert home is not None and set(home.plants) & unseen  # a plant where it had not looked
    assert [kind for *_, kind in world.controller.home_tries] == ["built"]


def test_a_retired_expert_lives_at_home_to_the_budget():
    from regula.envs.crafter.expert import Expert, ExpertConfig, play_episode
    world = _lakeside_world()
    config = ExpertConfig(goal="all", max_steps=500, max_skills=10 ** 6, home=True, retire=True)
    summary = play_episode(world, Expert(world, config))
    home = world.controller.home
    assert home is not None and summary.steps >= 500 and not world.dead, summary.end
    assert tuple(int(v) for v in world.env.player.pos) in home.cells
    # from the build on it pursues nothing: it stays home, and leaves only for food when its
    # plants cannot feed it in time (the lakeside has no cow nearby: it looks for one), the
    # survival layer's reflexes on the way
    after = world.events[1:]
    assert {e.skill for e in after} <= {"shelter", "explore", "eat_cow", "defeat_zombie", "collect_drink", "sleep"}


def test_a_commuting_expert_goes_out_by_day_closes_the_door_behind_and_is_home_by_dusk():
    # SurvivalConfig.commute: home first, the goals on daytime trips from it
    from regula.envs.crafter.expert import Expert, ExpertConfig, play_episode
    from regula.envs.crafter.survival import DAY
    world = _lakeside_world()
    config = ExpertConfig(goal="all", max_steps=1000, max_skills=10 ** 6, home=True, commute=True, live_on=True)
    seen = []  # (step, player's cell, the door's material), the home once it is built
    act = world.act

    def logged(action):
        out = act(action)
        home, tries = world.controller.home, world.controller.home_tries
        if home is not None and tries and tries[-1][2] == "built":
            seen.append((world.env.step_count, tuple(int(v) for v in world.env.player.pos),
                         world.env.world[home.door][0]))
        return out
    world.act = logged
    summary = play_episode(world, Expert(world, config))
    home = world.controller.home
    assert home is not None and not world.dead and summary.steps >= 1000, summary.end
    built = seen[0][0]  # crafter's step (the world starts at 40)
    assert built < DAY  # the first day: the lakeside has everything a home needs
    inside = {s for s, pos, _ in seen if pos in home.cells}
    away = [(s, pos, door) for s, pos, door in seen if pos not in home.cells and pos != home.door]
    # out on trips in the daytime only, and home at every step of dusk and night after the build
    assert away and all(config.trip_from <= s % DAY < config.home_by for s, *_ in away)
    night = [s for s, *_ in seen if s > built and not config.trip_from <= s % DAY < config.home_by]
    assert night and set(night) <= inside
    # the door shut behind on the way out (a creature in the empty pocket kills the plants),
    # once the player is two cells off
    far = [door for s, pos, door in away if abs(pos[0] - home.door[0]) + abs(pos[1] - home.door[1]) >= 3]
    assert far and sum(d not in OPEN for d in far) >= 0.9 * len(far)
    # the pursuit went on from home: the stone tier came after the build
    assert summary.first_step["make_stone_pickaxe"] > seen[0][0] - 40


def test_a_hungry_commuter_waits_at_home_for_its_plants_rather_than_starve_looking_for_a_cow():
    # SurvivalConfig.ripe_wait: dev world 179 (few cows) has its home built on the first day
    # with little food; at food 0 the commuter went out for a cow (out of 18 cells the plants
    # stop growing) and starved at step 362 with its plants ripe ~50 steps later. Waiting at
    # home, it eats them and lives.
    from regula import envs
    from regula.envs.crafter.expert import Expert, ExpertConfig, play_episode
    from regula.envs.crafter.survival import RIPE_WAIT
    spec = envs.get("crafter")
    played = {}
    for wait in (None, RIPE_WAIT):
        world = spec.make(179, length=600)
        config = ExpertConfig(goal="all", max_steps=600, max_skills=10 ** 6, home=True, commute=True, live_on=True,
                              home_food=9, build_until=0.8, skeleton_reflex=True, ripe_wait=wait)
        summary = play_episode(world, Expert(world, config))
        played[wait] = (world.dead, summary.steps, world.env.player.achievements["eat_plant"], world.controller.home)
    dead, steps, eaten, home = played[None]
    assert dead and steps < 400 and eaten == 0 and home is not None  # the commute as it was
    dead, steps, eaten, home = played[RIPE_WAIT]
    assert not dead and steps == 600 and eaten >= 1 and home is not None
