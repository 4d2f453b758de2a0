"""The `cedar_skills` stage: every skill in `cedar.skills` learned as a DFA (CEDAR §3.1-3.3),
then played as a policy on held-out worlds beside the scripted expert (a DFA the world never
confirmed is no policy: it fails them unplayed; a reported rollout that took no primitive step
is an error).

Per skill: RAG builds Σ from the skill's task text (`regula.rag`); the teacher answers
membership queries through the MQ cache; the world answers equivalence queries through the EQ
cache (`CrafterEquivalence`); a wider Σ is retrieved when the world shows Σ cannot do the
skill. Outputs: data/<stage>/skills/<skill>.{json,dot,svg} (the DFAs), data/<stage>/library.json
(the skill library), the caches data/cache/<stage>/{mq,eq,expert}/ (DVC outputs that persist,
so a rerun replays them: zero teacher askings, zero environment steps), metrics/<stage>.json
(headline), metrics/<stage>_detail.json, metrics/<stage>.csv (one row per skill).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from regula import envs, rag, roles, stages
from regula.automata import teachers
from regula.errors import UnknownNameError
from regula.episodes import check_moved
from regula.io import write_csv
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.stages import Paths, Work, world_seeds

from . import choose, formula, mutations, tasks
from .caches import EQCache, JsonCache, MQCache, RecordedTeacher
from .equivalence import CrafterEquivalence
from .learn import SkillRun, learn_skill
from .library import Library, Skill
from .rollout import Budget
from .words import MACRO

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params

CRAFTER = envs.get("crafter")


def _skills_known() -> list[str]:
    """Achievements the rules teacher can answer for: those a data.yaml recipe earns."""
    return [a for a in CRAFTER.rules.achievements if a in CRAFTER.rules.recipes]


def prepare(params: Params, paths: Paths) -> None:
    known = _skills_known()
    for skill in [*params.cedar.skills, *params.cedar.formula_skills, *params.cedar.tasks.tasks]:
        if skill not in known:
            raise UnknownNameError("CEDAR skill", skill, known)
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def _client(params: Params, paths: Paths, accounting: Accounting) -> LLMClient:
    llm = LLMConfig.from_params(params.llm, cache_dir=str(paths.llm_cache(params)))
    return LLMClient(llm.replace(max_tokens=params.cedar.max_tokens), paths.stage, accounting)


def _read_past(alphabet) -> frozenset:
    """Letters the rules teacher reads past: events (read off logs, changing nothing) and skills
    no recipe defines (`eat_cow`: nothing a recipe needs changes)."""
    return frozenset(alphabet.names("events")) | frozenset(set(CRAFTER.skill_names()) - set(CRAFTER.rules.recipes))


def make_teacher(params: Params, client: LLMClient | None, skill: str, text: str, alphabet,
                 library: Library | None = None) -> tuple[object, str]:
    """The teacher role for `skill`, and its name in the MQ cache (what makes its answers differ;
    a library skill is a letter of its own, `@s`, whose meaning is the skill's, not its DFA's)."""
    cfg = params.cedar
    library = library or Library()
    if roles.uses_llm("teacher", cfg.teacher):
        llm = params.llm
        calls = library.glossary(library.callable(library.skills))
        return (roles.make("teacher", cfg.teacher, client=client, description=text + calls),
                f"{cfg.teacher}:{llm.model}@{client.config.endpoint}:t={llm.temperature}")
    # A teacher reading held calls as the executor runs them answers otherwise: named apart in the cache.
    return (roles.make("teacher", cfg.teacher, goal=skill, noise=cfg.noise, kind="persistent",
                       seed=params.seed, ignore=_read_past(alphabet), calls=MACRO, held=cfg.call_held),
            f"{cfg.teacher}:noise={cfg.noise}:seed={params.seed}" + (":held" if cfg.call_held else ""))


def make_formula_teacher(params: Params, client: LLMClient | None, skill: str, text: str,
                         alphabet, silent: bool = False) -> formula.FormulaTeachers:
    """The teacher as a formula for `skill` (`cedar.teacher_form: formula`): the LLM's clauses
    (prompt `membership_formula`, the calls in Σ glossed) or the stand-in's from data.yaml's
    recipes, wrong on `cedar.noise` of them; called per alphabet and counterexample, at most
    `cedar.formula_calls` times. `silent`: the teacher that knows nothing (`formula.Silent`)."""
    cfg = params.cedar
    if silent:
        def source_for(atoms):
            return formula.Silent()
    elif roles.uses_llm("teacher", cfg.teacher):
        asker = LLMClient(client.config.replace(max_tokens=cfg.formula_tokens), client.stage, client.accounting,
                          cache=client.cache, log=client.log)

        def source_for(atoms):
            return teachers.LLMFormula(asker, text + formula.glossary(atoms), atoms)
    else:
        ignore = _read_past(alphabet)

        def source_for(atoms):
            return formula.CedarRulesFormula(skill, atoms, noise=cfg.noise, seed=params.seed, ignore=ignore)
    return formula.FormulaTeachers(source_for, cfg.formula_calls, drop=cfg.formula_drop)


def budget(params: Params) -> Budget:
    cfg = params.cedar
    return Budget(max_skills=cfg.max_skills, explore_tries=cfg.explore_tries, max_calls=cfg.max_calls,
                  upkeep=cfg.upkeep, dig=cfg.dig, dug_calls=cfg.dug_calls, arm=cfg.arm,
                  seek=cfg.seek, call_retry=cfg.call_retry,
                  call_held=cfg.call_held, forage=cfg.forage)


# The scripted expert's budget on a skill's held-out worlds: a fixed yardstick, not a params knob.
EXPERT_BUDGET = {"max_steps": 3000, "max_skills": 400}


def expert_rollout(unit: tuple[dict, str, int]) -> dict:
    """The scripted expert on one world (`unit`: env params, skill, world), a unit of work."""
    env, skill, world = unit
    w = CRAFTER.from_params(env, world)
    summary = CRAFTER.play_episode(w, CRAFTER.Expert(w, CRAFTER.ExpertConfig(goal=skill, **EXPERT_BUDGET)))
    return {"label": bool(summary.success), "steps": summary.steps, "skills": summary.skills}


@dataclass
class Learned:
    run: SkillRun
    template: str | None  # the library skill adapted, if any
    teacher: RecordedTeacher
    oracles: list  # one CrafterEquivalence per alphabet tried
    eq: EQCache


def learn(params: Params, caches: Path, skill: str, retriever, client, library: Library, progress,
          silent: bool = False) -> Learned:
    """One skill learned (§3.2) with what `library` holds (§3.3); caches under `caches`; `silent`:
    the formula teacher that knows nothing (`make_formula_teacher`)."""
    cfg = params.cedar
    text = retriever.task_text(skill)
    mq, eq = MQCache(caches / "mq" / f"{skill}.json"), EQCache(caches / "eq" / f"{skill}.json")
    if cfg.teacher_form == "formula":  # its answers are its clauses' verdicts: no MQ cache
        recorded = make_formula_teacher(params, client, skill, text, retriever.alphabet, silent)
    else:
        teacher, name = make_teacher(params, client, skill, text, retriever.alphabet, library)
        recorded = RecordedTeacher(teacher, name, mq)
    explore = range(cfg.explore_seed, cfg.explore_seed + cfg.explore_worlds)
    oracles: list[CrafterEquivalence] = []

    def oracle_for(letters):
        oracles.append(CrafterEquivalence(skill, explore, cfg.rollouts, budget(params), params.env.model_dump(), eq,
                                          patience=cfg.patience, library=library))
        return oracles[-1]

    # The skill's own verb and object are in Σ from the start, as the paper's skill query (v, n) names them.
    # Σ's events stay out of the DFA's letters: Crafter's counts are small enough for the DFA to count
    # (has_3_wood is three collect_wood), and an event only the world can produce is a letter no
    # rollout can label, where a teacher's wrong "yes" becomes a shortcut the policy cannot take.
    actions = set(CRAFTER.skill_names())

    objects = {a: retriever.alphabet.split_skill(a).objects for a in sorted(actions)}

    # The skill manager (§3.3): a stored skill with the same verb is the template; its letters and
    # its D, the noun substituted, start the learner.
    def retrieved(step, seen):
        return {a for a in retriever.letters(skill, step, seen=seen) if a in actions}

    # cedar.template: by description (MiniLM), by how much of the first Σ its adapted letters share, or none
    first = library.callable(retrieved(0, (skill,))) if cfg.template == "overlap" else None
    template = library.template(skill, text, first, actions) if cfg.template != "none" else None
    start, prior = (), None
    if template is not None:
        start, prior = Library.adapt(template, Library.substitution(template, skill, actions),
                                     library.callable if cfg.adapt_calls else None)

    def letters_for(step, lacked):
        # What the failed letters lacked joins Σ as the skills acting on it (`table`: place_table).
        seen = (skill,) + tuple(a for a, obj in objects.items() if set(obj) & set(lacked))
        found = retrieved(step, seen)
        # A template's letters stay (some already called as library skills: `@s` back to `s` first).
        found |= {a.lstrip(MACRO) for a in start}
        if cfg.letters == "rules":
            found = choose.choose(skill, found, objects, cfg.noise, params.seed, shown=seen[1:])
        return library.callable(found)

    def uncovered(letters, lacks) -> set:
        """What the skill's own letter failed for lack of that some skill gets and no letter of Σ
        does (§3.1: a symbol the counterexamples show outside Σ). Other letters' lacks are left
        out: a rollout exploring `make_iron_pickaxe` for place_table says nothing of tables."""
        got = {o for a in letters for o in objects.get(a.lstrip(MACRO), ())}
        return {x for x in lacks.get(skill, ()) if x not in got and any(x in obj for obj in objects.values())}

    run = learn_skill(letters_for, recorded, oracle_for, cfg.expansions,
                      {"max_rounds": cfg.max_rounds, "max_queries": cfg.max_queries,
                       "witnesses": cfg.witnesses},
                      progress=progress, prior=prior, uncovered=uncovered if cfg.widen_lacked else None)
    return Learned(run, template.name if template else None, recorded, oracles, eq)


def learn_one(params: Params, paths: Paths, skill: str, retriever, client, work: Work, library: Library,
              sub: str = "", silent: bool = False) -> dict:
    """`sub`: a pass beside the stage's own (`formula`, `cedar.compare_formula`; `formula_none`, its
    baseline), its caches and DFAs in that subfolder of the stage's; `silent`: see `learn`."""
    cfg = params.cedar
    caches = paths.data / "cache" / paths.stage / sub
    text = retriever.task_text(skill)
    learned = learn(params, caches, skill, retriever, client, library,
                    lambda line: work.progress(f"{paths.stage}: {skill}: {line}"), silent)
    run, template, recorded, oracles, eq = (learned.run, learned.template, learned.teacher, learned.oracles,
                                            learned.eq)
    out = paths.data / paths.stage / sub / "skills"
    run.dfa.save(out / f"{skill}.json")
    run.dfa.save_dot(out / f"{skill}.dot", title=f"{skill}: {text}")

    # The learned DFA as a policy on held-out worlds, and the scripted expert on the same ones.
    # Both played as units of work (in parallel where the runner allows), in the order of `worlds`.
    judge = CrafterEquivalence(skill, (), 0, budget(params), params.env.model_dump(), eq, library=library)
    worlds = world_seeds(params, cfg.worlds, cfg.episodes)
    # A DFA the world never confirmed (`reached` false) is no policy: it fails every world unplayed.
    # A played one that took no primitive step is an error, not a failure (`episodes.check_moved`).
    if run.reached:
        judge.prefetch([(run.dfa, w) for w in worlds], work, name="held-out")
    policy = [judge.rollout(run.dfa, w) for w in worlds] if run.reached else []
    for w, r in zip(worlds, policy):
        check_moved(r["steps"], f"{paths.stage} (held-out policy of {skill})", "the learned DFA", w)
    experts = JsonCache(caches / "expert" / f"{skill}.json")
    played = experts.data.setdefault(judge.setting, {})
    todo = [w for w in worlds if str(w) not in played]
    expert_steps = 0
    env = params.env.model_dump()
    for w, record in zip(todo, work.map(expert_rollout, [(env, skill, w) for w in todo], name="expert",
                                        label=lambda u: f"{skill} world={u[2]}")):
        played[str(w)] = record
        experts.dirty = True
        expert_steps += record["steps"]
    expert = [played[str(w)] for w in worlds]
    for w, r in zip(worlds, expert):
        check_moved(r["steps"], f"{paths.stage} (held-out worlds of {skill})", "the scripted expert", w)
    # Table 5 / Fig. 10: wrong variants of the learned DFA played on the same worlds.
    simulations = []
    if run.reached and cfg.simulations:
        wrong = mutations.mutants(run.dfa, cfg.mutants, cfg.mutation_seed)
        if wrong:
            simulations = mutations.discover(wrong, worlds, judge, cfg.simulations, work)
    eq.save()
    experts.save()
    # The teacher as a formula: its calls (each with its clauses) beside the queries its formula answered.
    form = {"teacher_calls": len(recorded.calls), "formula": recorded.calls,
            "formula_dropped": recorded.dropped} if cfg.teacher_form == "formula" else {}
    return {**form,
        "skill": skill, "text": text, "template": template,
        "examples": run.examples, "dfa": run.dfa, "letters": list(run.letters),
        "alphabets": [list(a) for a in run.alphabets],
        "states": run.dfa.size, "eq_rounds": run.rounds, "teacher_queries": run.teacher_queries,
        "membership_words": run.membership_words, "repairs": run.repairs, "reached": run.reached,
        "error": run.error,
        "history": run.history,
        "eq_rollouts": sum(o.played + o.replayed for o in oracles),
        "eq_steps": sum(o.steps_seen for o in oracles),
        "policy_successes": sum(r["label"] for r in policy), "expert_successes": sum(r["label"] for r in expert),
        "episodes": len(worlds),
        "simulations": simulations,
        "this_run": {"teacher_asked": recorded.asked,
                     "rollouts_played": sum(o.played for o in oracles) + judge.played + sum(r["played"] for r in simulations),
                     "env_steps": sum(o.steps_played for o in oracles) + judge.steps_played + expert_steps
                     + sum(r["steps_played"] for r in simulations)},
    }


def _curriculum(params: Params, paths: Paths, retriever, client, work: Work, accounting: Accounting,
                sub: str = "", silent: bool = False) -> tuple[list[dict], Library]:
    """Every skill of `cedar.skills` learned in turn, each with the library of those before it."""
    cfg = params.cedar
    rows = []
    library = Library()
    tag = f"{paths.stage}{f' ({sub})' if sub else ''}"
    for i, skill in enumerate(cfg.skills, 1):
        before = _teacher_cost(accounting, paths.stage)
        rows.append(learn_one(params, paths, skill, retriever, client, work, library, sub=sub, silent=silent))
        r = rows[-1]
        # what the skill's LLM answers cost when asked (0 for the stand-in; the same on a replay)
        r["teacher_llm"] = {k: v - before[k] for k, v in _teacher_cost(accounting, paths.stage).items()}
        dfa, examples = r.pop("dfa"), r.pop("examples")
        if cfg.library and r["reached"]:  # a skill the world confirmed is stored, and callable from then on
            library.add(Skill(skill, r["text"], dfa, examples))
        calls = f"{r['teacher_calls']} teacher calls, " if "teacher_calls" in r else ""
        work.progress(f"{tag}: skill {i}/{len(cfg.skills)} {skill}: {r['states']} states over "
                      f"{len(r['letters'])} letters, {r['eq_rounds']} rounds, {calls}{r['teacher_queries']} MQs; policy "
                      f"{r['policy_successes']}/{r['episodes']}, expert {r['expert_successes']}/{r['episodes']}")
    return rows, library


def run(params: Params, paths: Paths, work: Work) -> dict:
    cfg = params.cedar
    accounting = Accounting()
    client = _client(params, paths, accounting) if (
        roles.uses_llm("teacher", cfg.teacher) or rag.uses_llm(params.rag)) else None
    # Table 4 on the annotated targets' eval half (rag.halves: the dev half tuned `rag`), with
    # `rag.k` nouns; learning starts from `cedar.nouns` of them (fewer letters, fewer wrong answers).
    _, held_out = rag.halves(rag.targets("crafter"))
    rag_rows, rag_summary = rag.evaluate(held_out, rag.SkillAlphabets(params.rag, client).retrieve)
    retriever = rag.SkillAlphabets(params.rag.model_copy(update={"k": cfg.nouns}), client)
    work.progress(f"{paths.stage}: RAG on {len(held_out)} held-out tasks: accuracy "
                  f"{rag_summary['all']['accuracy']['mean']}, overlap {rag_summary['all']['overlap']['mean']}")
    rows, library = _curriculum(params, paths, retriever, client, work, accounting)
    compared = silent = []
    if cfg.compare_formula and cfg.teacher_form == "word":  # the same curriculum, the teacher as a formula
        formula_params = params.model_copy(update={"cedar": cfg.model_copy(update={
            "teacher_form": "formula", "simulations": 0, "skills": cfg.formula_skills or cfg.skills,
            "max_queries": cfg.formula_max_queries})})
        compared, _ = _curriculum(formula_params, paths, retriever, client, work, accounting, sub="formula")
        if cfg.formula_baseline:  # the same again with a teacher that knows nothing: what the world taught
            silent, _ = _curriculum(formula_params, paths, retriever, client, work, accounting,
                                    sub="formula_none", silent=True)
    table2 = base = []
    if cfg.tasks.trials:
        table2 = tasks.trials(params, paths, retriever, client, library, work, learn, budget)
        base = tasks.baseline(params, paths, client)
    library.save(paths.data / paths.stage, [
        {"name": r["skill"], "description": r["text"], "alphabet": r["letters"], "dfa": f"skills/{r['skill']}.json",
         "states": r["states"], "reached": r["reached"], "template": r["template"]} for r in rows])
    import pandas as pd
    write_csv(paths.metrics / f"{paths.stage}.csv", pd.DataFrame([
        {k: v for k, v in r.items() if k not in ("alphabets", "history", "this_run", "text", "simulations",
                                                 "teacher_llm", "formula", "formula_dropped")} | {
            "letters": " ".join(r["letters"])} for r in rows]))
    write_csv(paths.metrics / f"{paths.stage}_counterexamples.csv", pd.DataFrame(
        [{k: v for k, v in sim.items() if k not in ("played", "steps_played")} for r in rows for sim in r["simulations"]],
        columns=["skill", "mutant", "kind", "distance", "world", "found", "length", "counterexample"]))
    write_csv(paths.metrics / f"{paths.stage}_tasks.csv", pd.DataFrame(
        [{k: v for k, v in r.items() if k not in ("played", "steps_played", "asked")} for r in table2],
        columns=["task", "condition", "trial", "template", "teacher_queries", "eq_rounds", "states", "learned",
                 "world", "success", "error"]))
    spent = [row for roles_ in accounting.this_run().values() for row in roles_.values()]
    for r in rows:
        r.pop("simulations")  # in metrics/<stage>_counterexamples.csv
    record = {"skills": rows, "letters": cfg.letters,
              "rag": {"targets": len(held_out), "verbs": params.rag.verbs, "summary": rag_summary,
                      "rows": rag_rows},
              "tasks": tasks.summary(table2), "baseline": tasks.baseline_summary(base),
              "budget": tasks.budget_curve(rows, base),
              "llm": accounting.to_dict(),
              "this_run": {**{k: sum(r["this_run"][k] for r in rows) for k in rows[0]["this_run"]},
                           "llm_calls": sum(row.get("calls", 0) for row in spent)}}
    spent_t2 = {"teacher_asked": sum(r["asked"] for r in table2),
                "rollouts_played": sum(r["played"] for r in table2) + sum(b["played"] for b in base),
                "env_steps": sum(r["steps_played"] for r in table2) + sum(b["steps"] for b in base if b["played"])}
    for k, v in spent_t2.items():
        record["this_run"][k] += v
    if compared:  # the teacher as a formula beside the per-word teacher: its rows, and what it spent
        for r in compared:
            r.pop("simulations")
        record["formula"] = compared
        for r in silent:
            r.pop("simulations")
        if silent:
            record["formula_none"] = silent
        for k in ("teacher_asked", "rollouts_played", "env_steps"):  # the silent teacher asks no one
            record["this_run"][k] += sum(r["this_run"][k] for r in compared + (silent if k != "teacher_asked" else []))
    return stages.write_metrics(paths.metrics, paths.stage,
                                stages.headline_for(paths.stage, headline(record), COMPARES.__contains__), record)


# what the twin's headline keeps (cedar_skills_llm): the numbers that compare teachers
COMPARES = frozenset({"skills_learned", "skill_policy_success_rate", "teacher_queries_mean"})


def _teacher_cost(accounting: Accounting, stage: str) -> dict:
    """The teacher's LLM answers so far (per word and as a formula): questions, HTTP calls (re-asks
    included), unusable."""
    rows = [accounting.to_dict().get(stage, {}).get(role, {}) for role in ("teacher", "teacher_formula")]
    return {k: sum(row.get(k, 0) for row in rows) for k in ("questions", "calls", "unusable")}


def headline(record: dict) -> dict:
    """Skills learned (a rollout of the accepted round reached the goal), the learned policies'
    and the expert's successes pooled over skills and held-out worlds, the mean cost per skill
    (EQ rounds, teacher askings), Table 4's accuracy, and what this run spent in environment
    steps and LLM calls (0 and 0 on a replay; the teacher's askings are in the record)."""
    rows = record["skills"]
    n = sum(r["episodes"] for r in rows)
    return {"skills_learned": sum(r["reached"] for r in rows),
            "rag_accuracy": record["rag"]["summary"]["all"]["accuracy"]["mean"],
            "skill_policy_success_rate": round(sum(r["policy_successes"] for r in rows) / n, 3),
            "skill_expert_success_rate": round(sum(r["expert_successes"] for r in rows) / n, 3),
            "eq_rounds_mean": round(sum(r["eq_rounds"] for r in rows) / len(rows), 1),
            "teacher_queries_mean": round(sum(r["teacher_queries"] for r in rows) / len(rows), 1),
            "this_run_env_steps": record["this_run"]["env_steps"],
            "this_run_llm_calls": record["this_run"]["llm_calls"]}
