"""Who reads data.yaml's facts, as regula/readers.yaml declares: scoring, the H† fact file,
the scripted expert, the survival layer every agent uses for upkeep, the game executing
skills and LTLCrit's hand-written safety laws may; the critic may, through its declared
interface only (`ltlcrit.hard_facts`); DiVE's discoverers, Verifier, banks and evolvers, the
DiVE agent, LTLCrit's non-expert actors and its critics may not, not even through a scoring
helper.

During each test every route to the rules is watched: the adapter's `rules` and each member
`Crafter.rule_readers` names (on the class, so `type(CRAFTER)` is watched too, and as globals
of the adapter's module), `crafter.constants` (in `sys.modules` and on its package), imports of
the simulator or the adapter at run time (`import`, `importlib.import_module`), and, through an
audit hook, opening data.yaml or importing those modules afresh. At each access the stack is
walked outwards: the access is fine when the first frame of regula met is a part whose reads
are its own (the game, the expert, the survival layer), or the declared interface of the forbidden
module met next; a violation when it is a forbidden module. Other frames (accessors, scoring
helpers) are walked through. The stub server's answers stand in for the LLM: what they read
is the model's knowledge, not the system's. What the run-time guard cannot follow (reflection
into the game's own modules, whose globals hold the rules) a forbidden module may not use at
all: its source is checked for it.
"""
import ast
import builtins
import importlib
import importlib.util
import inspect
import os
import sys
from functools import lru_cache
from pathlib import Path

import crafter  # the simulator's package: its data the guard watches
import pytest

from regula import envs, params as params_mod, readers, roles
from regula.dive import agent as agent_mod
from regula.dive.banks import build
from regula.dive.discover import StatisticalDiscoverer
from regula.dive.dynamics import ground_truth, score
from regula.dive.explore import explore_episode, explore_inputs
from regula.dive.llm_discover import LLMDiscoverer
from regula.dive.verify import Verifier
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer
from regula.ltlcrit import hard_facts
from stage_configs import expert_config

CRAFTER = envs.get("crafter")
SPEC = sys.modules[type(CRAFTER).__module__]  # the adapter's module: its globals are routes too
SRC = Path(sys.modules["regula"].__file__).parent
ALLOWED = readers.allowed()
OWN = {m for part in ALLOWED if part.scope == "own" for m in part.modules}
INTERFACES = {m: set(part.serves) for part in ALLOWED if part.scope == "serves" for m in part.modules}
FORBIDDEN = {m for part in readers.forbidden() for m in part.modules}
# The stub server's answers play the LLM (in this process, on its own thread): what the model
# knows is not the system's reading.
MODEL = {"llm/stub_answers.py", "llm/stub_server.py"}
DATA_YAML = Path(crafter.__file__).with_name("data.yaml").resolve()
WATCHED = ("crafter", f"regula.envs.{CRAFTER.name}")  # packages no learner imports at run time


@lru_cache(maxsize=None)
def _where(filename: str) -> str | None:
    try:
        return Path(filename).resolve().relative_to(SRC.resolve()).as_posix()
    except ValueError:
        return None


def _watched(module: str) -> bool:
    return any(module == w or module.startswith(w + ".") for w in WATCHED)


class Reads:
    """The forbidden reads seen: 'module:line function reads|calls|imports|opens what [through interface]'."""

    def __init__(self):
        self.violations: list[str] = []

    def check(self, what: str) -> None:
        frames, frame = [], sys._getframe(1)
        while frame is not None:
            frames.append((_where(frame.f_code.co_filename), frame))
            frame = frame.f_back
        if any(where in MODEL for where, _ in frames):
            return
        via = None
        for where, frame in frames:
            if where in OWN:
                return
            if where in INTERFACES and via is None:
                via = where
            if where in FORBIDDEN:
                if via is not None and where in INTERFACES[via]:
                    return
                line = f"{where}:{frame.f_lineno} {frame.f_code.co_name} {what}" + \
                       (f" through {via}" if via else "")
                if line not in self.violations:
                    self.violations.append(line)
                return


class Watched:
    """An object (the rules, a module of data) whose every public attribute read is checked."""

    def __init__(self, target, reads: Reads, name: str):
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_reads", reads)
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if not attr.startswith("__"):
            self._reads.check(f"reads {self._name}.{attr}")
        return getattr(self._target, attr)

    def __setattr__(self, attr, value):  # the import system sets a fresh submodule on its package
        setattr(self._target, attr, value)


class Guard:
    """The one Reads the audit hook reports to, while a test is guarded (None otherwise)."""

    reads: Reads | None = None
    busy = False


def _audit(event: str, args: tuple) -> None:
    """Opening data.yaml, or importing the simulator or the adapter afresh (an audit hook
    cannot be removed: it is installed once and does nothing outside a guarded test)."""
    if Guard.reads is None or Guard.busy or event not in ("open", "import"):
        return
    Guard.busy = True
    try:
        if event == "import" and isinstance(args[0], str) and _watched(args[0]):
            Guard.reads.check(f"imports {args[0]}")
        elif event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if os.path.basename(path) == DATA_YAML.name and Path(path).resolve() == DATA_YAML:
                Guard.reads.check("opens data.yaml")
    finally:
        Guard.busy = False


sys.addaudithook(_audit)


def guard(r: Reads, monkeypatch) -> None:
    """Watch every route to data.yaml's rules for the rest of the test."""
    rules = Watched(CRAFTER.rules, r, "rules")
    monkeypatch.setattr(type(CRAFTER), "rules", rules)
    monkeypatch.setattr(SPEC, "RULES", rules)
    for name in CRAFTER.rule_readers:
        if name == "rules":
            continue
        method = getattr(type(CRAFTER), name)

        def recorded(self, *args, _method=method, _name=name, **kwargs):
            r.check(f"calls {_name}()")
            return _method(self, *args, **kwargs)
        monkeypatch.setattr(type(CRAFTER), name, recorded)
        function = getattr(SPEC, name, None)
        if callable(function):
            def called(*args, _function=function, _name=name, **kwargs):
                r.check(f"calls {_name}()")
                return _function(*args, **kwargs)
            monkeypatch.setattr(SPEC, name, called)
    constants = Watched(sys.modules["crafter.constants"], r, "crafter.constants")
    monkeypatch.setitem(sys.modules, "crafter.constants", constants)
    monkeypatch.setattr(crafter, "constants", constants)
    real_import, real_import_module = builtins.__import__, importlib.import_module

    def imported(name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            package = (globals or {}).get("__package__") or (globals or {}).get("__name__", "").rpartition(".")[0]
            full = importlib.util.resolve_name("." * level + name, package)
        else:
            full = name
        if _watched(full) or any(_watched(f"{full}.{f}") for f in fromlist or ()):
            r.check(f"imports {full}" + (f" ({', '.join(fromlist)})" if fromlist else ""))
        return real_import(name, globals, locals, fromlist, level)

    def import_module(name, package=None):
        full = importlib.util.resolve_name(name, package) if name.startswith(".") else name
        if _watched(full):
            r.check(f"imports {full}")
        return real_import_module(name, package)
    monkeypatch.setattr(builtins, "__import__", imported)
    monkeypatch.setattr(importlib, "import_module", import_module)
    monkeypatch.setattr(Guard, "reads", r)


@pytest.fixture
def reads(monkeypatch):
    r = Reads()
    guard(r, monkeypatch)
    return r


@pytest.fixture(scope="module")
def episode():
    """Experience to learn from: an exploration episode (the expert and random skills)."""
    env = params_mod.validate({}).env.model_dump()
    return explore_episode(explore_inputs(env, 1000, 0.3, 1500, 40))


@pytest.fixture
def stub():
    with StubLLMServer() as server:
        yield server


def _client(server, tmp_path) -> LLMClient:
    cfg = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "cache"), timeout=10.0,
                    max_tokens=1024)
    return LLMClient(cfg, "readers", Accounting())


def test_the_guard_catches_a_forbidden_read_and_lets_the_game_and_scoring_read(reads, episode):
    """The test can fail: a read from a forbidden module is named with its line; the game's
    and scoring's reads are not."""
    from regula.dive import verify
    CRAFTER.from_params(params_mod.validate({}).env.model_dump(), 0).run_skill("collect_wood")  # the game reads
    assert score(set(), ground_truth())["truth"] == 87  # scoring reads
    assert reads.violations == []
    # what main's Verifier did: its known names were data.yaml's items and materials
    code = compile("def known_names():\n    return set(CRAFTER.rules.items) | set(CRAFTER.rules.materials)\n",
                   verify.__file__, "exec")
    scope = {"CRAFTER": CRAFTER}
    exec(code, scope)
    scope["known_names"]()
    assert reads.violations == ["dive/verify.py:2 known_names reads rules.items",
                                "dive/verify.py:2 known_names reads rules.materials"]


# Routes to data.yaml that the guard of the instance's `rules` alone let through, each as code
# run as if it were a line of the Verifier or a discoverer, and what the guard must report.
ROUTES = {
    "the class's rules": (
        "def read():\n    return type(CRAFTER).rules.make\n",
        ["{m}:2 read reads rules.make"]),
    "crafter.constants imported at run time": (
        "def read():\n    import importlib\n    return importlib.import_module('crafter.constants').make\n",
        ["{m}:3 read imports crafter.constants", "{m}:3 read reads crafter.constants.make"]),
    "the planner's transition": (
        "def read():\n    return CRAFTER.after(None, 'collect_wood')\n",
        ["{m}:2 read calls after()"]),
    "a recipe in words": (
        "def read():\n    return CRAFTER.describe('make_wood_pickaxe')\n",
        ["{m}:2 read calls describe()"]),
    # and their siblings
    "a member through the class": (
        "def read():\n    return type(CRAFTER).shortest_plan(CRAFTER, 'collect_diamond')\n",
        ["{m}:2 read calls shortest_plan()"]),
    "the adapter module's globals": (
        "def read():\n    import sys\n    return sys.modules[type(CRAFTER).__module__].RULES.recipes\n",
        ["{m}:3 read reads rules.recipes"]),
    "a method's globals": (
        "def read():\n    return CRAFTER.make.__globals__['accomplishes']('collect_wood', ['collect_wood'])\n",
        ["{m}:2 read calls accomplishes()"]),
    "an import statement at run time": (
        "def read():\n    from crafter import constants\n    return constants.make\n",
        ["{m}:2 read imports crafter (constants)", "{m}:3 read reads crafter.constants.make"]),
    "an adapter module at run time": (
        "def read():\n    import importlib\n    return importlib.import_module('regula.envs.crafter.planner')\n",
        ["{m}:3 read imports regula.envs.crafter.planner"]),
    "data.yaml opened": (
        "def read():\n    return open(DATA).read()\n",
        ["{m}:2 read opens data.yaml"]),
}


def _run_as(module, code: str):
    """Run `code` as if it were lines of `module` (a forbidden one) and call its `read`."""
    scope = {"CRAFTER": CRAFTER, "DATA": str(DATA_YAML)}
    exec(compile(code, module.__file__, "exec"), scope)
    return scope["read"]()


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("module", ["verify", "discover"])
def test_every_route_to_the_rules_is_caught(reads, route, module):
    from regula.dive import discover, verify
    target = {"verify": verify, "discover": discover}[module]
    code, expected = ROUTES[route]
    _run_as(target, code)
    assert reads.violations == [e.format(m=f"dive/{module}.py") for e in expected]


def test_a_fresh_import_of_crafters_data_is_caught(reads, monkeypatch):
    """Importing crafter.constants anew (its module dropped from sys.modules) runs it again:
    the audit hook sees the import and data.yaml opened."""
    from regula.dive import verify
    monkeypatch.delitem(sys.modules, "crafter.constants")
    code = "def read():\n    import importlib\n    return importlib.import_module('crafter.constants').make\n"
    assert _run_as(verify, code) == CRAFTER.rules._target.make
    assert reads.violations == ["dive/verify.py:3 read imports crafter.constants",
                                "dive/verify.py:3 read opens data.yaml"]


def test_the_guard_is_off_outside_a_guarded_test():
    """The audit hook stays installed (it cannot be removed) but reports to no one."""
    from regula.dive import verify
    assert Guard.reads is None and not isinstance(type(CRAFTER).rules, Watched)
    assert not isinstance(sys.modules["crafter.constants"], Watched)
    assert builtins.__import__.__module__ == "builtins" and importlib.import_module.__module__ == "importlib"
    assert _run_as(verify, ROUTES["data.yaml opened"][0]) == DATA_YAML.read_text()


def test_rule_readers_names_every_member_that_reads_a_rule():
    """A member of the adapter built on the recipes (the rules, the planner, the laws, a
    recipe in words, the stations' pairing) is in `Crafter.rule_readers`, so the guard wraps
    it; the ones left out are names, not rules."""
    names = {"actions": "the primitive actions' names", "body_stats": "the body stats' names",
             "achievement_names": "the achievements' names", "atoms": "the propositions' and skills' names"}
    tree = ast.parse(inspect.getsource(SPEC))
    sources = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in ("rules", "planner", "laws"):
            sources |= {a.asname or a.name for a in node.names}
    sources |= {"describe", "usable_stations"}
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == type(CRAFTER).__name__)
    members = set()
    for node in cls.body:
        body = node.body if isinstance(node, ast.FunctionDef) else [node]
        loads = {n.id for b in body for n in ast.walk(b) if isinstance(n, ast.Name)}
        if loads & sources:
            if isinstance(node, ast.FunctionDef):
                members.add(node.name)
            else:
                members |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    assert members - set(CRAFTER.rule_readers) == set(names)
    assert set(CRAFTER.rule_readers) <= members


def test_readers_yaml_names_real_modules_once():
    """The list the guard enforces (and the report prints) names modules that exist, each
    part's scope is known, and no module is both allowed and forbidden."""
    for part in ALLOWED + readers.forbidden():
        assert all((SRC / m).is_file() for m in part.modules + part.serves), part.name
    assert {p.scope for p in ALLOWED} <= set(readers.SCOPES) and all(p.why for p in ALLOWED)
    assert {m for p in ALLOWED for m in p.modules} & FORBIDDEN == set()
    assert INTERFACES == {"ltlcrit/hard_facts.py": {"ltlcrit/critic.py", "ltlcrit/llm_critic.py", "ltlcrit/gate.py"}}
    assert [p.name for p in ALLOWED] == ["scoring", "H-dagger fact file", "scripted expert", "survival layer",
                                         "the game executing skills", "LTLCrit's hand-written safety laws",
                                         "the critic's declared interface"]


# Reflection the run-time guard cannot follow into the game's own modules (their globals hold
# the rules): a forbidden module uses none of it.
REFLECTION = {"attributes": {"__globals__", "__dict__", "__class__", "__module__", "__code__", "__closure__",
                             "f_globals", "modules"},
              "names": {"__import__", "vars", "globals"},
              "imports": {"importlib", "inspect", "gc", "ctypes", "crafter"}}


def _reflection(text: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr in REFLECTION["attributes"]:
            found.append(f"{node.lineno} .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in REFLECTION["names"]:
            found.append(f"{node.lineno} {node.id}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
            found.append(f"{node.lineno} type()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{node.lineno} import {n}" for n in names if n.split(".")[0] in REFLECTION["imports"]]
    return sorted(found, key=lambda f: int(f.split()[0]))


def test_forbidden_modules_use_no_reflection():
    assert {m: found for m in sorted(FORBIDDEN) if (found := _reflection((SRC / m).read_text()))} == {}
    assert _reflection("import importlib\nx = type(CRAFTER).rules\ny = f.__globals__\n") == \
        ["1 import importlib", "2 type()", "3 .__globals__"]


def test_discoverers_and_verifier_learn_from_experience_only(reads, episode, stub, tmp_path):
    banks = build([episode])
    found = StatisticalDiscoverer(samples=8, seed=1).discover(banks, step=1)
    llm = LLMDiscoverer(_client(stub, tmp_path), samples=8, seed=1).discover(banks, step=1)
    # The stub reads the same samples from the prompt, but not the holdings of the whole banks
    # (`holdings`), so it may propose more (a stat held in every sample); the Verifier judges them.
    assert found and {c.dynamic for c in found} <= {c.dynamic for c in llm}
    verdicts = Verifier(samples=16, seed=1).verify(found + llm, banks, step=1)
    assert verdicts.verified
    assert reads.violations == []


@pytest.mark.parametrize("evolver", ["symbolic", "openai"])
def test_the_evolvers_and_the_dive_agent_do_not_read_data_yaml(reads, episode, stub, tmp_path, evolver):
    banks = build([episode])
    verified = Verifier().verify(StatisticalDiscoverer().discover(banks), banks).verified
    dynamics = {"verified": [c.dynamic for c in verified], "discovered": [c.dynamic for c in verified]}
    client = _client(stub, tmp_path) if roles.uses_llm("evolver", evolver) else None
    world = CRAFTER.from_params(params_mod.validate({}).env.model_dump(), 3)
    agent_mod.play(world, "dive", dynamics, ["collect_wood", "place_table", "make_wood_pickaxe", "collect_stone"],
                   3, 600, 30, roles.make("evolver", evolver, client=client))
    # wood in hand and no table yet: the strategy must chain through placing one
    world = CRAFTER.from_params(params_mod.validate({}).env.model_dump(), 0)
    world.env.player.inventory["wood"] = 5
    agent = agent_mod.DiveAgent(world, agent_mod.Knowledge.of(dynamics["verified"]), ["make_wood_pickaxe"], True, 0,
                                expert_config(goal="all"), roles.make("evolver", evolver, client=client))
    assert agent.evolver.strategy(agent, "make_wood_pickaxe")[-1] == "make_wood_pickaxe"
    assert reads.violations == []


@pytest.mark.parametrize("name", ["random", "greedy", "greedy_goal", "naive", "saycan", "inner_monologue"])
def test_ltlcrits_actors_do_not_read_data_yaml(reads, stub, tmp_path, name):
    from regula.ltlcrit.model import CrafterModel
    from regula.ltlcrit.rollout import rollout
    from stage_configs import rollout_config
    model = CrafterModel()
    client = _client(stub, tmp_path) if roles.uses_llm("actor", name) else None
    actor = roles.make("actor", name, client=client, history=6)
    actor.reset(4)
    # under the hard laws (the shield's, read by this test): greedy_goal plans from their refusals
    rollout(actor, model.hard_laws(), 4, model, rollout_config(max_skills=8, max_steps=300))
    assert reads.violations == []



@pytest.mark.parametrize("condition", [c for c in agent_mod.CONDITIONS if c != "expert"])
def test_every_non_expert_dive_condition_plays_without_reading_data_yaml(reads, episode, stub, tmp_path, condition):
    """Table 1's and Table 3's agents (the H† facts are handed to the agent: building them is
    scoring's read, not the agent's)."""
    banks = build([episode])
    found = StatisticalDiscoverer().discover(banks)
    verified = [c.dynamic for c in Verifier().verify(found, banks).verified]
    dynamics = {"verified": verified, "discovered": [c.dynamic for c in found], "human": sorted(ground_truth()),
                "manual": agent_mod.manual_dynamics()}
    client = _client(stub, tmp_path) if condition in agent_mod.LLM_CONDITIONS else None
    world = CRAFTER.from_params(params_mod.validate({}).env.model_dump(), 5)
    ep = agent_mod.play(world, condition, dynamics, ["collect_wood", "place_table", "make_wood_pickaxe"], 5, 400, 12,
                        roles.make("evolver", "symbolic"), client=client)
    assert ep["summary"]["condition"] == condition and ep["summary"]["skills"] >= 1
    assert reads.violations == []


def _step(state, skill, success=True, cause=None, reason="", delta=None, t=0):
    return {"type": "step", "t": t, "by": "actor", "props_before": sorted(state), "skill": skill, "success": success,
            "reason": reason, "cause": cause, "props_after": sorted(state), "inventory": dict(delta or {}),
            "inventory_delta": dict(delta or {}), "unlocked": [], "refused": [], "conflict": 0}


def test_the_critics_read_the_hard_laws_through_their_interface_only(reads, stub, tmp_path):
    """Both critics and the gate on evidence with a missing tool, a missing resource and a
    step that changed what the agent holds: every rule they read goes through `hard_facts`."""
    from regula.ltlcrit.critic import Evidence
    from regula.ltlcrit.gate import gate
    from regula.ltlcrit.model import CrafterModel
    model = CrafterModel()
    steps = [_step({"stone_on_map"}, "collect_stone", False, {"kind": "missing", "item": "wood_pickaxe", "have": 0,
                                                             "need": 1}, "missing wood_pickaxe", t=0),
             _step({"tree_on_map", "has_wood"}, "place_table", False, {"kind": "missing", "item": "wood", "have": 1,
                                                                      "need": 2}, "missing wood", t=1),
             _step({"tree_on_map"}, "collect_wood", delta={"wood": 1}, t=2)]
    # no hard laws in force, so the failures' laws are new (the hard laws state them)
    ev = Evidence(model, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": steps}], [], [])
    for name in ("symbolic", "openai"):
        critic = roles.make("critic", name, client=_client(stub, tmp_path) if name == "openai" else None)
        out = critic.propose(ev)
        gate(out, ev, 0, name)
        if name == "symbolic":
            assert {"G(!has_wood_pickaxe -> !collect_stone)", "G(!has_2_wood -> !place_table)"} <= \
                {p.formula for p in out.proposals}
    assert reads.violations == []


def test_the_critics_interface_is_the_only_way_in(reads):
    """A direct read from the critic is caught; the interface is fine for the critic and
    caught for an actor."""
    from regula.ltlcrit import actors, critic
    direct = "def read():\n    return CRAFTER.rules.tools\n"
    interface = "def read():\n    return hard_facts.tools()\n"
    _run_as(critic, direct)
    scope = {"hard_facts": hard_facts}
    exec(compile(interface, critic.__file__, "exec"), scope)
    assert scope["read"]() == tuple(CRAFTER.rules._target.tools)
    exec(compile(interface, actors.__file__, "exec"), scope)
    scope["read"]()
    assert reads.violations == ["ltlcrit/critic.py:2 read reads rules.tools",
                                "ltlcrit/actors.py:2 read reads rules.tools through ltlcrit/hard_facts.py"]


def test_the_critics_reads_are_declared():
    """Every read the interface offers is named in RULE_READS with what it reads and why; the
    hard laws themselves come with the evidence."""
    functions = {n for n, f in vars(hard_facts).items()
                 if inspect.isfunction(f) and f.__module__ == hard_facts.__name__ and not n.startswith("_")}
    assert functions == set(hard_facts.RULE_READS) - set(hard_facts.HANDED_IN)
    assert set(hard_facts.HANDED_IN) <= set(hard_facts.RULE_READS) and all(hard_facts.RULE_READS.values())
