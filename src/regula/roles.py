"""Roles: the parts of a system a backend plays (teacher, alphabet, actor, critic, discoverer,
evolver, feedback predictor, corrector), each one small Protocol, and one registry of their backends.

A backend registers itself where it is defined, the LLM one (`openai`) beside the non-LLM
stand-ins, and declares whether it asks an LLM:

    @roles.register("critic", "symbolic")
    class SymbolicCritic:
        name = "symbolic"
        uses_llm = False

        def propose(self, evidence): ...

A stage chooses in one way, by the name params give:

    client = make_client(...) if roles.uses_llm("critic", name) else None
    critic = roles.make("critic", name, client=client)

`make` hands a backend the deps its constructor names (a stage passes what any backend of
the role may need: `client`, budgets, seeds), refuses a dep no backend of the role takes (a
typo), and refuses an LLM backend without a client.

`modules(role)` says which modules define a role's backends: the shared parts' (`SHARED`) and
each registered system's (`SYSTEMS`: a package declaring `ROLES`, role -> modules, in its
__init__.py, so this registry names no system's modules); they are imported on first use of
the role, so `names(role)` is complete whatever the caller imported (as `regula.envs` does
with its adapters). This module imports no system: the types in the Protocols are named for
readers. The params schema keeps literal tuples of these names (each system's in its
`params` module, which must not import the system's code); a test checks they equal
`names(role)`.
"""
from __future__ import annotations

import importlib
import inspect
from typing import Callable, Protocol, Sequence, runtime_checkable

from regula.errors import RegulaError, UnknownNameError

# The Protocols' annotations name the systems' types (DiveAgent, Banks, Candidate, Task, Choice,
# View, CriticOutput, Evidence) for readers only: this registry imports no system.


# -- the roles -------------------------------------------------------------------------------------

@runtime_checkable
class Teacher(Protocol):
    """CEDAR's membership oracle: does a word (a tuple of symbols) belong to the language?
    `sample` indexes repeated askings of one word (an LLM's cached samples, a noisy teacher's
    fresh draws). Backends: `rules` (Crafter's data.yaml, with a set noise rate), `openai`."""

    def member(self, word: tuple, sample: int = 0) -> bool: ...


@runtime_checkable
class Actor(Protocol):
    """LTLCrit's actor: proposes the next high-level action; when the shield refuses it, the
    reason goes into `view.feedback` and it is asked again, at last `choose_allowed` among the
    actions the shield allows; `observe` hands it what the environment said about the action
    taken. `regula.ltlcrit.actors.Actor` is the base class the built-in actors share."""

    name: str

    def reset(self, seed: int) -> None: ...

    def choose(self, view: View) -> Choice: ...

    def choose_allowed(self, view: View) -> Choice: ...

    def observe(self, text: str) -> None: ...


@runtime_checkable
class Critic(Protocol):
    """LTLCrit's critic: reads trajectories, laws and the shield's conflicts, proposes laws
    `G(phi_s -> X phi_a)` and removals. What is kept is decided by `ltlcrit.gate`, not here."""

    name: str

    def propose(self, evidence: Evidence) -> CriticOutput: ...


@runtime_checkable
class Discoverer(Protocol):
    """DiVE's discoverer: world-dynamics candidates from the sampled experiences of the banks
    (`step`: the discovery step, which seeds the sampling)."""

    name: str

    def discover(self, banks: Banks, step: int = 0) -> list[Candidate]: ...


@runtime_checkable
class Evolver(Protocol):
    """DiVE's evolver: a strategy (skills, first step first) toward `skill` from the agent's
    dynamics and situation; None when there is none."""

    name: str

    def strategy(self, agent: DiveAgent, skill: str) -> list[str] | None: ...


@runtime_checkable
class FeedbackPredictor(Protocol):
    """E2CL's feedback model, as a probe: will the recorded step's skill succeed?"""

    name: str

    def predict(self, step: dict) -> bool: ...


@runtime_checkable
class Corrector(Protocol):
    """E2CL's corrector in teacher-free exploration: given the task, the steps so far, a step
    that failed and the environment's feedback on it, propose the step to take instead (the
    paper's a_c, from GPT-4o), or None. `cause` (the failure's structured cause) and `scene`
    (the scene graph) are for rule-grounded stand-ins; an LLM backend reads the text only.
    Backends: `rules` (a stand-in)."""

    def correct(self, task: Task, history: Sequence[str], action: str, feedback: str,
                cause: dict | None = None, scene: dict | None = None) -> str | None: ...


@runtime_checkable
class AlphabetChooser(Protocol):
    """CEDAR's verb choice for a task's sub-alphabet: among the actions of Σ_global (scored
    against the task), the verbs the task needs; the retrieved nouns are context."""

    name: str

    def choose(self, task: str, verbs: list[Scored], nouns: list[Scored]) -> tuple[str, ...]: ...


PROTOCOLS: dict[str, type] = {"actor": Actor, "alphabet": AlphabetChooser, "corrector": Corrector, "critic": Critic,
                              "discoverer": Discoverer, "evolver": Evolver, "feedback": FeedbackPredictor, "teacher": Teacher}

# Where backends are defined, imported on a role's first use. The shared parts' (not one
# system's) are listed here; each system declares its own in its package (`ROLES` in its
# __init__.py, role -> modules) and is registered by one line of `SYSTEMS`.
SHARED: dict[str, tuple[str, ...]] = {
    "alphabet": ("regula.rag.verbs",),
    "feedback": ("regula.feedback",),
    "teacher": ("regula.automata.teachers",),
}
SYSTEMS = (
    "regula.ltlcrit",
    "regula.dive",
    "regula.e2cl",
)

_BACKENDS: dict[str, dict[str, Callable]] = {role: {} for role in PROTOCOLS}
_LOADED: set[str] = set()
_MODULES: dict[str, tuple[str, ...]] | None = None


def modules(role: str | None = None):
    """The modules defining a role's backends (None: every role's, role -> modules)."""
    global _MODULES
    if _MODULES is None:
        found = {r: list(SHARED.get(r, ())) for r in PROTOCOLS}
        for package in SYSTEMS:
            for r, mods in importlib.import_module(package).ROLES.items():
                if r not in PROTOCOLS:
                    raise TypeError(f"{package}.ROLES names an unknown role {r!r}")
                found[r] += mods
        _MODULES = {r: tuple(m) for r, m in found.items()}
    if role is None:
        return dict(_MODULES)
    if role not in PROTOCOLS:
        raise UnknownNameError("role", role, PROTOCOLS)
    return _MODULES[role]


# -- the registry ----------------------------------------------------------------------------------

def register(role: str, name: str):
    """Decorator on a backend's class (or factory), in a module `modules(role)` lists."""
    if role not in PROTOCOLS:
        raise UnknownNameError("role", role, PROTOCOLS)

    def deco(factory: Callable) -> Callable:
        what = f"{role} backend {name!r} ({factory.__module__}.{factory.__qualname__})"
        if not isinstance(getattr(factory, "uses_llm", None), bool):
            raise TypeError(f"{what} must declare `uses_llm` (True or False)")
        if getattr(factory, "name", name) != name:
            raise TypeError(f"{what} is named {factory.name!r}")
        if factory.__module__ not in modules(role):
            raise TypeError(f"{what}: add its module to its package's ROLES[{role!r}] (or regula.roles.SHARED)")
        old = _BACKENDS[role].get(name)
        if old is not None and (old.__module__, old.__qualname__) != (factory.__module__, factory.__qualname__):
            raise TypeError(f"{what}: the name is taken by {old.__module__}.{old.__qualname__}")
        _BACKENDS[role][name] = factory
        return factory
    return deco


def _backends(role: str) -> dict[str, Callable]:
    if role not in PROTOCOLS:
        raise UnknownNameError("role", role, PROTOCOLS)
    if role not in _LOADED:
        for module in modules(role):
            importlib.import_module(module)
        _LOADED.add(role)
    return _BACKENDS[role]


def _get(role: str, name: str) -> Callable:
    backends = _backends(role)
    if name not in backends:
        raise UnknownNameError(f"backend for role '{role}'", name, backends)
    return backends[name]


def names(role: str) -> list[str]:
    """The backends of a role, sorted."""
    return sorted(_backends(role))


def uses_llm(role: str, name: str) -> bool:
    """Whether that backend asks an LLM (then `make` needs a `client`)."""
    return _get(role, name).uses_llm


def _takes(factory: Callable) -> set[str] | None:
    """The keyword arguments a factory takes (None: any)."""
    params = inspect.signature(factory).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def make(role: str, name: str, /, **deps):
    """The backend `name` of `role`, built from the deps its constructor names."""
    factory = _get(role, name)
    if factory.uses_llm and deps.get("client") is None:
        raise RegulaError(f"{role} '{name}' asks an LLM; configure `llm` in params.yaml")
    takes = [_takes(f) for f in _backends(role).values()]
    if None not in takes:
        unknown = sorted(set(deps) - set().union(*takes))
        if unknown:
            raise TypeError(f"no {role} backend takes {', '.join(unknown)}")
    own = _takes(factory)
    return factory(**(deps if own is None else {k: v for k, v in deps.items() if k in own}))


__all__ = ["Actor", "AlphabetChooser", "Corrector", "Critic", "Discoverer", "Evolver", "FeedbackPredictor", "PROTOCOLS",
           "SHARED", "SYSTEMS", "Teacher", "make", "modules", "names", "register", "uses_llm"]
