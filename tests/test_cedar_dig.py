"""CEDAR rollouts that dig where walking cannot get there (`cedar.dig: stuck`): the controller's
fallback, the dug items read into the word as their letters, and the cache keys when it is off."""
import random
from dataclasses import asdict

import pytest

from regula import envs
from regula.cedar import stage
from regula.cedar.library import Library, SkillWorld
from stage_configs import cedar_budget
from regula.cedar.words import ASIDE, dug, extract
from regula import params as P
from regula.errors import UnknownNameError

CRAFTER = envs.get("crafter")
ACTIONS = CRAFTER.skill_names()


def _do(**gained):
    return {"action": "do", "inventory_delta": gained}


def _step(skill, success, *primitives):
    return {"skill": skill, "success": success, "inventory": {}, "props_after": [],
            "primitives": [{"action": "move_left", "inventory_delta": {}}, *primitives]}


def test_dug_items_are_letters_before_the_steps_own():
    log = [_step("place_table", True, _do(stone=1), _do(stone=1)),  # rock dug on the way to a free cell
           _step("collect_coal", False, _do(stone=1)),  # a failed letter's digging is in the word too
           _step("collect_stone", True, _do(coal=1), _do(stone=1), _do(stone=1)),  # the last stone: its own
           _step("eat_cow", True, _do(food=6))]  # food: no collect_ skill
    letters = ("collect_coal", "collect_stone", "eat_cow", "place_table")
    got = extract(log, letters, ACTIONS, dug_letters=True)
    assert got.word == ("collect_stone", "collect_stone", "place_table", "collect_stone", "collect_coal",
                        "collect_stone", "collect_stone", "eat_cow")
    assert extract(log, letters, ACTIONS).word == ("place_table", "collect_stone", "eat_cow")  # off: as before
    # a dug item whose skill is not a letter is a symbol Σ lacks
    assert extract(log, ("place_table",), ACTIONS, dug_letters=True).outside == (
        "collect_stone", "collect_stone", "collect_stone", "collect_coal", "collect_stone", "collect_stone",
        "eat_cow")
    assert dug(_step(ASIDE, True, _do(stone=1)), ACTIONS) == ["collect_stone"]


def _walled_in(dig):
    """World 101 with the player's four neighbours turned to stone, holding a wooden pickaxe."""
    world = CRAFTER.make(101, dig=dig)
    world.env.player.inventory["wood_pickaxe"] = 1
    x, y = (int(v) for v in world.env.player.pos)
    for cell in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
        world.env.world[cell] = "stone"
    world.memory.observe(world.env.world, world.env.player.pos)
    return world


def test_stuck_paths_dig_only_where_walking_cannot_get_there():
    walled = _walled_in(False).run_skill("explore")
    assert not walled.success and walled.cause["kind"] == "nothing_to_explore"
    step = _walled_in("stuck").run_skill("explore")
    assert step.success
    assert dug(step.to_json(), ACTIONS) == ["collect_stone"]  # one wall dug, then walking on
    # in the open a stuck walker walks as a non-digging one does
    open_world, walker = CRAFTER.make(101, dig="stuck"), CRAFTER.make(101, dig=False)
    assert open_world.run_skill("explore").actions == walker.run_skill("explore").actions
    with pytest.raises(ValueError, match="dig must be"):
        CRAFTER.make(101, dig="sometimes")


def test_budget_key_unchanged_when_dig_is_never():
    never = cedar_budget(max_calls=7)
    assert never.key() == {k: v for k, v in asdict(never).items() if k not in ("upkeep", "dig", "dug_calls", "seek", "arm", "call_retry", "call_held", "forage")}
    assert cedar_budget(max_calls=7, dig="stuck").key() == {**never.key(), "dig": "stuck"}
    with pytest.raises(UnknownNameError, match="cedar.dig"):
        cedar_budget(dig="sometimes")
    assert stage.budget(P.load("params.yaml", {"cedar.dig": "stuck"})).dig == "stuck"
    assert stage.budget(P.load("params.yaml")).dig == "always"  # the release default


class _Base:
    """A world where upkeep digs a stone, then the letter succeeds."""

    done = False

    def __init__(self):
        self.events = []

    def run_skill(self, skill, until=None, interrupt=None):
        self.interrupt = interrupt
        prims = [_do(stone=1)] if skill == "collect_drink" else []
        step = type("S", (), {"skill": skill, "success": True, "cause": None, "inventory": {},
                              "to_json": lambda s: _step(skill, True, *prims)})()
        return step


class _Survival:
    def __init__(self):
        self.due = ["collect_drink"]

    def survival_skill(self):
        return (self.due.pop(0), None) if self.due else None

    def interrupt(self, skill, goal):
        return None

    def zombie_close(self, world):
        return None

    def danger(self, world):
        return None


@pytest.mark.parametrize("dig", ["never", "stuck"])
def test_what_upkeep_dug_is_in_the_word_when_rollouts_dig(dig):
    base = _Base()
    world = SkillWorld(base, Library(), cedar_budget(upkeep=True, dig=dig), random.Random(0), survival=_Survival())
    assert world.run_skill("collect_wood").success
    word = extract([e.to_json() for e in world.events], ("collect_stone", "collect_wood"), ACTIONS,
                   dug_letters=dig != "never").word
    if dig == "never":
        assert word == ("collect_wood",) and base.interrupt == world.survival.zombie_close
    else:  # the survival skill's dug stone, then the letter; thirst and hunger stop letters too
        assert word == ("collect_stone", "collect_wood") and base.interrupt == world.survival.danger
