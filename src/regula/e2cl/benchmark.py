"""The agent model's benchmark (`regula bench e2cl-model`): training time per epoch, peak memory
and inference speed, on synthetic VirtualHome-like planning samples from a tiny grammar (not the
dataset: the numbers measure the model, whatever the data stage produces)."""
from __future__ import annotations

import random
import resource
import time

# A tiny household: rooms and objects with fixed ids (as in one VirtualHome scene), and task
# programs as (action, object) steps; a step's object may be a room.
ROOMS = {"home_office": 319, "kitchen": 205, "bedroom": 73, "bathroom": 11, "living_room": 267}
OBJECTS = {"chair": 356, "computer": 417, "keyboard": 415, "fridge": 306, "milk": 310, "cup": 312, "sink": 247,
           "plate": 198, "table": 231, "bed": 105, "light": 411, "tv": 426, "sofa": 368, "book": 190,
           "toothbrush": 58, "faucet": 50, "towel": 63, "lamp": 104}
ANYWHERE = {**ROOMS, **OBJECTS}
TASKS = {
    "Work": ("home_office", [("SIT", "chair"), ("SWITCHON", "computer"), ("TYPE", "keyboard")]),
    "Drink milk": ("kitchen", [("OPEN", "fridge"), ("GRAB", "milk"), ("CLOSE", "fridge"), ("DRINK", "milk")]),
    "Set table": ("kitchen", [("GRAB", "plate"), ("PUTBACK", "plate", "table"), ("GRAB", "cup"),
                              ("PUTBACK", "cup", "table")]),
    "Wash dishes": ("kitchen", [("GRAB", "plate"), ("SWITCHON", "faucet"), ("WASH", "plate"),
                                ("SWITCHOFF", "faucet")]),
    "Go to sleep": ("bedroom", [("SWITCHOFF", "light"), ("LIE", "bed"), ("SLEEP",)]),
    "Watch TV": ("living_room", [("SWITCHON", "tv"), ("SIT", "sofa"), ("WATCH", "tv")]),
    "Read book": ("living_room", [("SWITCHON", "lamp"), ("GRAB", "book"), ("SIT", "sofa"), ("READ", "book")]),
    "Brush teeth": ("bathroom", [("GRAB", "toothbrush"), ("SWITCHON", "faucet"), ("RINSE", "toothbrush"),
                                 ("PUTBACK", "toothbrush", "sink")]),
    "Dry hands": ("bathroom", [("GRAB", "towel"), ("WIPE", "towel"), ("PUTBACK", "towel", "sink")]),
}


def line(action: str, *names: str) -> str:
    """A VirtualHome script line: `[WALK] <home_office> (319)`."""
    return " ".join([f"[{action}]"] + [f"<{n}> ({ANYWHERE[n]})" for n in names])


def program(task: str, rng: random.Random) -> list[str]:
    """The task's script: walk to its room, then for each step walk to and find its objects
    first (sometimes skipped, as human-written programs do) and act."""
    room, steps = TASKS[task]
    lines, near = [line("WALK", room)], set()
    for action, *names in steps:
        for name in names:
            if name not in near and rng.random() < 0.8:
                lines += [line("WALK", name), line("FIND", name)]
                near.add(name)
        lines.append(line(action, *names))
    return lines


def planning_source(task: str, history: list[str]) -> str:
    """E2CL's planning template (Appendix A) with the steps so far."""
    steps = " ".join(f"Step {i}: {h}" for i, h in enumerate(history, 1)) or "(none)"
    return (f"### Instruction: Plan the next step of the task. Task: {task}. ### Input: Interaction history: "
            f"{steps} Next action prefix: Step {len(history) + 1}:")


def synthetic_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """`n` planning samples (task + history -> next line, or `[DONE]` after the last line)."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = []
    while len(pairs) < n:
        task = rng.choice(sorted(TASKS))
        lines = program(task, rng) + ["[DONE]"]
        pairs += [(planning_source(task, lines[:t]), lines[t]) for t in range(len(lines))]
    return pairs[:n]


def _rss_mib() -> float:
    # ru_maxrss: the process's peak resident set (KiB on Linux), torch's own allocations included.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_model(samples: int = 3000, presets: tuple[str, ...] = ("tiny",), epochs: int = 1, batch_size: int = 30,
                generations: int = 200, threads: int = 1, seed: int = 0, progress: bool = True) -> list[dict]:
    """For each preset: its parameters, seconds per training epoch, the process's peak RSS after
    training, and greedy inference speed, batched (lines/s) and one step at a time (steps/s, as an
    agent acting in an episode calls it), with the held-in accuracy of those lines."""
    from .model import TrainOptions, train_new
    pairs = synthetic_pairs(samples, seed)
    rows = []
    for preset in presets:
        rss_before = _rss_mib()
        started = time.perf_counter()
        agent, result = train_new(pairs, preset, TrainOptions(epochs=epochs, batch_size=batch_size, seed=seed,
                                                              threads=threads), progress=progress)
        trained = time.perf_counter() - started
        held_in = pairs[:generations]
        sources = [s for s, _ in held_in]
        t = time.perf_counter()
        outputs = agent.generate(sources, max_new_tokens=24, threads=threads)
        batched = time.perf_counter() - t
        single = sources[:min(50, len(sources))]
        t = time.perf_counter()
        for source in single:
            agent.generate([source], max_new_tokens=24, threads=threads)
        one_by_one = time.perf_counter() - t
        t = time.perf_counter()
        for source, _ in held_in[:50]:
            agent.score(source, [target for _, target in held_in[:5]], threads=threads)
        scoring = time.perf_counter() - t
        source_tokens = [len(e.ids) for e in agent.tokenizer.encode_batch([s for s, _ in pairs])]
        rows.append({
            "preset": preset, "parameters": agent.parameters, "vocab": agent.tokenizer.get_vocab_size(),
            "samples": samples, "mean_source_tokens": sum(source_tokens) / len(source_tokens),
            "epoch_s": [round(s, 2) for s in result.seconds], "train_s": round(trained, 2),
            "losses": [round(x, 4) for x in result.losses],
            "peak_rss_mib": round(_rss_mib(), 1), "peak_rss_mib_before": round(rss_before, 1),
            "generate_lines_per_s_batched": round(len(sources) / batched, 1),
            "generate_steps_per_s_single": round(len(single) / one_by_one, 1),
            "score_calls_per_s_5_candidates": round(min(50, len(held_in)) / scoring, 1),
            "held_in_accuracy": round(sum(o == t for o, (_, t) in zip(outputs, held_in)) / len(held_in), 3),
            "threads": threads,
        })
    return rows


def bench_ranker(fold: str = "release", seed: int = 0, epochs: int = 30, corrector: str = "rules",
                 max_steps: int = 20, say=None) -> dict:
    """The ranking planner's live unit on one leave-tasks-out fold and seed, as the stage runs it
    (train on D_p, explore, train the judge, plan both test splits): wall seconds, peak RSS, and the
    unseen split's scores (the dataset's programs, not synthetic ones)."""
    from regula import envs, roles
    from regula.errors import UnknownNameError

    from . import pipeline as pl
    from .split import load_split, make_folds, program_tasks
    from .stage import _plan_records, _scores
    family = envs.get("virtualhome")
    programs = family.programs()
    folds = {f.name: f for f in make_folds(program_tasks(programs), load_split(program_tasks(programs)))}
    if fold not in folds:
        raise UnknownNameError("fold", fold, tuple(folds))
    split = folds[fold].split

    def make_episode(program):
        return family.make(0, program=program.id)
    started = time.perf_counter()
    train, _ = pl.executable_programs([programs[i] for i in split.train], make_episode)
    tests = {"seen": [programs[i] for i in split.test_seen], "unseen": [programs[i] for i in split.test_unseen]}
    settings = pl.Settings(preset="tiny", vocab_size=1, epochs=1, batch_size=1, lr=1.0, pretune_samples=1,
                           pretune_epochs=1, max_steps=max_steps, max_corrections=1)  # the ranker reads the last two
    runs, record = pl.ranker_unit(train, tests, roles.make("corrector", corrector), make_episode, settings, seed,
                                  epochs, say)
    seconds = time.perf_counter() - started
    return {"fold": fold, "seed": seed, "epochs": epochs, "train_programs": len(train), "seconds": round(seconds, 1),
            "peak_rss_mib": round(_rss_mib()), "d_f_samples": record["d_f_samples"],
            "unseen": {name: {m: v for m, v in _scores(_plan_records(runs[(name, "unseen")])).items()
                              if m in ("plans", "executability", "ended", "lcs")}
                       for name, _ in pl.RANKER_EVALUATIONS}}
