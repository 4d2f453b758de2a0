"""Membership questions: the `teacher` role (CEDAR's membership oracle) asked whether a word of
Crafter skills accomplishes a task, scored against data.yaml's rules.

The words per goal are its shortest plan and mutations of it (a skill inserted, dropped,
repeated, two swapped, the word cut short), labelled by `accomplishes` and drawn so that half
of them accomplish the goal. The teacher's error rate here is the noise the learner must
survive: `automata_eval` assumes one; this stage measures one (for `rules`, the rate it was
given; for `openai`, the model's).

With `membership.formula`, the same backend is also asked as a formula (`teachers.FormulaTeacher`:
once per goal, LTLf clauses over the skills that the logic core compiles and evaluates on every
word), scored on the same words, and (`formula_refine`) asked once more with the first word it got
wrong as a counterexample, then scored again.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING

from . import envs, roles, stages
from .automata import teachers
from .io import write_jsonl
from .llm import Accounting, LLMClient, LLMConfig, UnusableAnswer
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

CRAFTER = envs.get("crafter")
ALPHABET = tuple(sorted(CRAFTER.skill_names()))  # the letters the words are drawn over


# The class of a word by the edit that made it from the shortest plan (seed 000's reviewers asked
# how a teacher's membership answers fail): a repeated or inserted skill is an extra letter, a
# dropped one a missing precondition (every skill of a shortest plan is one, or the goal's own).
KINDS = {"plan": "plan", "cut": "too_short", "swap": "wrong_order", "drop": "missing_precondition",
         "insert": "extra_letters", "repeat": "extra_letters"}
WORD_CLASSES = tuple(dict.fromkeys(KINDS.values()))


def _mutations(plan: list[str], skills: list[str], rng: random.Random):
    """Endless variations of `plan`, one edit each, with the edit."""
    while True:
        word, i = list(plan), rng.randrange(len(plan))
        edit = rng.choice(("insert", "drop", "repeat", "swap", "cut"))
        if edit == "insert":
            word.insert(rng.randrange(len(word) + 1), rng.choice(skills))
        elif edit == "drop":
            del word[i]
        elif edit == "repeat":
            word.insert(i, word[i])
        elif edit == "swap" and len(word) > 1:
            j = rng.randrange(len(word))
            word[i], word[j] = word[j], word[i]
        else:
            edit, word = "cut", word[:i]
        yield tuple(word), edit


def words_for(goal: str, n: int, seed: int) -> list[dict]:
    """`n` distinct words for `goal`, half of them (rounded up) accomplishing it, each with its
    truth and its class (`KINDS`: the edit that first made it); the shortest plan first."""
    plan = CRAFTER.shortest_plan(goal)
    rng = random.Random(f"membership:{seed}:{goal}")
    want = {True: (n + 1) // 2, False: n // 2}
    chosen: dict[tuple, bool] = {tuple(plan): True}
    kinds = {tuple(plan): "plan"}
    for attempt, (word, edit) in enumerate(_mutations(plan, sorted(CRAFTER.skill_names()), rng)):
        if sum(chosen.values()) >= want[True] and len(chosen) - sum(chosen.values()) >= want[False]:
            break
        if attempt > 100 * n:  # a goal whose plan has too few variations of one kind
            break
        truth = CRAFTER.accomplishes(goal, word)
        if word not in chosen and sum(v == truth for v in chosen.values()) < want[truth]:
            chosen[word], kinds[word] = truth, KINDS[edit]
    return [{"goal": goal, "word": list(word), "truth": truth, "kind": kinds[word]} for word, truth in chosen.items()]


def make_teacher(params: Params, client: LLMClient | None, goal: str):
    cfg = params.membership
    if roles.uses_llm("teacher", cfg.backend):
        return roles.make("teacher", cfg.backend, client=client, description=goal.replace("_", " "))
    return roles.make("teacher", cfg.backend, goal=goal, noise=cfg.noise, kind="persistent",
                      seed=params.seed)


def make_formula_teacher(params: Params, client: LLMClient | None, goal: str) -> teachers.FormulaTeacher:
    """The teacher as a formula over every skill (the words' letters), from the backend's source:
    the LLM's, or the stand-in's from data.yaml's recipes, wrong on `noise` of its clauses."""
    cfg, alphabet = params.membership, ALPHABET
    if roles.uses_llm("teacher", cfg.backend):
        source = teachers.LLMFormula(client, goal.replace("_", " "), alphabet)
    else:
        source = teachers.RulesFormula(goal, alphabet, noise=cfg.noise, seed=params.seed)
    return teachers.FormulaTeacher(source, alphabet)


def score(rows: list[dict]) -> dict:
    """Right answers over all words: a word with no usable answer (None) counts as wrong."""
    c = Counter((r["answer"], r["truth"]) for r in rows)
    n = len(rows)
    return {"n": n, "accuracy": round((c[(True, True)] + c[(False, False)]) / n, 4) if n else None,
            "false_yes": c[(True, False)], "false_no": c[(False, True)],
            "members": sum(r["truth"] for r in rows), "unusable": sum(r["answer"] is None for r in rows)}


def prepare(params: Params, paths: Paths) -> None:
    for goal in params.membership.goals:
        CRAFTER.rules.recipe(goal)  # an unknown achievement stops here, naming the known ones
    # The stage's LLM cache folder is a DVC output: it must exist even when no call is made.
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def run(params: Params, paths: Paths, work: Work) -> dict:
    """The `membership` stage (or its twin, under `paths.stage`): data/<stage>/answers.jsonl (each
    word, its truth and the teacher's answer), metrics/<stage>.json (the scores, returned) and
    metrics/<stage>_detail.json (scores per goal, the backend, the LLM's accounting; `formula`: the
    teacher as a formula's scores, calls, clauses per goal, and after its refinement)."""
    cfg = params.membership
    accounting, client, formula_client = Accounting(), None, None
    if roles.uses_llm("teacher", cfg.backend):
        llm = LLMConfig.from_params(params.llm, cache_dir=str(paths.llm_cache(params)))
        client = LLMClient(llm, paths.stage, accounting)
        formula_client = (LLMClient(llm.replace(max_tokens=cfg.formula_tokens), paths.stage, accounting)
                          if cfg.formula else None)
    rows, formulas = [], {}
    for goal in cfg.goals:
        teacher = make_teacher(params, client, goal)
        ft = make_formula_teacher(params, formula_client, goal) if cfg.formula else None
        for w in words_for(goal, cfg.words, params.seed):
            votes = []
            for i in range(cfg.samples):
                try:
                    votes.append(teacher.member(tuple(w["word"]), sample=i))
                except UnusableAnswer:  # no vote (counted by the client); no vote at all: no answer
                    pass
            rows.append({**w, "answer": sum(votes) * 2 > len(votes) if votes else None})
            if ft is not None:
                rows[-1]["formula_answer"] = _formula_answer(ft, w["word"])
        line = f"{paths.stage}: {goal}: {score([r for r in rows if r['goal'] == goal])}"
        if ft is not None:
            mine = [r for r in rows if r["goal"] == goal]
            formulas[goal] = f = _formula_record(ft, mine)
            line += (f"; as a formula ({f['calls']} call, {f['unusable_calls']} unusable): "
                     f"{f['right']}/{f['n']} right")
            wrong = next((r for r in mine if r["formula_answer"] != r["truth"]), None)
            if cfg.formula_refine and wrong is not None:
                # the first word it got wrong, as the world's counterexample: asked once more
                calls, unusable = ft.calls, ft.unusable
                ft.refine(tuple(wrong["word"]), wrong["truth"])
                for r in mine:
                    r["refined_answer"] = _formula_answer(ft, r["word"])
                got = score([{**r, "answer": r["refined_answer"]} for r in mine])
                f["refined"] = {**got, "counterexample": wrong["word"], "label": wrong["truth"],
                                "calls": ft.calls - calls, "unusable_calls": ft.unusable - unusable,
                                "clauses": ft.clauses}
                line += f", {round(got['accuracy'] * got['n'])}/{got['n']} after one counterexample"
            else:
                for r in mine:
                    r["refined_answer"] = r["formula_answer"]
        work.progress(line)
    write_jsonl(paths.data / paths.stage / "answers.jsonl", rows)
    record = {**score(rows), "backend": cfg.backend, "noise": cfg.noise if client is None else None,
              "goals": {g: score([r for r in rows if r["goal"] == g]) for g in cfg.goals},
              "kinds": {k: score([r for r in rows if r["kind"] == k]) for k in WORD_CLASSES},
              "llm": accounting.to_dict()}
    if cfg.formula:
        scored = [{**r, "answer": r["formula_answer"]} for r in rows]
        record["formula"] = {
            **score(scored), "calls": sum(f["calls"] for f in formulas.values()),
            "unusable_calls": sum(f["unusable_calls"] for f in formulas.values()),
            "goals": formulas, "kinds": {k: score([r for r in scored if r["kind"] == k]) for k in WORD_CLASSES}}
        if cfg.formula_refine:  # every goal's answers after its one counterexample (none: as they were)
            refined = [{**r, "answer": r["refined_answer"]} for r in rows]
            record["formula"]["refined"] = {
                **score(refined), "calls": sum(f.get("refined", {}).get("calls", 0) for f in formulas.values()),
                "kinds": {k: score([r for r in refined if r["kind"] == k]) for k in WORD_CLASSES}}
    return stages.write_metrics(paths.metrics, paths.stage,
                                stages.headline_for(paths.stage, headline(record), lambda key: True), record)


def headline(record: dict) -> dict:
    """What metrics/membership.json holds: how often the teacher was right (the rest, and the
    count of words, in the record)."""
    return {"teacher_accuracy": record["accuracy"]}


def _formula_answer(ft: teachers.FormulaTeacher, word) -> bool | None:
    try:
        return ft.member(tuple(word))
    except UnusableAnswer:  # no usable formula: no answer (scored wrong)
        return None


def _formula_record(ft: teachers.FormulaTeacher, rows: list[dict]) -> dict:
    """A goal's formula teacher: its score, its calls, and its clauses (the stand-in's: how many
    it was made wrong on)."""
    got = score([{**r, "answer": r["formula_answer"]} for r in rows])
    out = {**got, "right": round(got["accuracy"] * got["n"]) if got["n"] else 0, "calls": ft.calls,
           "unusable_calls": ft.unusable, "reason": ft.reason, "clauses": ft.clauses}
    wrong = getattr(ft.source, "wrong", None)
    if wrong is not None:
        out["wrong_clauses"] = {ft.source.truth[i]["text"]: how for i, how in sorted(wrong.items())}
    return out
