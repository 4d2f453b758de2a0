"""The cedar_skills stage's section: Crafter skills learned as DFAs, and the learned DFAs played
as policies on held-out worlds beside the scripted expert."""
from __future__ import annotations

import pandas as pd

from regula.report import papers
from regula.report.tables import fmt, md, rate, read_detail
from regula.stages import TWIN, Paths
from . import report_mutations, report_tasks

STAGE = "cedar_skills"


def skill_rows(record: dict) -> pd.DataFrame:
    rows = []
    for r in record["skills"]:
        rows.append({
            "skill": r["skill"], "task text": r["text"], "letters": len(r["letters"]),
            "library skills called": " ".join(a for a in r["letters"] if a.startswith("@")) or "–",
            "template": r.get("template") or "–",
            "alphabets tried": len(r["alphabets"]), "states": r["states"], "EQ rounds": r["eq_rounds"],
            "teacher askings": r["teacher_queries"],
            **({"teacher calls (formula)": r["teacher_calls"]} if "teacher_calls" in r else {}),
            "cache repairs": r["repairs"],
            "learned DFA as policy": rate(r["policy_successes"], r["episodes"]),
            "scripted expert (not in the paper)": rate(r["expert_successes"], r["episodes"])})
    return pd.DataFrame(rows)


def formula_rows(record: dict) -> pd.DataFrame:
    """Per skill, the per-word teacher's row, the teacher as a formula's (`cedar.compare_formula`)
    and, with `cedar.formula_baseline`, a teacher that knows nothing (its formula `false`): teacher
    calls, the membership queries the formula answered, EQ rounds, states, held-out policy."""
    word = {r["skill"]: r for r in record["skills"]}
    silent = {r["skill"]: r for r in record.get("formula_none", [])}
    rows = []
    for f in record["formula"]:
        for form, r in (("per word", word.get(f["skill"])), ("formula", f),
                        ("no teacher (`false`)", silent.get(f["skill"]))):
            if r is None:
                continue
            calls = r.get("teacher_calls")
            rows.append({
                "skill": r["skill"], "teacher": form,
                "teacher calls": r["teacher_queries"] if calls is None else calls,
                "MQs (answered by)": f"{r['teacher_queries']} ({'the teacher' if calls is None else 'its formula'})",
                "calls (why)": "–" if calls is None else ", ".join(c["why"] for c in r["formula"]),
                "learned?": "yes" if r["reached"] else ("no: " + r["error"] if r.get("error") else "no"),
                "EQ rounds": r["eq_rounds"], "states": r["states"],
                "learned DFA as policy": rate(r["policy_successes"], r["episodes"]),
                "scripted expert": rate(r["expert_successes"], r["episodes"])})
    return pd.DataFrame(rows)


def _formula(record: dict) -> list[str]:
    if not record.get("formula"):
        return []
    calls = [f["teacher_calls"] for f in record["formula"]]
    return ["### The teacher as a formula (`cedar.compare_formula`)", "",
            "The same curriculum learned again with the teacher called once per alphabet for LTLf clauses over the "
            "letters (`cedar.teacher_form: formula`, `cedar/formula.py`): the logic core compiles them and answers "
            "every membership query; a word of the world's rollouts the formula gets wrong is the counterexample "
            f"of one more call, at most `cedar.formula_calls` per skill, past which the learner learns around the "
            f"formula's errors from the world's labels. The stand-in's clauses come from data.yaml's recipes, wrong "
            f"on the share `cedar.noise` of them. Teacher calls per DFA: {min(calls)} to {max(calls)}, "
            f"{sum(calls)} in all (the per-word teacher: {sum(r['teacher_queries'] for r in record['skills'])} "
            "askings). Its library, caches and DFAs are its own (`formula/` under the stage's); the expert plays "
            "the same worlds (its cache is keyed by the library as well)." + _silent(record), "",
            md(formula_rows(record)), ""]


def _silent(record: dict) -> str:
    """What a teacher that knows nothing learned beside the formula (`cedar.formula_baseline`)."""
    silent = record.get("formula_none")
    if not silent:
        return ""
    told = {r["skill"]: r for r in record["formula"]}
    fewer = sum(r["states"] < told[r["skill"]]["states"] or r["eq_rounds"] < told[r["skill"]]["eq_rounds"]
                for r in silent if r["skill"] in told)
    more = sum(r["states"] > told[r["skill"]]["states"] or r["eq_rounds"] > told[r["skill"]]["eq_rounds"]
               for r in silent if r["skill"] in told)
    return (f" The row `no teacher` learns the same curriculum with a formula that is `false` and stays so "
            f"(`cedar.formula_baseline`), the world's counterexamples alone: it learned "
            f"{sum(r['reached'] for r in silent)} of {len(silent)} skills, with more states or EQ rounds than "
            f"the formula's run in {more} and fewer in {fewer}; what the teacher adds is what separates the rows.")


def _teacher(record: dict, stage: str) -> str:
    """Who answered the membership queries: the twin's model, or the stand-in."""
    row = (record.get("llm") or {}).get(stage, {}).get("teacher")
    return f"LLM: {row['model']} at {row['endpoint']}" if row else "rules (stand-in)"


def twin_rows(record: dict, twin: dict) -> pd.DataFrame:
    """The twin's skills (its teacher on the LLM), each beside the stand-in's row for it."""
    stand_in = {r["skill"]: r for r in record["skills"]} if record else {}
    rows = []
    for r in twin["skills"]:
        for stage, run, m in ((STAGE, stand_in.get(r["skill"]), record), (STAGE + TWIN, r, twin)):
            if run is None:
                continue
            llm = run.get("teacher_llm") or {}
            rows.append({
                "skill": run["skill"], "stage": stage, "teacher": _teacher(m, stage),
                "learned?": "yes" if run["reached"] else ("no: " + run["error"] if run.get("error") else "no"),
                "letters": len(run["letters"]), "states": run["states"], "EQ rounds": run["eq_rounds"],
                "teacher askings (MQs)": run["teacher_queries"],
                "LLM calls (unusable)": f"{llm['calls']} ({llm['unusable']})" if llm.get("questions") else "–",
                "learned DFA as policy": rate(run["policy_successes"], run["episodes"])})
    return pd.DataFrame(rows)


_SAME = ("reached", "states", "eq_rounds", "teacher_queries", "policy_successes")  # a run's outcome, compared


def twin_formula_rows(twin: dict) -> pd.DataFrame:
    """The twin's formula pass (the model's clauses, per call) beside the same curriculum with a
    teacher that knows nothing (`cedar.formula_baseline`: its formula `false`)."""
    silent = {r["skill"]: r for r in twin.get("formula_none", [])}
    rows = []
    for r in twin["formula"]:
        none = silent.get(r["skill"])
        said = " / ".join("unusable" if not c["usable"] else " & ".join(c["clauses"]) for c in r["formula"])
        rows.append({
            "skill": r["skill"], "the model's clauses (each call)": said or "–",
            "LLM calls (unusable)": f"{r['teacher_llm'].get('calls', 0)} ({r['teacher_llm'].get('unusable', 0)})",
            "learned?": "yes" if r["reached"] else "no", "states": r["states"], "EQ rounds": r["eq_rounds"],
            "MQs (its formula)": r["teacher_queries"],
            "learned DFA as policy": rate(r["policy_successes"], r["episodes"]),
            **({"no teacher: learned?": "yes" if none["reached"] else "no", "no teacher: states": none["states"],
                "no teacher: EQ rounds": none["eq_rounds"],
                "no teacher: policy": rate(none["policy_successes"], none["episodes"])} if none else {}),
            "scripted expert": rate(r["expert_successes"], r["episodes"])})
    return pd.DataFrame(rows)


def _twin_formula(twin: dict) -> list[str]:
    if not twin.get("formula"):
        return []
    rows, silent = twin["formula"], {r["skill"]: r for r in twin.get("formula_none", [])}
    same = sum(s is not None and all(r[k] == s[k] for k in _SAME) for r in rows for s in [silent.get(r["skill"])])
    calls = sum(r["teacher_calls"] for r in rows)
    credit = (f" The same curriculum with a teacher that knows nothing (its formula `false`, asked again: `false`; "
              f"`cedar.formula_baseline`) ends the same way (learned or not, states, EQ rounds, MQs, policy) in "
              f"{same} of {len(rows)} skills: where the two runs agree, the skill was taught by the world's "
              f"counterexamples, not by the model's formula." if silent else "")
    return [f"Asked as a formula (`cedar.formula_skills`, at most `cedar.formula_calls` calls a skill), the model "
            f"wrote {calls} formulas for {len(rows)} skills; the answer's schema carries the law syntax as a pattern "
            "(`automata.teachers.clause_pattern`), which llama.cpp's grammar decoding follows, so every clause "
            f"parses. It learned {sum(r['reached'] for r in rows)} of {len(rows)} skills." + credit, "",
            md(twin_formula_rows(twin)), ""]


def _twin(paths: Paths, record: dict) -> list[str]:
    twin = read_detail(paths.metrics, STAGE + TWIN)
    if twin is None:
        return []
    teacher = (twin.get("llm") or {}).get(STAGE + TWIN, {}).get("teacher")
    cost = (f"The model answered {teacher['questions']} questions in {teacher['calls']} HTTP calls "
            f"({teacher['unusable']} still unusable after the re-asks: no answer, the word then counts as not a "
            f"member), {fmt(teacher['latency_s'])} s of model time, when they were asked."
            if teacher else "The model was asked nothing.")
    return ["### The teacher on a real model (`cedar_skills_llm`)", "",
            "The twin `cedar_skills_llm` runs the stage with `llm_runs.cedar` (params.yaml) laid over `cedar`: the "
            "teacher asks the LLM (`llm`) each membership query, on a budget a small local model answers in "
            "minutes (fewer skills, askings, rounds and worlds; no Table 2 or Table 5 runs); RAG's verbs stay "
            "`rag.verbs`' (outside `cedar`). Its answers are cached in `data/cache/llm/cedar_skills_llm/` and "
            "its MQ, EQ and expert caches in `data/cache/cedar_skills_llm/`, all kept in git, so `dvc repro` "
            "replays them. Its skills, each beside the stand-in's row:", "",
            md(twin_rows(record, twin)), "", cost, ""] + _twin_formula(twin)


def rag_rows(record: dict) -> pd.DataFrame:
    """Table 4: ours per kind of symbol (mean ± standard error over the held-out tasks), the
    paper's beside."""
    def cell(m):
        return "–" if m["mean"] is None else f"{m['mean']:.4f} ± {m['se']:.2f}"
    columns = papers.table("cedar_table4")["columns"]
    out = []
    for scope in ("all", "actions", "objects", "events"):
        metrics = record["rag"]["summary"][scope]
        out.append({"row": f"regula, {scope} (n={metrics['accuracy']['n']})",
                    **dict(zip(columns, (cell(metrics[m]) for m in ("accuracy", "overlap", "cosine"))))})
    paper = papers.table("cedar_table4")
    for label, values in paper["rows"].items():
        out.append({"row": f"paper: {label} ({paper['setting']})", **dict(zip(columns, values))})
    return pd.DataFrame(out)


_LETTERS = {"rules": ", the letters kept by the `rules` stand-in for the paper's LLM pick (what the skill's recipe "
                     "needs, wrong on the share `cedar.noise` of the candidates; `cedar.letters`)"}


def section(paths: Paths) -> list[str]:
    record = read_detail(paths.metrics, STAGE)
    if record is None:
        return []
    spent = record["this_run"]
    return ["## CEDAR: Crafter skills learned as DFAs", "",
            "Each skill's alphabet comes from RAG over Crafter's global alphabet (`regula.rag`)"
            + _LETTERS.get(record.get("letters", "retrieved"), "") + "; the teacher "
            "answers membership queries (the `rules` teacher is a stand-in built on data.yaml's rules, wrong on "
            "a fixed share of words); the world answers equivalence queries: a round plays the hypothesis as a "
            "policy on a batch of training worlds and every word it saw comes back with the world's label (over "
            "rounds, the majority of the worlds that labelled it). "
            "`learned DFA as policy` plays the final DFA on the held-out worlds (`cedar.worlds`); the scripted "
            "expert plays the same worlds with its own budget and the survival layer. Rates are k/n with a 95% "
            "Wilson interval.", "",
            md(skill_rows(record)), "",
            f"This run: {spent['env_steps']} environment steps, {spent['teacher_asked']} teacher askings, "
            f"{spent['llm_calls']} LLM calls (0, 0, 0 when the caches replayed everything).", "",
            "Skill DFAs: `data/cedar_skills/skills/<skill>.svg`, each linked under *Learned skill automata* "
            "(drawn there in report.html).", ""] + _formula(record) + _twin(paths, record) + [
            "### RAG: sub-alphabets against annotated targets (the paper's Table 4)", "",
            f"Nouns by MiniLM cosine and BM25, verbs by the `{record['rag']['verbs']}` backend of the `alphabet` "
            "role (`similarity`: a stand-in scoring verbs like nouns, no LLM), on the "
            f"{record['rag']['targets']} held-out tasks of `envs/crafter/alphabet_targets.yaml` (`rag` was tuned on "
            "the other half). Absolute accuracy |A_t ∩ Â|/|A_t|, overlap coefficient |A_t ∩ Â|/min(|A_t|, |Â|), "
            "and the cosine between Â's membership in A_t and its similarity scores; mean ± standard error. "
            f"Paper: {papers.table('cedar_table4')['paper']}, \"{papers.table('cedar_table4')['table']}\"", "",
            md(rag_rows(record)), ""] + report_tasks.lines(record, paths) + _counterexamples(paths)


def _counterexamples(paths: Paths) -> list[str]:
    path = paths.metrics / f"{STAGE}_counterexamples.csv"
    if not path.exists():
        return []
    return report_mutations.lines(pd.read_csv(path), paths)
