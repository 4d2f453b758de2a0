"""The specification studies (regula.specs.study, seed 000 §4.1 Fig. 4): the shield reads the spec's DFA,
the agent it shields never violates the spec, the bins add up, the night clock is the world's."""
import pytest

from regula import envs
from regula.automata.teachers import formula_dfa
from regula.cedar.library import Library, Skill
from regula.specs import study as S

SPEC_LETTERS = ("is_night", "shelter", "collect_wood")
# "sleep before chopping at night"
NIGHT_NO_WOOD = formula_dfa(["G (is_night -> (!collect_wood U shelter))"], SPEC_LETTERS)
WOOD = formula_dfa(["F collect_wood"], ("collect_wood",))  # the agent's skill: chop (done after one chop)


@pytest.fixture(scope="module")
def params():
    from pathlib import Path

    from regula import params as P
    return P.load(Path(__file__).resolve().parents[1] / "params.yaml")


def test_the_monitor_counts_a_violation_without_taking_it_and_finds_the_enabling_word():
    m = S.Monitor(NIGHT_NO_WOOD, envs.get("crafter").skill_names())
    m.feed("collect_wood", 1)
    assert m.violations == [] and m.allowed("collect_wood")
    m.feed("is_night", 2)
    assert not m.allowed("collect_wood") and m.allowed("shelter")
    assert m.enabling("collect_wood") == ["shelter"]  # the DFA's own action letters: never an event
    assert m.enabling(None) == ["shelter"]  # the shortest way to acceptance
    state = m.state
    m.feed("collect_wood", 3)
    m.feed("collect_wood", 4)
    assert [v["step"] for v in m.violations] == [3, 4] and m.state == state  # each counted, none taken
    m.feed("shelter", 5)
    m.feed("collect_wood", 6)
    assert len(m.violations) == 2 and m.fed == 6


def test_the_shielded_agent_never_violates_where_the_same_agent_does(params):
    """A tiny study: one dev world, one day; the agent chops wood again and again."""
    library = Library([Skill("collect_wood", "chop a tree for wood", WOOD)])
    env, budget = params.env.model_dump(), S.budget(params)
    free = S.play_trial(103, env, library, "collect_wood", NIGHT_NO_WOOD, budget, 300, shielded=False)
    kept = S.play_trial(103, env, library, "collect_wood", NIGHT_NO_WOOD, budget, 300, shielded=True)
    assert free.violations and not free.changed  # it chops after nightfall; nothing changed its decisions
    assert kept.violations == [] and kept.changed  # by construction: the shield ran `shelter` first
    assert any("shelter" in c["ran"] for c in kept.changed)
    # chopping after nightfall (the first at night by the clock), never before
    assert {v["letter"] for v in free.violations} == {"collect_wood"}
    assert S.is_night_step(free.violations[0]["step"] - 1, 0.35)
    for t in (free, kept):
        assert len(t.per_step) == t.steps <= 300 and t.goals > 0
    rows = S.bins([free, kept], 50, 300, params.env.symbols.night_below)
    assert [r["start"] for r in rows] == list(range(0, 300, 50))
    for r in rows:  # every step of every trial is in one kind, or after its death
        assert sum(r[k] for k in S.KINDS) + r["dead"] == 2 * 50
        assert 0 <= r["health"] <= 9 and r["alive"] <= 2
    assert sum(r["violations"] for r in rows) == len(free.violations)
    assert sum(r["changed"] for r in rows) == len(kept.changed)
    assert sum(r["mining"] for r in rows) == sum(k == "mining" for t in (free, kept) for k, _, _ in t.per_step)


def test_the_night_clock_is_the_worlds_is_night():
    world = envs.get("crafter").make(7)
    for i in range(300):
        world.run_skill_primitive("noop")
        assert world.props()["is_night"] == S.is_night_step(i, 0.35), i


def test_the_studys_budget_is_the_cedar_stages(params):
    from regula.cedar.stage import budget
    assert S.budget(params) == budget(params)


def test_a_study_naming_no_spec_is_refused_in_one_line():
    from regula import params as P
    from regula.errors import ParamsError
    with pytest.raises(ParamsError, match=r"study s: spec 'nope' is not among specs.items \(shelter_at_night, ") as e:
        P.validate({"specs": {"studies": [{"name": "s", "goal": "collect_diamond", "spec": "nope"}]}})
    assert len(str(e.value).strip().splitlines()) == 1


def test_a_study_without_its_library_or_its_goal_stops_before_any_work(tmp_path, params):
    from regula.errors import DataError, UnknownNameError
    from regula.specs import stage
    from regula.stages import Paths
    paths = Paths(root=tmp_path, stage="specs")
    with pytest.raises(DataError, match=r"cedar_skills/library.json: no skill library \(run the cedar_skills stage"):
        stage.prepare(params, paths)
    lib, where = tmp_path / "data" / "cedar_skills", "skills/collect_wood.json"
    WOOD.save(lib / where)
    Library([Skill("collect_wood", "chop a tree for wood", WOOD)]).save(lib, [
        {"name": "collect_wood", "description": "chop a tree for wood", "dfa": where, "reached": True}])
    with pytest.raises(UnknownNameError, match=r"^unknown library skill 'collect_diamond'; valid library skills: "
                                               r"collect_wood$"):
        stage.prepare(params, paths)
    assert not (tmp_path / "metrics").exists()


def test_a_study_with_more_trials_than_eval_worlds_is_refused_in_one_line():
    from regula import params as P
    from regula.errors import ParamsError
    study = {"name": "s", "goal": "collect_diamond", "spec": "sleep_at_night", "trials": 41}
    with pytest.raises(ParamsError, match=r"^params: specs.studies s: trials must be <= seeds.eval.count \(40\), "
                                          r"got 41$"):
        P.validate({"specs": {"studies": [study]}})


# "dig minerals only at night" (Fig. 5): the spec of params' specs.items, learned from its recorded answers
def _item(params, name):
    return next(i for i in params.specs.items if i.name == name)


def test_mine_at_night_learned_from_the_recorded_answers_is_what_the_person_meant(tmp_path, params):
    from pathlib import Path

    from regula.automata.ops import equivalent
    from regula.automata.teachers import NoisyTeacher
    from regula.specs.learn import learn_spec
    from regula.specs.person import EqCache, PersonOracle
    item = _item(params, "mine_at_night")
    letters = tuple(item.letters)
    answers = Path(__file__).resolve().parents[1] / params.specs.answers / "mine_at_night.eq.jsonl"  # git's, not DVC's
    told = formula_dfa(item.teacher, letters)
    person = PersonOracle(letters, EqCache(answers))  # replay: never asks
    result = learn_spec(item.name, item.instruction, letters, NoisyTeacher(told.accepts, 0.0), person, tmp_path,
                        svg=False)
    meant = formula_dfa(item.meant, letters)
    assert equivalent(result.dfa, meant)[0] and not equivalent(told, meant)[0]  # the answers made the difference
    dfa = result.dfa
    for word, ok in [(("not_is_night", "collect_stone"), False), (("collect_coal",), False),
                     (("not_is_night", "is_night", "collect_iron", "collect_diamond", "not_is_night"), True),
                     (("is_night", "collect_stone", "not_is_night", "collect_stone"), False)]:
        assert dfa.accepts(word) == ok, word


def _by_day_facing_stone(seed: int):
    """A world by day, the player holding a wood pickaxe and facing stone it has seen."""
    world = envs.get("crafter").make(seed)
    env = world.env
    env.player.inventory["wood_pickaxe"] = 1
    x, y = (int(v) for v in env.player.pos)
    fx, fy = (int(v) for v in env.player.facing)
    env.world[(x + fx, y + fy)] = "stone"
    world.memory.observe(env.world, env.player.pos)
    world.run_skill_primitive("noop")  # a first record: the monitor reads the day (`not_is_night`)
    return world


def test_the_strict_shield_never_lets_a_mining_letter_happen_by_day(params):
    spec = formula_dfa(_item(params, "mine_at_night").meant, tuple(_item(params, "mine_at_night").letters))
    world = _by_day_facing_stone(7)
    shield = S.Shield(world, spec, enforce=True, strict=True)
    assert not shield.permits("collect_stone") and shield.permits("collect_wood")  # the agent would not choose it
    assert shield.collecting() == "collect_stone"
    step = shield.run_skill("collect_stone")  # asked all the same: refused, time passes
    assert not step.success and world.inventory["stone"] == 0
    step = world.run_skill("collect_stone")  # past the shield's choice: its guard stops the `do` itself
    assert not step.success and "forbids collect_stone" in step.reason and world.inventory["stone"] == 0
    assert step.steps == len(step.primitives)  # the `do` not taken is no step
    shield.run_skill("explore")  # allowed by day: its paths dig nothing
    assert world.controller.dig is False and world.inventory["stone"] == 0
    shield.monitor.catch_up(world.events)
    assert shield.monitor.violations == []
    while not world.props()["is_night"]:  # nightfall: the same collection is allowed
        world.run_skill_primitive("noop")
    env = world.env
    x, y = (int(v) for v in env.player.pos)
    fx, fy = (int(v) for v in env.player.facing)
    env.world[(x + fx, y + fy)] = "stone"
    world.memory.observe(env.world, env.player.pos)
    assert shield.permits("collect_stone")
    assert shield.run_skill("collect_stone").success and world.inventory["stone"] >= 1
    assert shield.monitor.violations == []
    free = _by_day_facing_stone(7)  # the same situation unshielded: a violation, counted
    watch = S.Shield(free, spec, enforce=False, strict=True)
    assert watch.run_skill("collect_stone").success
    assert [v["letter"] for v in watch.monitor.violations] == ["collect_stone"]


def test_the_explore_and_collect_study_bins_sum_to_its_totals(params):
    """Both agents on one dev world for a day: the shielded one never violates the spec, the bins
    add up to the trials' totals (Table 1's and Fig. 5's numbers are one count)."""
    item = _item(params, "mine_at_night")
    spec = formula_dfa(item.meant, tuple(item.letters))
    env, budget = params.env.model_dump(), S.budget(params)
    trials = [S.play_collect_trial(105, env, spec, budget, 300, shielded) for shielded in (False, True)]
    free, kept = trials
    assert free.violations and {v["letter"] for v in free.violations} <= {"collect_stone", "collect_coal",
                                                                            "collect_iron", "collect_diamond"}
    assert kept.violations == []
    for t in trials:
        assert len(t.gained) == len(t.underground) == len(t.per_step) == t.steps <= 300 and t.actions > 0
    rows = S.bins(trials, 50, 300, params.env.symbols.night_below)
    for i, gain in enumerate(S.GAINS):
        assert sum(r[gain] for r in rows) == sum(g[i] for t in trials for g in t.gained)
    assert sum(r["steps_underground"] for r in rows) == sum(sum(t.underground) for t in trials)
    assert sum(sum(map(sum, t.gained)) for t in trials) > 0
    for r in rows:
        assert sum(r[k] for k in S.KINDS) + r["dead"] == 2 * 50


def test_the_strict_shield_never_takes_a_step_out_of_the_area(params):
    """Fig. 6: "stay in this area", the square of half-width 2 round the start; exploring the world
    shielded, the player never leaves it; unshielded, each time it does is a violation."""
    spec = formula_dfa(_item(params, "stay_in_area").meant, tuple(_item(params, "stay_in_area").letters))
    for enforce in (True, False):
        world = envs.get("crafter").make(7)
        area = S.Area(tuple(int(v) for v in world.env.player.pos), 2)
        shield = S.Shield(world, spec, enforce=enforce, strict=True, area=area)
        for _ in range(6):
            shield.run_skill("explore")
        shield.monitor.catch_up(world.events)
        cells = [tuple(p["pos"]) for e in world.events for p in e.primitives]
        if enforce:
            assert all(area.holds(c) for c in cells) and shield.monitor.violations == [] and shield.changed
            assert shield.monitor.pos in cells  # the monitor followed the player
        else:
            assert not all(area.holds(c) for c in cells)
            assert shield.monitor.violations and {v["letter"] for v in shield.monitor.violations} == {"not_in_area"}


@pytest.mark.parametrize("study, says", [
    ({"agent": "bogus", "goal": "collect_diamond"}, r"agent"),
    ({"agent": "collect", "goal": "collect_diamond"}, r"study s: agent collect takes no goal \(got 'collect_diamond'\)"),
    ({"agent": "skill"}, r"study s: agent skill needs a goal"),
    ({"agent": "collect", "strict": "maybe"}, r"strict"),
    ({"agent": "skill", "goal": "collect_diamond", "area": 5}, r"study s: an area \(Fig. 6\) is the collect agent's"),
    ({"agent": "collect", "area": -1}, r"area"),
])
def test_a_bad_study_is_refused_in_one_line(study, says):
    from regula import params as P
    from regula.errors import ParamsError
    with pytest.raises(ParamsError, match=says) as e:
        P.validate({"specs": {"studies": [{"name": "s", "spec": "mine_at_night", **study}]}})
    assert len(str(e.value).strip().splitlines()) == 1


def test_a_negated_event_letter_is_read_where_its_event_is_false():
    """`not_is_night` holds by day, in a log's words (`logs.negated`) as in the monitor (`study.holds`)."""
    from regula.cedar.words import extract
    from regula.specs.logs import negated
    letters = ("is_night", "not_is_night", "collect_stone")
    steps = [{"skill": s, "success": True, "props_after": p, "inventory": {}} for s, p in [
        ("collect_stone", []), ("noop", ["is_night"]), ("collect_stone", ["is_night"]), ("noop", [])]]
    word = extract(negated(steps, letters), letters, {"collect_stone", "noop"}).word
    assert word == ("collect_stone", "not_is_night", "is_night", "collect_stone", "not_is_night")
    assert S.holds("not_is_night", {}, set()) and not S.holds("not_is_night", {}, {"is_night"})
    assert negated(steps, ("is_night",)) is steps  # no negated letter: the log as it is
