"""DiVE's learning side: ground truth from data.yaml, banks, the discoverers, the injected
near misses, the Verifier, the upper levels."""
import json
import random

import pytest

from regula import envs
from regula.dive.banks import Banks, Transition, build, collected, element_of, transitions
from regula.dive.discover import Candidate, StatisticalDiscoverer
from regula.dive.dynamics import Dynamic, ground_truth, score
from regula.dive.hallucinate import KINDS, inject
from regula.dive.llm_discover import LLMDiscoverer, dynamics_answer
from regula.dive.verify import Verifier, names_seen
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer

RULES = envs.get("crafter").rules  # data.yaml: the ground truth the scores use


def test_ground_truth_is_every_fact_of_data_yaml():
    truth = ground_truth()
    assert len(truth) == 87
    table = RULES.recipes["place_table"]
    assert Dynamic("place_table", "consumes", "wood", table.uses["wood"]) in truth
    assert Dynamic("make_iron_pickaxe", "near", "furnace") in truth
    assert Dynamic("collect_diamond", "requires", "iron_pickaxe", 1) in truth
    assert Dynamic("collect_wood", "faces", "tree") in truth
    assert Dynamic("collect_iron", "requires", "wood_pickaxe", 1) not in truth
    assert sorted(d.text() for d in truth if d.attribute == "leaves") == [
        "collect_coal leaves path", "collect_diamond leaves path", "collect_drink leaves water",
        "collect_iron leaves path", "collect_sapling leaves grass", "collect_stone leaves path",
        "collect_wood leaves grass", "place_furnace leaves furnace", "place_plant leaves plant",
        "place_stone leaves stone", "place_table leaves table"]
    s = score({Dynamic("collect_wood", "faces", "tree"), Dynamic("collect_wood", "gives", "bone", 1)})
    assert (s["precision"], s["correct"], s["truth"]) == (0.5, 1, 87)


def _step(t, inventory_after, prims, props=()):
    return {"t": t, "inventory": inventory_after, "primitives": prims, "props_before": list(props),
            "props_after": list(props), "inventory_delta": {}, "unlocked": [u for p in prims for u in p["unlocked"]], "skill": "x", "actions": [p["action"] for p in prims]}


def _prim(action, facing, delta, unlocked=(), near=()):
    return {"action": action, "facing": facing, "inventory_delta": delta, "unlocked": list(unlocked),
            "near": list(near)}


def test_transitions_name_collects_by_what_experience_unlocked_and_see_what_was_left():
    ep = {"header": {"seed": 3}, "steps": [
        _step(0, {"wood": 2, "health": 9}, [
            _prim("move_left", "grass", {}), _prim("do", "tree", {"wood": 1}, ["collect_wood"]),
            _prim("do", "tree", {"wood": 1})]),
        _step(1, {"wood": 2, "health": 9}, [_prim("do", "cow", {"food": 6}, ["eat_cow"]), _prim("noop", "zombie", {}),
                                            _prim("do", "water", {})])]}
    collects = collected([ep])
    assert collects == {"tree": "collect_wood"}  # eat_cow is no collect; water never unlocked one
    xs = transitions(ep, collects)
    assert [x.element for x in xs] == ["collect_wood", "collect_wood"]
    assert [x.inventory["wood"] for x in xs] == [0, 1]
    assert all(x.success for x in xs) and xs[0].where() == "seed 3, step 0.1"
    assert [x.after for x in xs] == ["tree", ""]  # then a cow: a creature walked in, not what collecting left
    assert element_of("do", "water", collects) is None and element_of("do", "tree", collects) == "collect_wood"
    assert element_of("make_wood_pickaxe", "grass", collects) == "make_wood_pickaxe"
    assert element_of("sleep", "grass", collects) is None


def _x(element, inventory, delta, facing="grass", near=("grass",), seed=0, after=""):
    return Transition(element, seed, 0, 0, facing, tuple(near), inventory, delta, (), True, after)


def _banks(xs):
    b = Banks()
    for x in xs:
        b.actions.setdefault(x.element, []).append(x)
    return b


def test_statistical_discoverer_reads_what_holds_in_every_sample():
    xs = [_x("make_wood_pickaxe", {"wood": w, "wood_sword": 1}, {"wood": -1, "wood_pickaxe": 1},
             near=("grass", "table"), after="grass") for w in (1, 3, 2)]
    xs += [_x("make_wood_sword", {"wood": 1}, {"wood": -1, "wood_sword": 1}, near=("table",))]
    xs += [_x("place_table", {"wood": 2}, {"wood": -2}, facing=f, after="table") for f in ("grass", "sand")]
    xs += [_x("collect_drink", {}, {"drink": 1}, facing="water", after="water")] * 2
    found = {c.dynamic for c in StatisticalDiscoverer(samples=8).discover(_banks(xs))}
    assert Dynamic("make_wood_pickaxe", "consumes", "wood", 1) in found
    assert Dynamic("make_wood_pickaxe", "requires", "wood", 1) in found
    assert Dynamic("make_wood_pickaxe", "gives", "wood_pickaxe", 1) in found
    assert Dynamic("make_wood_pickaxe", "requires", "wood_sword", 1) in found  # a confounder, for the Verifier
    assert Dynamic("make_wood_pickaxe", "near", "table") in found
    assert Dynamic("make_wood_pickaxe", "near", "grass") not in found  # nothing places grass
    # making leaves the faced cell as it was: where the player stood is no condition
    assert not any(d.attribute in ("faces", "leaves") for d in found if d.element == "make_wood_pickaxe")
    # placing changes it: each material a table went on is a cell it may go on
    assert {d.arg for d in found if d.element == "place_table" and d.attribute == "faces"} == {"grass", "sand"}
    assert Dynamic("place_table", "leaves", "table") in found
    # `do` facing water is drinking: named by what it faces, which it leaves as it was
    assert {Dynamic("collect_drink", "faces", "water"), Dynamic("collect_drink", "leaves", "water")} <= found
    assert not any(d.attribute == "leaves" for d in found if d.element == "make_wood_sword")  # never seen after


def test_injected_candidates_are_near_misses_of_discovered_ones_never_true():
    xs = [_x("collect_stone", {"wood_pickaxe": 1, "wood": 2}, {"stone": 1}, facing="stone", near=("stone", "table"),
             after="path")] * 3
    xs += [_x("place_table", {"wood": 2}, {"wood": -2}, after="table")] * 3
    found = [Candidate(Dynamic(*d)) for d in [
        ("collect_stone", "requires", "wood_pickaxe", 1), ("collect_stone", "gives", "stone", 1),
        ("collect_stone", "faces", "stone", 1), ("place_table", "consumes", "wood", 2),
        ("place_table", "requires", "wood", 2), ("collect_stone", "consumes", "stone", 1)]]
    wrong = inject(found, _banks(xs), 1.0, random.Random(0), step=4)
    again = inject(found, _banks(xs), 1.0, random.Random(0), step=4)
    assert wrong == again and len(wrong) == 6 and {c.origin for c in wrong} == set(KINDS)
    assert all(c.step == 4 for c in wrong)
    assert not {c.dynamic for c in wrong} & (ground_truth() | {c.dynamic for c in found})
    names = names_seen(_banks(xs))
    assert all(c.dynamic.arg in names or c.origin == "tool_tier" for c in wrong)
    by = {c.origin: c.dynamic for c in wrong}
    assert by["tool_tier"].arg == "stone_pickaxe"  # wood's only neighbour
    assert by["off_by_one"].attribute in ("requires", "consumes", "gives")
    assert by["absent_condition"].attribute in ("near", "faces")
    assert by["wrong_recipe"].arg in {"wood", "stone"}
    assert inject(found, _banks(xs), 0.0, random.Random(0)) == []


def test_verifier_rejects_with_reasons_and_evidence():
    xs = [_x("collect_stone", {"wood_pickaxe": 1, "wood_sword": s, "food": 5}, {"stone": 1}, facing="stone", seed=i,
             after="path" if i else "water") for i, s in enumerate([1, 0, 1, 1])]
    xs += [_x("collect_wood", {"food": 5}, {"wood": 1}, facing="tree", seed=9) for _ in range(20)]
    xs += [_x("collect_wood", {"food": 5}, {"wood": 1}, facing="tree", seed=8)]
    banks = _banks(xs)
    cands = [Candidate(Dynamic("collect_stone", *d)) for d in [
        ("requires", "wood_pickaxe", 1), ("requires", "wood_sword", 1), ("requires", "food", 1),
        ("gives", "stone", 1), ("gives", "bone", 1), ("consumes", "stone", 1), ("faces", "stone", 1),
        ("leaves", "path", 1), ("requires", "diamond", 1)]]
    v = Verifier(samples=16).verify(cands, banks)
    assert sorted(c.dynamic.text() for c in v.verified) == [
        "collect_stone faces stone", "collect_stone gives 1 stone", "collect_stone requires 1 wood_pickaxe"]
    reasons = {r["candidate"].dynamic.text(): (r["reason"], r["evidence"]) for r in v.rejected}
    assert reasons["collect_stone gives 1 bone"][0] == "names 'bone', which no experience contains"
    # a real Crafter item, but no experience held or changed one: the Verifier knows no more
    assert reasons["collect_stone requires 1 diamond"][0] == "names 'diamond', which no experience contains"
    assert reasons["collect_stone requires 1 wood_sword"] == ("succeeded holding 0 wood_sword", "seed 1, step 0.0")
    assert reasons["collect_stone consumes 1 stone"][0] == "changed stone by 1, not -1"
    assert reasons["collect_stone requires 1 food"][0].startswith("1 food is held in 100% of all experiences")
    assert reasons["collect_stone leaves path"] == ("left water faced", "seed 0, step 0.0")


def test_verifier_reads_faces_of_a_place_action_as_one_of_the_cells_it_acts_on():
    xs = [_x("place_table", {"wood": 1}, {"wood": -1}, facing="grass", after="table", seed=i) for i in range(30)]
    xs += [_x("place_table", {"wood": 1}, {"wood": -1}, facing="sand", after="table", seed=99)]
    xs += [_x("make_wood_pickaxe", {"wood": 1}, {"wood": -1, "wood_pickaxe": 1}, facing="table", after="table")] * 3
    cands = [Candidate(Dynamic(*d)) for d in [
        ("place_table", "faces", "grass", 1), ("place_table", "faces", "sand", 1), ("place_table", "faces", "table", 1),
        ("make_wood_pickaxe", "faces", "table", 1)]]
    v = Verifier(samples=4).verify(cands, _banks(xs))
    # sand: one success in 31, outside the sample of 4, still shows a table goes on sand
    assert sorted(c.dynamic.text() for c in v.verified) == ["place_table faces grass", "place_table faces sand"]
    reasons = {r["candidate"].dynamic.text(): (r["reason"], r["evidence"]) for r in v.rejected}
    assert reasons["place_table faces table"] == ("no success faced table", "")
    assert reasons["make_wood_pickaxe faces table"] == (
        "left the table it faced as it was: it does not act on what it faces", "seed 0, step 0.0")


def test_verifier_keeps_the_amount_an_action_uses_up_not_what_was_always_held():
    xs = [_x("make_wood_sword", {"wood": 3}, {"wood": -1, "wood_sword": 1}, near=("table",))] * 8
    cands = [Candidate(Dynamic("make_wood_sword", *d)) for d in [
        ("requires", "wood", 1), ("requires", "wood", 2), ("consumes", "wood", 1)]]
    v = Verifier().verify(cands, _banks(xs))
    assert sorted(c.dynamic.text() for c in v.verified) == ["make_wood_sword consumes 1 wood",
                                                             "make_wood_sword requires 1 wood"]
    assert [r["reason"] for r in v.rejected] == ["make_wood_sword uses up 1 wood: nothing shows it needs more"]


def test_verifier_drops_a_requirement_another_implies():
    xs = [_x("collect_iron", {"wood_pickaxe": 1, "stone_pickaxe": 1}, {"iron": 1}, facing="iron")] * 8
    xs += [_x("collect_stone", {"wood_pickaxe": 1}, {"stone": 1}, facing="stone")] * 4
    xs += [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 8
    cands = [Candidate(Dynamic("collect_iron", "requires", t, 1)) for t in ("wood_pickaxe", "stone_pickaxe")]
    v = Verifier().verify(cands, _banks(xs))
    assert [c.dynamic.arg for c in v.verified] == ["stone_pickaxe"]
    assert v.rejected[0]["reason"].startswith("implied by collect_iron requires 1 stone_pickaxe in every experience")


def test_llm_discoverer_reasks_then_drops_with_a_log_line(tmp_path):
    xs = [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 3
    xs += [_x("place_table", {"wood": 2}, {"wood": -2}, facing="grass")] * 3
    with StubLLMServer() as server:
        server.script = [
            '{"dynamics": [{"attribute": "gives", "arg": "wood", "value": 1}, '
            '{"attribute": "faces", "arg": "tree"}]}',  # collect_wood: usable at once
            '{"dynamics": [{"attribute": "consumes", "arg": "plank", "value": 2}]}',  # place_table: unknown item
            "not json at all",
            '{"dynamics": [{"attribute": "smells", "arg": "wood"}]}',
        ]
        cfg = LLMConfig(base_url=server.base_url, model=server.model,
                        cache_dir=str(tmp_path / "cache"), timeout=5.0,
                        reasks=2)
        lines = []
        found = LLMDiscoverer(LLMClient(cfg, "dive", Accounting()), log=lines.append).discover(_banks(xs))
        assert {c.dynamic.text() for c in found} == {"collect_wood gives 1 wood", "collect_wood faces tree"}
        assert len(lines) == 1 and lines[0].startswith("dive: dropped the discoverer's answer about place_table")
        assert "'plank' is nothing the experiences contain" in server.requests[2]["messages"][-1]["content"]
        assert server.calls == 4
        assert "inventory change: wood +1; facing after: unknown" in server.requests[0]["messages"][-1]["content"]


def test_llm_discoverer_answers_name_only_what_the_experiences_contain():
    """The schema a constrained endpoint follows: DiVE's attributes, the names the banks hold
    (not data.yaml's: a diamond no experience saw is not offered)."""
    xs = [_x("collect_wood", {"sapling": 1}, {"wood": 1}, facing="tree", near=("grass", "tree"), after="grass")]
    names = tuple(sorted(names_seen(_banks(xs))))
    assert names == ("grass", "sapling", "tree", "wood")
    schema = dynamics_answer(names)
    item = schema.model_json_schema()["$defs"]["DynamicAnswer"]["properties"]
    assert item["attribute"]["enum"] == ["requires", "consumes", "gives", "near", "faces", "leaves"]
    assert item["arg"]["enum"] == list(names)
    with pytest.raises(ValueError, match="'diamond' is nothing the experiences contain"):
        schema.model_validate({"dynamics": [{"attribute": "requires", "arg": "diamond"}]})
    with pytest.raises(ValueError, match="attribute 'smells' is not one of requires, consumes"):
        schema.model_validate({"dynamics": [{"attribute": "smells", "arg": "wood"}]})


def test_llm_discoverer_on_the_stub_reads_like_the_statistical_one(tmp_path):
    xs = [_x("make_wood_pickaxe", {"wood": w}, {"wood": -1, "wood_pickaxe": 1}, near=("grass", "table"),
             after="table") for w in (1, 3, 2)]
    xs += [_x("place_table", {"wood": 2}, {"wood": -2}, after="table")]
    with StubLLMServer() as server:
        cfg = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "c"), timeout=5.0)
        llm = LLMDiscoverer(LLMClient(cfg, "dive", Accounting()), samples=8, seed=5).discover(_banks(xs))
    statistical = StatisticalDiscoverer(samples=8, seed=5).discover(_banks(xs))
    assert {c.dynamic for c in llm} == {c.dynamic for c in statistical}
    assert Dynamic("place_table", "leaves", "table") in {c.dynamic for c in llm}


def test_llm_discoverer_replays_from_the_cache_with_no_call(tmp_path):
    xs = [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 3
    answer = '{"dynamics": [{"attribute": "gives", "arg": "wood", "value": 1}]}'
    with StubLLMServer() as server:
        server.script = [answer]
        live = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "cache"), timeout=5.0)
        first = LLMDiscoverer(LLMClient(live, "dive", Accounting())).discover(_banks(xs))
        assert server.calls == 1
    # Replay against a port where nothing listens (any call would fail), under the model and the
    # endpoint's name that answered: both are part of each answer's key.
    replay = LLMConfig(base_url="http://127.0.0.1:9/v1", model=live.model, endpoint_id=live.endpoint,
                       cache_dir=str(tmp_path / "cache"), mode="replay")
    accounting = Accounting()
    again = LLMDiscoverer(LLMClient(replay, "dive", accounting)).discover(_banks(xs))
    assert again == first and accounting.row("dive", "discoverer")["calls"] == 0


def test_llm_discoverer_does_not_swallow_a_replay_miss_or_a_dead_endpoint(tmp_path):
    from regula.llm import LLMError, ReplayMiss
    xs = [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 3
    replay = LLMConfig(base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path / "empty"), mode="replay")
    with pytest.raises(ReplayMiss, match="replay mode: no cached answer for stage 'dive', role 'discoverer'"):
        LLMDiscoverer(LLMClient(replay, "dive", Accounting())).discover(_banks(xs))
    dead = LLMConfig(base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path / "c"), retries=0, timeout=1.0)
    with pytest.raises(LLMError, match="failed after"):
        LLMDiscoverer(LLMClient(dead, "dive", Accounting())).discover(_banks(xs))


def test_stage_metrics_keep_own_and_injected_apart():
    from regula import params as params_mod
    from regula.dive import stage
    params = params_mod.validate({"dive": {"inject": 0.5, "steps": 0}})
    prims = [_prim("do", "tree", {"wood": 1}, ["collect_wood"]), _prim("do", "tree", {"wood": 1}),
             _prim("place_table", "grass", {"wood": -2}, ["place_table"]), _prim("noop", "table", {})]
    demo = {"header": {"seed": 1}, "steps": [_step(0, {"wood": 0, "health": 9}, prims)]}
    rows, found, verdicts = stage.discover_and_verify(params, [demo], [], StatisticalDiscoverer(samples=8))
    m = stage.metrics(rows, found, verdicts, {}, params, {})
    own = {d for d, c in found.items() if c.origin == "discovered"}
    assert m["discovered"]["n"] == len(own) == rows[-1]["discovered_n"]
    assert m["injected"]["n"] == len(found) - len(own) == round(0.5 * len(own)) == rows[-1]["injected_n"]
    assert m["injected"]["rejected"] == sum(m["by_origin"][k]["rejected"] for k in KINDS)
    assert m["verified"]["own"]["n"] == m["by_origin"]["discovered"]["verified"]
    assert m["verifier_on_own"]["true"] + m["verifier_on_own"]["false"] == len(own)
    assert m["truth"] == 87 and json.dumps(m)


def test_upper_levels_truth_order_and_objects():
    from regula.dive import hierarchy
    truth = hierarchy.subtask_truth()
    assert truth["make_wood_pickaxe"] == {"has_wood", "table_on_map"}
    assert truth["collect_diamond"] == {"has_iron_pickaxe", "diamond_on_map"}
    assert hierarchy.order_violations(["collect_wood", "place_table", "make_wood_pickaxe"]) == []
    assert hierarchy.order_violations(["make_wood_pickaxe", "collect_wood"]) == [("make_wood_pickaxe", "collect_wood")]
    b = Banks()
    for i in range(10):
        night = i < 5
        view = frozenset({"zombie", "grass"} if night else {"grass"})
        for thing in view:
            b.objects.setdefault(thing, []).append((0, i, view, night))
    assert hierarchy.object_relations(b) == {("at_night", "zombie", "")}
    assert build([]).sizes() == {"B^A": 0, "B^O": 0, "B^ST": 0, "B^SG": 0}


def test_the_report_gives_precision_and_recall_on_own_and_injected_candidates_apart():
    from regula.dive.report import learning_lines
    m = {"discoverer": "statistical", "steps": 2, "inject": 0.3, "banks": {"actions": 10}, "truth": 87,
         "discovered": {"n": 10, "precision": 0.6, "recall": 0.069},
         "verified": {"n": 7, "precision": 0.857, "recall": 0.069, "recall_demonstrated": 0.5,
                      "own": {"n": 6, "precision": 1.0, "recall": 0.069}},
         "verifier_on_own": {"true": 6, "true_kept": 6, "false": 4, "false_rejected": 4},
         "injected": {"n": 3, "rejected": 2},
         "by_origin": {"discovered": {"candidates": 10, "rejected": 4, "verified": 6},
                       "off_by_one": {"candidates": 3, "rejected": 2, "verified": 1}},
         "wrong_verified": ["make_wood_pickaxe requires 2 wood"], "correct_rejected": []}
    text = "\n".join(learning_lines(m))
    assert "| discovered (the discoverer's own candidates) | 10 | 0.600 | 0.069 |" in text
    assert "| verified, of its own candidates | 6 | 1.000 | 0.069 |" in text
    assert "| verified, own and injected | 7 | 0.857 | 0.069 |" in text
    assert ("kept 6 of the discoverer's 6 true candidates and rejected 4 of its 4 false ones; of the 3 injected "
            "near misses it rejected 2.") in text
    assert "| off by one | 3 | 2 | 1 |" in text and "87 facts" in text
    assert "Verified but wrong: `make_wood_pickaxe requires 2 wood`. Correct but rejected: none." in text
