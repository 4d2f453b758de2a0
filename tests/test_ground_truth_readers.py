"""Who reads data.yaml's facts: scoring, the H† fact file, the scripted expert (and its reflex,
which every agent uses for upkeep) and LTLCrit's hand-written safety laws may; DiVE's
discoverers, Verifier, banks and evolvers, the DiVE agent and LTLCrit's non-expert actors may
not, not even through a scoring helper.

During each test the adapter's rules object (data.yaml) is a recording proxy and its fact
accessors (shortest plans, hard laws, ...) record their calls. At each access the stack is
walked outwards: the access is fine when the first frame of regula met is the game itself
(the world executing skills, the scripted expert), and a violation when it is a forbidden
module. Frames of the accessors and of the scoring helpers are walked through. The stub
server's answers stand in for the LLM: what they read is the model's knowledge, not the
system's.
"""
import sys
from pathlib import Path

import pytest

from regula import envs, params as params_mod, roles
from regula.dive import agent as agent_mod
from regula.dive.banks import build
from regula.dive.discover import StatisticalDiscoverer
from regula.dive.dynamics import ground_truth, score
from regula.dive.explore import explore_episode, explore_inputs
from regula.dive.llm_discover import LLMDiscoverer
from regula.dive.verify import Verifier
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer

CRAFTER = envs.get("crafter")
SRC = Path(sys.modules["regula"].__file__).parent
GAME = {f"envs/crafter/{name}.py" for name in ("env", "world", "skills", "navigation", "memory", "symbols",
                                              "verbalizer", "shelter", "expert")}
# The stub server's answers play the LLM (in this process, on its own thread): what the model
# knows is not the system's reading.
MODEL = {"llm/stub_answers.py", "llm/stub_server.py"}
FORBIDDEN = {"dive/discover.py", "dive/llm_discover.py", "dive/verify.py", "dive/banks.py", "dive/agent.py",
             "ltlcrit/actors.py"}
ACCESSORS = ("shortest_plan", "shortest_plans", "accomplishes", "hard_laws", "precondition_laws", "affordance_laws")


def _where(frame) -> str | None:
    try:
        return Path(frame.f_code.co_filename).resolve().relative_to(SRC.resolve()).as_posix()
    except ValueError:
        return None


class Reads:
    """The forbidden reads seen: 'module:line function reads what'."""

    def __init__(self):
        self.violations: list[str] = []

    def check(self, what: str) -> None:
        frames, frame = [], sys._getframe(2)
        while frame is not None:
            frames.append((_where(frame), frame))
            frame = frame.f_back
        if any(where in MODEL for where, _ in frames):
            return
        for where, frame in frames:
            if where in GAME:
                return
            if where in FORBIDDEN:
                line = f"{where}:{frame.f_lineno} {frame.f_code.co_name} reads {what}"
                if line not in self.violations:
                    self.violations.append(line)
                return


class RulesProxy:
    def __init__(self, rules, reads: Reads):
        self._rules, self._reads = rules, reads

    def __getattr__(self, name):
        self._reads.check(f"rules.{name}")
        return getattr(self._rules, name)


@pytest.fixture
def reads(monkeypatch):
    r = Reads()
    monkeypatch.setattr(CRAFTER, "rules", RulesProxy(CRAFTER.rules, r))
    for name in ACCESSORS:
        method = getattr(CRAFTER, name)

        def recorded(*args, _method=method, _name=name, **kwargs):
            r.check(f"{_name}()")
            return _method(*args, **kwargs)
        monkeypatch.setattr(CRAFTER, name, recorded)
    return r


@pytest.fixture(scope="module")
def episode():
    """Experience to learn from: an exploration episode (the expert and random skills)."""
    env = params_mod.validate({})["env"]
    return explore_episode(explore_inputs(env, 1000, 0.3, 1500, 40))


@pytest.fixture
def stub():
    with StubLLMServer() as server:
        yield server


def _client(server, tmp_path) -> LLMClient:
    cfg = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "cache"), timeout=10.0,
                    max_tokens=1024)
    return LLMClient(cfg, "readers", Accounting())


def test_the_proxy_catches_a_forbidden_read_and_lets_the_game_and_scoring_read(reads, episode):
    """The test can fail: a read from a forbidden module is named with its line; the game's
    and scoring's reads are not."""
    from regula.dive import verify
    CRAFTER.from_params(params_mod.validate({})["env"], 0).run_skill("collect_wood")  # the game reads
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


def test_discoverers_and_verifier_learn_from_experience_only(reads, episode, stub, tmp_path):
    banks = build([episode])
    found = StatisticalDiscoverer(samples=8, seed=1).discover(banks, step=1)
    llm = LLMDiscoverer(_client(stub, tmp_path), samples=8, seed=1).discover(banks, step=1)
    assert found and {c.dynamic for c in llm} == {c.dynamic for c in found}
    verdicts = Verifier(samples=16, seed=1).verify(found + llm, banks, step=1)
    assert verdicts.verified
    assert reads.violations == []


@pytest.mark.parametrize("evolver", ["symbolic", "openai"])
def test_the_evolvers_and_the_dive_agent_do_not_read_data_yaml(reads, episode, stub, tmp_path, evolver):
    banks = build([episode])
    verified = Verifier().verify(StatisticalDiscoverer().discover(banks), banks).verified
    dynamics = {"verified": [c.dynamic for c in verified], "discovered": [c.dynamic for c in verified]}
    client = _client(stub, tmp_path) if roles.uses_llm("evolver", evolver) else None
    world = CRAFTER.from_params(params_mod.validate({})["env"], 3)
    agent_mod.play(world, "dive", dynamics, ["collect_wood", "place_table", "make_wood_pickaxe", "collect_stone"],
                   3, 600, 30, roles.make("evolver", evolver, client=client))
    # wood in hand and no table yet: the strategy must chain through placing one
    world = CRAFTER.from_params(params_mod.validate({})["env"], 0)
    world.env.player.inventory["wood"] = 5
    agent = agent_mod.DiveAgent(world, agent_mod.Knowledge.of(dynamics["verified"]), ["make_wood_pickaxe"], True, 0,
                                CRAFTER.ExpertConfig(goal="all"), roles.make("evolver", evolver, client=client))
    assert agent.evolver.strategy(agent, "make_wood_pickaxe")[-1] == "make_wood_pickaxe"
    assert reads.violations == []


@pytest.mark.parametrize("name", ["random", "greedy", "greedy_goal", "naive", "saycan", "inner_monologue"])
def test_ltlcrits_actors_do_not_read_data_yaml(reads, stub, tmp_path, name):
    from regula.ltlcrit.model import CrafterModel
    from regula.ltlcrit.rollout import RolloutConfig, rollout
    model = CrafterModel()
    client = _client(stub, tmp_path) if roles.uses_llm("actor", name) else None
    actor = roles.make("actor", name, client=client, history=6)
    actor.reset(4)
    # under the hard laws (the shield's, read by this test): greedy_goal plans from their refusals
    rollout(actor, model.hard_laws(), 4, model, RolloutConfig(max_skills=8, max_steps=300))
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
    world = CRAFTER.from_params(params_mod.validate({})["env"], 5)
    ep = agent_mod.play(world, condition, dynamics, ["collect_wood", "place_table", "make_wood_pickaxe"], 5, 400, 12,
                        roles.make("evolver", "symbolic"), client=client)
    assert ep["summary"]["condition"] == condition and ep["summary"]["skills"] >= 1
    assert reads.violations == []
