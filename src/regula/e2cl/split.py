"""E2CL's task split on VirtualHome's programs: seen and unseen tasks, and held-out programs of seen tasks.

The paper (§3.1) splits ActivityPrograms' 285 tasks at random into 235 training and 50 test tasks
and evaluates on 50 seen and 50 unseen ones. Here `virtualhome-eval` ships 518 programs of 26 task
names, so the split is by task name: a seeded draw of unseen tasks (among those with enough
programs to evaluate on), every program of them in `test_unseen`; of each seen task a seeded
fraction of its programs in `test_seen`, the rest in `train`. The split is data (split.yaml),
written by `write_split` and checked against the programs by `load_split`.
"""
from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

from regula.errors import DataError

SPLIT_FILE = Path(__file__).with_name("split.yaml")
PARTS = ("train", "test_seen", "test_unseen")


@dataclass(frozen=True)
class Split:
    seed: int
    seen_tasks: tuple[str, ...]
    unseen_tasks: tuple[str, ...]
    train: tuple[str, ...]  # program ids
    test_seen: tuple[str, ...]
    test_unseen: tuple[str, ...]

    def part(self, program_id: str) -> str:
        for name in PARTS:
            if program_id in getattr(self, name):
                return name
        raise KeyError(program_id)


def make_split(tasks: dict[str, str], seed: int = 0, unseen: int = 5, heldout: float = 0.12,
               min_programs: int = 5) -> Split:
    """`tasks`: program id -> task name. `unseen` tasks drawn among those with at least
    `min_programs` programs; round(`heldout` x n) programs of each seen task held out."""
    by_task = defaultdict(list)
    for pid, task in sorted(tasks.items()):
        by_task[task].append(pid)
    rng = random.Random(seed)
    candidates = sorted(t for t, ids in by_task.items() if len(ids) >= min_programs)
    if len(candidates) < unseen:
        raise ValueError(f"only {len(candidates)} tasks have {min_programs}+ programs; {unseen} unseen asked")
    unseen_tasks = sorted(rng.sample(candidates, unseen))
    seen_tasks = sorted(set(by_task) - set(unseen_tasks))
    train, test_seen = [], []
    for task in seen_tasks:
        ids = list(by_task[task])
        rng.shuffle(ids)
        k = int(len(ids) * heldout + 0.5)
        test_seen += ids[:k]
        train += ids[k:]
    test_unseen = [pid for t in unseen_tasks for pid in by_task[t]]
    return Split(seed, tuple(seen_tasks), tuple(unseen_tasks), tuple(sorted(train)), tuple(sorted(test_seen)),
                 tuple(sorted(test_unseen)))


def render(split: Split, unseen: int, heldout: float, min_programs: int) -> str:
    counts = {p: len(getattr(split, p)) for p in PARTS}
    header = [
        "# E2CL's split of virtualhome-eval's programs (written by regula.e2cl.split.write_split; do not edit).",
        f"# seed {split.seed}: {unseen} unseen tasks drawn among the tasks with >= {min_programs} programs,",
        f"# {len(split.seen_tasks)} seen tasks; of each seen task round({heldout} x its programs) held out (test_seen).",
        f"# programs: train {counts['train']}, test_seen {counts['test_seen']}, test_unseen {counts['test_unseen']} "
        f"(of {sum(counts.values())}).",
    ]
    body = {"seed": split.seed, "unseen": unseen, "heldout": heldout, "min_programs": min_programs,
            "tasks": {"seen": list(split.seen_tasks), "unseen": list(split.unseen_tasks)},
            "programs": {p: list(getattr(split, p)) for p in PARTS}}
    return "\n".join(header) + "\n" + yaml.safe_dump(body, sort_keys=False, width=100)


def write_split(tasks: dict[str, str], path: Path = SPLIT_FILE, seed: int = 0, unseen: int = 5,
                heldout: float = 0.12, min_programs: int = 5) -> Split:
    split = make_split(tasks, seed, unseen, heldout, min_programs)
    Path(path).write_text(render(split, unseen, heldout, min_programs))
    return split


def load_split(tasks: dict[str, str], path: Path = SPLIT_FILE) -> Split:
    """The split file, checked against `tasks` (program id -> task name): every program in exactly
    one part, every id known, seen and unseen tasks disjoint and covering every task, each part's
    programs of the right tasks. Anything else is one DataError naming the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
        split = Split(int(data["seed"]), tuple(data["tasks"]["seen"]), tuple(data["tasks"]["unseen"]),
                      *(tuple(data["programs"][p]) for p in PARTS))
    except (OSError, yaml.YAMLError) as e:
        raise DataError(f"{path}: cannot read the split ({e})") from None
    except (KeyError, TypeError, ValueError) as e:
        raise DataError(f"{path}: not a split file (needs seed, tasks.seen/unseen, programs."
                        f"{'/'.join(PARTS)}; {type(e).__name__}: {e})") from None
    problems = _problems(split, tasks)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise DataError(f"{path}: the split does not match the programs: {'; '.join(problems[:3])}{more}")
    return split


def _problems(split: Split, tasks: dict[str, str]) -> list[str]:
    out = []
    seen, unseen = set(split.seen_tasks), set(split.unseen_tasks)
    if seen & unseen:
        out.append(f"tasks both seen and unseen: {sorted(seen & unseen)}")
    known = set(tasks.values())
    if seen | unseen != known:
        if known - seen - unseen:
            out.append(f"tasks in neither part: {sorted(known - seen - unseen)}")
        if (seen | unseen) - known:
            out.append(f"unknown tasks: {sorted((seen | unseen) - known)}")
    where = defaultdict(list)
    for part in PARTS:
        for pid in getattr(split, part):
            where[pid].append(part)
    out += [f"program {pid} in {' and '.join(parts)}" for pid, parts in sorted(where.items()) if len(parts) > 1]
    out += [f"unknown program {pid}" for pid in sorted(set(where) - set(tasks))]
    out += [f"program {pid} in no part" for pid in sorted(set(tasks) - set(where))]
    for part, allowed in (("train", seen), ("test_seen", seen), ("test_unseen", unseen)):
        out += [f"program {pid} ({tasks[pid]}) in {part}, its task is not {'seen' if allowed is seen else 'unseen'}"
                for pid in getattr(split, part) if pid in tasks and tasks[pid] not in allowed]
    return out


def program_tasks(programs) -> dict[str, str]:
    """program id -> task name, from the family's `programs()` table."""
    return {pid: p.task for pid, p in programs.items()}


RELEASE = "release"  # the fold that is split.yaml (the trained models' fold)


@dataclass(frozen=True)
class Fold:
    name: str
    split: Split


def make_folds(tasks: dict[str, str], release: Split, min_programs: int = 5, heldout: float = 0.12) -> list[Fold]:
    """Leave-tasks-out folds: every task with at least `min_programs` programs is unseen in exactly one
    fold. The first fold is `release` (split.yaml) as it is; the tasks it keeps seen are dealt, in a
    draw seeded with its seed, into folds of as many unseen tasks (the last may hold fewer). A
    program held out of a seen task is the same in every fold: release's own held-out programs, and
    for release's unseen tasks round(`heldout` x n) drawn with the seed."""
    by_task = defaultdict(list)
    for pid, task in sorted(tasks.items()):
        by_task[task].append(pid)
    rng = random.Random(release.seed)
    held = set(release.test_seen)
    for task in release.unseen_tasks:
        ids = list(by_task[task])
        rng.shuffle(ids)
        held |= set(ids[:int(len(ids) * heldout + 0.5)])
    rest = sorted(t for t, ids in by_task.items() if len(ids) >= min_programs and t not in release.unseen_tasks)
    rng.shuffle(rest)
    size = len(release.unseen_tasks)
    folds = [Fold(RELEASE, release)]
    for k, start in enumerate(range(0, len(rest), size), 1):
        unseen = tuple(sorted(rest[start:start + size]))
        seen = tuple(sorted(set(by_task) - set(unseen)))
        ids = [pid for t in seen for pid in by_task[t]]
        folds.append(Fold(f"fold{k}", Split(
            release.seed, seen, unseen, tuple(sorted(p for p in ids if p not in held)),
            tuple(sorted(p for p in ids if p in held)), tuple(sorted(p for t in unseen for p in by_task[t])))))
    return folds
