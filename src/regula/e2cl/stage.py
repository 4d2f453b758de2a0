"""The `e2cl` stage: E2CL on VirtualHome's evolving graph (seed 002). Per training seed: D_p from
the training programs' scripts, pre-tuning on D_p', teacher-guided and teacher-free exploration
(D_f, D_c), the trainings the tables compare (`pipeline.CONDITIONS`), and their plans on the
held-out programs of seen tasks and on the unseen tasks, plainly and with speculative inference;
beside them the planners that train nothing (`baselines.py`: retrieval and a fixed plan) on every
leave-tasks-out fold (`split.make_folds`; the trained models plan the `release` fold, split.yaml).

Every unit's result is kept under data/e2cl/ and found again by a key of what made it (settings,
seed, the data it read): datasets (JSON Lines), trained models (a folder each) and evaluated plans
(JSON Lines). A rerun, or a run that died halfway, redoes only what is missing; a replay of the
kept artifacts trains nothing, asks no LLM and steps no environment for the tables.
Outputs: metrics/e2cl.json (headline), metrics/e2cl_detail.json, metrics/e2cl.csv (Tables 1-3, a
row per fold, seed, condition, test split and inference; the baselines' rows have no seed),
metrics/e2cl_losses.csv (loss per epoch),
metrics/e2cl_errors.csv (Fig. 6), metrics/e2cl_feedback.csv (Fig. 5), metrics/e2cl_corrections.csv
(Fig. 4), metrics/e2cl_sizes.csv (Fig. 3: BC and the method at `e2cl.model` and each of `e2cl.sizes`,
whose units keep their plans and a record, not their weights: `size_run`).
"""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from regula import envs, roles, stages
from regula.errors import DataError
from regula.io import write_csv, write_json, write_jsonl
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.stages import Paths, Work

from . import baselines
from . import pipeline as pl
from .agent import PromptingAgent
from .explore import Exploration, statistics, task_of
from .metrics import MEASURES, PlanResult, summarise
from .model import AgentModel
from .samples import Sample
from .split import RELEASE, Split, load_split, make_folds, program_tasks

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.e2cl.params import E2cl
    from regula.params import Params

VH = "virtualhome"
# (name, condition, speculative): the plans each seed's models make on both test splits
EVALUATIONS = (("bc", "bc", False), ("bc_si", "bc", True), ("e2cl", "e2cl", True), ("e2cl_no_si", "e2cl", False),
               ("no_df", "no_df", True), ("no_dc", "no_dc", True), ("nat", "nat", False))
FEEDBACK_TYPES = ("random", "boolean", "ours", "ground_truth")  # Fig. 5, on unseen tasks


def settings(cfg: E2cl) -> pl.Settings:
    return pl.Settings(preset=cfg.model, vocab_size=cfg.vocab_size, epochs=cfg.epochs,
                       batch_size=cfg.batch_size, lr=cfg.lr, pretune_samples=cfg.pretune_samples,
                       pretune_epochs=cfg.pretune_epochs, max_steps=cfg.max_steps,
                       max_corrections=cfg.max_corrections)


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _write_samples(path: Path, samples: list[Sample]) -> Path:
    return write_jsonl(path, [asdict(s) for s in samples])


def _read_samples(path: Path) -> list[Sample]:
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            out.append(Sample(**json.loads(line)))
        except (ValueError, TypeError) as e:
            raise DataError(f"{path}:{n}: not a sample ({e})") from None
    return out


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON ({e.msg}, line {e.lineno}); delete it to redo that unit") from None


def _read_jsonl(path: Path) -> list:
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{n}: not valid JSON ({e.msg}); delete it to redo that unit") from None
    return out


class Store:
    """data/e2cl/: units found by name and key; writing a unit's new version removes its old ones."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, name: str, key: str, suffix: str = "") -> Path:
        path = self.root / f"{name}-{key}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def forget_others(self, name: str, keep: Path) -> None:
        for old in (self.root / name).parent.glob(f"{Path(name).name}-*"):
            if old != keep:
                shutil.rmtree(old) if old.is_dir() else old.unlink()


def _client(params: Params, paths: Paths, accounting: Accounting) -> LLMClient:
    llm = LLMConfig.from_params(params.llm, cache_dir=str(paths.llm_cache(params)))
    return LLMClient(llm.replace(max_tokens=params.e2cl.max_tokens), paths.stage, accounting)


def prepare(params: Params, paths: Paths) -> None:
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def run(params: Params, paths: Paths, work: Work) -> dict:
    cfg, s = params.e2cl, settings(params.e2cl)
    accounting = Accounting()
    asks = roles.uses_llm("corrector", cfg.corrector) or cfg.prompting_programs > 0
    client = _client(params, paths, accounting) if asks else None
    ctx = _setup(params, paths, work, client)
    spent = {"trained": 0, "explored": 0, "evaluated": 0}
    seeds = []
    if cfg.seeds:
        d_p_key = _digest(_write_samples(ctx.store.root / "d_p.jsonl", ctx.d_p))
    for seed in cfg.seeds:
        seeds.append(_one_seed(seed, s, cfg, ctx.store, ctx.d_p, d_p_key, ctx.train, ctx.tests, ctx.programs,
                               ctx.corrector, ctx.make_episode, work, paths.stage, spent))
    fixed = _baselines(cfg, s, ctx, work, paths.stage, spent) if cfg.seeds else {"rows": [], "folds": []}
    ranked = _rankers(cfg, s, ctx, work, paths.stage, spent) if cfg.seeds else {"rows": [], "runs": []}
    sizes = [size_run(params, ctx, preset, seed, work, paths.stage, spent)  # the main size is the seeds' own
             for preset in cfg.sizes if preset != cfg.model for seed in cfg.seeds]
    prompting = _prompting(client, cfg.prompting_programs, s, ctx.store, ctx.train, ctx.tests, ctx.make_episode,
                           work, paths.stage, spent) if cfg.prompting_programs else []
    return _finish(params, paths, s, seeds, sizes, prompting, fixed, ranked, ctx.train, ctx.broken, ctx.d_p,
                   accounting, spent)


@dataclass(frozen=True)
class Context:
    """What every unit of a run reads: the programs, the split's training and test programs, D_p,
    the corrector and where units are kept."""
    programs: dict
    train: list
    broken: list
    tests: dict
    d_p: list
    corrector: object
    make_episode: Callable
    store: Store
    split: Split


def _setup(params: Params, paths: Paths, work: Work, client: LLMClient | None = None) -> Context:
    cfg = params.e2cl
    if cfg.device != "cpu":
        AgentModel.check_device(cfg.device)
    corrector = roles.make("corrector", cfg.corrector, client=client)
    family = envs.get(VH)
    programs = family.programs()
    split = load_split(program_tasks(programs))

    def make_episode(program):
        return family.make(0, program=program.id)

    first = lambda ids, n: [programs[i] for i in (ids[:n] if n else ids)]  # noqa: E731
    train, broken = pl.executable_programs(first(split.train, cfg.train_programs), make_episode)
    tests = {"seen": first(split.test_seen, cfg.test_programs),
             "unseen": first(split.test_unseen, cfg.test_programs)}
    d_p = pl.planning_data(train)
    work.progress(f"{paths.stage}: {len(train)} training programs ({len(broken)} that do not execute left out), "
                  f"D_p {len(d_p)} samples; test: {len(tests['seen'])} seen, {len(tests['unseen'])} unseen")
    return Context(programs, train, broken, tests, d_p, corrector, make_episode, Store(paths.data / paths.stage),
                   split)


def _folds(cfg, ctx: Context):
    """Each leave-tasks-out fold: (fold, its training programs as listed, its test programs (the
    first `test_programs` of each split, of `train_programs` training programs, as the models'), a
    function giving the training programs that execute here)."""
    first = lambda ids, n: [ctx.programs[i] for i in (ids[:n] if n else ids)]  # noqa: E731
    known = {p.id for p in ctx.train}
    for fold in make_folds(program_tasks(ctx.programs), ctx.split):
        sp = fold.split
        candidates = first(sp.train, cfg.train_programs)
        tests = {"seen": first(sp.test_seen, cfg.test_programs), "unseen": first(sp.test_unseen, cfg.test_programs)}
        cache: dict = {}

        def train(candidates=candidates, cache=cache) -> list:  # as the models': those that execute here
            if "train" not in cache:
                unknown = [p for p in candidates if p.id not in known]
                ok = {p.id for p in pl.executable_programs(unknown, ctx.make_episode)[0]} | known
                cache["train"] = [p for p in candidates if p.id in ok]
            return cache["train"]
        yield fold, candidates, tests, train


def _baselines(cfg, s, ctx: Context, work, stage, spent) -> dict:
    """The planners that train nothing, on each fold's seen and unseen test programs, and each fold's
    ceiling on unseen tasks; kept under data/e2cl/baselines/<fold>/ like the models' plans."""
    rows, folds = [], []
    for fold, candidates, tests, train in _folds(cfg, ctx):
        say = lambda line, f=fold.name: work.progress(f"{stage}: baselines, {f}: {line}")  # noqa: E731
        root = Store(ctx.store.root / "baselines" / fold.name)
        key = _key("baselines", [p.id for p in candidates], {k: [p.id for p in v] for k, v in tests.items()},
                   s.max_steps)
        for name in baselines.BASELINES:
            for part, progs in tests.items():
                records = _plans(root, f"plans/{name}_{part}", key,
                                 lambda: baselines.plan(name, progs, train(), ctx.make_episode, s.max_steps),
                                 say, f"{name} on {part}", spent)
                rows.append({"fold": fold.name, "seed": "", "evaluation": name, "condition": "none",
                             "speculative": False, "split": part, **_scores(records)})
        path = root.path("ceiling", key, ".json")
        if not path.exists():
            write_json(path, {"unseen_lcs": baselines.ceiling(tests["unseen"], train(), s.max_steps)})
            root.forget_others("ceiling", path)
        ceiling = _read_json(path)["unseen_lcs"]
        folds.append({"fold": fold.name, "unseen_tasks": list(fold.split.unseen_tasks),
                      "programs": {"train": len(candidates), **{k: len(v) for k, v in tests.items()}},
                      "ceiling_unseen_lcs": None if ceiling is None else round(ceiling, 4)})
    return {"rows": rows, "folds": folds}


def _rankers(cfg, s, ctx: Context, work, stage, spent) -> dict:
    """The ranking planner (`ranker.py`: BC and the method) per fold and seed, trained, explored and
    planned in one unit (minutes on CPU) kept under data/e2cl/ranker/<fold>/seed<N>/: its plans and a
    record (losses, exploration, the judge's accuracy), not its weights."""
    from .ranker import VERSION
    rows, runs = [], []
    for fold, candidates, tests, train in _folds(cfg, ctx):
        for seed in cfg.seeds:
            say = lambda line, f=fold.name, x=seed: work.progress(f"{stage}: ranker, {f} seed {x}: {line}")  # noqa
            root = Store(ctx.store.root / "ranker" / fold.name / f"seed{seed}")
            key = _key("ranker", VERSION, [p.id for p in candidates], {k: [p.id for p in v] for k, v in tests.items()},
                       s.max_steps, s.max_corrections, seed, cfg.ranker_epochs, cfg.corrector)
            record_path = root.path("run", key, ".json")
            plan_paths = {(name, part): root.path(f"plans/{name}_{part}", key, ".jsonl")
                          for name, _ in pl.RANKER_EVALUATIONS for part in tests}
            if not (record_path.exists() and all(p.exists() for p in plan_paths.values())):
                say("training, exploring and planning")
                started = time.perf_counter()
                planned, record = pl.ranker_unit(train(), tests, ctx.corrector, ctx.make_episode, s, seed,
                                                 cfg.ranker_epochs, say)
                for (name, part), path in plan_paths.items():
                    write_jsonl(path, _plan_records(planned[(name, part)]))
                    root.forget_others(f"plans/{name}_{part}", path)
                write_json(record_path, record)
                root.forget_others("run", record_path)
                spent["trained"] += 1
                spent["explored"] += 1
                spent["evaluated"] += len(plan_paths)
                say(f"{time.perf_counter() - started:.0f} s")
            runs.append({"fold": fold.name, "seed": seed, **_read_json(record_path)})
            for name, speculative in pl.RANKER_EVALUATIONS:
                for part in tests:
                    rows.append({"fold": fold.name, "seed": seed, "evaluation": name, "condition": "ranker",
                                 "speculative": speculative, "split": part,
                                 **_scores(_read_jsonl(plan_paths[(name, part)]))})
    return {"rows": rows, "runs": runs}


def _prompting(client, n, s, store, train, tests, make_episode, work, stage, spent) -> list[dict]:
    """Table 1's prompting baseline: the LLM plans the first n programs of each test split (no seed:
    nothing is trained). Planned again on every run, from the LLM cache on a replay, so that the
    record's LLM accounting is the same for a live run and its replay; the plans are written for
    reading."""
    agent = PromptingAgent(client, [(task_of(p), p.lines) for p in train])
    rows = []
    for part, progs in tests.items():
        work.progress(f"{stage}: prompting: the LLM plans {min(n, len(progs))} {part} programs")
        records = _plan_records(pl.plan_with(agent, progs[:n], make_episode, s))
        write_jsonl(store.path("prompting", part, ".jsonl"), records)
        rows.append({"fold": RELEASE, "seed": "", "evaluation": "prompting", "condition": "prompting",
                     "speculative": False, "split": part, **_scores(records)})
    return rows


def _one_seed(seed, s, cfg, store, d_p, d_p_key, train, tests, programs, corrector, make_episode, work, stage,
              spent) -> dict:
    say = lambda line: work.progress(f"{stage}: seed {seed}: {line}")  # noqa: E731
    root = Store(store.root / f"seed{seed}")
    root.root.mkdir(parents=True, exist_ok=True)
    pre_key = _key("pretune", asdict(s), seed, d_p_key)
    pretuned_cache: dict = {}
    saved = root.root / "models" / ".pretuned"  # each condition trained on from this, then removed

    def pretuned() -> AgentModel:
        if "model" not in pretuned_cache:
            model = pl.new_model(d_p, s, seed)
            model.train(pl.pairs(pl.pretune_subset(d_p, s.pretune_samples, seed)),
                        s.options(seed, s.pretune_epochs, cfg.device), progress=False, echo=say)
            model.save(saved)
            spent["trained"] += 1
            pretuned_cache["model"] = model
        return pretuned_cache["model"]

    # exploration: D_f and D_c from the pre-tuned agent
    explore_key = _key("explore", pre_key, cfg.corrector, s.max_steps)
    f_path, c_path = root.path("d_f", explore_key, ".jsonl"), root.path("d_c", explore_key, ".jsonl")
    stats_path = root.path("explore_stats", explore_key, ".json")
    if not (f_path.exists() and c_path.exists() and stats_path.exists()):
        say("exploring (teacher-guided, then teacher-free)")
        found = pl.explore_both(pretuned(), corrector, train, make_episode, s)
        _write_samples(f_path, found.feedback)
        _write_samples(c_path, found.correction)
        write_json(stats_path, dict(sorted(found.stats.items())))
        for name, keep in (("d_f", f_path), ("d_c", c_path), ("explore_stats", stats_path)):
            root.forget_others(name, keep)
        spent["explored"] += 1
    found = Exploration(_read_samples(f_path), _read_samples(c_path), _read_json(stats_path))
    data_key = _key(d_p_key, _digest(f_path), _digest(c_path))

    # the trainings
    models, losses = {}, []
    for condition in pl.CONDITIONS:
        key = _key("model", condition, asdict(s), seed, data_key, pre_key)
        folder = root.path(f"models/{condition}", key)
        if not folder.exists():
            say(f"training {condition}")
            if condition in pl.FROM_SCRATCH:
                model = pl.new_model(d_p, s, seed)
            else:
                pretuned()
                model = AgentModel.load(saved)  # a fresh copy: training changes the model in place
            data = pl.training_set(condition, d_p, found)
            model.train(pl.pairs(data), s.options(seed, device=cfg.device), progress=False, echo=say)
            model.save(folder)
            root.forget_others(f"models/{condition}", folder)
            spent["trained"] += 1
        models[condition] = (folder, key)
    shutil.rmtree(saved, ignore_errors=True)
    for condition, (folder, _) in models.items():
        log = _read_json(folder / "training_log.json")
        for epoch, loss in enumerate(log["losses"], 1):
            losses.append({"seed": seed, "condition": condition, "epoch": epoch, "loss": round(loss, 4),
                           "samples": log["samples"]})

    loaded: dict = {}

    def model_of(condition) -> AgentModel:
        if condition not in loaded:
            loaded[condition] = AgentModel.load(models[condition][0]).to(cfg.device)
        return loaded[condition]

    # the plans: Tables 1-3 and Fig. 6
    rows, errors, plans = [], [], {}
    for name, condition, speculative in EVALUATIONS:
        for part, progs in tests.items():
            key = _key("plans", models[condition][1], speculative, s.max_steps, s.max_corrections, part)
            records = plans[(name, part)] = _plans(
                root, f"plans/{name}_{part}", key,
                lambda: pl.evaluate(model_of(condition), progs, make_episode, s, speculative,
                                    outcome=pl.OUTCOMES.get(condition)),
                say, f"{name} on {part}", spent)
            rows.append({"fold": RELEASE, "seed": seed, "evaluation": name, "condition": condition,
                         "speculative": speculative, "split": part, **_scores(records)})
            errors += [{"seed": seed, "evaluation": name, "split": part, "error_type": k, "count": v}
                       for k, v in _errors(records).items()]
    # Fig. 5: the method's model with other feedback in the check, on unseen tasks
    feedback_rows = []
    texts = [f.target for f in found.feedback]
    checks = {"random": pl.random_check(texts, seed), "boolean": pl.boolean_check,
              "ground_truth": pl.ground_truth_check}
    for kind in FEEDBACK_TYPES:
        if kind == "ours":
            records = plans[("e2cl", "unseen")]
        else:
            records = _plans(root, f"plans/feedback_{kind}_unseen",
                             _key("plans", models["e2cl"][1], kind, s.max_steps, s.max_corrections, seed),
                             lambda: pl.evaluate(model_of("e2cl"), tests["unseen"], make_episode, s, True,
                                                 checks[kind]), say, f"e2cl with {kind} feedback", spent)
        feedback_rows.append({"seed": seed, "feedback": kind, **_scores(records)})
    # Fig. 4: corrections of 100 failed steps, seen (training programs) and unseen
    correction_rows = []
    for part, progs in (("seen", train), ("unseen", tests["unseen"])):
        key = _key("corrections", models["e2cl"][1], models["bc"][1], part, cfg.correction_cases, seed)
        path = root.path(f"corrections_{part}", key, ".json")
        if not path.exists():
            say(f"self-correction on {part} tasks")
            cases = pl.correction_cases(model_of("e2cl"), progs, make_episode, cfg.correction_cases, seed)
            table = {c: pl.correction_accuracy(model_of(c), cases, programs, make_episode) for c in ("bc", "e2cl")}
            write_json(path, {"cases": cases, "accuracy": table})
            root.forget_others(f"corrections_{part}", path)
            spent["evaluated"] += 1
        for condition, acc in _read_json(path)["accuracy"].items():
            correction_rows.append({"seed": seed, "split": part, "condition": condition, **acc})
    return {"seed": seed, "rows": rows, "errors": errors, "losses": losses, "feedback": feedback_rows,
            "corrections": correction_rows, "explore": found.stats,
            "datasets": {"d_f": statistics(found.feedback), "d_c": statistics(found.correction),
                         "d_f_samples": len(found.feedback), "d_c_samples": len(found.correction)},
            "parameters": model_of("e2cl").parameters,
            "device": _read_json(models["e2cl"][0] / "training_log.json")["options"]["device"]}


# Fig. 3: what each other size trains and plans (Table 1's BC and method rows)
SIZE_CONDITIONS = ("bc", "e2cl")
SIZE_EVALUATIONS = (("bc", "bc", False), ("e2cl", "e2cl", True))


def size_run(params: Params, ctx: Context, preset: str, seed: int, work: Work, stage: str, spent: dict) -> dict:
    """Fig. 3's unit: BC and the method at another model size (`preset`) for one seed, each step as
    the main run's (pre-tune, explore, train, plan on both test splits; no ablations, no figures
    beyond Table 1's rows). Kept under data/e2cl/sizes/<preset>/seed<N>/: the plans and a record
    (parameters, losses, exploration), keyed by what made them; the weights (12-32 MB a model) and
    the datasets are kept in its work/ folder only until the unit is complete (git and DVC ignore
    it), so a run that dies halfway resumes there."""
    cfg = params.e2cl
    s = replace(settings(cfg), preset=preset)
    say = lambda line: work.progress(f"{stage}: {preset} seed {seed}: {line}")  # noqa: E731
    root = Store(ctx.store.root / "sizes" / preset / f"seed{seed}")
    key = _key("size", asdict(s), seed, _key([asdict(x) for x in ctx.d_p]), cfg.corrector)
    record_path = root.path("run", key, ".json")
    plan_paths = {(name, part): root.path(f"plans/{name}_{part}", key, ".jsonl")
                  for name, _, _ in SIZE_EVALUATIONS for part in ctx.tests}
    if not (record_path.exists() and all(path.exists() for path in plan_paths.values())):
        _train_size(cfg, s, ctx, seed, key, root, record_path, say, spent)
    record = _read_json(record_path)
    rows = [{"model": preset, "parameters": record["parameters"], "device": record["device"], "seed": seed,
             "evaluation": name, "condition": condition, "speculative": speculative, "split": part,
             **_scores(_read_jsonl(plan_paths[(name, part)]))}
            for name, condition, speculative in SIZE_EVALUATIONS for part in ctx.tests]
    return {"model": preset, "seed": seed, "rows": rows, "record": record}


def _train_size(cfg, s, ctx, seed, key, root, record_path, say, spent) -> None:
    device = cfg.device
    scratch = Store(root.root / "work")

    def trained(name: str, make, data) -> AgentModel:
        folder = scratch.path(name, key)
        if folder.exists():
            return AgentModel.load(folder).to(device)
        say(f"training {name} on {len(data)} samples ({device})")
        model = make()
        model.train(pl.pairs(data), s.options(seed, s.pretune_epochs if name == "pretuned" else None, device),
                    progress=False, echo=say)
        model.save(folder)
        spent["trained"] += 1
        return model

    pretuned = trained("pretuned", lambda: pl.new_model(ctx.d_p, s, seed),
                       pl.pretune_subset(ctx.d_p, s.pretune_samples, seed))
    f_path, c_path, stats_path = (scratch.path(name, key, suffix) for name, suffix in
                                  (("d_f", ".jsonl"), ("d_c", ".jsonl"), ("explore_stats", ".json")))
    if not (f_path.exists() and c_path.exists() and stats_path.exists()):
        say("exploring (teacher-guided, then teacher-free)")
        found = pl.explore_both(pretuned, ctx.corrector, ctx.train, ctx.make_episode, s)
        _write_samples(f_path, found.feedback)
        _write_samples(c_path, found.correction)
        write_json(stats_path, dict(sorted(found.stats.items())))
        spent["explored"] += 1
    found = Exploration(_read_samples(f_path), _read_samples(c_path), _read_json(stats_path))
    starts = {"bc": lambda: pl.new_model(ctx.d_p, s, seed),
              "e2cl": lambda: AgentModel.load(scratch.path("pretuned", key))}
    models = {c: trained(c, starts[c], pl.training_set(c, ctx.d_p, found)) for c in SIZE_CONDITIONS}
    for name, condition, speculative in SIZE_EVALUATIONS:
        for part, progs in ctx.tests.items():
            _plans(root, f"plans/{name}_{part}", key,
                   lambda: pl.evaluate(models[condition], progs, ctx.make_episode, s, speculative),
                   say, f"{name} on {part}", spent)
    write_json(record_path, {
        "model": s.preset, "parameters": models["e2cl"].parameters, "device": device,
        "losses": {c: [round(x, 4) for x in m.log["losses"]] for c, m in models.items()},
        "samples": {c: m.log["samples"] for c, m in models.items()}, "explore": found.stats,
        "d_f_samples": len(found.feedback), "d_c_samples": len(found.correction)})
    root.forget_others("run", record_path)
    shutil.rmtree(scratch.root, ignore_errors=True)


def _plans(root: Store, name: str, key: str, compute, say, what: str, spent) -> list[dict]:
    path = root.path(name, key, ".jsonl")
    if not path.exists():
        say(f"planning: {what}")
        started = time.perf_counter()
        write_jsonl(path, _plan_records(compute()))
        root.forget_others(name, path)
        spent["evaluated"] += 1
        say(f"{what}: {time.perf_counter() - started:.0f} s")
    return _read_jsonl(path)


def _plan_records(runs) -> list[dict]:
    return [{"program": i, "task": r.task.name, "truth": list(r.truth), "steps": [x.to_json() for x in r.records],
             "ended": r.ended} for i, r in enumerate(runs)]


def _scores(records: list[dict]) -> dict:
    out = summarise([PlanResult(r["task"], tuple(x["executed"] for x in r["steps"]),
                                tuple(x["success"] for x in r["steps"]), tuple(r["truth"]), r["ended"])
                     for r in records])
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def _errors(records: list[dict]) -> dict:
    out: dict = {}
    for r in records:
        for x in r["steps"]:
            if not x["success"]:
                out[x["error_type"] or "Others"] = out.get(x["error_type"] or "Others", 0) + 1
    return dict(sorted(out.items()))


def _mean_std(values: list) -> tuple:
    import statistics as st
    values = [v for v in values if v is not None]
    if not values:
        return None, None
    return round(st.fmean(values), 4), round(st.pstdev(values), 4) if len(values) > 1 else 0.0


def _size_rows(s, seeds: list[dict], sizes: list[dict]) -> list[dict]:
    """Fig. 3's table: the main run's BC and method rows (its size) and each other size's (none
    without `e2cl.sizes`: the table then has the main size alone)."""
    main = [{"model": s.preset, "parameters": x["parameters"], "device": x["device"],
             **{k: v for k, v in r.items() if k != "fold"}}  # every size plans the release fold
            for x in seeds for r in x["rows"]
            if (r["evaluation"], r["condition"], r["speculative"]) in SIZE_EVALUATIONS]
    return main + [r for x in sizes for r in x["rows"]]


def _finish(params, paths, s, seeds, sizes, prompting, fixed, ranked, train, broken, d_p, accounting,
            spent) -> dict:
    import pandas as pd
    rows = [r for x in seeds for r in x["rows"]]
    write_csv(paths.metrics / f"{paths.stage}.csv", pd.DataFrame(rows + fixed["rows"] + ranked["rows"] + prompting))
    size_rows = _size_rows(s, seeds, sizes)
    if seeds:  # the tables of trained models (none in the twin e2cl_llm)
        write_csv(paths.metrics / f"{paths.stage}_losses.csv", pd.DataFrame([r for x in seeds for r in x["losses"]]))
        write_csv(paths.metrics / f"{paths.stage}_errors.csv", pd.DataFrame(
            [r for x in seeds for r in x["errors"]], columns=["seed", "evaluation", "split", "error_type", "count"]))
        write_csv(paths.metrics / f"{paths.stage}_feedback.csv",
                  pd.DataFrame([r for x in seeds for r in x["feedback"]]))
        write_csv(paths.metrics / f"{paths.stage}_corrections.csv",
                  pd.DataFrame([r for x in seeds for r in x["corrections"]]))
        write_csv(paths.metrics / f"{paths.stage}_sizes.csv", pd.DataFrame(size_rows))
    summary = {}  # evaluation/split: each measure's (mean, std) over seeds, on the release fold
    for name in [e for e, _, _ in EVALUATIONS] + (list(baselines.BASELINES) if fixed["rows"] else []):
        for part in ("seen", "unseen"):
            picked = [r for r in rows + fixed["rows"]
                      if r["evaluation"] == name and r["split"] == part and r["fold"] == RELEASE]
            summary[f"{name}/{part}"] = {m: _mean_std([r[m] for r in picked]) for m in MEASURES}
    over_folds = {f"{name}/{part}": {m: _mean_std([r[m] for r in fixed["rows"] + ranked["rows"]
                                                   if r["evaluation"] == name and r["split"] == part])
                                     for m in MEASURES}
                  for name in ((*baselines.BASELINES, *(n for n, _ in pl.RANKER_EVALUATIONS)) if fixed["rows"] else ())
                  for part in ("seen", "unseen")}
    by_size = {}  # Fig. 3: model -> parameters, and per evaluation/split each metric's (mean, std) over seeds
    for model in dict.fromkeys(r["model"] for r in size_rows):
        picked = [r for r in size_rows if r["model"] == model]
        by_size[model] = {"parameters": picked[0]["parameters"], **{
            f"{name}/{part}": {m: _mean_std([r[m] for r in picked if r["evaluation"] == name and r["split"] == part])
                               for m in MEASURES}
            for name, _, _ in SIZE_EVALUATIONS for part in ("seen", "unseen")}}
    spent_llm = [row for roles_ in accounting.this_run().values() for row in roles_.values()]
    record = {"settings": asdict(s), "corrector": params.e2cl.corrector, "seeds": [x["seed"] for x in seeds],
              "train_programs": len(train), "broken_programs": broken, "d_p_samples": len(d_p), "summary": summary,
              "folds": {"runs": fixed["folds"], "over_folds": over_folds, "ranker": ranked["runs"]},
              "prompting": {"programs": params.e2cl.prompting_programs, "rows": prompting},
              **({"sizes": {"summary": by_size, "runs": [{"model": x["model"], "seed": x["seed"], **x["record"]}
                                                        for x in sizes]}} if seeds else {}),
              "per_seed": [{k: v for k, v in x.items() if k not in ("rows", "errors", "losses", "feedback",
                                                                      "corrections")} for x in seeds],
              "llm": accounting.to_dict(),
              "this_run": {**spent, "llm_calls": sum(row.get("calls", 0) for row in spent_llm)}}
    return stages.write_metrics(paths.metrics, paths.stage,
                                stages.headline_for(paths.stage, headline(record), COMPARES.__contains__), record)


# what the twin's headline keeps (e2cl_llm): the prompting baseline's numbers
COMPARES = frozenset({"prompting_unseen_executability", "prompting_unseen_lcs"})


def headline(record: dict) -> dict:
    """The unseen-task numbers of the ranking planner's BC and method (means over every fold and
    seed) and, when it ran, the prompting baseline's (the T5's and the other baselines' are in the
    record: the metrics files keep 70 numbers in all); what this run spent in trainings and LLM
    calls (0 and 0 on a replay; explorations and evaluations are in the record's `this_run`)."""
    folds = record["folds"]["over_folds"]
    out = {}
    for name in ("ranker_bc", "ranker_e2cl"):  # over every fold and seed (the T5's: the record's summary)
        for metric in ("executability", "lcs"):
            if f"{name}/unseen" in folds:
                out[f"e2cl_{name}_unseen_{metric}"] = folds[f"{name}/unseen"][metric][0]
    for row in record["prompting"]["rows"]:
        if row["split"] == "unseen":
            out.update({f"prompting_unseen_{m}": row[m] for m in ("executability", "lcs")})
    return {**out, "e2cl_this_run_trained": record["this_run"]["trained"],
            "e2cl_this_run_llm_calls": record["this_run"]["llm_calls"]}
