"""CEDAR's executor keeping alive as the expert does: a letter's explore stops once its target is
seen (`cedar.seek`), and the survival layer arms itself with swords from materials it gathers for them
(`cedar.arm`), outside the word and outside every call's success."""
import random
from dataclasses import asdict

from regula import params as P
from regula.automata.dfa import DFA
from regula.cedar import stage
from regula.cedar.library import Library, SkillWorld
from regula.cedar.rollout import play
from stage_configs import cedar_budget


class _Step:
    def __init__(self, skill, success, cause=None, steps=1):
        self.skill, self.success, self.cause, self.steps = skill, success, cause, steps
        self.inventory, self.props_after, self.primitives = {}, [], []

    def to_json(self):
        return {"skill": self.skill, "success": self.success, "cause": self.cause, "inventory": {},
                "props_after": [], "primitives": []}


class _Memory:
    def __init__(self, seen=()):
        self.things = set(seen)

    def seen(self, thing):
        return thing in self.things


class _Seeker:
    """collect_iron fails until iron is seen; an explore sees it after `after` primitive steps when
    told to stop there, else walks its whole 40."""

    done = False

    def __init__(self):
        self.memory, self.events, self.unlocked, self.steps, self.explores = _Memory(), [], [], 0, []

    def run_skill(self, skill, until=None):
        if skill == "explore":
            self.memory.things.add("iron")
            stopped = until is not None and until(self)
            self.explores.append(stopped)
            self.steps += 6 if stopped else 40
            step = _Step(skill, True)
        elif skill == "collect_iron" and self.memory.seen("iron"):
            self.unlocked.append("collect_iron")
            step = _Step(skill, True)
        else:
            step = _Step(skill, False, {"kind": "not_seen", "thing": "iron"})
        self.events.append(step)
        return step


def _word(letter):
    return DFA(("collect_iron",), ((1,), (2,), (2,)), 0, frozenset({1}))


def test_seek_stops_the_explore_once_the_letters_target_is_seen():
    for seek, stopped, steps in ((True, [True], 6), (False, [False], 40)):
        world = _Seeker()
        record = play(world, _word("collect_iron"), "collect_iron", cedar_budget(seek=seek), random.Random(0))
        assert record["label"] and world.explores == stopped and record["steps"] == steps


class _Armoury:
    """A world by a table: collecting gives the item, making a sword uses its recipe's items."""

    done = False
    USES = {"make_wood_sword": {"wood": 1}, "make_stone_sword": {"wood": 1, "stone": 1}}

    def __init__(self, inventory, near_table=True, seen=("tree", "stone")):
        self.inventory = dict(inventory)
        self.memory, self.near_table = _Memory(seen), near_table
        self.events, self.unlocked, self.ran, self.steps = [], [], [], 0

    def props(self):
        return {"near_table": self.near_table}

    def run_skill(self, skill, until=None, interrupt=None):
        self.ran.append(skill)
        if skill.startswith("collect_"):
            item = skill.partition("_")[2]
            self.inventory[item] = self.inventory.get(item, 0) + 1
        elif skill in self.USES:
            for item, n in self.USES[skill].items():
                self.inventory[item] -= n
            self.inventory[skill.partition("_")[2]] = 1
        if skill not in self.unlocked:
            self.unlocked.append(skill)
        step = _Step(skill, True)
        self.events.append(step)
        return step


class _Calm:
    """A survival layer with nothing due."""

    def survival_skill(self):
        return None

    def zombie_close(self, world):
        return None

    def interrupt(self, skill, goal):
        return None

    danger = zombie_close


def test_arm_makes_each_sword_from_what_it_gathers_and_leaves_the_words_items_as_they_were():
    base = _Armoury({"wood": 2, "stone": 3, "wood_pickaxe": 1})
    world = SkillWorld(base, Library(), cedar_budget(upkeep=True, arm=True), random.Random(0), survival=_Calm())
    world.run_skill("place_furnace")
    assert base.ran == ["collect_wood", "make_wood_sword", "collect_stone", "collect_wood", "make_stone_sword",
                        "place_furnace"]
    assert {k: base.inventory[k] for k in ("wood", "stone")} == {"wood": 2, "stone": 3}
    assert base.inventory["wood_sword"] == base.inventory["stone_sword"] == 1
    assert [e.skill for e in world.events] == ["place_furnace"]  # the word sees its letter only
    # a call's success counts its own skills, not the arming's collect_wood
    call = SkillWorld(base, Library(), world.budget, random.Random(0), start=0, survival=_Calm(), armed=world.armed)
    assert call.unlocked == {"place_furnace"}
    # armed already: nothing more is made
    base.ran.clear()
    world.run_skill("place_furnace")
    assert base.ran == ["place_furnace"]


def test_arm_needs_a_table_the_tools_and_the_materials_seen_and_never_gets_the_rollouts_goal():
    def ran(inventory, goal=None, **kw):
        base = _Armoury(inventory, **kw)
        SkillWorld(base, Library(), cedar_budget(upkeep=True, arm=True), random.Random(0), survival=_Calm(),
                   goal=goal).run_skill("collect_wood")
        return base.ran[:-1]

    assert ran({}, near_table=False) == []
    assert ran({}, seen=()) == []
    assert ran({}) == ["collect_wood", "make_wood_sword"]  # no wood pickaxe: no stone for the second
    assert ran({"wood_pickaxe": 1}, goal="make_stone_sword") == ["collect_wood", "make_wood_sword"]
    assert ran({"wood_pickaxe": 1}, goal="collect_wood") == []  # its gathering would reach the goal
    # without upkeep there is no survival layer, so no arming
    base = _Armoury({})
    SkillWorld(base, Library(), cedar_budget(arm=True), random.Random(0)).run_skill("collect_wood")
    assert base.ran == ["collect_wood"]


def test_seek_and_arm_name_themselves_in_the_rollouts_key_only_when_on_and_come_from_params():
    off = cedar_budget(dig="stuck")
    assert "seek" not in off.key() and "arm" not in off.key()
    assert off.key() == {k: v for k, v in asdict(off).items() if k not in ("upkeep", "dug_calls", "seek", "arm", "call_retry", "call_held", "forage")}
    assert cedar_budget(seek=True, arm=True).key()["seek"] is True and cedar_budget(arm=True).key()["arm"] is True
    got = stage.budget(P.load("params.yaml", {"cedar.seek": False, "cedar.arm": False}))
    assert not got.seek and not got.arm
    default = stage.budget(P.load("params.yaml", {}))  # the release runs with both on
    assert default.seek and default.arm and default.key()["seek"] is True


class _Coal:
    """`shelter` succeeds and gets nothing; `collect_coal` gets coal."""

    done = False

    def __init__(self):
        self.events, self.unlocked, self.ran, self.steps, self.inventory = [], [], [], 0, {}

    def run_skill(self, skill, until=None, interrupt=None):
        self.ran.append(skill)
        if skill not in self.unlocked:
            self.unlocked.append(skill)
        step = _Step(skill, True)
        self.events.append(step)
        return step


def test_call_retry_drops_a_shortcut_that_accepted_without_the_goal_and_plans_on():
    from regula.cedar.library import Skill
    # collect_coal as learned with a noisy "yes" to (shelter): its shortest word, which gets no coal
    coal = DFA(("collect_coal", "shelter"), ((2, 1), (3, 3), (1, 1), (3, 3)), 0, frozenset({1}))
    library = Library([Skill("collect_coal", "collect coal", coal)])
    word = DFA(("@collect_coal",), ((1,), (2,), (2,)), 0, frozenset({1}))
    for retry, ran, label in ((False, ["shelter"], False), (True, ["shelter", "collect_coal"], True)):
        base = _Coal()
        budget = cedar_budget(call_retry=retry)
        record = play(SkillWorld(base, library, budget, random.Random(0)), word, "collect_coal", budget,
                      random.Random(0))
        assert base.ran[:len(ran)] == ran and record["label"] is label
    # a top-level rollout still ends where its DFA accepts: that is the claim the world checks
    base = _Coal()
    record = play(SkillWorld(base, Library(), cedar_budget(call_retry=True), random.Random(0)), coal, "collect_coal",
                  cedar_budget(call_retry=True), random.Random(0))
    assert base.ran == ["shelter"] and record["accepted"] and not record["label"]


class _Held(_Coal):
    """A world where the agent holds a wooden pickaxe and has seen a table, not a furnace."""

    def __init__(self):
        super().__init__()
        self.inventory = {"wood_pickaxe": 1}
        self.memory = _Memory(("table",))


def test_call_held_does_at_once_a_call_whose_tool_is_held_or_station_seen():
    from regula.cedar.library import Skill
    one = lambda letter: DFA((letter,), ((1,), (2,), (2,)), 0, frozenset({1}))  # noqa: E731
    library = Library([Skill(s, s, one(s)) for s in ("make_wood_pickaxe", "make_stone_pickaxe", "place_table",
                                                     "place_furnace", "collect_coal")])
    for held, ran in ((False, ["make_wood_pickaxe", "place_table", "make_stone_pickaxe", "place_furnace",
                               "collect_coal"]),
                      (True, ["make_stone_pickaxe", "place_furnace", "collect_coal"])):
        base = _Held()
        world = SkillWorld(base, library, cedar_budget(call_held=held), random.Random(0))
        steps = [world.run_skill(f"@{s}") for s in ("make_wood_pickaxe", "place_table", "make_stone_pickaxe",
                                                      "place_furnace", "collect_coal")]
        assert base.ran == ran and all(s.success for s in steps)
        assert [e.skill for e in world.events][:2] == ["@make_wood_pickaxe", "@place_table"]


def test_forage_gives_the_rollouts_survival_layer_the_earlier_eating_and_dusk():
    from regula import envs
    world = envs.get("crafter").from_params(P.load("params.yaml", {}).env.model_dump(), 0)
    plain = SkillWorld(world, Library(), cedar_budget(upkeep=True), random.Random(0)).survival.config
    fed = SkillWorld(world, Library(), cedar_budget(upkeep=True, forage=True), random.Random(0)).survival.config
    assert (plain.snack_below, plain.snack_within, plain.dusk_below, plain.swords) == (6, 4, 0.8, ())
    assert (fed.snack_below, fed.snack_within, fed.dusk_below, fed.swords) == (8, 6, 0.9, ())
    assert "forage" not in cedar_budget().key() and cedar_budget(forage=True).key()["forage"] is True
