"""params.yaml: every knob a stage reads. `Params` below is its schema: types, ranges, allowed
names and defaults, in one place (the defaults equal the repo's params.yaml; a test checks).

A key that is not in the schema is a mistake (a typo, usually), reported with the keys that
do exist; `env.symbols.thresholds` alone has data for keys (item names, checked by the Crafter
adapter, which the schema runs). Values are strict: an int stays an int, a float field takes an
int and makes it a float, nothing is parsed from a string. Any mistake raises `ParamsError`
with one line naming the dotted key and what is allowed. The file itself (`read`) must exist
and be UTF-8 YAML holding one mapping, each key a string given once (PyYAML would keep the
last of two silently); an empty file is a mistake too (`{}` takes every default).

Allowed names are listed here (see ACTORS ... below); Crafter's goals and item names are read
from the adapter (`regula.envs`) when a value is first checked.

`load` and `validate` return a plain dict (the model dumped): stages read
`params["demos"]["episodes"]`; the dict is what `fingerprint` (cache keys) sees.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Callable, Iterable
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from .errors import ParamsError, RegulaError


# -- value rules ---------------------------------------------------------------------------------

def _error(message: str) -> PydanticCustomError:
    return PydanticCustomError("regula", "{message}", {"message": message})


def one_of(names: Iterable[str] | Callable[[], Iterable[str]]):
    """A name among `names` (or `names()`, read when a value is checked)."""
    def check(value: str) -> str:
        allowed = sorted(names() if callable(names) else names)
        if value not in allowed:
            raise _error(f"{value!r} is not one of {', '.join(allowed)}")
        return value
    return AfterValidator(check)


def within(low: float, high: float):
    def check(value: float) -> float:
        if not low <= value <= high:
            raise _error(f"must be within {low}..{high}, got {value}")
        return value
    return AfterValidator(check)


def _odd(value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise _error(f"must be odd and >= 1, got {value}")
    return value


def checked_by(check: Callable[[object], object]):
    """Run a check that lives with the code relying on it; its RegulaError becomes the error."""
    def run(value):
        try:
            check(value)
        except RegulaError as exc:
            raise _error(str(exc)) from None
        return value
    return AfterValidator(run)


# The names params may give. Each equals the registry of the code that defines it (a test
# checks), but lives here: every stage imports this module, and DVC's deps follow imports, so
# reading them from the systems' packages (which `regula.roles.names` imports) would make
# every stage depend on every system.
ACTORS = ("greedy", "greedy_goal", "inner_monologue", "naive", "random", "saycan")  # regula.roles.names("actor")
CRITICS = ("openai", "symbolic")  # regula.roles.names("critic")
FEEDBACK_BACKENDS = ("openai", "rules")  # regula.roles.names("feedback")
LOGIC_BACKENDS = ("auto", "native", "spot")  # regula.logic.monitor.BACKENDS
LLM_MODES = ("live", "refresh", "replay")  # regula.llm.client.MODES
LLM_STRUCTURED = ("auto", "json_schema", "json_object", "text")  # regula.llm.client.STRUCTURED
NOISE_KINDS = ("independent", "persistent")  # regula.automata.teachers.NOISE_KINDS
DISCOVERERS = ("openai", "statistical")  # regula.roles.names("discoverer")
EVOLVERS = ("openai", "symbolic")  # regula.roles.names("evolver")
TEACHERS = ("openai", "rules")  # regula.roles.names("teacher")
CORRECTORS = ("openai", "rules")  # regula.roles.names("corrector")
MODEL_PRESETS = ("base", "small", "tiny")  # regula.e2cl.model.PRESETS
DEVICES = ("cpu", "cuda")  # torch devices a model trains on (cuda: not bitwise reproducible)
VERB_CHOOSERS = ("openai", "similarity")  # regula.roles.names("alphabet")
CONDITIONS = ("cot", "cot_dynamics", "dive", "dive_no_survival", "expert", "human_dynamics",  # regula.dive.CONDITIONS,
              "human_dynamics_evolved", "manual_dynamics", "manual_dynamics_no_evolver", "no_dynamics", "no_evolver",
              "no_verifier", "no_verifier_no_evolver", "random")  # sorted
FALLBACKS = ("ranked", "uniform")  # regula.ltlcrit.rollout.FALLBACKS
EFFICIENCY = ("restrict", "plan")  # regula.ltlcrit.critic.EFFICIENCY


def _distinct(values: list) -> list:
    """No entry twice."""
    twice = sorted({str(v) for v in values if values.count(v) > 1})
    if twice:
        raise _error(f"lists {', '.join(twice)} more than once")
    return values


def _listed(values: list) -> list:
    """A list a stage iterates over: at least one entry, none twice."""
    if not values:
        raise _error("must list at least one value, got []")
    return _distinct(values)


Listed = AfterValidator(_listed)
Distinct = AfterValidator(_distinct)


def _noise(value: float) -> float:
    if not 0 <= value < 0.5:  # a teacher wrong half the time or more carries no signal
        raise _error(f"must be in [0, 0.5), got {value}")
    return value


def _achievements():
    from regula import envs
    return envs.get("crafter").achievement_names()


def _goals():
    from regula import envs
    return [*_achievements(), envs.get("crafter").all_goals]


def _thresholds(thresholds: dict) -> None:
    from regula import envs
    envs.get("crafter").SymbolConfig(thresholds=thresholds)  # item names and levels: the adapter's own check


def _one_line(value: str) -> str:
    if not value.strip() or "\n" in value:
        raise _error(f"must be one line of text, got {value!r}")
    return value


AtLeast0 = Annotated[int, Field(ge=0)]
AtLeast1 = Annotated[int, Field(ge=1)]
Seed = Annotated[int, Field(ge=0)]  # also an episode file's name (episode_<seed>.jsonl)
Odd = Annotated[int, AfterValidator(_odd)]  # a majority vote never ties
Rate = Annotated[float, within(0, 1)]


# -- the schema ----------------------------------------------------------------------------------

class Section(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


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
    episodes: AtLeast1 = 12
    # An achievement, or `all`: every achievement, so the demonstrations show every action once.
    goal: Annotated[str, one_of(_goals)] = "all"
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
        raise _error(f"must be an http:// or https:// URL with a host, such as http://127.0.0.1:8000/v1, "
                     f"got {_shown(url)!r}")
    if "@" in parts.netloc:  # params values are written to dvc.lock, Prefect's records and git
        raise _error(f"must not hold credentials (user:password@), got {_shown(url)!r}; put the key in the "
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
        raise _error("must be the name of the environment variable holding the key (letters, digits and _, "
                     "such as OPENAI_API_KEY), not the key itself (the value is not shown)")
    return name


class LLM(Section):
    """What `regula.llm.LLMConfig` is made of (it adds the client's methods)."""

    # any OpenAI-compatible endpoint; the default is `make llm-local`'s (regula.llm.local_server)
    base_url: Annotated[str, AfterValidator(_base_url)] = "http://127.0.0.1:8080/v1"
    model: Annotated[str, Field(min_length=1)] = "smollm2-135m-instruct"
    # names the endpoint in cache keys and provenance; "" = base_url's host[:port]
    endpoint_id: str = ""
    api_key_env: Annotated[str, AfterValidator(_variable_name)] = "OPENAI_API_KEY"  # the key is never written
    temperature: Annotated[float, Field(ge=0)] = 0.0
    max_tokens: AtLeast1 = 64
    timeout: Annotated[float, Field(gt=0)] = 60.0  # seconds per HTTP request
    # the openai SDK's retries on 429, 5xx, connection errors and time-outs (it honours Retry-After)
    retries: AtLeast0 = 4
    concurrency: AtLeast1 = 1  # requests in flight at once (a local llama.cpp server answers one at a time)
    mode: Annotated[str, one_of(LLM_MODES)] = "live"  # live | replay | refresh
    cache_dir: Annotated[str, Field(min_length=1)] = "data/cache/llm"
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
    noise: Annotated[float, AfterValidator(_noise)] = 0.1  # the rules teacher's error rate (persistent)
    goals: Annotated[list[Annotated[str, Field(min_length=1)]], Listed] = Field(default_factory=lambda: [
        "collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe"])
    words: AtLeast1 = 8  # words per goal, half of them accomplishing it
    samples: Odd = 1  # askings per word, majority vote


class Logic(Section):
    # auto (Spot when importable, else native) | native | spot; whether Spot imports is
    # known at run time only (regula.logic.resolve_backend)
    backend: Annotated[str, one_of(LOGIC_BACKENDS)] = "auto"


def _size(value: list) -> list:
    if len(value) != 2:
        raise _error(f"must be [states, letters], got {value}")
    return value


class AutomataEval(Section):  # learning random target DFAs under teacher noise (regula vs AALpy's L* and KV)
    sizes: Annotated[list[Annotated[list[AtLeast1], AfterValidator(_size)]], Listed] = Field(
        default_factory=lambda: [[10, 5], [20, 5], [30, 10], [50, 10]])  # [states, letters] per target size
    noises: Annotated[list[Annotated[float, AfterValidator(_noise)]], Listed] = Field(default_factory=lambda: [0.0, 0.1])
    kinds: Annotated[list[Annotated[str, one_of(NOISE_KINDS)]], Listed] = Field(default_factory=lambda: ["persistent"])
    targets: AtLeast1 = 20
    first_target: Seed = 1000  # the generator's seeds first_target, +1, ...: 0-9 tuned the witness check
    oracles: Annotated[list[Annotated[str, one_of(("exact", "batch"))]], Listed] = Field(default_factory=lambda: ["exact"])
    votes: Odd = 5  # askings per word under independent noise
    max_queries: AtLeast1 = 200000
    max_rounds: AtLeast1 = 1000  # equivalence rounds per run
    witnesses: AtLeast0 = 21  # regula's witness check (automata.learning): words per answer, 0 off
    per_round: AtLeast1 = 20  # walks per round of the batch oracle


class Rag(Section):  # CEDAR's sub-alphabets: nouns retrieved, verbs chosen (seed 000 §3.1, Appendix A.4)
    k: AtLeast1 = 20  # nouns (objects and events) retrieved per task (the paper keeps the top 20)
    lexical_weight: Rate = 0.2  # BM25's share of a symbol's score; the rest is the embedding cosine
    verbs: Annotated[str, one_of(VERB_CHOOSERS)] = "similarity"  # similarity (scores: a stand-in) | openai (the LLM)
    verb_threshold: Annotated[float, within(-1, 1)] = 0.2  # the stand-in's least score for a verb (the best always)
    expand_step: AtLeast1 = 8  # nouns a wider alphabet adds (with the next verb by score)


WORLDS = ("dev", "eval")


class SeedRange(Section):
    start: Seed
    count: AtLeast1

    def seeds(self) -> range:
        return range(self.start, self.start + self.count)


class Seeds(Section):
    """Worlds the evaluations play: `dev` to develop and tune on, `eval` for the numbers reported,
    never played while developing. Neither may hold a demonstration's or an exploration's world."""

    dev: SeedRange = Field(default_factory=lambda: SeedRange(start=100, count=40))
    eval: SeedRange = Field(default_factory=lambda: SeedRange(start=10000, count=40))

    @model_validator(mode="after")
    def _disjoint(self) -> "Seeds":
        dev, ev = self.dev.seeds(), self.eval.seeds()
        if set(dev) & set(ev):
            raise _error(f"seeds.eval [{ev.start}, {ev.stop}) overlaps seeds.dev [{dev.start}, {dev.stop}): "
                         "the reported worlds must be ones never played while developing")
        return self


class Ltlcrit(Section):  # shielded actors, a critic inducing laws from trajectories
    goal: Annotated[str, one_of(_achievements)] = "collect_diamond"  # the task: one achievement
    worlds: Annotated[str, one_of(WORLDS)] = "eval"  # the seeds.<worlds> range the actors and the expert play
    episodes: AtLeast1 = 40  # its first worlds (at most its count)
    actors: Annotated[list[Annotated[str, one_of(ACTORS)]], Listed] = Field(default_factory=lambda: ["random", "greedy"])
    critic: Annotated[str, one_of(CRITICS)] = "symbolic"
    # The symbolic critic's efficiency laws. restrict: block the actions the rollouts show wasted,
    # leaving the choice among the rest to the actor (the paper's critic) | plan: laws
    # `G(state -> action)` regressed from the goal through the hard laws, which together spell a
    # plan and leave the actor one action (an option, not the paper's)
    efficiency: Annotated[str, one_of(EFFICIENCY)] = "restrict"
    # Actors run again with the critic reading data/demos besides their rollouts: an ablation, not
    # in the paper (whose critic reads the actor's own trajectories only); []: none.
    demos_ablation: Annotated[list[Annotated[str, one_of(ACTORS)]], Distinct] = Field(
        default_factory=lambda: ["greedy"])
    hard_laws: bool = True  # shield with data.yaml's hard laws (SayCan's affordance filter)
    iterations: AtLeast0 = 5  # critic rounds at most
    patience: AtLeast1 = 2  # stop after this many rounds without a better success rate / fewer actions
    max_replans: AtLeast0 = 3  # refused proposals per decision, then `fallback` picks among the allowed
    # ranked: the actor's own ranking restricted to the allowed actions (the paper's actor keeps
    # choosing until its choice passes; this is its choice among what passes), a uniform draw
    # where it names none of them | uniform: a seeded uniform draw over the allowed actions
    fallback: Annotated[str, one_of(FALLBACKS)] = "ranked"
    max_skills: AtLeast1 = 150
    max_steps: AtLeast1 = 3000
    upkeep: bool = True  # the survival layer drinks, eats, sleeps and fights
    history: AtLeast0 = 6  # InnerMonologue: past steps kept in the prompt
    max_tokens: AtLeast1 = 1024  # LLM answer length for the actor and critic roles


class Dive(Section):  # DiVE: dynamics discovered from data/demos, verified, scored against data.yaml
    discoverer: Annotated[str, one_of(DISCOVERERS)] = "statistical"
    samples: AtLeast1 = 8  # successful transitions the Discoverer reads per action and step
    inject: Rate = 0.3  # wrong candidates added per discovered one
    verify_samples: AtLeast1 = 16  # fresh transitions the Verifier checks each candidate on
    chance: Rate = 0.05  # a requirement held this likely by chance has no evidence
    steps: AtLeast0 = 0  # discovery steps (step i reads the first i demonstrations); 0: one per demonstration
    explore_episodes: AtLeast0 = 12
    explore_seed: Seed = 1000
    epsilon: Rate = 0.3  # the explorer's share of random skills
    explore_max_steps: AtLeast1 = 3000
    explore_max_skills: AtLeast1 = 300
    evolver: Annotated[str, one_of(EVOLVERS)] = "symbolic"
    max_tokens: AtLeast1 = 512  # LLM answer length for the discoverer and evolver roles
    # the agents (regula.dive.agent's doc maps each to the paper's row); cot, cot_dynamics ask the LLM
    conditions: Annotated[list[Annotated[str, one_of(CONDITIONS)]], Listed] = Field(
        default_factory=lambda: ["dive", "no_evolver", "no_verifier", "no_verifier_no_evolver", "no_dynamics",
                                 "human_dynamics", "manual_dynamics", "manual_dynamics_no_evolver", "random",
                                 "expert", "human_dynamics_evolved", "dive_no_survival"])
    worlds: Annotated[str, one_of(WORLDS)] = "eval"  # the seeds.<worlds> range the agents play
    agent_episodes: AtLeast1 = 20  # its first worlds (at most its count)
    agent_max_steps: AtLeast1 = 10000
    agent_max_skills: AtLeast1 = 3000
    bootstrap: AtLeast1 = 1000  # resamples of the episodes for the pooled score's 95% interval (seeded by `seed`)
    score_groups: AtLeast1 = 4  # groups of consecutive worlds whose pooled scores give the score's mean ± std


class CedarTasks(Section):  # CEDAR's Table 2: tasks with and without the skill library
    tasks: Annotated[list[Annotated[str, Field(min_length=1)]], Listed] = Field(default_factory=lambda: [
        "make_wood_pickaxe", "make_stone_pickaxe", "make_iron_pickaxe", "collect_diamond", "make_stone_sword",
        "make_iron_sword"])
    trials: AtLeast0 = 5  # learning runs per task and condition (0: no Table 2), each on its own held-out world
    max_queries: AtLeast1 = 5000  # a trial's teacher askings per alphabet
    max_rounds: AtLeast1 = 50  # a trial's equivalence rounds per alphabet


CEDAR_DIGS = ("never", "stuck", "always")  # regula.cedar.rollout.DIGS


class Cedar(Section):  # CEDAR: skills as DFAs learned with a teacher's MQs and the world's EQs (seed 000)
    skills: Annotated[list[Annotated[str, Field(min_length=1)]], Listed] = Field(default_factory=lambda: [
        "collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe", "place_furnace",
        "collect_coal", "collect_iron", "make_iron_pickaxe", "collect_diamond"])  # achievements, learned in this order
    nouns: AtLeast1 = 10  # nouns RAG gives a skill's first Σ (rag.k: Table 4's); each widening adds rag.expand_step
    teacher: Annotated[str, one_of(TEACHERS)] = "rules"  # rules (data.yaml, wrong at `noise`: a stand-in) | openai
    noise: Annotated[float, AfterValidator(_noise)] = 0.1  # the rules teacher's error rate (persistent)
    explore_seed: Seed = 3000  # the equivalence oracle's worlds: explore_seed, +1, ... (training data)
    explore_worlds: AtLeast1 = 40
    rollouts: AtLeast1 = 8  # rollouts per equivalence round
    patience: AtLeast1 = 3  # rounds played before a hypothesis stands when no rollout reached the goal
    max_skills: AtLeast1 = 40  # letters a rollout tries
    max_calls: AtLeast1 = 120  # Crafter skills a rollout runs in all, the library skills' included
    upkeep: bool = True  # the survival layer between a rollout's letters (fight, drink, eat, sleep)
    dig: Annotated[str, one_of(CEDAR_DIGS)] = "always"  # rollouts' paths: never dig | stuck: where walking cannot
    dug_calls: bool = False  # digging: a dug item Σ has only as a call (`@collect_stone`) reads as that call
    call_held: bool = True  # a library call making a tool held, or placing a station seen, is done at once
    call_retry: bool = True  # a library call whose DFA accepted without its goal drops that edge and plans on
    seek: bool = True  # exploring for a letter's unseen target stops once it is seen (the expert's explore)
    forage: bool = True  # with upkeep: the survival layer eats sooner (a cow within 6 under food 8), readies at daylight 0.9
    arm: bool = True  # with upkeep: swords made at a table from wood and stone the survival layer gathers for them
    explore_tries: AtLeast0 = 3  # explores before a letter whose target was never seen counts as failed
    expansions: AtLeast0 = 2  # wider alphabets tried when the world shows Σ cannot do the skill
    widen_lacked: bool = True  # Σ widened also after the goal was reached, by the skills getting what failed
    # letters lacked and no letter of Σ gets (place_furnace's stone: RAG retrieves no collect_stone)
    letters: Annotated[str, one_of(("retrieved", "rules"))] = "rules"  # Σ: every retrieved letter | the
    # rules stand-in's pick among them (what the recipe needs; wrong on `noise` of the others), cedar/choose.py
    library: bool = True  # the skill manager: skills learned earlier callable as `@s`, and templates (same verb)
    template: Annotated[str, one_of(("description", "overlap", "none"))] = "description"  # the template among those
    # with the verb: closest description | most of the first Σ shared by its adapted letters (ties: description) | none
    adapt_calls: bool = False  # adapting a template, its plain letters the library holds as `@s` become `@s`
    max_rounds: AtLeast1 = 300  # equivalence rounds per alphabet
    max_queries: AtLeast1 = 50000  # teacher askings per alphabet
    witnesses: AtLeast0 = 0  # the learner's witness check (automata.learning): words per answer, 0 off
    worlds: Annotated[str, one_of(WORLDS)] = "eval"  # the seeds.<worlds> range the learned policies and the expert play
    episodes: AtLeast1 = 20  # its first worlds (at most its count)
    mutants: AtLeast1 = 10  # Table 5: wrong variants of each learned DFA (a transition added or removed)
    simulations: AtLeast0 = 110  # ... played on the `worlds` per skill, split over the variants (0: none)
    mutation_seed: Seed = 0
    max_tokens: AtLeast1 = 64  # LLM answer length for the teacher
    tasks: CedarTasks = Field(default_factory=CedarTasks)


class E2cl(Section):  # E2CL on VirtualHome's evolving graph (seed 002)
    # training seeds (mean ± std); [] trains nothing (the twin e2cl_llm: the prompting baseline alone)
    seeds: Annotated[list[Seed], Distinct] = Field(default_factory=lambda: [0, 1, 2])
    model: Annotated[str, one_of(MODEL_PRESETS)] = "tiny"  # the agent model's size, trained from scratch
    vocab_size: AtLeast1 = 2000  # its BPE tokenizer's, trained on D_p's texts
    epochs: AtLeast1 = 3  # the paper: 3
    batch_size: AtLeast1 = 30  # the paper: 30
    lr: Annotated[float, Field(gt=0)] = 0.001  # the paper fine-tunes at 1e-4; from scratch needs more
    pretune_samples: AtLeast1 = 1000  # D_p' (the paper: 1,000 samples, one epoch)
    pretune_epochs: AtLeast1 = 6  # the paper: 1; from scratch, 1 epoch gives an explorer with no valid line
    corrector: Annotated[str, one_of(CORRECTORS)] = "rules"  # teacher-free exploration's: rules (a stand-in) | openai
    max_steps: AtLeast1 = 20  # a plan's steps at most (exploration and evaluation)
    max_corrections: AtLeast1 = 1  # speculative inference's corrections per step (Algorithm 1: one)
    correction_cases: AtLeast1 = 100  # Fig. 4: failed steps whose corrections are judged, per split
    max_tokens: AtLeast1 = 64  # LLM answer length for the corrector
    train_programs: AtLeast0 = 0  # the split's first training programs used (0: all), for a quick run
    test_programs: AtLeast0 = 0  # likewise per test split
    prompting_programs: AtLeast0 = 0  # Table 1's prompting baseline: the LLM plans this many programs per test split
    # Fig. 3: BC and the method again at these sizes, per seed (their plans and records kept, not their weights)
    sizes: Annotated[list[Annotated[str, one_of(MODEL_PRESETS)]], Distinct] = Field(
        default_factory=lambda: ["small", "base"])
    device: Annotated[str, one_of(DEVICES)] = "cpu"  # where this run trains and plans: cpu | cuda


class LLMRuns(Section):
    """The `<stage>_llm` twins (regula.stages): each key names a params section, and its mapping
    is laid over that section (`laid_over`), so it takes the same keys; `validate` checks the
    result as the section. `cedar` is the twin cedar_skills_llm's (the stage reads `cedar`)."""

    feedback: dict = Field(default_factory=lambda: {"backend": "openai", "max_queries": 40})
    membership: dict = Field(default_factory=lambda: {"backend": "openai"})
    ltlcrit: dict = Field(default_factory=lambda: {
        "actors": ["random", "greedy", "naive", "saycan", "inner_monologue"], "critic": "openai",
        "demos_ablation": [], "episodes": 40, "iterations": 1, "max_replans": 0, "max_skills": 6,
        "max_tokens": 256})
    dive: dict = Field(default_factory=lambda: {
        "discoverer": "openai", "evolver": "openai", "steps": 2, "max_tokens": 256, "explore_episodes": 4,
        "conditions": ["dive", "cot", "cot_dynamics"], "agent_episodes": 20, "agent_max_skills": 12})
    cedar: dict = Field(default_factory=lambda: {
        "teacher": "openai", "skills": ["collect_wood", "place_table"], "max_queries": 150, "max_rounds": 20,
        "expansions": 1, "explore_worlds": 8, "rollouts": 4, "episodes": 10, "simulations": 0,
        "tasks": {"trials": 0}})
    e2cl: dict = Field(default_factory=lambda: {"seeds": [], "prompting_programs": 10, "max_tokens": 32})


RUNNERS = ("dask", "default")  # flows.flow_for's task runners


def _scheduler(address: str | None) -> str | None:
    if address is not None and not re.fullmatch(r"(tcp|tls)://[^\s/:]+:\d+", address):
        raise _error(f"must be a Dask scheduler's address such as tcp://10.0.0.5:8786 (what `dask scheduler` "
                     f"prints), or null for a local cluster, got {address!r}")
    return address


class Runner(Section):
    """Where a stage's units of work run (flows.flow_for), never what they compute: no stage lists
    it in dvc.yaml and no cache key or episode header hashes it, so changing it reruns nothing."""

    # default: the stage's own (a process pool of `demos.workers`, else one thread) | dask: prefect-dask
    kind: Annotated[str, one_of(RUNNERS)] = "default"
    workers: AtLeast1 = 2  # dask without `address`: a local cluster of this many one-thread processes
    address: Annotated[str | None, AfterValidator(_scheduler)] = None  # an existing scheduler, tcp://host:8786


class Report(Section):
    title: Annotated[str, AfterValidator(_one_line)] = "regula report"  # the report's heading


class Params(Section):
    seed: Seed = 0  # first episode seed; episode i plays seed + i
    seeds: Seeds = Field(default_factory=Seeds)
    env: Env = Field(default_factory=Env)
    demos: Demos = Field(default_factory=Demos)
    llm: LLM = Field(default_factory=LLM)
    feedback: Feedback = Field(default_factory=Feedback)
    membership: Membership = Field(default_factory=Membership)
    rag: Rag = Field(default_factory=Rag)
    logic: Logic = Field(default_factory=Logic)
    automata_eval: AutomataEval = Field(default_factory=AutomataEval)
    ltlcrit: Ltlcrit = Field(default_factory=Ltlcrit)
    dive: Dive = Field(default_factory=Dive)
    cedar: Cedar = Field(default_factory=Cedar)
    e2cl: E2cl = Field(default_factory=E2cl)
    llm_runs: LLMRuns = Field(default_factory=LLMRuns)
    report: Report = Field(default_factory=Report)
    runner: Runner = Field(default_factory=Runner)


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


def validate(raw: dict | None) -> dict:
    """The params with defaults filled in, as a plain dict; ParamsError on any mistake."""
    try:
        params = Params.model_validate({} if raw is None else raw).model_dump()
    except ValidationError as exc:
        raise ParamsError(describe(exc)) from None
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
        _worlds({**params, name: checked}, name)
    _no_secrets(params, os.environ.get(params["llm"]["api_key_env"], ""))
    return params


def _span(r: range) -> str:
    return f"[{r.start}, {r.stop})"


def _worlds(params: dict, twin: str = "") -> None:
    """Each evaluation plays at most its range's worlds, and no world is both evaluated on and
    played by the demonstrations or DiVE's exploration (their worlds are training data). With
    `twin`, the twin's section alone (`params[twin]` being its overlaid section)."""
    ranges = {name: range(r["start"], r["start"] + r["count"]) for name, r in params["seeds"].items()}
    trained = {"the demonstrations' worlds (seed, demos.episodes)":
               range(params["seed"], params["seed"] + params["demos"]["episodes"]),
               "DiVE's exploration worlds (dive.explore_seed, dive.explore_episodes)":
               range(params["dive"]["explore_seed"], params["dive"]["explore_seed"] + params["dive"]["explore_episodes"]),
               "CEDAR's equivalence worlds (cedar.explore_seed, cedar.explore_worlds)":
               range(params["cedar"]["explore_seed"], params["cedar"]["explore_seed"] + params["cedar"]["explore_worlds"])}
    for name, r in ranges.items():
        for what, t in trained.items():
            if set(r) & set(t):
                raise ParamsError(f"params: seeds.{name} {_span(r)} overlaps {what} {_span(t)}")
    for section, key in (("ltlcrit", "episodes"), ("dive", "agent_episodes"), ("cedar", "episodes")):
        if twin and section != twin:
            continue
        worlds = params[section]["worlds"]
        if params[section][key] > len(ranges[worlds]):
            where = f"llm_runs.{twin}" if twin else section
            raise ParamsError(f"params: {where}.{key} must be <= seeds.{worlds}.count "
                              f"({len(ranges[worlds])}), got {params[section][key]}")


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


def defaults() -> dict:
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
        raise ParamsError(f"params: {path} is empty; write the keys to change, or {{}} for every default")
    if not isinstance(raw, dict):
        raise ParamsError(f"params: {path} must hold a mapping of sections, got {type(raw).__name__}")
    return raw


def load(path: str | Path = "params.yaml", overrides: dict | None = None) -> dict:
    """Read and validate a params file (`read`); `overrides` maps dotted keys to values (None:
    keep the file's), as the command line's options do."""
    raw = read(path)
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
    return validate(raw)


def fingerprint(*parts) -> str:
    """A short content hash of JSON-able values (what a cached result depends on)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
