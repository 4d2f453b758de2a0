"""The `<stage>_llm` twins' section: every LLM role against the model `llm` names, beside the
stand-ins, with what the answers cost (questions, calls, unusable answers, model time)."""
from __future__ import annotations

import pandas as pd

from regula.stages import TWIN, Paths

from ..tables import fmt, llm_table, md, rate, read_detail


def _model(accounting: dict) -> str:
    """`model at endpoint`, from any row of a twin's accounting (every role asks one `llm`)."""
    for roles in accounting.values():
        for row in roles.values():
            return f"{row['model']} at {row['endpoint']}"
    return "no model asked"


def _beside(paths: Paths, stage: str, row) -> list[dict]:
    """`row(stage, record)` for the stage (its stand-in) and its twin, those that have run."""
    return [{"stage": name, **row(record)} for name in (stage, stage + TWIN)
            if (record := read_detail(paths.metrics, name)) is not None]


def _feedback(fb: dict) -> dict:
    who = f"LLM: {fb['model']}" if fb.get("model") else f"{fb['backend']} (stand-in: data.yaml's recipes)"
    return {"predictor": who, "steps": fb["n"], "no usable answer": fb["unusable"],
            "right": rate(round(fb["accuracy"] * fb["n"]), fb["n"]),
            "precision": fmt(fb["precision"], 3), "recall": fmt(fb["recall"], 3)}


def _membership(m: dict) -> dict:
    who = (f"LLM: {_model(m['llm'])}" if m["llm"]
           else f"{m['backend']} (stand-in: data.yaml's rules, wrong on {m['noise']:.0%} of words)")
    return {"teacher": who, "words": m["n"], "members": m["members"], "no usable answer": m["unusable"],
            "right": rate(round(m["accuracy"] * m["n"]), m["n"]), "false yes": m["false_yes"],
            "false no": m["false_no"]}


def _membership_kinds(paths: Paths) -> list[dict]:
    """Right answers per word class (the edit that made the word), one column per teacher."""
    teachers = {name: record for name in ("membership", "membership" + TWIN)
                if (record := read_detail(paths.metrics, name)) is not None and "kinds" in record}
    # each stage's per-word teacher, then its teacher as a formula (asked once per goal) where it ran
    columns = [(name, record["kinds"]) for name, record in teachers.items()]
    columns += [(f"{name} as a formula", record["formula"]["kinds"]) for name, record in teachers.items()
                if "formula" in record]
    rows = []
    for kind in next(iter(teachers.values()))["kinds"] if teachers else ():
        row = {"word class": kind.replace("_", " ")}
        for name, kinds in columns:
            k = kinds[kind]
            row[f"{name}: right"] = rate(round(k["accuracy"] * k["n"]), k["n"]) if k["n"] else "–"
            row[f"{name}: false yes / no"] = f"{k['false_yes']} / {k['false_no']}" if k["n"] else "–"
        rows.append(row)
    return rows if teachers else []


def _formula_line(paths: Paths) -> str:
    """What the formula teachers cost and scored, one sentence per stage that ran one."""
    out = []
    for name in ("membership", "membership" + TWIN):
        record = read_detail(paths.metrics, name)
        if record is None or "formula" not in record:
            continue
        f = record["formula"]
        who = (f"the LLM, {_model(record['llm'])}" if record["llm"] else
               f"the stand-in from data.yaml's recipes, wrong on {record['noise']:.0%} of its clauses")
        line = (f"`{name}` as a formula, {who}: {f['calls']} calls for {len(f['goals'])} goals, "
                f"{f['unusable_calls']} unusable, {rate(round(f['accuracy'] * f['n']), f['n'])} words right")
        if r := f.get("refined"):
            line += (f"; asked again once per goal it got a word wrong, with the first such word as the "
                     f"counterexample ({r['calls']} more calls): {rate(round(r['accuracy'] * r['n']), r['n'])}")
        out.append(line + ".")
    return " ".join(out)


def _dive(m: dict) -> dict:
    who = f"LLM: {_model(m['llm'])}" if m["llm"] else f"{m['discoverer']} (stand-in)"
    agent = m["agent"].get("dive")
    return {"discoverer": who, "discovery steps": m["steps"], "discovered (its own)": m["discovered"]["n"],
            "precision": fmt(m["discovered"]["precision"], 3), "recall": fmt(m["discovered"]["recall"], 3),
            "verified": m["verified"]["n"], "verified precision": fmt(m["verified"]["precision"], 3),
            "verified recall": fmt(m["verified"]["recall"], 3),
            "DiVE agent score % (pooled, 95% interval)": (
                f"{fmt(agent['score'])} ({fmt(agent['score_interval'][0])}–{fmt(agent['score_interval'][1])}; "
                f"n={agent['episodes']}, at most {m['agent_max_skills']} skills)") if agent else "–",
            "DiVE agent per-episode score % (mean ± std)": (
                f"{fmt(agent['score_per_episode'])} ± {fmt(agent['score_per_episode_std'])}") if agent else "–"}


def section(paths: Paths) -> list[str]:
    twins = {stage: read_detail(paths.metrics, stage)
             for stage in ("feedback_llm", "membership_llm", "ltlcrit_llm", "dive_llm", "cedar_skills_llm")}
    if not any(twins.values()):
        return []
    accounting = {stage: record["llm"][stage] for stage, record in twins.items() if record and record["llm"]}
    lines = ["## Every LLM role against a real model", "",
             "The stages `feedback_llm`, `membership_llm`, `ltlcrit_llm`, `dive_llm` and `cedar_skills_llm` run "
             "their stage "
             f"with every role on the LLM ({_model(accounting)}; `llm` in params.yaml), on the budgets of `llm_runs` in params.yaml, "
             "beside the stand-ins. Answers are cached in `data/cache/llm/<stage>/` and kept in git, so "
             "`dvc repro` replays them with no server; with `make llm-local`, `make llm-rows` serves the model "
             "and asks it what the recorded answers lack. The default model is SmolLM2-135M-Instruct "
             "(Q4_1) served by llama.cpp on the CPU: it "
             "exercises the path, it does not stand in for the papers' GPT-4-class models, and its numbers "
             "are reported as they are.", "",
             "### What the answers cost", "",
             "Per stage and role, as recorded when each answer was asked: distinct questions, HTTP calls "
             "(re-asks included), answers still unusable after the re-asks (the role then goes on "
             "without them: an actor's proposal is refused like a name off the list, a prediction or membership answer counts "
             "as wrong (CEDAR's learner takes it as no), a critic's, discoverer's or evolver's answer is left out), "
             "and the model's time.", "", md(llm_table(accounting)), ""]
    if rows := _beside(paths, "feedback", _feedback):
        lines += ["### Feedback prediction: will a recorded skill succeed?", "", md(pd.DataFrame(rows)), ""]
    if rows := _beside(paths, "membership", _membership):
        lines += ["### Membership questions (CEDAR's teacher): does a word of skills accomplish the task?", "",
                  "Words per goal: its shortest plan and one-edit variations, half of them accomplishing it "
                  "by data.yaml's rules (which score the answers). The share of wrong answers is the noise "
                  "an active learner must survive (`automata_eval` learns under 0-20%).", "",
                  md(pd.DataFrame(rows)), ""]
        if kinds := _membership_kinds(paths):
            lines += ["How the answers fail, by word class (the same words for every teacher): the shortest "
                      "plan itself; a word cut short; two skills swapped (wrong order); a skill dropped (a "
                      "missing precondition, or the goal's own skill); a skill inserted or repeated (extra "
                      "letters). Rates are k/n with a 95% Wilson interval. `as a formula`: the same teacher "
                      "asked once per goal for an LTLf formula over the skills, which the logic core compiles "
                      "and evaluates on every word (docs/cedar.md).", "", md(pd.DataFrame(kinds)), ""]
            if line := _formula_line(paths):
                lines += [line, ""]
    if twins["ltlcrit_llm"]:
        lines += ["LTLCrit's twin: its rows, marked with the model and budget, are in the LTLCrit section's "
                  "table beside the stage's.", ""]
    if rows := _beside(paths, "dive", _dive):
        lines += ["### DiVE: dynamics discovered against data.yaml", "", md(pd.DataFrame(rows)), ""]
    if twins["cedar_skills_llm"]:
        lines += ["CEDAR's twin (its teacher on the LLM, `llm_runs.cedar`): its skills, each beside the stand-in's, "
                  "are in the CEDAR section.", ""]
    return lines
