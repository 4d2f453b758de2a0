"""params.yaml: every knob a stage reads. `Params` below is its schema: types, ranges, allowed
names and defaults (the defaults equal the repo's params.yaml; a test checks). The shared
sections are here; each system's live in its package (`regula.<system>.params`), joined in by
one line of `SYSTEMS`; the value rules they all use are `regula.schema`'s.

A key that is not in the schema is a mistake (a typo, usually), reported with the keys that
do exist; `env.symbols.thresholds` alone has data for keys (item names, checked by the Crafter
adapter, which the schema runs). Values are strict: an int stays an int, a float field takes an
int and makes it a float, nothing is parsed from a string. Any mistake raises `ParamsError`
with one line naming the dotted key and what is allowed. The file itself (`read`) must exist
and be UTF-8 YAML holding one mapping, each key a string given once (PyYAML would keep the
last of two silently), and (`load`) give every key of the schema: the schema's defaults fill in
for code that builds params (`validate`), never silently for a file.

Allowed names are listed beside each section (FEEDBACK_BACKENDS ... below, a system's in its
module); Crafter's goals and item names are read from the adapter (`regula.envs`) when a value
is first checked.

`load` and `validate` return the validated model (`Params`): stages read
`params.demos.episodes`, typed, and dump a section (`params.env.model_dump()`) only where a
plain value must leave them: an episode's inputs, a cache key (`fingerprint`), a JSON record.
"""
from __future__ import annotations

import copy
import hashlib
import importlib
import json
import os
import re
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import AfterValidator, BaseModel, Field, ValidationError, create_model, model_validator

from .dive import FACT_CONDITIONS
from .errors import ParamsError
from .schema import (NOISE_KINDS, TEACHERS, AtLeast0, AtLeast1, Count0, Count1, Distinct, Listed, Name, Noise, Odd, Rate,
                     Section, Seed, checked_by, error, goals, one_of, within)

# The names params may give for the shared parts; each equals the registry of the code that
# defines it (a test checks). The systems' own live in their sections (`SYSTEMS` below).
FEEDBACK_BACKENDS = ("openai", "rules")  # regula.roles.names("feedback")
LOGIC_BACKENDS = ("auto", "native", "spot")  # regula.logic.monitor.BACKENDS
LLM_MODES = ("live", "refresh", "replay")  # regula.llm.client.MODES
LLM_STRUCTURED = ("auto", "json_schema", "json_object", "text")  # regula.llm.client.STRUCTURED


def _thresholds(thresholds: dict) -> None:
    from regula import envs
    envs.get("crafter").SymbolConfig(thresholds=thresholds)  # item names and levels: the adapter's own check


def _minihack_tasks() -> tuple:
    from regula import envs
    return envs.get("minihack").tasks  # the adapter's tasks.yaml (no NetHack import)


def _one_line(value: str) -> str:
    if not value.strip() or "\n" in value:
        raise error(f"must be one line of text, got {value!r}")
    return value


# The systems' params sections, one line each: a module in the system's package whose
# `SECTIONS` (name -> section) join the schema after the shared ones, in this order, and whose
# `LLM_RUN` is the default overlay of its stage's `_llm` twin.
SYSTEMS = (
    "regula.ltlcrit.params",
    "regula.dive.params",
    "regula.cedar.params",
    "regula.e2cl.params",
)
_SYSTEM_MODULES = tuple(importlib.import_module(m) for m in SYSTEMS)
SYSTEM_SECTIONS: dict[str, type[Section]] = {n: m for mod in _SYSTEM_MODULES for n, m in mod.SECTIONS.items()}


# -- the schema ----------------------------------------------------------------------------------

class Symbols(Section):
    # has_<item> / has_<n>_<item> propositions: item -> levels
    thresholds: Annotated[dict[str, list[int]], checked_by(_thresholds)] = Field(default_factory=lambda: {
        "wood": [1, 2, 3, 4], "stone": [1, 2, 4], "coal": [1], "iron": [1], "diamond": [1], "sapling": [1]})
    low: Annotated[int, within(0, 9)] = 3  # <stat>_low when health/food/drink/energy (0..9) <= low
    night_below: Rate = 0.35  # is_night when daylight < this


class Skills(Section):
    max_steps: AtLeast1 = 300  # primitive steps one skill may take
    explore_steps: AtLeast1 = 40  # primitive steps of one `explore`


class Env(Section):
    length: AtLeast1 = 10000  # Crafter's episode length
    symbols: Symbols = Field(default_factory=Symbols)
    skills: Skills = Field(default_factory=Skills)


class Demos(Section):
    episodes: Count1 = 12
    # An achievement, or `all`: every achievement, so the demonstrations show every action once.
    goal: Annotated[str, one_of(goals)] = "all"
    max_steps: AtLeast1 = 10000  # a full Crafter episode; `all` ends sooner once nothing is left
    max_skills: AtLeast1 = 3000
    workers: AtLeast1 = 1


def public_url(url: str) -> str:
    """`url` without the credentials it may carry (`user:pass@`): what may be stored or printed."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def endpoint_of(url: str) -> str:
    """An endpoint's name in cache keys and reports: `host[:port]` of its URL, no credentials."""
    return urlsplit(public_url(url)).netloc


def _base_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 0) >= 0
    except ValueError:  # a port that is not a number, an unclosed [IPv6 address
        ok = False
    if not ok:
        raise error(f"must be an http:// or https:// URL with a host, such as http://127.0.0.1:8000/v1, "
                     f"got {_shown(url)!r}")
    if "@" in parts.netloc:  # params values are written to dvc.lock, Prefect's records and git
        raise error(f"must not hold credentials (user:password@), got {_shown(url)!r}; put the key in the "
                     "environment variable that llm.api_key_env names")
    return url


def _shown(url: str) -> str:
    try:
        return public_url(url)
    except ValueError:
        return "(a URL that does not parse)"


def _variable_name(name: str) -> str:
    # The value is never echoed: a key pasted here by mistake must not reach a log.
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise error("must be the name of the environment variable holding the key (letters, digits and _, "
                     "such as OPENAI_API_KEY), not the key itself (the value is not shown)")
    return name


class LLM(Section):
    """What `regula.llm.LLMConfig` is made of (it adds the client's methods)."""

    # any OpenAI-compatible endpoint; the default is `make llm-local`'s (regula.llm.local_server)
    base_url: Annotated[str, AfterValidator(_base_url)] = "http://127.0.0.1:8080/v1"
    model: Name = "smollm2-135m-instruct"
    # names the endpoint in cache keys and provenance; "" = base_url's host[:port]
    endpoint_id: str = ""
    api_key_env: Annotated[str, AfterValidator(_variable_name)] = "OPENAI_API_KEY"  # the key is never written
    temperature: Annotated[float, within(0, 2)] = 0.0  # the OpenAI API's range
    max_tokens: AtLeast1 = 64
    timeout: Annotated[float, Field(gt=0)] = 60.0  # seconds one HTTP request may wait for its answer
    # the openai SDK's retries on 429, 5xx and failed connections (it honours Retry-After)
    retries: AtLeast0 = 4
    # retries after a time-out, fewer than `retries`: an endpoint silent for `timeout` seldom answers
    # a retry, and each costs `timeout` more (a stalled endpoint stops a run in timeout x (1 + this))
    timeout_retries: AtLeast0 = 0
    concurrency: AtLeast1 = 1  # requests in flight at once (a local llama.cpp server answers one at a time)
    mode: Annotated[str, one_of(LLM_MODES)] = "live"  # live | replay | refresh
    cache_dir: Name = "data/cache/llm"
    reasks: AtLeast0 = 2  # re-asks after an answer that does not parse
    # how structured answers are asked for; auto: probe the endpoint once per process
    structured: Annotated[str, one_of(LLM_STRUCTURED)] = "auto"
    seed: Seed = 0  # sent with each request: sample i of a question asks with seed + i

    @property
    def endpoint(self) -> str:
        return self.endpoint_id or endpoint_of(self.base_url)


class Feedback(Section):
    backend: Annotated[str, one_of(FEEDBACK_BACKENDS)] = "rules"  # rules | openai
    max_queries: AtLeast1 = 200
    samples: Odd = 1  # askings per step, majority vote


class Membership(Section):  # the teacher role's membership questions on Crafter skills
    backend: Annotated[str, one_of(TEACHERS)] = "rules"  # rules (data.yaml, wrong at `noise`) | openai
    noise: Noise = 0.1  # the rules teacher's error rate (persistent)
    goals: Annotated[list[Name], Listed] = Field(default_factory=lambda: [
        "collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe"])
    words: Count1 = 8  # words per goal, half of them accomplishing it
    samples: Odd = 1  # askings per word, majority vote
    formula: bool = True  # also the teacher as a formula (asked once per goal), scored on the same words
    formula_tokens: AtLeast1 = 512  # LLM answer length for the formula (its clauses)
    formula_refine: bool = True  # then one counterexample per goal (the first word it got wrong): 1 more call


class Logic(Section):
    # auto (Spot when importable, else native) | native | spot; whether Spot imports is
    # known at run time only (regula.logic.resolve_backend)
    backend: Annotated[str, one_of(LOGIC_BACKENDS)] = "auto"


def _size(value: list) -> list:
    if len(value) != 2:
        raise error(f"must be [states, letters], got {value}")
    return value


class AutomataEval(Section):  # learning random target DFAs under teacher noise (regula vs AALpy's L* and KV)
    sizes: Annotated[list[Annotated[list[AtLeast1], AfterValidator(_size)]], Listed] = Field(
        default_factory=lambda: [[30, 10], [50, 10]])  # [states, letters] per target size
    noises: Annotated[list[Noise], Listed] = Field(default_factory=lambda: [0.0, 0.1, 0.2])
    kinds: Annotated[list[Annotated[str, one_of(NOISE_KINDS)]], Listed] = Field(
        default_factory=lambda: ["persistent", "independent"])
    targets: Count1 = 20
    first_target: Seed = 1000  # the generator's seeds first_target, +1, ...: 0-9 tuned the witness check
    oracles: Annotated[list[Annotated[str, one_of(("exact", "batch"))]], Listed] = Field(default_factory=lambda: ["exact"])
    votes: Odd = 5  # askings per word under independent noise
    max_queries: AtLeast1 = 200000
    max_rounds: AtLeast1 = 1000  # equivalence rounds per run
    witnesses: AtLeast0 = 21  # regula's witness check (automata.learning): words per answer, 0 off
    per_round: AtLeast1 = 20  # walks per round of the batch oracle


class SeedRange(Section):
    start: Seed
    count: Count1

    def seeds(self) -> range:
        return range(self.start, self.start + self.count)


class MiniHackShield(Section):
    """The stage minihack_shield: LTLCrit's shield with the hand-written laws on MiniHack. The
    seeded random actor plays `episodes` episodes per task (the first of `minihack.eval`'s seeds)
    without the shield and under the laws, `max_skills` skills at most each; the scripted expert
    plays the same seeds under the laws (what the laws would refuse a correct agent)."""

    tasks: Annotated[list[Annotated[str, one_of(_minihack_tasks)]], Listed] = Field(
        default_factory=lambda: ["lava_cross", "wand_of_death"])
    episodes: Count1 = 50
    max_skills: AtLeast1 = 60  # skills per random actor's episode


class MiniHackDive(Section):
    """The stage minihack_dive: DiVE on MiniHack (Tables 2 and 4). Each task's demonstration gives
    the hierarchy and the discovered facts, `explore` exploration episodes (dev seeds: the expert
    taking a random skill with probability `epsilon`) the Verifier's experience; every condition
    then plays `seeds`, held-out seeds inside `minihack.eval`, `max_skills` skills at most."""

    conditions: Annotated[list[Annotated[str, one_of(FACT_CONDITIONS)]], Listed] = Field(
        default_factory=lambda: list(FACT_CONDITIONS))
    seeds: SeedRange = Field(default_factory=lambda: SeedRange(start=110, count=20))
    explore: SeedRange = Field(default_factory=lambda: SeedRange(start=1, count=10))
    epsilon: Rate = 0.3
    max_skills: AtLeast1 = 100


class MiniHackCedar(Section):
    """The stage minihack_cedar: one CEDAR skill DFA per task (`regula.cedar.fact_skill`). Σ: the
    task's demonstration's skills; the teacher: words simulated over the facts DiVE verified from
    the demonstration and `minihack.dive.explore`'s episodes, wrong on `noise` of the words
    (persistent; `seed` picks which); the world's equivalence rounds play the hypothesis on
    `worlds` (dev seeds), at most `max_rounds` rounds and `max_queries` teacher askings; the DFA is
    then played on `minihack.dive.seeds` beside copying the demonstration, `max_skills` letters
    a rollout."""

    tasks: Annotated[list[Annotated[str, one_of(_minihack_tasks)]], Distinct] = Field(
        default_factory=list)  # empty: every task of minihack.tasks
    noise: Noise = 0.1
    seed: Seed = 0
    worlds: SeedRange = Field(default_factory=lambda: SeedRange(start=1, count=10))
    max_skills: AtLeast1 = 40
    max_rounds: AtLeast1 = 30
    max_queries: AtLeast1 = 5000


class MiniHack(Section):
    """MiniHack (issue 38, docs/minihack.md): the stage minihack_demos records the scripted
    expert's demonstrations (one per task and seed; the DiVE paper gives one per task) on seeds
    apart from `eval`, the held-out seeds the tables report on; minihack_shield measures the
    shield (`shield`) on those seeds."""

    tasks: Annotated[list[Annotated[str, one_of(_minihack_tasks)]], Listed] = Field(
        default_factory=lambda: ["lava_cross", "wand_of_death", "quest", "lava_freeze"])
    demo_seeds: Annotated[list[Seed], Listed] = Field(default_factory=lambda: [0])
    max_skills: AtLeast1 = 200  # high-level steps per demonstration
    eval: SeedRange = Field(default_factory=lambda: SeedRange(start=100, count=50))
    shield: MiniHackShield = Field(default_factory=MiniHackShield)
    dive: MiniHackDive = Field(default_factory=MiniHackDive)
    cedar: MiniHackCedar = Field(default_factory=MiniHackCedar)

    @model_validator(mode="after")
    def _apart(self) -> "MiniHack":
        ev = self.eval.seeds()
        held = sorted(s for s in self.demo_seeds if s in ev)
        if held:
            raise error(f"minihack.demo_seeds {held} lie in minihack.eval [{ev.start}, {ev.stop}): a demonstration "
                        "must come from a seed the tables never report on")
        dive, explore = self.dive.seeds.seeds(), self.dive.explore.seeds()
        if dive.start < ev.start or dive.stop > ev.stop:
            raise error(f"minihack.dive.seeds [{dive.start}, {dive.stop}) lie outside minihack.eval [{ev.start}, "
                        f"{ev.stop}): DiVE is measured on the held-out seeds only")
        seen = sorted(set(explore) & set(ev))
        if seen:
            raise error(f"minihack.dive.explore seeds {seen} lie in minihack.eval: the Verifier's exploration must "
                        "come from dev seeds, never the held-out ones")
        missing = [t for t in self.cedar.tasks if t not in self.tasks]
        if missing:
            raise error(f"minihack.cedar.tasks {missing} are not in minihack.tasks: a skill is learned from the "
                        "task's demonstration, recorded only for minihack.tasks")
        seen = sorted(set(self.cedar.worlds.seeds()) & set(ev))
        if seen:
            raise error(f"minihack.cedar.worlds {seen} lie in minihack.eval: the equivalence rounds must play dev "
                        "seeds, never the held-out ones")
        if self.shield.episodes > self.eval.count:
            raise error(f"minihack.shield.episodes {self.shield.episodes} is more than minihack.eval's {self.eval.count} "
                        "seeds: the shield is measured on the held-out seeds only")
        return self


class Seeds(Section):
    """Worlds the evaluations play: `dev` to develop and tune on, `eval` for the numbers reported,
    never played while developing. Neither may hold a demonstration's or an exploration's world."""

    dev: SeedRange = Field(default_factory=lambda: SeedRange(start=100, count=40))
    eval: SeedRange = Field(default_factory=lambda: SeedRange(start=10000, count=40))

    @model_validator(mode="after")
    def _disjoint(self) -> "Seeds":
        dev, ev = self.dev.seeds(), self.eval.seeds()
        if set(dev) & set(ev):
            raise error(f"seeds.eval [{ev.start}, {ev.stop}) overlaps seeds.dev [{dev.start}, {dev.stop}): "
                         "the reported worlds must be ones never played while developing")
        return self


class _SharedRuns(Section):
    feedback: dict = Field(default_factory=lambda: {"backend": "openai", "max_queries": 40})
    membership: dict = Field(default_factory=lambda: {"backend": "openai"})


def _overlay(value: dict):
    return Field(default_factory=lambda: copy.deepcopy(value))


LLMRuns = create_model(
    "LLMRuns", __base__=_SharedRuns,
    __doc__="""The `<stage>_llm` twins (regula.stages): each key names a params section, and its mapping
    is laid over that section (`laid_over`), so it takes the same keys; `validate` checks the
    result as the section. `cedar` is the twin cedar_skills_llm's (the stage reads `cedar`).""",
    **{name: (dict, _overlay(run)) for mod in _SYSTEM_MODULES for name, run in mod.LLM_RUN.items()})


RUNNERS = ("dask", "default")  # flows.flow_for's task runners


def _scheduler(address: str | None) -> str | None:
    if address is not None and not re.fullmatch(r"(tcp|tls)://[^\s/:]+:\d+", address):
        raise error(f"must be a Dask scheduler's address such as tcp://10.0.0.5:8786 (what `dask scheduler` "
                     f"prints), or null for a local cluster, got {address!r}")
    return address


class Runner(Section):
    """Where a stage's units of work run (flows.flow_for), never what they compute: no stage lists
    it in dvc.yaml and no cache key or episode header hashes it, so changing it reruns nothing."""

    # default: the stage's own (a process pool of `demos.workers`, else one thread) | dask: prefect-dask
    kind: Annotated[str, one_of(RUNNERS)] = "default"
    workers: AtLeast1 = 2  # dask without `address`: a local cluster of this many one-thread processes
    address: Annotated[str | None, AfterValidator(_scheduler)] = None  # an existing scheduler, tcp://host:8786


class SpecItem(Section):  # one specification of the specs stage
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+$")]  # its files' name
    instruction: Annotated[str, AfterValidator(_one_line)]  # what the person asks for, in words
    letters: Annotated[list[Name], Listed]  # its alphabet: Crafter skills and events (`regula info`)
    teacher: Annotated[list[Name], Listed]  # the formula teacher's LTLf clauses (its one answer)
    meant: Annotated[list[Name], Listed]  # what the person means, as LTLf clauses: the learned DFA is compared with it


def _default_specs() -> list[SpecItem]:
    """Crafter specifications whose answers are recorded in data/specs/answers/ (a stand-in's)."""
    return [SpecItem(name="shelter_at_night", instruction="after nightfall, shelter before eating",
                     letters=["is_night", "shelter", "eat_cow"], teacher=["F shelter"],
                     meant=["F shelter", "G (is_night -> (!eat_cow U shelter))"]),
            SpecItem(name="pickaxe_first", instruction="make a wood pickaxe before collecting stone",
                     letters=["make_wood_pickaxe", "collect_stone"], teacher=["F make_wood_pickaxe"],
                     meant=["(!collect_stone U make_wood_pickaxe) | G !collect_stone"]),
            SpecItem(name="drink_before_sleep", instruction="drink before sleeping", letters=["collect_drink", "sleep"],
                     teacher=["F collect_drink"], meant=["(!sleep U collect_drink) | G !sleep"]),
            SpecItem(name="sleep_at_night",
                     instruction="sleep at night: no mining after nightfall before sleeping walled in",
                     letters=["is_night", "shelter", "collect_wood", "collect_stone", "collect_coal", "collect_iron",
                              "collect_diamond"], teacher=["G (is_night -> (!collect_diamond U shelter))"],
                     meant=[f"G (is_night -> (!({_MINING}) U shelter))"]),
            # the teacher forgets stone, coal and the first day; the person the rest (`not_is_night`: daylight)
            SpecItem(name="mine_at_night",
                     instruction="dig minerals only at night: no stone, coal, iron or diamond collected by day",
                     letters=["is_night", "not_is_night", "collect_stone", "collect_coal", "collect_iron",
                              "collect_diamond"], teacher=[_by_night_only("collect_iron | collect_diamond")],
                     meant=[f"(!({_MINERALS}) U is_night) | G !({_MINERALS})", _by_night_only(_MINERALS)]),
            # Fig. 6's "stay in this area" (in_area: a study's `area` round the start); the teacher says "get there"
            SpecItem(name="stay_in_area", instruction="explore but stay in this area: never out of the square round "
                     "the start", letters=["in_area", "not_in_area"], teacher=["F in_area"], meant=["G !not_in_area"])]


_MINING = "collect_wood | collect_stone | collect_coal | collect_iron | collect_diamond"
_MINERALS = "collect_stone | collect_coal | collect_iron | collect_diamond"


def _by_night_only(letters: str) -> str:
    """From daylight on, none of `letters` until nightfall (or none at all)."""
    return f"G (not_is_night -> ((!({letters}) U is_night) | G !({letters})))"


STUDY_AGENTS = ("skill", "collect")  # regula.specs.study: the goal's skill again and again | explore and collect


class SpecStudy(Section):  # one specification study (seed 000 §4.1, Figs. 4, 5): an agent with and without a spec
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+$")]  # its files' name
    spec: Name  # the specification (a `specs.items` name): its learned DFA shields the agent
    # skill: the goal's skill of CEDAR's library played again and again (Fig. 4); collect: explore and collect
    # whatever collectable is in view, the environment's skills (Fig. 5): no goal
    agent: Annotated[str, one_of(STUDY_AGENTS)] = "skill"
    goal: Name | None = None  # agent skill: the skill of CEDAR's library (data/cedar_skills) it plays
    # strict: collections on the way (paths dug) are letters too, and, shielded, paths dig only while every
    # collection the spec names is allowed and a skill stops when an event the spec reads changes under it
    strict: bool = False
    # area: the agent's area (Fig. 6), a square of this half-width round its start; the event in_area holds in it
    area: Count0 = 0
    trials: Count1 = 5  # worlds: the first `trials` of seeds.eval, each played by both agents
    days: Count1 = 3  # in-game days a trial lasts (Crafter's day: 300 steps)
    bin: Count1 = 50  # steps per time bin of the plot and the CSV


def _default_studies() -> list[SpecStudy]:
    return [SpecStudy(name="diamonds_sleep_at_night", goal="collect_diamond", spec="sleep_at_night"),  # Fig. 4
            SpecStudy(name="explore_mine_at_night", agent="collect", spec="mine_at_night", strict=True),  # Fig. 5
            SpecStudy(name="explore_stay_in_area", agent="collect", spec="stay_in_area", strict=True, area=10)]  # Fig. 6


class Specs(Section):  # stage specs: specifications learned with the person's recorded answers (regula.specs)
    answers: Name = "data/specs/answers"  # <name>.eq.jsonl per spec: the person's answers, replayed
    items: list[SpecItem] = Field(default_factory=_default_specs)
    studies: list[SpecStudy] = Field(default_factory=_default_studies)

    @model_validator(mode="after")
    def _studied(self) -> "Specs":
        names = [i.name for i in self.items]
        for study in self.studies:
            if study.spec not in names:
                raise error(f"study {study.name}: spec {study.spec!r} is not among specs.items ({', '.join(names)})")
            if study.area and study.agent != "collect":
                raise error(f"study {study.name}: an area (Fig. 6) is the collect agent's, not agent {study.agent}'s")
            if (study.goal is None) != (study.agent == "collect"):
                raise error(f"study {study.name}: agent {study.agent} "
                            + ("needs a goal (a skill of CEDAR's library)" if study.goal is None else
                               f"takes no goal (got {study.goal!r}): it collects whatever it sees"))
        return self


class Report(Section):
    title: Annotated[str, AfterValidator(_one_line)] = "regula report"  # the report's heading


def _section_field(model: type[Section]):
    return (model, Field(default_factory=model))


# The shared sections, the systems' (`SYSTEMS`), then the twins' overlays and the report's.
Params = create_model(
    "Params", __base__=Section,
    seed=(Seed, 0),  # first episode seed; episode i plays seed + i
    seeds=_section_field(Seeds), env=_section_field(Env), demos=_section_field(Demos),
    minihack=_section_field(MiniHack), llm=_section_field(LLM),
    feedback=_section_field(Feedback), membership=_section_field(Membership), logic=_section_field(Logic),
    automata_eval=_section_field(AutomataEval), specs=_section_field(Specs),
    **{name: _section_field(model) for name, model in SYSTEM_SECTIONS.items()},
    llm_runs=_section_field(LLMRuns), report=_section_field(Report), runner=_section_field(Runner))


# -- one line per mistake ------------------------------------------------------------------------

_TYPES = {"int_type": "int", "float_type": "float", "string_type": "str", "bool_type": "bool",
          "list_type": "list"}
_BOUNDS = {"greater_than_equal": (">=", "ge"), "greater_than": (">", "gt"),
           "less_than_equal": ("<=", "le"), "less_than": ("<", "lt")}


def _dotted(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _section(model: type[BaseModel], path: tuple) -> type[BaseModel]:
    for key in path:
        model = model.model_fields[key].annotation
    return model


def describe(exc: ValidationError, model: type[BaseModel] = Params, prefix: tuple = ()) -> str:
    """pydantic's first error as one line: `params: <dotted key> <what is allowed>`."""
    err = exc.errors()[0]
    loc, kind, value, ctx = err["loc"], err["type"], err["input"], err.get("ctx") or {}
    where = _dotted(prefix + tuple(loc))
    if kind == "extra_forbidden":
        parent = loc[:-1]
        scope = f" under '{_dotted(prefix + parent)}'" if prefix + parent else ""
        return (f"params: unknown key '{where}'; known keys{scope}: "
                f"{', '.join(sorted(_section(model, parent).model_fields))}")
    if kind in ("model_type", "dict_type"):
        return f"params: {where or 'the top level'} must be a mapping, got {type(value).__name__}"
    if kind == "missing":
        return f"params: {where} is required"
    if kind in _TYPES:
        return f"params: {where} must be {_TYPES[kind]}, got {value!r}"
    if kind in _BOUNDS:
        op, key = _BOUNDS[kind]
        return f"params: {where} must be {op} {ctx[key]}, got {value}"
    message = ctx["message"] if kind == "regula" else err["msg"]
    if message.startswith(f"{where}.") or message.startswith(f"{where}:"):
        return f"params: {message}"  # a check elsewhere that names the key itself
    return f"params: {where}{' ' if message.startswith('must ') else ': '}{message}"


def laid_over(section: dict, overlay: dict) -> dict:
    """`overlay` over `section`: its keys replace the section's, a mapping key by key
    (`tasks: {trials: 0}` keeps the section's other `tasks` keys)."""
    out = dict(section)
    for key, value in overlay.items():
        out[key] = (laid_over(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict)
                    else value)
    return out


def _given(checked: dict, overlay: dict) -> dict:
    """The checked values of the keys `overlay` gives (a mapping's, key by key)."""
    return {key: _given(checked[key], value) if isinstance(value, dict) and isinstance(checked[key], dict)
            else checked[key] for key, value in overlay.items()}


def validate(raw: dict | None) -> Params:
    """The params with defaults filled in, as the typed model (`Params`); ParamsError on any mistake."""
    try:
        model = Params.model_validate({} if raw is None else raw)
    except ValidationError as exc:
        raise ParamsError(describe(exc)) from None
    params = model.model_dump()
    _worlds(params)
    # each twin's section, as its stage will read it (`regula.stages.params_for`); a key of
    # `llm_runs` is the section's name (`cedar` for the stage cedar_skills)
    for name, overlay in params["llm_runs"].items():
        section = Params.model_fields[name].annotation
        try:
            checked = section.model_validate(laid_over(params[name], overlay)).model_dump()
        except ValidationError as exc:
            raise ParamsError(describe(exc, section, ("llm_runs", name))) from None
        params["llm_runs"][name] = _given(checked, overlay)
        setattr(model.llm_runs, name, params["llm_runs"][name])
        _worlds({**params, name: checked}, name)
    _no_secrets(params, os.environ.get(params["llm"]["api_key_env"], ""))
    return model


def twin_section(params: Params, name: str) -> Section:
    """Section `name` with its twin's overlay (`llm_runs.<name>`) laid over it, as a model."""
    section = getattr(params, name)
    return type(section).model_validate(laid_over(section.model_dump(), getattr(params.llm_runs, name)))


def _span(r: range) -> str:
    return f"[{r.start}, {r.stop})"


def _worlds(params: dict, twin: str = "") -> None:
    """Each evaluation plays at most its range's worlds, and no world is both evaluated on and
    played by the demonstrations or a system's training (its section's `TRAINED`: DiVE's
    exploration, CEDAR's equivalence worlds). With `twin`, the twin's section alone
    (`params[twin]` being its overlaid section)."""
    ranges = {name: range(r["start"], r["start"] + r["count"]) for name, r in params["seeds"].items()}
    trained = {"the demonstrations' worlds (seed, demos.episodes)":
               range(params["seed"], params["seed"] + params["demos"]["episodes"])}
    for section, model in SYSTEM_SECTIONS.items():
        for what, (first, count) in model.TRAINED.items():
            start = params[section][first]
            trained[f"{what} ({section}.{first}, {section}.{count})"] = range(start, start + params[section][count])
    for name, r in ranges.items():
        for what, t in trained.items():
            if set(r) & set(t):
                raise ParamsError(f"params: seeds.{name} {_span(r)} overlaps {what} {_span(t)}")
    for section, model in SYSTEM_SECTIONS.items():
        key = model.EVALUATED
        if key is None or (twin and section != twin):
            continue
        worlds = params[section]["worlds"]
        if params[section][key] > len(ranges[worlds]):
            where = f"llm_runs.{twin}" if twin else section
            raise ParamsError(f"params: {where}.{key} must be <= seeds.{worlds}.count "
                              f"({len(ranges[worlds])}), got {params[section][key]}")
    if not twin:  # the specification studies play seeds.eval's first worlds
        for study in params["specs"]["studies"]:
            if study["trials"] > len(ranges["eval"]):
                raise ParamsError(f"params: specs.studies {study['name']}: trials must be <= seeds.eval.count "
                                  f"({len(ranges['eval'])}), got {study['trials']}")


# An OpenAI-style key (sk-..., sk-proj-...): never a params value.
_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")


def _no_secrets(params: dict, key: str, path: tuple = ()) -> None:
    """Params values are written to dvc.lock, Prefect's records and git: a key pasted into any of
    them (the value of the variable llm.api_key_env names, or anything shaped like a key) stops
    the run before anything is written. The value is never shown."""
    for name, value in params.items():
        where = path + (name,)
        if isinstance(value, dict):
            _no_secrets(value, key, where)
            continue
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and (_KEY_SHAPE.search(text) or (key and len(key) >= 8 and key in text)):
                raise ParamsError(f"params: {_dotted(where)} holds what looks like an API key (not shown); "
                                  "a key belongs in the environment variable that llm.api_key_env names, "
                                  "never in params")


def typed(dumped: dict) -> Params:
    """The model again of params that `validate` checked and a boundary dumped (a Prefect flow's
    parameter): the values are already checked, so the twins' overlays are not laid over again."""
    return Params.model_validate(dumped)


def defaults() -> dict:
    """The schema's defaults as plain values (what params.yaml holds); a stage gets `validate`'s model."""
    return Params().model_dump()


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, except that every key is a string given once per mapping. PyYAML
    would keep the last of two equal keys silently (an edit to the first would do nothing), and
    read `yes:` or `1:` as a bool or an int where params only has names."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`, flattened by PyYAML
                continue
            key, line = self.construct_object(key_node, deep=True), key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise ParamsError(f"params: {self.name}:{line}: key {key!r} is not a name (quote it)")
            if key in seen:
                raise ParamsError(f"params: {self.name}:{line}: key '{key}' given twice (first on line {seen[key]})")
            seen[key] = line
        return super().construct_mapping(node, deep)


def _parse(text: str, path: Path):
    loader = _Loader(text)
    loader.name = str(path)  # named in the marks of PyYAML's errors
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read(path: str | Path) -> dict:
    """The mapping a params file holds, not yet validated; ParamsError (one line naming the
    file, and the line where it helps) when it is missing, unreadable or not a YAML mapping."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ParamsError(f"params: {path} not found") from None
    except IsADirectoryError:
        raise ParamsError(f"params: {path} is a folder, not a params file") from None
    except OSError as exc:
        raise ParamsError(f"params: cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ParamsError(f"params: {path} is not UTF-8 text (byte {exc.start})") from None
    try:
        raw = _parse(text, path)
    except yaml.reader.ReaderError as exc:
        raise ParamsError(f"params: {path} is not valid YAML (character {exc.character:#x} at offset "
                          f"{exc.position} is not allowed)") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise ParamsError(f"params: {path}:{mark.line + 1}: not valid YAML ({exc.problem or exc.context})") from None
    if raw is None:
        raise ParamsError(f"params: {path} is empty; {_EVERY_KEY}")
    if not isinstance(raw, dict):
        raise ParamsError(f"params: {path} must hold a mapping of sections, got {type(raw).__name__}")
    return raw


_EVERY_KEY = "a params file gives every setting: start from a copy of the project's params.yaml"


def lacking(raw: dict, model: type[BaseModel] = Params, path: tuple = ()) -> list[str]:
    """The dotted keys of the schema that `raw` does not give; a section given with none of its
    keys is named once. A value that is a mapping of data (`env.symbols.thresholds`, a twin's
    overlay) is one key."""
    out = []
    for name, field in model.model_fields.items():
        where = path + (name,)
        if name not in raw:
            out.append(_dotted(where))
        elif isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel) \
                and isinstance(raw[name], dict):
            out += lacking(raw[name], field.annotation, where)
    return out


def load(path: str | Path = "params.yaml", overrides: dict | None = None) -> Params:
    """Read and validate a params file (`read`); `overrides` maps dotted keys to values (None:
    keep the file's), as the command line's options do. The file must give every key of the
    schema: params.yaml is the one source of every setting, so a file that lacks some would run
    on defaults nobody wrote down (the schema's defaults fill in for code that builds params,
    `validate`, never for a file). A mistake in what it gives is reported first."""
    raw = read(path)
    missing = lacking(raw)
    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        node, (*parents, last) = raw, dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                break  # the file's own mistake is reported
        else:
            node[last] = value
    params = validate(raw)
    if missing:
        raise ParamsError(f"params: {path} lacks {', '.join(missing)}; {_EVERY_KEY}")
    return params


def _plain(value):
    # a params model (a section, or all of them) hashes as its dumped values, never as its repr
    return value.model_dump() if isinstance(value, BaseModel) else str(value)


def fingerprint(*parts) -> str:
    """A short content hash of JSON-able values (what a cached result depends on)."""
    blob = json.dumps(parts, sort_keys=True, default=_plain).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
