"""Food and arrows, the hazards the survival layer meets besides zombies and the night: a cow seen
is remembered and walked back to, a creature that got away is not looked for at the frontier,
and paths keep out of a skeleton's line of fire."""
from crafter import objects

from regula.agents import Decision
from regula.envs.crafter import memory as memory_module
from regula.envs.crafter.expert import Failures
from regula.envs.crafter.memory import Memory
from regula.envs.crafter.navigation import ARROW_RANGE, LANE_COST, fire_lanes, plan_path
from regula.envs.crafter.world import CrafterWorld
from stage_configs import expert_config


def _bare_world(seed=1, half=12):
    """A world whose square of side 2 * half + 1 around the player is bare grass, no creatures."""
    world = CrafterWorld(seed=seed)
    env = world.env
    px, py = (int(v) for v in env.player.pos)
    for obj in list(env.world.objects):
        if obj is not env.player and abs(int(obj.pos[0]) - px) <= half + 2 and abs(int(obj.pos[1]) - py) <= half + 2:
            env.world.remove(obj)
    for x in range(px - half, px + half + 1):
        for y in range(py - half, py + half + 1):
            env.world[(x, y)] = "grass"
    world.memory.observe(env.world, env.player.pos)
    return world


def test_a_cow_out_of_view_is_remembered_until_its_cell_is_seen_without_it():
    world = _bare_world()
    px, py = (int(v) for v in world.env.player.pos)
    cow = objects.Cow(world.env.world, (px + 3, py))
    world.env.world.add(cow)
    world.act("noop")
    cell = tuple(int(v) for v in cow.pos)
    assert world.memory.nearest_cow((px, py)) == cell
    for _ in range(8):  # walk west until the cow is out of the 9-wide view
        world.act("move_left")
    assert "cow" not in world.memory.creatures.values()
    assert world.memory.nearest_cow(world.env.player.pos) == cell  # remembered where last seen
    world.env.world.remove(cow)
    world.act("move_right")
    while cell in world.memory.cows:  # walking back, its cell comes into view empty
        world.act("move_right")
    assert world.memory.nearest_cow(world.env.player.pos) is None


def test_a_remembered_cow_is_forgotten_after_a_while(monkeypatch):
    monkeypatch.setattr(memory_module, "REMEMBER_COWS", 3)
    memory = Memory((8, 8))
    memory.cows[(7, 7)] = memory.t = 5
    world = _bare_world()
    for _ in range(2):
        memory.observe(world.env.world, (0, 0))
    assert (7, 7) in memory.cows  # out of view, seen 2 observations ago
    memory.observe(world.env.world, (0, 0))
    assert (7, 7) not in memory.cows


def test_eat_cow_walks_back_to_a_cow_seen_out_of_view():
    world = _bare_world()
    px, py = (int(v) for v in world.env.player.pos)
    world.env.world.add(objects.Cow(world.env.world, (px + 3, py)))
    world.act("noop")
    for _ in range(8):
        world.act("move_left")
    assert "cow" not in world.memory.creatures.values()
    world.env.player.inventory["food"] = 3
    step = world.run_skill("eat_cow")
    assert step.success, step.reason
    assert world.inventory["food"] == 9 and step.actions.count("move_right") >= 4


def test_eat_cow_with_no_cow_seen_anywhere_fails_as_before():
    world = _bare_world()
    step = world.run_skill("eat_cow")
    assert not step.success and step.cause == {"kind": "not_in_view", "thing": "cow"} and step.actions == []


class _World:
    def __init__(self):
        self.ran, self.done = [], False

    def run_skill(self, skill, interrupt=None):
        self.ran.append(skill)


class _Step:
    def __init__(self, kind):
        self.success, self.steps, self.skill, self.reason = False, 3, "x", kind
        self.cause = {"kind": kind}


def test_a_creature_that_got_away_is_not_looked_for_at_the_frontier():
    failures, world = Failures(expert_config(), lambda: False), _World()
    for skill in ("eat_cow", "defeat_zombie", "defeat_skeleton"):
        assert failures.after(world, Decision(skill, info={"goal": skill}), _Step("not_in_view")) is None
    assert world.ran == []
    failures.after(world, Decision("collect_iron", info={"goal": "collect_iron"}), _Step("not_seen"))
    assert world.ran == ["explore"]  # a material not found still sends the agent exploring


def _grass_memory(size=20):
    world = _bare_world(half=12)
    memory = Memory((size, size))
    for x in range(size):
        memory.names_grid[x] = ["grass"] * size
    return world, memory


def test_a_skeletons_line_of_fire_runs_to_its_range_and_stops_at_a_wall():
    _, memory = _grass_memory()
    memory.creatures = {(10, 3): "skeleton", (2, 2): "cow"}
    memory.names_grid[12][3] = "stone"
    lanes = fire_lanes(memory)
    assert set(lanes.values()) == {LANE_COST}
    assert {c for c in lanes if c[0] == 10 and c[1] > 3} == {(10, 3 + k) for k in range(1, ARROW_RANGE + 1)}
    assert (11, 3) in lanes and (12, 3) not in lanes and (13, 3) not in lanes  # stone stops arrows
    assert {(9, 3), (8, 3)} <= set(lanes) and (10, 0) in lanes
    assert not any(c[0] == 2 or c[1] == 2 for c in lanes if abs(c[0] - 2) + abs(c[1] - 2) == 1)  # cows shoot nothing


def test_paths_go_round_a_line_of_fire_when_the_detour_costs_less_than_an_arrow():
    _, memory = _grass_memory()
    start, goal = (8, 8), (12, 8)
    straight = plan_path(memory, start, (1, 0), lambda p, f: p == goal, None)
    assert len(straight) == 4
    memory.creatures = {(10, 3): "skeleton"}  # its column's lane reaches (10, 8), not (10, 9)
    detour = plan_path(memory, start, (1, 0), lambda p, f: p == goal, None)
    cells = [pos for _, pos, _ in detour]
    assert len(detour) == 6 and (10, 8) not in cells and (10, 9) in cells
