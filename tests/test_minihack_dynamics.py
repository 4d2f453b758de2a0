"""The MiniHack ground-truth dynamics (src/regula/envs/minihack/dynamics.yaml): each fact speaks
the adapter's words and holds in the expert's demonstrations, each source names code that exists
(NetHack's functions in nle's libnethack.so, nle's and MiniHack's in their installed files), and a
damaged file is refused in one line naming the fact."""
import ast
import copy
import ctypes
import importlib.util
import os
from pathlib import Path

import pytest
import yaml

from regula import envs
from regula.envs.minihack import dynamics
from regula.errors import DataError, UnknownNameError

MINIHACK = envs.get("minihack")
FACTS = MINIHACK.ground_truth()
RAW = yaml.safe_load(dynamics.PATH.read_text())


def _package_dir(name: str) -> Path:
    return Path(importlib.util.find_spec(name).submodule_search_locations[0])


def test_the_facts_the_issue_names_are_there():
    statements = {f.statement() for f in FACTS}
    assert {"put_on ring gives levitating", "lava kills agent unless levitating", "lava crossable_when levitating",
            "zap wand kills minotaur when minotaur_in_view", "minotaur kills agent when monster_adjacent",
            "stairs ends success when on_stairs", "descend prevented_by levitating", "pick_up gives has_ring",
            "pick_up gives has_wand", "zap wand freezes lava", "remove ring removes levitating"} <= statements
    assert len(FACTS) == 20 and len({f.id for f in FACTS}) == 20
    assert {t: len(MINIHACK.ground_truth(t)) for t in MINIHACK.tasks} == {"lava_cross": 13, "wand_of_death": 9,
                                                                          "quest": 9, "lava_freeze": 8}
    with pytest.raises(UnknownNameError):
        MINIHACK.ground_truth("lava_crossing")


def test_every_netHack_function_named_is_in_nles_libnethack():
    lib = ctypes.CDLL(str(_package_dir("nle") / "libnethack.so"), mode=os.RTLD_LOCAL)
    named = {s.function for f in FACTS for s in f.sources if s.code.startswith("NetHack")}
    assert len(named) >= 15
    assert sorted(n for n in named if not hasattr(lib, n)) == []
    assert not hasattr(lib, "Ring_off_or_gone")  # a static function: why only exported ones are named


def _defines(path: Path, dotted: str) -> bool:
    cls, _, fn = dotted.rpartition(".")
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return any(isinstance(b, ast.FunctionDef) and b.name == fn for b in node.body)
        if not cls and isinstance(node, ast.FunctionDef) and node.name == fn:
            return True
    return False


def test_every_python_function_named_is_defined_in_its_installed_file():
    pythons = [s for f in FACTS for s in f.sources if not s.code.startswith("NetHack")]
    assert pythons
    for s in pythons:
        path = _package_dir(s.code.split()[0]) / s.file
        assert path.is_file() and _defines(path, s.function), s.text()
    assert not _defines(_package_dir("minihack") / "base.py", "MiniHack._is_episode_ends")


def _demonstrations():
    """The expert's demonstration of each task on seed 0 (the minihack_demos stage's)."""
    out = {}
    for task in MINIHACK.tasks:
        ep = MINIHACK.make(0, task=task)
        assert MINIHACK.expert(ep)
        out[task] = ep.events
    return out


def test_the_skill_facts_hold_in_the_expert_demonstrations():
    demos = _demonstrations()
    checked = set()
    for fact in FACTS:
        if fact.element not in dynamics.skill_elements() or fact.attribute not in (
                "requires", "prevented_by", "gives", "removes"):
            continue
        for task in fact.tasks:
            for step in demos[task]:
                if not step.success or not (step.skill == fact.element or step.skill.startswith(fact.element + " ")):
                    continue
                before, after = set(step.props_before), set(step.props_after)
                holds = {"requires": fact.arg in before, "prevented_by": fact.arg not in before,
                         "gives": fact.arg in after, "removes": fact.arg not in after}[fact.attribute]
                assert holds, f"{fact.id} ({fact.statement()}) fails on {task}: {step.skill}"
                checked.add(fact.id)
    assert {"pick_up_needs_an_item", "pick_up_gives_the_ring", "put_on_wears_the_ring", "ring_of_levitation_levitates",
            "no_pick_up_while_levitating", "zap_needs_a_wand", "fight_needs_a_monster"} <= checked
    # the events the other facts speak of happened in the demonstrations, with the adapter's names for them
    unlocked = {task: [a for s in steps for a in s.unlocked] for task, steps in demos.items()}
    assert "kill_minotaur" in unlocked["wand_of_death"] and "freeze_lava" in unlocked["quest"]
    assert all("reach_stairs" in u for u in unlocked.values())


def _broken(tmp_path, change) -> str:
    raw = copy.deepcopy(RAW)
    change(raw)
    path = tmp_path / "dynamics.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(DataError) as err:
        dynamics.load(MINIHACK.tasks, path)
    assert "\n" not in str(err.value)
    return str(err.value).removeprefix(f"{path}: ")


def _set(key, value, n=0):
    return lambda raw: raw["facts"][n].__setitem__(key, value)


@pytest.mark.parametrize("change, expected", [
    (_set("arg", "has_rings"), "fact 1 (pick_up_needs_an_item): requires takes one of has_ring, "),
    (_set("element", "pickup"), "fact 1 (pick_up_needs_an_item): element 'pickup' is not a skill, a thing or a "
                                "terrain of the adapter: go_to ring, "),
    (_set("attribute", "needs"), "fact 1 (pick_up_needs_an_item): attribute 'needs' is not one of requires, "),
    (_set("arg", "agent"), "fact 1 (pick_up_needs_an_item): requires takes one of "),
    (_set("tasks", ["lava_crossing"]), "fact 1 (pick_up_needs_an_item): tasks: 'lava_crossing' is not one of "
                                       "lava_cross, lava_freeze, quest, wand_of_death"),
    (_set("tasks", []), "fact 1 (pick_up_needs_an_item): tasks must name at least one task"),
    (_set("id", "pick_up_gives_the_ring"), "fact 2 (pick_up_gives_the_ring): the id is given twice"),
    (_set("sources", []), "fact 1 (pick_up_needs_an_item): sources must list the code that establishes the fact"),
    (_set("sources", [{"code": "NetHack 3.7", "file": "src/pickup.c", "function": "pickup"}]),
     "fact 1 (pick_up_needs_an_item): source code 'NetHack 3.7' is not one of NetHack 3.6.6, nle 1.3.0, minihack 1.0.2"),
    (_set("sources", [{"code": "NetHack 3.6.6", "file": "pickup.c", "function": "pickup"}]),
     "fact 1 (pick_up_needs_an_item): source file 'pickup.c': NetHack's are src/<name>.c"),
    (_set("value", 3), "fact 1 (pick_up_needs_an_item): value (a whole number >= 1) goes with `reaches` and only "
                       "with it"),
    (_set("unless", ["floating"]), "fact 1 (pick_up_needs_an_item): unless: 'floating' is not one of has_ring, "),
    (_set("reason", "x"), "fact 1 (pick_up_needs_an_item): unknown key 'reason'; known keys: id, "),
    (lambda raw: raw["facts"][0].pop("text"), "fact 1 (pick_up_needs_an_item): lacks text"),
    (lambda raw: raw.__setitem__("facts", []), "must hold one key, facts, a list of facts"),
])
def test_a_damaged_dynamics_file_is_refused_in_one_line(tmp_path, change, expected):
    assert _broken(tmp_path, change).startswith(expected)
