"""The roles registry: every role's backends, one way to build them, each satisfying its role's
Protocol (the LLM ones built with a client on the local stub server)."""
import subprocess
import sys

import pytest

from regula import roles
from regula.errors import RegulaError, UnknownNameError
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer

BACKENDS = {
    "actor": ["greedy", "greedy_goal", "inner_monologue", "naive", "random", "saycan"],
    "alphabet": ["openai", "similarity"],
    "corrector": ["openai", "rules"],
    "critic": ["openai", "symbolic"],
    "discoverer": ["openai", "statistical"],
    "evolver": ["openai", "symbolic"],
    "feedback": ["openai", "rules"],
    "teacher": ["openai", "rules"],
}
LLM_BACKENDS = {("actor", "naive"), ("alphabet", "openai"), ("actor", "saycan"), ("actor", "inner_monologue"), ("critic", "openai"),
                ("corrector", "openai"), ("discoverer", "openai"), ("evolver", "openai"), ("feedback", "openai"), ("teacher", "openai")}
# What a stage of each role may hand its backends; each takes the ones its constructor names.
DEPS = {
    "actor": {"history": 6},
    "alphabet": {"threshold": 0.3},
    "corrector": {},
    "critic": {},
    "discoverer": {"samples": 4, "seed": 0, "log": print},
    "evolver": {},
    "feedback": {"samples": 1},
    "teacher": {"goal": "make_wood_pickaxe", "description": "make a wood pickaxe"},
}


def every_backend():
    return [(role, name) for role in sorted(BACKENDS) for name in BACKENDS[role]]


def test_every_role_and_its_backends():
    assert {role: roles.names(role) for role in roles.PROTOCOLS} == BACKENDS
    assert set(roles.modules()) == set(roles.PROTOCOLS)
    assert {(r, n) for r, n in every_backend() if roles.uses_llm(r, n)} == LLM_BACKENDS


def test_names_are_complete_without_importing_the_systems_first():
    code = ("import sys; from regula import roles; "
            "assert not [m for m in sys.modules if m.startswith(('regula.ltlcrit', 'regula.dive', 'regula.automata'))]; "
            "print(roles.names('critic'), roles.names('discoverer'), roles.names('teacher'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "['openai', 'symbolic'] ['openai', 'statistical'] ['openai', 'rules']"


@pytest.mark.parametrize("role,name", sorted(set(every_backend()) - LLM_BACKENDS))
def test_a_non_llm_backend_plays_its_role(role, name):
    backend = roles.make(role, name, client=None, **DEPS[role])
    assert isinstance(backend, roles.PROTOCOLS[role])
    assert type(backend).uses_llm is False


@pytest.fixture(scope="module")
def server():
    with StubLLMServer() as s:
        yield s


@pytest.fixture
def client(server, tmp_path):
    cfg = LLMConfig(base_url=server.base_url, model=server.model,
                    cache_dir=str(tmp_path / "cache"), timeout=5.0)
    return LLMClient(cfg, "roles", Accounting())


@pytest.mark.parametrize("role,name", sorted(LLM_BACKENDS))
def test_an_llm_backend_built_with_a_client_plays_its_role(role, name, client):
    backend = roles.make(role, name, client=client, **DEPS[role])
    assert isinstance(backend, roles.PROTOCOLS[role])
    assert type(backend).uses_llm is True and backend.client is client


def test_llm_backends_built_by_make_answer_over_http(server, client):
    server.script, before = ["Yes.", "No."], server.calls
    step = {"obs": "You see a tree.", "skill": "collect_wood"}
    assert roles.make("feedback", "openai", client=client, samples=1).predict(step) is True
    assert roles.make("teacher", "openai", client=client, description="make wood").member(("collect_wood",)) is False
    assert server.calls == before + 2


def test_make_hands_each_backend_the_deps_it_names():
    d = roles.make("discoverer", "statistical", client=None, samples=3, seed=7, log=print)
    assert (d.samples, d.seed) == (3, 7)
    t = roles.make("teacher", "rules", goal="make_wood_pickaxe", noise=0.1, kind="persistent", seed=2,
                   description="unused by this backend")
    assert (t.goal, t.noise, t.kind, t.seed) == ("make_wood_pickaxe", 0.1, "persistent", 2)
    with pytest.raises(TypeError, match=r"^no critic backend takes clinet$"):
        roles.make("critic", "symbolic", clinet=None)


def test_unknown_names_and_a_missing_client_are_one_line_each():
    with pytest.raises(UnknownNameError) as err:
        roles.make("critic", "x")
    assert str(err.value) == "unknown backend for role 'critic' 'x'; valid backend for role 'critic's: openai, symbolic"
    with pytest.raises(UnknownNameError) as err:
        roles.names("oracle")
    assert str(err.value) == ("unknown role 'oracle'; valid roles: actor, alphabet, corrector, critic, discoverer, evolver, "
                              "feedback, teacher")
    with pytest.raises(UnknownNameError) as err:
        roles.make("corrector", "gpt")
    assert str(err.value) == "unknown backend for role 'corrector' 'gpt'; valid backend for role 'corrector's: openai, rules"
    with pytest.raises(RegulaError) as err:
        roles.make("critic", "openai", client=None)
    assert str(err.value) == "critic 'openai' asks an LLM; configure `llm` in params.yaml"


class EchoCorrector:
    """How a system adds a backend: a class in a module its package's ROLES lists, registered by name."""

    name = "echo"
    uses_llm = False

    def correct(self, task, history, action, feedback):
        return action


def test_registering_a_backend(monkeypatch):
    monkeypatch.setitem(roles._BACKENDS, "corrector", {})
    with pytest.raises(TypeError, match=r"add its module to its package's ROLES\['corrector'\] \(or regula.roles.SHARED\)"):
        roles.register("corrector", "echo")(EchoCorrector)
    monkeypatch.setattr(roles, "_MODULES", {**roles.modules(), "corrector": (__name__,)})
    roles.register("corrector", "echo")(EchoCorrector)
    assert roles.names("corrector") == ["echo"]
    assert isinstance(roles.make("corrector", "echo"), roles.Corrector)
    with pytest.raises(TypeError, match="is named 'echo'"):
        roles.register("corrector", "other")(EchoCorrector)
    with pytest.raises(TypeError, match="must declare `uses_llm`"):
        roles.register("corrector", "bare")(type("Bare", (), {"__module__": __name__}))
    with pytest.raises(TypeError, match="the name is taken by"):
        roles.register("corrector", "echo")(type("EchoCorrector2", (EchoCorrector,), {"__module__": __name__}))
    with pytest.raises(UnknownNameError, match="^unknown role 'oracle'"):
        roles.register("oracle", "x")


def test_each_system_declares_its_own_backends_and_the_registry_names_none_of_their_modules():
    """A system registers into the roles registry: one line of SYSTEMS names its package, whose
    ROLES lists modules of that package only; the registry imports no system and names none of
    their modules (its docs aside)."""
    import ast
    import importlib
    from pathlib import Path
    tree = ast.parse(Path(roles.__file__).read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    named = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and id(n) not in docs]
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names] + [
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    for package in roles.SYSTEMS:
        declared = importlib.import_module(package).ROLES
        assert declared and all(m.startswith(package + ".") for mods in declared.values() for m in mods)
        assert not [m for m in imported if m == package or m.startswith(package + ".")], package
        assert not [s for s in named if s.startswith(package + ".")], package
    assert roles.modules("critic") == ("regula.ltlcrit.critic", "regula.ltlcrit.llm_critic")
    assert roles.modules("teacher") == roles.SHARED["teacher"]
