"""The survival layer of the Crafter adapter: keeps any agent alive between its own decisions.

An agent asks `Survival.due()` before each of its decisions; a skill due now (fight, drink,
eat, wall in for the night, sleep, make a sword) is returned as a `Decision` logged
`by=SURVIVAL`, so the unlocks it makes are counted apart from the agent's. `interrupt` gives
the agent's own skills the check that stops them for a danger.
"""
from __future__ import annotations

from dataclasses import dataclass

from regula.agents import SURVIVAL, Decision

from .navigation import diggable, fire_lanes
from .rules import RULES
from .shelter import DARK_BELOW
from .skills import HOME_REACH
from .world import CrafterWorld

DAY = 300  # crafter's steps per day
TRIP_MIN = 30  # steps of daylight left under which no trip starts
TRIP_SNACK_WITHIN = 6  # cells (Manhattan) of a cow eaten by the way when food is under `trip_food`
TRIP_HUNGRY = 4  # food at which a trip looks for a cow when none is known
TRIP_CLEAR = 5  # no trip starts with a zombie this close (the night's linger into the morning)
TRIP_STONES = 3  # stones held out of home: the door, and a plant lost
RIPE_WAIT = 3  # health kept in hand by `ripe_wait` as measured (`regula bench survival --ripe-wait`)
HOME_MARGIN = 15  # steps besides the walk to get in at home (the door dug, walked through, closed)


@dataclass
class SurvivalConfig:
    low: int = 3  # survival threshold on drink/food/energy
    # Attack zombies this close (Manhattan). One hits as it arrives next to the player whatever
    # the player does, so walking up to one two cells off (which may yet wander) gains nothing.
    fight_within: int = 1
    swords: tuple = ("wood_sword", "stone_sword")  # made on the way when a table is at hand
    shelter: bool = True  # wall in for the night, and get ready at dusk (zombies hit 7 asleep, 2 awake)
    shelter_below: float = DARK_BELOW  # daylight under which to be walled in
    # ... and over which to come out, once no zombie is within 4: zombies spawn while daylight
    # is under 0.83 (crafter keeps int(3.5 - 3 * daylight) per grassy chunk), so not before.
    dawn_above: float = 0.85
    shelter_retry: int = 30  # primitive steps before trying again after no place to wall in
    dusk_below: float = 0.8  # falling daylight under which to drink, eat and pick up stone for the night
    stone_reserve: int = 6  # stones to hold at dusk
    snack_below: int = 6  # food under which a cow within `snack_within` (Manhattan) is eaten at once
    snack_within: int = 4
    skeleton_reflex: bool = False  # meet a skeleton whose line of fire the player is in (armed, healthy enough)
    skeleton_health: int = 3  # health under which it is not met
    home: bool = False  # build a home by water with plants round it (homestead.py) as soon as it can
    home_food: int = 7  # food under which a known cow is eaten before the home is built
    # With `home`: once it is built, the agent's own steps happen only on daytime trips from it
    # (crafter's day is 300 steps; zombies spawn while daylight is under 0.83, its steps ~113-307):
    # out from `trip_from` (the night's zombies despawn in broad day), home again by `home_by`
    # (the walk back counted), the nights and the rest of the day at home (`Controller._stay_home`).
    commute: bool = False
    trip_from: int = 10
    home_by: int = 120
    trip_food: int = 6  # food under which a known cow is eaten on a trip (the plants ripen 300 steps after eating)
    # Steps without a new achievement after which the trips end for good (each trip risks
    # arrows and zombies; the home alone keeps the player alive); None: never.
    trip_patience: int | None = 1500
    build_until: float = 0.95  # falling daylight under which no home build starts (HOME_BUILD_LIGHT rising)
    # Commuting, hungry at home: no trip nor errand for food while a plant there ripens before
    # food (26 steps a point awake) and then health (16 steps a point at food 0) down to this
    # run out; out of 18 cells the plants stop growing (None: off)
    ripe_wait: int | None = None


class Survival:
    """The survival layer every agent here may share: fights a close zombie, walls itself in for
    the night, drinks, eats and picks up stone at dusk, sleeps when low, makes swords at a
    table. It keeps one piece of state, what it is refilling (drink is topped up past `low`)."""

    def __init__(self, world: CrafterWorld, config: SurvivalConfig | None = None):
        self.world, self.config = world, config or SurvivalConfig()
        self.refilling: str | None = None

    def start(self) -> None:
        self.refilling = None
        self.unlocked_at = (0, 0)  # (achievements unlocked, the step the last came)
        self.world.controller.homes = self.config.home  # else `shelter` never builds one, whoever calls it
        self.world.controller.home_reach = 10 ** 6 if self.config.commute else HOME_REACH
        self.world.controller.close_door = self.config.home and self.config.commute
        self.world.controller.build_until = self.config.build_until
        self.world.controller.home_hunt = not self.config.commute  # commuting: food on the trips

    # -- commuting from home (`SurvivalConfig.commute`) --------------------------------------
    def commuting(self, world=None) -> bool:
        world = world or self.world
        return self.config.home and self.config.commute and world.controller.home is not None

    def trips_over(self, world) -> bool:
        """No achievement for `trip_patience` steps: what is left is not worth the trips' risk."""
        n = len(world.unlocked)
        if n > self.unlocked_at[0]:
            self.unlocked_at = (n, world.steps)
        patience = self.config.trip_patience
        return patience is not None and world.steps - self.unlocked_at[1] > patience

    def trip_open(self, world) -> bool:
        """A trip may start: broad day, early enough, awake, no zombie near."""
        t = world.env.step_count % DAY
        inv = world.inventory
        if inv["food"] >= self.config.trip_food and self.trips_over(world):
            return False  # fed: home for good; hungry: out for food
        if inv["food"] < self.config.trip_food and self.ripe_soon(world):
            return False  # hungry, and a plant at home ripens in time: wait for it there
        return (self.config.trip_from <= t < self.config.home_by - TRIP_MIN and not world.env.player.sleeping
                and not self.zombie_near(world, TRIP_CLEAR))

    def homeward(self, world) -> str | None:
        """Time to head home: the walk back (with the door to dig and close) would end past `home_by`."""
        if not self.commuting(world) or world.controller.at_home():
            return None
        t = world.env.step_count % DAY
        if t < self.config.trip_from or t + world.controller.home_distance() + HOME_MARGIN >= self.config.home_by:
            return "time to go home"
        if self.trips_over(world) and world.inventory["food"] >= self.config.trip_food:
            return "trips over"
        return None

    def ripe_soon(self, world) -> bool:
        """`ripe_wait`: a plant at home ripens before food, then health down to `ripe_wait`, run out."""
        inv, keep = world.inventory, self.config.ripe_wait
        if keep is None or world.controller.home is None:
            return False
        return world.controller.home_ripe_in() <= 26 * inv["food"] + 16 * max(0, inv["health"] - keep)

    def creature_near(self, kind: str, within: int, world=None) -> bool:
        world = world or self.world
        pos = tuple(int(v) for v in world.env.player.pos)
        return any(n == kind and abs(c[0] - pos[0]) + abs(c[1] - pos[1]) <= within
                   for c, n in world.memory.creatures.items())

    def zombie_near(self, world, within: int) -> bool:
        return self.creature_near("zombie", within, world)

    def zombie_close(self, world) -> str | None:
        if world.controller.at_home():
            return None  # walled in: a zombie by the wall cannot hit (nor be hit)
        return "zombie close" if self.zombie_near(world, self.config.fight_within) else None

    def under_fire(self, world) -> str | None:
        """In a skeleton's line of fire (`navigation.fire_lanes`) with a sword to meet it: a
        player that stands on there (digging, collecting) takes 2 per arrow until dead."""
        if not self.config.skeleton_reflex or world.inventory["health"] < self.config.skeleton_health:
            return None
        if not any(world.inventory[s] for s in ("wood_sword", "stone_sword", "iron_sword")):
            return None
        pos = tuple(int(v) for v in world.env.player.pos)
        if pos not in fire_lanes(world.memory):
            return None
        last = world.events[-1] if world.events else None
        if last is not None and last.skill == "defeat_skeleton" and not last.success and last.cause["kind"] in (
                "no_route", "not_in_view"):
            return None  # it cannot be got at from here: the step goes on
        return "under fire"

    def reflex(self, world) -> str | None:
        return self.zombie_close(world) or self.under_fire(world)

    def danger(self, world) -> str | None:
        """Checked after every primitive action of a skill toward a goal."""
        inv, low = world.inventory, self.config.low
        close = self.reflex(world)
        if close:
            return close
        if inv["drink"] <= low and world.memory.seen("water"):
            return "thirsty"
        if inv["food"] <= low and world.memory.nearest_cow(world.env.player.pos) is not None:
            return "hungry"
        return self.homeward(world)

    def interrupt(self, skill: str, goal: str | None):
        """What stops a skill early: toward a goal, any danger; toward none (the layer's own
        skills, random ones), only a close zombie, unless that is the one being fought."""
        if goal is not None:
            return self.danger
        if skill == "defeat_zombie":
            return None
        return self.zombie_close if skill == "defeat_skeleton" else self.reflex

    def survival_skill(self) -> tuple[str, object] | None:
        """The survival skill due now and its `until`, if any (moves `refilling` on)."""
        inv, mem, low, cfg = self.world.inventory, self.world.memory, self.config.low, self.config
        # Zombies chase and hit every few steps: meet one that is close rather than flee.
        if self.zombie_close(self.world):
            return "defeat_zombie", None
        if self.under_fire(self.world):
            return "defeat_skeleton", None  # out of its line is where it is hit from
        # The night is for walls, unless a need can no longer wait till morning.
        urgent = (inv["drink"] <= low and mem.seen("water")) or (
            inv["food"] <= 1 and "cow" in mem.creatures.values())
        cow_ok = not self.failed_lately("eat_cow")  # no route to the cow known: not again at once
        if (self.commuting() and not self.world.controller.at_home() and inv["food"] < cfg.trip_food and cow_ok
                and self.creature_near("cow", TRIP_SNACK_WITHIN)):
            return "eat_cow", None  # food by the way home: the home's plants ripen 300 steps after eating
        if (self.commuting() and not self.world.controller.at_home() and inv["stone"] < TRIP_STONES
                and not self.homeward(self.world) and inv["food"] > TRIP_HUNGRY
                and "stone" in diggable(inv) and mem.seen("stone") and not self.failed_lately("collect_stone")):
            return "collect_stone", None  # the door is closed behind with one, and a plant lost walled over
        if self.commuting() and not urgent and (self.homeward(self.world) or (
                self.world.controller.at_home() and not self.trip_open(self.world))):
            self.refilling = None
            return "shelter", self.trip_open  # home, and there until the next trip
        if cfg.shelter and self.dark(self.world) and self.may_shelter() and not urgent:
            self.refilling = None
            return "shelter", self.dark_over
        # Refill with hysteresis: start at `low` (or low-ish at dusk), keep going until nearly full.
        full = RULES.items["drink"]["max"] - 1
        dusk = cfg.shelter and self.dusk(self.world)
        if (inv["drink"] <= low or (dusk and inv["drink"] < full - 1)
                or (self.refilling == "drink" and inv["drink"] < full)) and mem.seen("water"):
            self.refilling = "drink"
            return "collect_drink", None
        self.refilling = None
        cow = mem.nearest_cow(self.world.env.player.pos) is not None
        if cfg.home and self.world.controller.can_build_home() and self.world.controller.building_time():
            # The home's plants feed it only 300 steps after planting: go in fed.
            if inv["food"] < cfg.home_food and (cow_ok or not cfg.commute):
                if cow:
                    return "eat_cow", None
                if not cfg.commute or inv["food"] <= low + 2:  # commuting: a cow on a trip later
                    return "explore", (lambda w: "cow" in w.memory.creatures.values())
            if cfg.commute:
                return "shelter", self.trip_open  # builds the home, goes in, out on the next trip
            return "shelter", (lambda w: True)  # builds the home, goes in; the next step digs out
        at_home = self.world.controller.at_home()  # where plants feed it, unless starving first
        if self.commuting() and inv["food"] < cfg.trip_food and cow and cow_ok and (
                not at_home or self.world.controller.home_ripe_in() > 26 * inv["food"]) and not (
                at_home and self.ripe_soon(self.world)):
            return "eat_cow", None  # out on a trip, or at home with nothing ripe in time
        if (self.commuting() and inv["food"] <= TRIP_HUNGRY and not cow and not self.homeward(self.world)
                and (not at_home or self.trip_open(self.world)) and not (at_home and self.ripe_soon(self.world))):
            return "explore", (lambda w: "cow" in w.memory.creatures.values() or self.homeward(w))
        if cfg.shelter and inv["food"] < cfg.snack_below and self.creature_near("cow", cfg.snack_within) and not at_home:
            return "eat_cow", None  # a cow close by is cheaper food than one searched for later
        if (inv["food"] <= low or (dusk and inv["food"] < RULES.items["food"]["max"] - 3)) and (
                not at_home or self.world.controller.home_starving()):
            if cow:
                return "eat_cow", None
            return "explore", (lambda w: "cow" in w.memory.creatures.values())
        # Walls need stone: pick some up at dusk (a pickaxe digs it, a pocket in rock needs less).
        if dusk and inv["stone"] < cfg.stone_reserve and "stone" in diggable(inv) and mem.seen("stone"):
            return "collect_stone", None
        if inv["energy"] <= low - 1:
            return "sleep", None
        arm = self.armament()
        if arm:
            return arm, None
        return None

    def due(self) -> Decision | None:
        """The survival skill due now as a step toward no goal, chosen by `SURVIVAL`."""
        survival = self.survival_skill()
        if survival is None:
            return None
        skill, until = survival
        return Decision(skill, until, self.interrupt(skill, None), by=SURVIVAL)

    def dusk(self, world) -> bool:
        return world.env.evening and world.env.world.daylight < self.config.dusk_below

    def may_shelter(self) -> bool:
        """No shelter that failed for want of a place (or ran out of food or drink) within the
        last `shelter_retry` steps; whoever ran the skill, the events tell."""
        since = 0
        for event in reversed(self.world.events):
            if event.skill == "shelter" and not event.success and event.cause["kind"] != "interrupted":
                return since >= self.config.shelter_retry
            since += event.steps
            if since >= self.config.shelter_retry:
                return True
        return True

    def failed_lately(self, skill: str, within: int = 30) -> bool:
        """`skill` failed without acting (no route, nothing in view) within the last `within` steps."""
        since = 0
        for event in reversed(self.world.events):
            if since >= within:
                return False
            if event.skill == skill:
                return not event.success and event.steps == 0
            since += event.steps
        return False

    def dark(self, world) -> bool:
        return world.env.world.daylight < self.config.shelter_below

    def dark_over(self, world) -> bool:
        """Light enough, and the zombies that gathered round the walls gone (they despawn fast
        in daylight), or broad day."""
        light = world.env.world.daylight
        return light >= self.config.dawn_above and (light >= 0.95 or not self.zombie_near(world, 4))

    def armament(self) -> str | None:
        """Make the next better sword when a table is at hand: zombies fall in fewer hits."""
        props = self.world.props()
        for sword in self.config.swords:
            recipe = RULES.recipes[f"make_{sword}"]
            if props[f"has_{sword}"]:
                continue
            if all(props[f"near_{s}"] for s in recipe.nearby) and all(
                    self.world.inventory[k] >= v for k, v in recipe.uses.items()):
                return recipe.skill
            return None
        return None
