"""Benchmarks that print numbers (speed targets are measured here, not in timed tests)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from . import envs


def _play(reset, step, actions) -> tuple[float, float, int]:
    """(CPU seconds stepping, CPU seconds resetting, resets) playing `actions` from a reset;
    `step(a)` says whether the episode is over, and an over episode is reset (world generation
    is not stepping: it is timed apart). CPU time: on a shared machine wall time says more
    about the neighbours than about the code."""
    clock = time.process_time
    stepping = resetting = 0.0
    resets = 0
    t = clock()
    reset()
    resetting += clock() - t
    for a in actions:
        t = clock()
        done = step(a)
        stepping += clock() - t
        if done:
            t = clock()
            reset()
            resetting += clock() - t
            resets += 1
    return stepping, resetting, resets + 1


def env_steps_per_second(steps: int = 2000, seed: int = 0) -> dict:
    """Primitive steps per CPU second on one seeded sequence of random actions: crafter.Env
    as shipped (it draws an image every step) and without the image, the adapter's simulator
    (`DeterministicCrafter`, image-free), and the adapter (`CrafterWorld.act`: the simulator
    plus the memory, the logs and the hurt causes every agent here steps through)."""
    spec = envs.get("crafter")
    actions = np.random.default_rng(seed).integers(0, len(spec.actions), steps).tolist()

    def raw(env):
        return env.reset, lambda a: env.step(a)[2]

    world = spec.make(seed)

    def act(a: int) -> bool:
        world.act(spec.actions[a])
        return world.done
    games = {"crafter_env": raw(spec.simulator(seed, raw=True)),
             "crafter_env_image_free": raw(spec.simulator(seed, render=False, raw=True)),
             "simulator": raw(spec.simulator(seed, render=False)),
             "adapter": (world.reset, act)}
    out = {}
    for name, (reset, step) in games.items():
        stepping, resetting, resets = _play(reset, step, actions)
        out[f"{name}_steps_per_s"] = steps / stepping
        if name == "simulator":
            out["reset_s"] = resetting / resets
    out["adapter_over_crafter_env_image_free"] = out["adapter_steps_per_s"] / out["crafter_env_image_free_steps_per_s"]
    return out


def expert_episodes(episodes: int = 5, goal: str = "collect_diamond", max_steps: int = 3000,
                    first_seed: int = 0, shelter: bool = True, max_skills: int = 400) -> dict:
    """Expert episodes on seeds first_seed, first_seed + 1, ...: speed (per CPU second, world
    generation included), success, how they ended, and `log_sha256`: a digest of every primitive
    step and high-level step they logged (a change meant to be only faster leaves it as it was)."""
    import hashlib
    import json
    from collections import Counter
    t = time.process_time()
    steps = successes = 0
    digest = hashlib.sha256()
    ends: Counter = Counter()
    spec = envs.get("crafter")
    # built before any world, so a bad goal fails at once
    config = spec.ExpertConfig(goal=goal, max_steps=max_steps, max_skills=max_skills, shelter=shelter)
    for seed in range(first_seed, first_seed + episodes):
        world = spec.make(seed)
        expert = spec.Expert(world, config)
        summary = spec.play_episode(world, expert)
        t_log = time.process_time()
        logs = {"primitives": world.primitive_log, "steps": [e.to_json() for e in world.events]}
        digest.update(json.dumps(logs, sort_keys=True).encode())
        t -= time.process_time() - t_log  # not the game's time
        steps += summary.steps
        successes += summary.success
        ends[summary.end.split(":")[0]] += 1
    dt = time.process_time() - t
    return {"episodes_per_s": episodes / dt, "steps_per_s": steps / dt, "success": successes / episodes,
            "episodes": episodes, "successes": successes, "ends": dict(sorted(ends.items())),
            "log_sha256": digest.hexdigest()[:16]}


def _survival_episode(args) -> dict:
    """One expert episode of `survival_episodes` (a process pool's unit)."""
    from dataclasses import asdict

    seed, config = args
    spec = envs.get("crafter")
    world = spec.make(seed, length=config["max_steps"])
    summary = asdict(spec.play_episode(world, spec.Expert(world, spec.ExpertConfig(**config))))
    last = world.primitive_log[-1:] if world.primitive_log else []
    control = world.controller
    return {"seed": seed, "steps": world.steps, "achievements": summary["achievements"],
            "cause": spec.end_cause({"steps": [{"primitives": last}], "summary": summary}),
            "goal_step": summary["first_step"].get(config["goal"]),
            "home": control.home is not None, "home_tries": [kind for *_, kind in control.home_tries],
            "home_step": next((end for _, end, kind in control.home_tries if kind == "built"), None)}


def survival_episodes(episodes: int = 100, first_seed: int = 100, max_steps: int = 10_000, goal: str = "all",
                      home: bool = False, retire: bool = False, workers: int = 1, rows: bool = False,
                      **options) -> dict:
    """The expert's long game on seeds first_seed, first_seed + 1, ... (issue 34's bar: alive
    at `max_steps` and the pooled score over the same episodes): how many lived to the budget
    (Wilson 95%), how the others ended (the death census), the pooled score with a bootstrap
    interval and the per-episode mean beside it, the median step of death; with one achievement as
    `goal`, how many reached it (Wilson 95%) and the median step it came at; with `home`, the
    homes built and every build try's outcome; `rows`: each episode's too. `options`: other
    `ExpertConfig` fields."""
    from collections import Counter
    from multiprocessing import Pool

    from .metrics import ACHIEVEMENTS, per_episode_scores, pooled_score, pooled_score_interval, unlocked
    from .report.tables import wilson
    config = {"goal": goal, "max_steps": max_steps, "max_skills": 10 ** 6, "home": home, "retire": retire, **options}
    config = {**config, "max_skills": config["max_skills"] or 10 ** 6}  # 0 or None: no skill budget
    spec = envs.get("crafter")
    spec.ExpertConfig(**config)  # a bad goal fails before any world
    deadly = set(spec.census([])["deaths"])  # the causes of death (the census lists every one)
    jobs = [(seed, config) for seed in range(first_seed, first_seed + episodes)]
    if workers > 1:
        with Pool(workers) as pool:
            played = pool.map(_survival_episode, jobs, chunksize=1)
    else:
        played = [_survival_episode(job) for job in jobs]
    hits = unlocked([r["achievements"] for r in played], ACHIEVEMENTS)
    alive = sum(r["steps"] >= max_steps and r["cause"] not in deadly for r in played)
    deaths = sorted(r["steps"] for r in played if r["cause"] in deadly)
    out = {"episodes": episodes, "seeds": f"{first_seed}-{first_seed + episodes - 1}", "max_steps": max_steps,
           "alive_at_budget": alive, "alive_at_budget_ci95": [round(v, 3) for v in wilson(alive, episodes)],
           "ends": dict(sorted(Counter(r["cause"] for r in played).items())),
           "median_death_step": deaths[len(deaths) // 2] if deaths else None,
           "pooled_score": round(pooled_score(hits), 1),
           "pooled_score_ci95": [round(v, 1) for v in pooled_score_interval(hits, 1000, 0)],
           "per_episode_score_mean": round(float(np.mean(per_episode_scores(hits))), 1)}
    if goal != "all":
        reached = sorted(r["goal_step"] for r in played if r["goal_step"] is not None)
        out["goal_reached"] = len(reached)
        out["goal_reached_ci95"] = [round(v, 3) for v in wilson(len(reached), episodes)]
        out["goal_median_step"] = reached[len(reached) // 2] if reached else None
    if home:
        built = [r for r in played if r["home"]]
        out["homes_built"] = len(built)
        out["alive_at_budget_with_home"] = sum(r["steps"] >= max_steps and r["cause"] not in deadly for r in built)
        out["home_tries"] = dict(sorted(Counter(k for r in played for k in r["home_tries"]).items()))
    if rows:
        out["rows"] = played
    return out


def bench_env(steps: int = 2000, episodes: int = 5) -> dict:
    """`regula bench env`: the games' and the adapter's steps/s, and the expert's (first: the
    adapter keeps the worlds it generated, and the expert's are then all new)."""
    expert = {f"expert_{k}": v for k, v in expert_episodes(episodes).items() if k != "ends"}
    return {**env_steps_per_second(steps), **expert}


def bench_minihack(steps: int = 2000, seed: int = 0) -> dict:
    """`regula bench minihack`: steps per CPU second through the MiniHack adapter against the raw
    env, per task (the adapter lives behind `envs`: this module imports neither minihack nor nle)."""
    spec = envs.get("minihack")
    return {t: spec.bench(t, steps, seed) for t in spec.tasks}


def bench_cache(entries: int = 100_000) -> dict:
    """Cache writes/s and lookups/s with `entries` entries, and a warm replay of 1,000 yes/no
    questions through the client (the cost of a stage rerun in replay mode, minus the stage)."""
    import random
    import tempfile

    from .llm import Accounting, LLMClient, LLMConfig, QueryCache, cache_key
    from .llm.client import YES_NO

    def entry(model: str, endpoint: str, question: list, params: dict, schema=None) -> tuple[str, dict]:
        request = {"model": model, "endpoint": endpoint, "messages": question, "params": params, "sample": 0,
                   "schema": schema}
        return (cache_key(model, endpoint, question, params, 0, schema),
                {"request": request, "response": {"content": "yes"}})

    with tempfile.TemporaryDirectory() as tmp:
        cache = QueryCache(tmp)
        rows = [entry("bench", "bench", [{"role": "user", "content": f"q{i}"}], {}) for i in range(entries)]
        t = time.perf_counter()
        for k, e in rows:
            cache.put(k, e)
        writes = entries / (time.perf_counter() - t)
        sample = random.Random(0).sample([k for k, _ in rows], min(entries, 20_000))
        t = time.perf_counter()
        for k in sample:
            cache.get(k)
        lookups = len(sample) / (time.perf_counter() - t)
        t = time.perf_counter()
        misses = sum(cache.get(k[::-1]) is None for k in sample[:5000])
        miss_rate = misses / (time.perf_counter() - t)

        config = LLMConfig(cache_dir=tmp, mode="replay")
        replay = LLMClient(config, "replay", Accounting())
        questions = [[{"role": "user", "content": f"is step {i} a success? yes or no"}] for i in range(1000)]
        for q in questions:  # fill as a live run would
            replay.cache.put(*entry(config.model, config.endpoint, q, config.request_params(0), YES_NO))
        t = time.perf_counter()
        for q in questions:
            replay.ask_yes_no(q, "bench")
        replay_s = time.perf_counter() - t
    return {"entries": entries, "writes_per_s": writes, "lookups_per_s": lookups,
            "misses_per_s": miss_rate, "replay_1000_questions_s": replay_s}


def _answers_used(base_url: str, cache_dir: str, questions: int) -> dict:
    """One writer process of `bench_shared_cache`: every question asked once, {key: answer used}."""
    from .llm import Accounting, LLMClient, LLMConfig
    client = LLMClient(LLMConfig(base_url=base_url, model="regula-stub", cache_dir=cache_dir, retries=0),
                       "shared", Accounting())
    used = {}
    for i in range(questions):
        answer = client.complete([{"role": "user", "content": f"question {i}"}], "bench")
        used[answer.key] = answer.text
    return used


def bench_shared_cache(processes: int = 4, questions: int = 300, start: str = "spawn") -> dict:
    """`processes` processes ask the same `questions` through one cache folder, against a local
    endpoint that answers every call differently: how many calls reach it (ideal: `questions`),
    and how many answers a process used differ from the one the cache holds at the end (ideal: 0).
    `start`: how the processes start (`fork` skips their imports, for a quick test)."""
    import itertools
    import multiprocessing
    import tempfile

    from .llm import QueryCache
    from .llm.accounting import read_ledger
    from .llm.cache import LEDGER
    from .llm.stub_server import StubLLMServer

    count = itertools.count()
    with StubLLMServer(responder=lambda messages: f"answer {next(count)}") as server, \
            tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        with multiprocessing.get_context(start).Pool(processes) as pool:
            used = pool.starmap(_answers_used, [(server.base_url, tmp, questions)] * processes)
        seconds = time.perf_counter() - t
        cache = QueryCache(f"{tmp}/shared")
        final = {entry["key"]: entry["response"]["content"] for _, entry in cache.entries()}
        differ = sum(text != final.get(key) for answers in used for key, text in answers.items())
        ledger = read_ledger(cache.root / LEDGER)["shared"]["bench"]
        return {"processes": processes, "questions": questions, "calls": server.calls,
                "ledger_calls": ledger["calls"], "entries": len(final),
                "answers_used": sum(map(len, used)), "answers_differing_from_cache": differ,
                "lock_or_temporary_files_left": sum(1 for p in cache.root.rglob(".*") if p.is_file()),
                "seconds": seconds}


WARM_PASSES = 5  # warm passes timed; the fastest is reported (`bench_logic`)


def bench_logic(steps: int = 1000, n_laws: int = 20, seed: int = 0) -> dict:
    """µs per law-step for native and Spot monitors on the same laws and trace, from fresh
    monitors (translation and memoisation included), and again with their tables warm. A warm
    pass of 1,000 steps lasts a few milliseconds, so one preemption on a loaded machine moved
    the native/Spot ratio from 0.43 to 0.53: the warm figure is the fastest of WARM_PASSES
    passes (timeit's rule: what slows a pass down is the machine, not the code)."""
    import random

    from .logic.monitor import NativeMonitor, SpotMonitor, spot_available
    from .logic.randomized import random_formula

    rng = random.Random(seed)
    atoms = ("a", "b", "c", "d", "e", "f")
    formulas = [random_formula(rng, atoms, depth=4) for _ in range(n_laws)]
    trace = [frozenset(a for a in atoms if rng.random() < 0.4) for _ in range(steps)]
    out = {"laws": n_laws, "steps": steps, "warm_passes": WARM_PASSES}
    backends = [("native", NativeMonitor)] + ([("spot", SpotMonitor)] if spot_available() else [])
    for name, cls in backends:
        t = time.perf_counter()
        monitors = [cls(f) for f in formulas]
        for letter in trace:
            for m in monitors:
                m.step(letter)
        cold = time.perf_counter() - t
        warm = float("inf")
        for _ in range(WARM_PASSES):
            for m in monitors:
                m.reset()
            t = time.perf_counter()
            for letter in trace:
                for m in monitors:
                    m.step(letter)
            warm = min(warm, time.perf_counter() - t)
        out[f"{name}_us_per_law_step"] = cold / (steps * n_laws) * 1e6
        out[f"{name}_warm_us_per_law_step"] = warm / (steps * n_laws) * 1e6
    if "spot_us_per_law_step" in out:
        out["native_over_spot"] = out["native_us_per_law_step"] / out["spot_us_per_law_step"]
        out["native_over_spot_warm"] = out["native_warm_us_per_law_step"] / out["spot_warm_us_per_law_step"]
    return out


def bench_household(repeats: int = 3, k: int = 5) -> dict:
    """CEDAR's household tasks (Table 6): wall seconds per learned DFA (Σ by RAG, the teacher's calls,
    learning, the simulator's rollouts), after MiniLM is loaded (its load timed apart): each task's
    first run (its scene read, its objects embedded: what the stage spends) and the median of its
    `repeats` - 1 further runs (those warm), with its teacher calls, membership queries and rollouts."""
    import statistics

    from regula.cedar import household
    from regula.rag.embed import model

    start = time.perf_counter()
    model().encode(["warm up"])
    out: dict = {"minilm_load_seconds": time.perf_counter() - start, "tasks": {}}
    for name in household.tasks():
        runs = [household.learn_task(name, k=k) for _ in range(repeats)]
        r = runs[0]
        out["tasks"][name] = {"seconds_first": r.seconds,
                              "seconds_again_median": statistics.median(x.seconds for x in runs[1:]) if repeats > 1
                              else None, "teacher_calls": len(r.calls), "queries": r.queries,
                              "rollouts": r.world_rounds, "success": r.success}
    first = [t["seconds_first"] for t in out["tasks"].values()]
    out["seconds_per_dfa_first_mean"], out["seconds_per_dfa_first_std"] = statistics.mean(first), statistics.pstdev(first)
    return out


def bench_cedar_twin(params, root: Path, progress=None) -> dict:
    """CEDAR's LLM twin (`cedar_skills_llm`, issue 37's bar: all its skills learned in under an
    hour, LLM calls per DFA) from nothing: run in the empty project `root`, so no recorded answer,
    rollout or expert is replayed; every question goes to `params.llm`. Wall seconds, the model's
    calls and latency by role, the environment steps, and per skill of the formula pass (and of the
    no-teacher pass beside it, what the world alone taught) its teacher calls, MQs and policy."""
    from regula import stages
    from regula.stages import Paths, SerialWork

    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise ValueError(f"{root} is not empty: the twin must start from no cache")
    start = time.perf_counter()
    head = stages.execute("cedar_skills_llm", params, Paths(root), SerialWork(progress or (lambda line: None)))
    seconds = time.perf_counter() - start
    detail = json.loads((root / "metrics" / "cedar_skills_llm_detail.json").read_text())

    def rows(key):
        return {r["skill"]: {"teacher_calls": r.get("teacher_calls"), "teacher_queries": r["teacher_queries"],
                             "states": r["states"], "reached": r["reached"],
                             "policy": f"{r['policy_successes']}/{r['episodes']}",
                             "expert": f"{r['expert_successes']}/{r['episodes']}"} for r in detail.get(key, [])}
    formula, silent = rows("formula"), rows("formula_none")
    return {"seconds": round(seconds, 1), "headline": head, "this_run": detail["this_run"],
            "llm": {role: {k: v[k] for k in ("calls", "unusable", "latency_s", "tokens_in", "tokens_out")}
                    for role, v in detail["llm"].get("cedar_skills_llm", {}).items()},
            "per_word": rows("skills"), "formula": formula,
            "formula_learned": sum(r["reached"] for r in formula.values()),
            "formula_max_calls": max((r["teacher_calls"] for r in formula.values()), default=0),
            "formula_none": silent,
            "formula_as_the_world_alone": bool(formula) and all(
                {k: formula[s][k] for k in ("states", "teacher_queries", "policy")} ==
                {k: silent.get(s, {}).get(k) for k in ("states", "teacher_queries", "policy")} for s in formula)}
