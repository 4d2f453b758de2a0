"""High-level skills run by a low-level controller on the seen map.

Each skill checks its preconditions against data.yaml's recipe first (so a failure names the
missing item), then plans on the seen map, acts, re-plans when the world disagrees, and
reports success by the game's own achievement counters. A failure carries a reason for people
and a cause for programs (`regula.envs.base.CAUSE_KINDS`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from regula.envs.base import CAUSE_KINDS
from regula.errors import UnknownNameError

from .navigation import diggable, plan_path, reachable
from .rules import RULES
from .homestead import MAX_WALLS, PLANTS, Home, find_home
from .homestead import _near as homestead_near
from .shelter import DARK_BELOW, LEAVE_AT_HEALTH, OPEN, _plan_pocket, enclosed, plan_enclosure

FIGHTS = {"eat_cow": "cow", "defeat_zombie": "zombie", "defeat_skeleton": "skeleton",
          "eat_plant": "plant"}
SPECIAL = ("explore", "sleep", "shelter")
INTERRUPTED = "interrupted"  # the reason's prefix when the agent's interrupt stops a skill
# `Controller(dig=STUCK)`: paths walk, and dig only where no walking route is known (out of a
# shelter's walls, to water behind rock). True: paths always may dig; False: never.
STUCK = "stuck"
_STONE_GAIN = {"place_stone": -1, "do": 1}  # what a step of an enclosure plan does to the stones held
# crafter's Plant: ripe once it has grown more than 300 updates, and crafter updates an object
# only while the player is within Manhattan distance 2 * max(view) = 18 of it; a cow, zombie or
# skeleton next to it kills it (health 1). Doing on an unripe plant does nothing.
PLANT_RIPE_AFTER = 300
UPDATE_WITHIN = 18
NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))
HOME_RETRY = 300  # steps after a home could not be built before trying again
HOME_LOOK_AGAIN = 25  # steps after no site was seen: the map grows as the player goes on
HOME_GIVE_UP = 3  # failed tries in a row to get into the home before it is given up
HOME_SEEK_STEPS = 60  # steps spent looking along seen water for a site before giving up for now
HOME_SEEK_NEAR = 3  # cells from seen water where the look goes (a site's pocket touches water)
HOME_BUILD_LIGHT = 0.85
HOME_REACH = 40  # Manhattan cells from home within which the night is spent there
HOME_EAT_BELOW = 5  # food at home under which a ripe plant is eaten (it gives 4, up to 9)
HOME_HUNT = True
HOME_HUNT_FOOD = 3
HOME_HUNT_HEALTH = 6
HOME_SLEEP_BELOW = 4  # energy at home under which the player sleeps in daylight too


def _near_water(memory) -> np.ndarray:
    """Cells within `HOME_SEEK_NEAR` steps of seen water (a home's pocket touches water)."""
    near = memory.map == memory.ids["water"]
    for _ in range(HOME_SEEK_NEAR):
        grown = near.copy()
        grown[1:] |= near[:-1]
        grown[:-1] |= near[1:]
        grown[:, 1:] |= near[:, :-1]
        grown[:, :-1] |= near[:, 1:]
        near = grown
    return near


def skill_names() -> list[str]:
    return list(RULES.recipes) + list(FIGHTS) + list(SPECIAL)


def check_skill(name: str) -> str:
    if name not in skill_names():
        raise UnknownNameError("skill", name, skill_names())
    return name


@dataclass
class Outcome:
    success: bool
    reason: str = ""
    actions: list = field(default_factory=list)
    cause: dict | None = None  # None on success


class Failed(Exception):
    """Internal: a skill stops with a reason (text) and a cause (`kind` and its fields)."""

    def __init__(self, reason: str, kind: str, **fields):
        if kind not in CAUSE_KINDS:
            raise ValueError(f"unknown failure kind {kind!r}")
        super().__init__(reason)
        self.cause = {"kind": kind, **fields}


def _missing(inventory: dict, needs: dict, skill: str, verb: str) -> None:
    for item, amount in needs.items():
        if inventory.get(item, 0) < amount:
            have = inventory.get(item, 0)
            raise Failed(f"missing {item}: have {have}, {skill} {verb} {item} >= {amount}",
                         "missing", item=item, have=have, need=amount)


def _adjacent(world, kind: str) -> bool:
    x, y = (int(v) for v in world.env.player.pos)
    return any(n == kind and abs(c[0] - x) + abs(c[1] - y) == 1 for c, n in world.memory.creatures.items())


class Controller:
    """Runs skills on a `CrafterWorld` (see world.py), one primitive action at a time."""

    def __init__(self, world, max_steps: int = 300, explore_steps: int = 40, dig: bool | str = True):
        if dig not in (True, False, STUCK):
            raise ValueError(f"dig must be True, False or {STUCK!r}, not {dig!r}")
        self.world = world
        self.max_steps = max_steps
        self.explore_steps = explore_steps
        # dig: walking may go through trees and stone, collecting them; off, an item comes only
        # from the skill that collects it (CEDAR's words assume so); STUCK: only where walking
        # cannot get there (CEDAR's words then name what digging collected: `words.extract`).
        self.dig = dig
        self.actions: list[str] = []
        # Called after every primitive action; a returned reason stops the skill (an agent's
        # reflex, e.g. a zombie next to it), reported as "interrupted: <reason>".
        self.interrupt = None
        # Saplings this controller planted: cell -> [step planted, primitive_log index it grew
        # up to, growth so far].
        self.plants: dict[tuple[int, int], list[int]] = {}
        self.keep_walls = True  # paths and collect_stone leave the cells round those plants alone
        self.home: Home | None = None  # built by `shelter` (homestead.py), gone back to each night
        self.homes = False  # whether `shelter` builds a home where it can (the survival layer's `home`)
        self.home_tried = -HOME_RETRY  # step of the last build that found no site or failed
        self.home_wait = HOME_RETRY  # steps from then before the next try
        self.home_refused = 0  # tries in a row to get into the home that failed
        self.home_tries: list[tuple[int, int, str]] = []  # (first step, last step, "built" or why not)
        self.home_plants: dict[tuple[int, int], list[int]] = {}  # as `plants`, for the home's
        self.home_reach = HOME_REACH  # cells from home within which `shelter` goes home
        # Leave home by the door and close it behind (a cow or zombie in the empty pocket
        # kills the plants next to it): set by the survival layer's `commute`.
        self.close_door = False
        self.build_until = 0.95  # falling daylight under which no build starts
        self.home_hunt = HOME_HUNT  # out at dawn for a cow when the plants ripen too late (`home_starving`)

    def _dig_with(self) -> dict | None:
        """The inventory paths may dig with first (None: no digging)."""
        return self.world.inventory if self.dig is True else None

    def _plan(self, goal, avoid=None):
        """`plan_path` from here; with dig=STUCK, a digging route when no walking one is known."""
        pos, face = self._pose()
        walls = self._walls()
        if walls:
            avoid = (avoid or set()) | walls
        plan = plan_path(self.world.memory, pos, face, goal, self._dig_with(), avoid)
        if plan is None and self.dig == STUCK:
            plan = plan_path(self.world.memory, pos, face, goal, self.world.inventory, avoid)
        return plan

    # -- primitives ---------------------------------------------------------------------
    def _act(self, action: str):
        if self.world.done:
            raise Failed("episode over" + (" (died)" if self.world.dead else ""), "episode_over",
                         died=bool(self.world.dead))
        if len(self.actions) >= self.max_steps:
            raise Failed(f"step budget of {self.max_steps} exhausted", "budget", steps=self.max_steps)
        self.actions.append(action)
        self.world.act(action)
        reason = self.interrupt(self.world) if self.interrupt else None
        if reason:
            raise Failed(f"{INTERRUPTED}: {reason}", "interrupted", why=reason)

    def _pose(self):
        p, f = self.world.env.player.pos, self.world.env.player.facing
        return (int(p[0]), int(p[1])), (int(f[0]), int(f[1]))

    def _goto(self, goal, what: str, avoid=None) -> None:
        """Act until `goal(pos, facing)` holds, re-planning whenever the world disagrees."""
        while True:
            plan = self._plan(goal, avoid)
            if plan is None:
                raise Failed(f"no known route to {what}", "no_route", to=what)
            if not plan:
                return
            for action, exp_pos, exp_face in plan:
                self._act(action)
                if self._pose() != (exp_pos, exp_face):
                    break

    # -- skills -------------------------------------------------------------------------
    def run(self, name: str, until=None) -> Outcome:
        check_skill(name)
        self.actions = []
        try:
            if name == "explore":
                self._explore(until)
            elif name == "sleep":
                self._sleep()
            elif name == "shelter":
                self._shelter(until)
            elif name == "eat_plant":
                self._eat_plant()
            elif name in FIGHTS:
                self._fight(name, FIGHTS[name])
            else:
                recipe = RULES.recipes[name]
                getattr(self, f"_{recipe.kind}")(recipe)
            return Outcome(True, "", self.actions)
        except Failed as stop:
            return Outcome(False, str(stop), self.actions, stop.cause)

    def _achieved(self, name: str) -> int:
        return self.world.env.player.achievements.get(name, 0)

    def _collect(self, recipe) -> None:
        _missing(self.world.inventory, recipe.require, recipe.skill, "requires")
        material = recipe.target
        mem = self.world.memory
        if not mem.seen(material):
            raise Failed(f"no {material} seen", "not_seen", thing=material)
        before = self._achieved(recipe.skill)
        walls = self._walls()
        self._goto(lambda p, f: mem.material((p[0] + f[0], p[1] + f[1])) == material
                   and (p[0] + f[0], p[1] + f[1]) not in mem.creatures and (p[0] + f[0], p[1] + f[1]) not in walls,
                   material)
        # Probabilistic yields (sapling from grass) get a few tries on the same cell.
        tries = 1 if recipe.probability >= 1 else int(np.ceil(3 / recipe.probability))
        for _ in range(tries):
            self._act("do")
            if self._achieved(recipe.skill) > before:
                return
        item = next(iter(recipe.gives))
        raise Failed(f"do on {material} gave no {item}", "no_effect", skill=recipe.skill, item=item)

    def _place(self, recipe) -> None:
        _missing(self.world.inventory, recipe.uses, recipe.skill, "uses")
        if recipe.target == "plant":
            return self._plant(recipe)
        mem = self.world.memory
        where = set(recipe.where)

        def free(p, f):
            cell = (p[0] + f[0], p[1] + f[1])
            return mem.material(cell) in where and cell not in mem.creatures

        # A station that recipes need together with others goes within reach of them.
        partners = self.world.station_partners(recipe.target)
        before = self._achieved(recipe.skill)
        if partners:
            goal = lambda p, f: free(p, f) and self.world.stations_within_reach(p, partners)
            try:
                self._goto(goal, f"a free cell next to {' and '.join(partners)}")
            except Failed:
                self._goto(free, f"a cell to place {recipe.target} on")
        else:
            self._goto(free, f"a cell to place {recipe.target} on")
        self._act(recipe.skill)
        if self._achieved(recipe.skill) <= before:
            raise Failed(f"{recipe.skill} had no effect", "no_effect", skill=recipe.skill)

    def _make(self, recipe) -> None:
        _missing(self.world.inventory, recipe.uses, recipe.skill, "uses")
        for station in recipe.nearby:
            if not self.world.memory.seen(station):
                raise Failed(f"no {station} seen ({recipe.skill} needs {' and '.join(recipe.nearby)} nearby)",
                             "not_seen", thing=station)
        before = self._achieved(recipe.skill)
        self._goto(lambda p, f: self.world.stations_within_reach(p, recipe.nearby),
                   " and ".join(recipe.nearby))
        self._act(recipe.skill)
        if self._achieved(recipe.skill) <= before:
            raise Failed(f"{recipe.skill} had no effect", "no_effect", skill=recipe.skill)

    def _fight(self, skill: str, kind: str) -> None:
        mem = self.world.memory
        before = self._achieved(skill)
        ripe = (lambda obj: obj.ripe) if kind == "plant" else (lambda obj: True)

        def facing_target(p, f):
            cell = (p[0] + f[0], p[1] + f[1])
            return mem.creatures.get(cell) == kind and ripe(mem.creature_objs[cell])

        while self._achieved(skill) <= before:
            if not any(n == kind and ripe(mem.creature_objs[c]) for c, n in mem.creatures.items()):
                if kind == "cow" and mem.nearest_cow(self._pose()[0]) is not None:
                    self._seek_cow()
                    continue
                raise Failed(f"no {'ripe ' if kind == 'plant' else ''}{kind} in view", "not_in_view", thing=kind)
            plan = self._plan(facing_target)
            if plan is None:
                raise Failed(f"no known route to {kind}", "no_route", to=kind)
            # Creatures move: take one action, then look again.
            self._act(plan[0][0] if plan else "do")

    def _seek_cow(self) -> None:
        """Walk toward where a cow was last seen until one is in view (a sighting whose cell
        comes into view without it is forgotten by the memory, so this ends)."""
        mem = self.world.memory
        cell = mem.nearest_cow(self._pose()[0])
        plan = self._plan(lambda p, f: p == cell or abs(p[0] - cell[0]) + abs(p[1] - cell[1]) == 1)
        if not plan:
            del mem.cows[cell]
            return
        for action, exp_pos, exp_face in plan:
            self._act(action)
            if "cow" in mem.creatures.values() or self._pose() != (exp_pos, exp_face):
                return

    # -- the plant: planted walled in, remembered, eaten ripe ---------------------------------
    def live_plants(self) -> list[tuple[int, int]]:
        """The planted saplings not seen gone (a cell in view without its plant is dropped)."""
        mem = self.world.memory
        (x0, y0), (x1, y1) = mem.view_bounds(self._pose()[0])
        for cell in list(self.plants):
            if x0 <= cell[0] < x1 and y0 <= cell[1] < y1 and mem.creatures.get(cell) != "plant":
                del self.plants[cell]
        return list(self.plants)

    def _walls(self) -> set:
        """The cells that wall the planted saplings in (a stone dug there opens the wall); open
        sides are not among them (a path that treats a free cell as blocked would turn toward
        it and walk in instead)."""
        if not self.keep_walls:
            return set()
        walk, mem = set(RULES.walkable), self.world.memory
        cells = {n for c in self.plants for n in ((c[0] + dx, c[1] + dy) for dx, dy in NEIGHBOURS)}
        if self.home is not None:  # all but the door, which paths dig open to leave
            cells |= self.home.guarded() - {self.home.door} - set(self.home.water)
            if self.close_door and self._pose()[0] not in self.home.cells:
                cells.add(self.home.door)  # closed behind: opened only to go in
        return {n for n in cells if mem.material(n) not in walk}

    def plant_growth(self, cell, table: dict | None = None) -> int:
        """How far the plant at `cell` has grown by crafter's rule, from the player's logged
        positions since it was planted (it grows only while the player is near). `table`:
        where it is kept (`plants`, else `home_plants`)."""
        table = self.plants if table is None else table
        planted, seen, grown = table[cell]
        log = self.world.primitive_log
        grown += sum(abs(r["pos"][0] - cell[0]) + abs(r["pos"][1] - cell[1]) < UPDATE_WITHIN for r in log[seen:])
        table[cell] = [planted, len(log), grown]
        return grown

    def home_ripe_in(self) -> int:
        """Steps until the home's first plant is ripe (0: one is); large with none."""
        mem = self.world.memory
        left = [max(0, PLANT_RIPE_AFTER + 1 - self.plant_growth(c, self.home_plants)) for c in self.home.plants
                if c in self.home_plants and mem.creatures.get(c, "plant") == "plant"]
        return min(left, default=10 ** 6)

    def planted_at(self, cell) -> int:
        return self.plants[cell][0]

    def _open_sides(self, cell) -> list[tuple[int, int]]:
        """Neighbours of `cell` a creature could step on (and so trample a plant there)."""
        walk = set(RULES.walkable)
        return [n for n in ((cell[0] + dx, cell[1] + dy) for dx, dy in NEIGHBOURS) if self.world.memory.material(n) in walk]

    def _plant_spot(self, within: int = 8):
        """The grass cell near here that takes the fewest stones to wall in (trees, water and rock
        around it are walls already), away from paths (skeletons' arrows kill plants)."""
        mem = self.world.memory
        pos, _ = self._pose()
        best = None
        grass = mem.positions("grass")
        dists = np.abs(grass - np.array(pos)).sum(1)
        for (x, y), dist in zip(grass[(dists <= within) & (dists > 0)], dists[(dists <= within) & (dists > 0)]):
            cell = (int(x), int(y))
            if cell in mem.creatures:
                continue
            sides = self._open_sides(cell)
            if not sides:
                continue
            near = [mem.material((cell[0] + dx, cell[1] + dy)) for dx in range(-2, 3) for dy in range(-2, 3)]
            score = 3 * len(sides) + dist + 10 * ("lava" in near) + 2 * near.count("path")
            if best is None or score < best[0]:
                best = (score, cell)
        return None if best is None else best[1]

    def _plant(self, recipe) -> None:
        """Place the sapling where few stones wall it in, with those stones at hand (dug first
        when a pickaxe and rock allow): all sides but one walled first, then the sapling put in
        from that side, which is walled last (a cow passing by tramples it meanwhile)."""
        mem, stone = self.world.memory, RULES.recipes["collect_stone"]
        can_dig = "stone" in diggable(self.world.inventory) and mem.seen("stone")
        for _ in range(len(NEIGHBOURS) + 1):  # digging moves the player, and so the spot
            spot = self._plant_spot() or self._plant_spot(within=sum(mem.area))  # nearby, else anywhere seen
            if spot is None:
                raise Failed("no grass seen to plant on", "no_place", what="plant")
            if not can_dig or self.world.inventory["stone"] >= len(self._open_sides(spot)):
                break
            self._collect(stone)
        self._guard(spot, keep=1)
        before = self._achieved(recipe.skill)

        def facing_spot(p, f):
            return (p[0] + f[0], p[1] + f[1]) == spot and mem.material(spot) == "grass" and spot not in mem.creatures
        self._goto(facing_spot, "a spot to plant")
        self._act(recipe.skill)
        if self._achieved(recipe.skill) <= before:
            raise Failed(f"{recipe.skill} had no effect", "no_effect", skill=recipe.skill)
        self.plants[spot] = [self.world.steps, len(self.world.primitive_log), 0]
        self._guard(spot)

    def _guard(self, cell, keep: int = 0) -> None:
        """Wall the cell `cell` in with the stones held, one open side at a time, until `keep`
        sides are open; a side with no route to it is left open (the next visit tries again)."""
        mem = self.world.memory
        for _ in range(6):
            sides = set(self._open_sides(cell))
            if len(sides) <= keep or self.world.inventory["stone"] < 1:
                return
            try:
                self._goto(lambda p, f: (p[0] + f[0], p[1] + f[1]) in sides and p not in sides
                           and (p[0] + f[0], p[1] + f[1]) not in mem.creatures, "a side of the plant")
            except Failed as stop:
                if stop.cause["kind"] == "no_route":
                    return
                raise
            self._act("place_stone")

    def _eat_plant(self) -> None:
        """Eat a ripe plant in view; else go back to the planted sapling, wall it in, and wait
        next to it until it is ripe (walled in at night), within the skill's budget."""
        mem = self.world.memory
        ripe = lambda: any(n == "plant" and mem.creature_objs[c].ripe for c, n in mem.creatures.items())
        if not self.live_plants():
            return self._fight("eat_plant", "plant")
        pos, _ = self._pose()
        cell = min(self.plants, key=lambda c: abs(c[0] - pos[0]) + abs(c[1] - pos[1]))
        near = lambda p, f: 0 < abs(p[0] - cell[0]) + abs(p[1] - cell[1]) <= 3
        self._goto(near, "the planted sapling")
        self._guard(cell)
        self._goto(near, "the planted sapling")
        while not ripe():
            if cell not in self.live_plants():
                raise Failed("the planted sapling is gone", "not_in_view", thing="plant")
            if self.world.env.world.daylight < DARK_BELOW and not enclosed(mem, self._pose()[0]):
                try:  # the plant grows on while the player sleeps walled in nearby
                    self._shelter()
                    continue
                except Failed as stop:
                    if stop.cause["kind"] != "no_place":
                        raise
            self._act("noop")
        self.keep_walls = False  # dig in to it
        try:
            self._fight("eat_plant", "plant")
        finally:
            self.keep_walls = True

    def _sleep(self) -> None:
        player = self.world.env.player
        if player.inventory["energy"] >= RULES.items["energy"]["max"]:
            raise Failed("energy is full", "no_need", stat="energy")
        before = self._achieved("wake_up")
        self._act("sleep")
        while player.sleeping:
            self._act("sleep")
        if self._achieved("wake_up") <= before:
            raise Failed("woken up before energy was full", "woken")

    def _shelter(self, until=None) -> None:
        """Wall in, then sleep (or wait awake) until `until(world)`, by default until daylight
        is back; leaves early only when food or drink has run out and health is low. At home
        when it has one within `HOME_REACH` (building one where it can), else in a pocket here."""
        until = until or (lambda w: w.env.world.daylight >= DARK_BELOW)
        if self.home is None and self.can_build_home() and self.building_time():
            self.home_plants = {}
            start = self.world.steps
            try:
                self._build_home()
            except Failed as stop:
                self.home_tries.append((start, self.world.steps, "no_site" if stop.cause.get("what") == "home site"
                                        else stop.cause["kind"]))
                if stop.cause["kind"] in ("interrupted", "episode_over", "budget"):
                    raise
                self.home, self.home_tried = None, self.world.steps  # no site, or it did not work out: later
                self.home_wait = HOME_LOOK_AGAIN if stop.cause.get("what") == "home site" else HOME_RETRY
            else:
                self.home_tries.append((start, self.world.steps, "built"))
        if self.home is not None and self.home_distance() <= self.home_reach:
            try:
                self._enter_home()
            except Failed as stop:
                if stop.cause["kind"] not in ("no_route", "no_place"):
                    raise
                # a creature in the way, often: the pocket here tonight, home again next time,
                # unless it failed so often that it cannot be closed (then another one later)
                self.home_refused += 1
                if self.home_refused >= HOME_GIVE_UP:
                    self.home, self.home_tried = None, self.world.steps
            else:
                self.home_refused = 0
                return self._stay_home(until)
        player, reflex = self.world.env.player, self.interrupt
        # Building goes on while a zombie only comes near (it stops for one that is adjacent);
        # once walled in, creatures outside are no reason to stop.
        building = (lambda w: reflex(w) if _adjacent(w, "zombie") else None) if reflex else None
        try:
            self.interrupt = building
            self._enclose()
            self.interrupt = None
            while not until(self.world):
                # Hunger and thirst cost a health point per 15-30 steps; a zombie, 2-7 per hit.
                need = next((k for k in ("drink", "food") if player.inventory[k] == 0), None)
                if need and player.health <= LEAVE_AT_HEALTH:
                    raise Failed(f"left the shelter: {need} ran out", "ran_out", stat=need)
                if not player.sleeping and not enclosed(self.world.memory, self._pose()[0]):
                    self.interrupt = building
                    self._enclose()  # an arrow turns a table or furnace wall into path
                    self.interrupt = None
                full = player.inventory["energy"] >= RULES.items["energy"]["max"]
                self._act("noop" if full and not player.sleeping else "sleep")
        finally:
            self.interrupt = reflex

    # -- the home (homestead.py) ----------------------------------------------------------
    def can_build_home(self) -> bool:
        """No home yet nor a failed try lately, a pickaxe (to dig the stones and, later, the door), water seen, and the saplings held
        or grass to collect them from."""
        inv, mem = self.world.inventory, self.world.memory
        if not self.homes or self.home is not None or self.world.steps - self.home_tried < self.home_wait:
            return False
        return "stone" in diggable(inv) and mem.seen("water") and (inv["stone"] > MAX_WALLS or mem.seen("stone")) and (inv["sapling"] >= PLANTS or mem.seen("grass"))

    def building_time(self) -> bool:
        """Broad day: crafter spawns zombies on grass while daylight is under 0.83, and a
        build interrupted by one is left (`_build_home`)."""
        world = self.world.env
        if world.evening:
            return world.world.daylight >= self.build_until
        return world.world.daylight >= HOME_BUILD_LIGHT

    def home_distance(self) -> int:
        pos, _ = self._pose()
        a = self.home.cells[0]
        return abs(pos[0] - a[0]) + abs(pos[1] - a[1])

    def _build_home(self) -> None:
        """Find a site on the seen map, get the saplings and stones it takes, plant, wall the
        plants in, then go in and close the door."""
        mem = self.world.memory
        home = find_home(mem, self._pose()[0])
        if home is None and mem.seen("water"):
            home = self._seek_site()
        if home is None:
            raise Failed("no place for a home seen (water with grass round it)", "no_place", what="home site")
        for _ in range(3 * PLANTS + MAX_WALLS):  # a sapling comes one grass cell in ten
            if self.world.inventory["sapling"] < len(self._unplanted(home)):
                try:
                    self._collect(RULES.recipes["collect_sapling"])
                except Failed as stop:
                    if stop.cause["kind"] != "no_effect":
                        raise
            elif self.world.inventory["stone"] < len(home.walls) + 1:
                self._collect(RULES.recipes["collect_stone"])
            else:
                break
        else:
            raise Failed("not enough saplings or stones for the home", "no_place", what="home")
        self.home = home  # from here paths leave its walls alone; a home left half-built is none
        try:
            # Each plant as `_plant` does: its outer sides walled but one, the sapling put in from
            # that one, then it walled too; a cow or zombie next to a plant for a step kills it.
            for plant in self._unplanted(home):
                sides = [n for n in homestead_near(plant) if n in home.walls]
                for cell in sides[1:]:
                    self._wall(cell)
                if any(self.world.memory.material(c) in OPEN for c in sides[1:]):
                    raise Failed(f"could not wall in the plant at {plant}", "no_place", what="home")
                self._put(plant, "place_plant", ("grass",))
                self.home_plants[plant] = [self.world.steps, len(self.world.primitive_log), 0]
                if sides:
                    self._wall(sides[0])
            for cell in home.walls:
                self._wall(cell)
            for plant in home.plants:  # an earlier try's: how far it grew is not known
                self.home_plants.setdefault(plant, [self.world.steps, len(self.world.primitive_log), 0])
            self._enter_home()
        except Failed:
            self.home = None
            raise

    def _seek_site(self) -> Home | None:
        """Look for a home's site along the water seen: a site needs grass on the water's edge,
        where the map is often still unseen (on full maps one lies within 20 cells of the start
        in 99 of 100 dev worlds; on the seen map, in about 40). Explores the cells near water,
        for at most `HOME_SEEK_STEPS`."""
        found: list = []

        def seen(world) -> bool:
            home = find_home(world.memory, self._pose()[0])
            found.append(home)
            return home is not None
        try:
            self._explore(until=seen, near=_near_water, steps=HOME_SEEK_STEPS)
        except Failed as stop:
            if stop.cause["kind"] != "nothing_to_explore":
                raise
        return found[-1] if found else None

    def home_starving(self) -> bool:
        """Food gone, health low, and no plant at home ripe before health is (a point goes
        every 16 steps awake while a need is at 0)."""
        player, env = self.world.env.player, self.world.env
        food = player.inventory["food"]
        door = self.home.door
        if any(name == "zombie" and abs(c[0] - door[0]) + abs(c[1] - door[1]) <= 2
               for c, name in self.world.memory.creatures.items()):
            return False  # the way out is held: no errand can start (it would stand idle)
        if food == 0 and player.health <= LEAVE_AT_HEALTH and self.home_ripe_in() > 16 * player.health:
            return True
        # In the zombie-free morning, healthy, with food for less than the wait: a cow now
        # rather than at health 4 (a point of food lasts 26 steps awake).
        return (self.home_hunt and food <= HOME_HUNT_FOOD and player.health >= HOME_HUNT_HEALTH
                and self.building_time()
                and self.home_ripe_in() > 26 * food + 20)

    def at_home(self) -> bool:
        return self.home is not None and self.home.shut(self.world.memory, self._pose()[0])

    def _unplanted(self, home: Home) -> list:
        return [c for c in home.plants if self.world.memory.creatures.get(c) != "plant"]

    def _wall(self, cell) -> None:
        if self.world.memory.material(cell) not in OPEN:
            return
        try:
            self._put(cell, "place_stone", OPEN)
        except Failed as stop:
            if stop.cause["kind"] != "no_route":  # a creature on it: the rim is closed on entering
                raise

    def _put(self, cell, action: str, where) -> None:
        mem = self.world.memory
        self._goto(lambda p, f: (p[0] + f[0], p[1] + f[1]) == cell and mem.material(cell) in where
                   and cell not in mem.creatures, f"a side of {cell}")
        before = self.world.inventory
        self._act(action)
        if self.world.inventory == before:
            raise Failed(f"{action} had no effect", "no_effect", skill=action)

    def _enter_home(self, tries: int = 6) -> None:
        """Go to the door (dig it open), in, and close it behind (`shelter._plan_pocket`)."""
        home, mem = self.home, self.world.memory
        for _ in range(tries):
            pos, face = self._pose()
            if home.shut(mem, pos):
                return
            if pos not in home.cells and pos != home.door and home.door in mem.creatures:
                # a cow (or zombie) in the doorway: hit it from outside (a cow is food)
                self._goto(lambda p, f: (p[0] + f[0], p[1] + f[1]) == home.door and p not in home.cells,
                           "the home's door")
                self._act("do" if home.door in mem.creatures else "noop")
                continue
            if pos not in home.cells and mem.material(home.door) not in OPEN:
                self._goto(lambda p, f: (p[0] + f[0], p[1] + f[1]) == home.door and p not in home.cells,
                           "the home's door")
                self._act("do")
                continue
            if pos not in home.cells and pos != home.door:
                try:
                    self._goto(lambda p, f: p == home.door, "the home's door")
                except Failed as stop:
                    if stop.cause["kind"] != "no_route" or home.door not in mem.creatures:
                        raise  # else a creature stepped into the doorway: the next try hits it
                continue
            planted = {c for c in home.plants if mem.creatures.get(c) == "plant"}
            walls = tuple(sorted(c for c in home.rim() - planted if mem.material(c) in OPEN))
            if any(c in mem.creatures for c in walls):
                self._act("noop")  # a creature in the doorway: it moves on
                continue
            plan = _plan_pocket(mem, pos, face, self.world.inventory["stone"], home.cells, walls, ())
            if plan is None:
                raise Failed("no way into the home", "no_route", to="home")
            for action, exp_pos, exp_face in plan:
                self._act(action)
                if self._pose() != (exp_pos, exp_face):
                    break
        if not home.shut(mem, self._pose()[0]):
            raise Failed(f"could not get into the home after {tries} plans", "no_place", what="home")

    def _face(self, cell) -> None:
        self._goto(lambda p, f: (p[0] + f[0], p[1] + f[1]) == cell, f"facing {cell}")

    def _stay_home(self, until) -> None:
        """Live walled in at home until `until(world)`: eat a ripe plant when food is low, drink
        when drink is, sleep when tired; leave only when food ran out with nothing ripe."""
        player, mem, home = self.world.env.player, self.world.memory, self.home
        reflex, self.interrupt = self.interrupt, None  # creatures outside are no reason to stop
        try:
            while not until(self.world):
                if player.sleeping:
                    self._act("sleep")
                    continue
                if not home.shut(mem, self._pose()[0]):
                    self._enter_home()  # a plant gone leaves a hole in the rim
                inv = player.inventory
                ripe = [p for p in home.plants if mem.creatures.get(p) == "plant" and mem.creature_objs[p].ripe]
                if inv["food"] <= HOME_EAT_BELOW and ripe:
                    self._face(ripe[0])
                    self._act("do")
                    plant = mem.creature_objs.get(ripe[0])  # gone if trampled while facing it
                    if plant is not None and not plant.ripe:  # eaten: it grows again from nothing
                        self.home_plants[ripe[0]] = [self.world.steps, len(self.world.primitive_log), 0]
                elif inv["drink"] < RULES.items["drink"]["max"]:
                    self._face(home.water[0])
                    self._act("do")
                elif self.home_starving():
                    raise Failed("left home: food ran out", "ran_out", stat="food")
                elif inv["energy"] < RULES.items["energy"]["max"] and (
                        self.world.env.world.daylight < DARK_BELOW or inv["energy"] <= HOME_SLEEP_BELOW):
                    self._act("sleep")
                else:
                    self._act("noop")
        finally:
            self.interrupt = reflex
        if self.close_door:
            self._leave_home()

    def _leave_home(self) -> None:
        """Out through the door, which is closed behind with a stone (paths leave it alone)."""
        home, mem = self.home, self.world.memory
        if self._pose()[0] not in home.cells:
            return
        door, (a, _) = home.door, home.cells
        out = (2 * door[0] - a[0], 2 * door[1] - a[1])
        if mem.material(out) not in OPEN:
            return  # the door opens on rock or a plant: paths dig their own way out
        self.close_door = False  # the way out is through the door
        try:
            self._goto(lambda p, f: p == out, "out of the home")
        finally:
            self.close_door = True
        if self.world.inventory["stone"] and mem.material(door) in OPEN and door not in mem.creatures:
            self._goto(lambda p, f: (p[0] + f[0], p[1] + f[1]) == door and p not in home.cells and p != door,
                       "the home's door")
            self._act("place_stone")

    def _enclose(self, tries: int = 6, stock: int = 6) -> None:
        """Follow `plan_enclosure`, re-planning when the world disagrees; with no plan here,
        dig stone up to `stock` first (which also brings the player to rock) and plan there."""
        mem, stocked = self.world.memory, False
        for _ in range(tries):
            pos, face = self._pose()
            if enclosed(mem, pos):
                return
            inv = self.world.inventory
            can_dig = "stone" in diggable(inv)
            plan = plan_enclosure(mem, pos, face, inv["stone"], can_dig)
            if plan is None:
                if stocked or not can_dig or not mem.seen("stone") or inv["stone"] >= stock:
                    raise Failed("no place to wall in (needs stone, or a pickaxe and rock nearby)", "no_place",
                                 what="shelter")
                while self.world.inventory["stone"] < stock:
                    self._collect(RULES.recipes["collect_stone"])
                stocked = True
                continue
            for action, exp_pos, exp_face in plan:
                before = self.world.inventory["stone"]
                self._act(action)
                gained = self.world.inventory["stone"] - before
                if self._pose() != (exp_pos, exp_face) or gained != _STONE_GAIN.get(action, 0):
                    break
        if not enclosed(mem, self._pose()[0]):
            raise Failed(f"could not wall in after {tries} plans", "no_place", what="shelter")

    def _explore(self, until=None, near=None, steps: int | None = None) -> None:
        """Walk toward the cell that would reveal the most unseen cells per step walked (among
        the cells `near(memory)` marks, if given) for at most `steps` (`explore_steps`)."""
        start = len(self.actions)
        unreachable: set = set()
        while len(self.actions) - start < (steps or self.explore_steps):
            if until is not None and until(self.world):
                return
            mask = near(self.world.memory) if near is not None else None
            target = self._frontier(unreachable, self._dig_with(), mask)
            if target is None and self.dig == STUCK:
                target = self._frontier(unreachable, self.world.inventory, mask)
            if target is None:
                raise Failed("nothing left to explore with the tools at hand", "nothing_to_explore")
            plan = self._plan(lambda p, f: p == target)
            if not plan:
                unreachable.add(target)
                continue
            for action, exp_pos, exp_face in plan[:8]:
                self._act(action)
                if self._pose() != (exp_pos, exp_face) or (until is not None and until(self.world)):
                    break

    def _frontier(self, unreachable: set, dig_with: dict | None, near: np.ndarray | None = None):
        """The cell worth walking to that reveals the most unseen cells for the walk (within
        the cells `near` marks, if given)."""
        mem = self.world.memory
        unknown = (~mem.known()).astype(np.int32)
        hx, hy = np.array(RULES.view) // 2
        # Unseen cells in the view window around every cell, by a summed-area table.
        pad = np.pad(unknown, ((hx + 1, hx), (hy + 1, hy)))
        sat = pad.cumsum(0).cumsum(1)
        w, h = 2 * hx + 1, 2 * hy + 1
        gain = sat[w:, h:] - sat[:-w, h:] - sat[w:, :-h] + sat[:-w, :-h]
        walk = np.isin(mem.map, [mem.ids[m] for m in RULES.walkable])
        dig = np.isin(mem.map, [mem.ids[m] for m in diggable(dig_with)])
        pos, _ = self._pose()
        dist = np.abs(np.indices(mem.map.shape) - np.array(pos)[:, None, None]).sum(0)
        cost = dist + np.where(dig, 4.0, 0.0)  # digging in costs more than walking
        reach = reachable(walk | dig, pos)  # scoring cells walled off from the player would loop on them
        score = np.where(reach & (gain > 0) & (dist > 0), gain - 2.0 * cost, -np.inf)
        if near is not None:
            score = np.where(near, score, -np.inf)
        for cell in unreachable:
            score[cell] = -np.inf
        if not np.isfinite(score).any():
            return None
        x, y = np.unravel_index(int(np.argmax(score)), score.shape)
        return int(x), int(y)
