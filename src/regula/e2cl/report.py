"""The e2cl stage's section: E2CL on VirtualHome (seed 002), Tables 1-3 and 5 and Figs. 4-6 as
measured here (mean ± std over the training seeds) beside the paper's."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from regula.report import papers
from regula.report.tables import md, plt, rate, read_detail
from regula.stages import TWIN, Paths

STAGE = "e2cl"
FIGURE = "e2cl.png"
SIZES_FIGURE = "e2cl_sizes.png"
METRICS = ("executability", "affordance_rate", "lcs")  # the paper's three (Exec.: ended plans only)
# a table's columns: each measure (metrics.MEASURES) and its header
COLUMNS = (("executability", "Exec."), ("executability_any", "Exec. (any, old)"), ("ended", "ended"),
           ("repeats", "repeats"), ("affordance_rate", "AR"), ("lcs", "LCS"))
SHORT = {"bc": "BC", "e2cl": "E2CL", "retrieval_minilm": "MiniLM", "retrieval_minilm_remap": "MiniLM remapped",
         "retrieval_minilm_grounded": "MiniLM grounded",
         "retrieval_tfidf": "TF-IDF", "retrieval_tfidf_remap": "TF-IDF remapped", "fixed_light": "fixed plan",
         "ranker_bc": "ranker BC", "ranker_e2cl": "ranker E2CL", "ranker_no_dc": "ranker w/o D_c"}
RANKER_ROWS = ("ranker_bc", "ranker_e2cl", "ranker_no_dc")  # the ranking planner's (stage._rankers), every fold
BASELINE_ROWS = ("retrieval_minilm", "retrieval_minilm_remap", "retrieval_minilm_grounded", "retrieval_tfidf", "retrieval_tfidf_remap",
                 "fixed_light")
# evaluation (stage.EVALUATIONS) -> the row's label
LABELS = {"bc": "BC", "bc_si": "BC + SI (its own feedback)", "e2cl_no_si": "E2CL data, no SI",
          "e2cl": "E2CL (data + SI)", "no_df": "E2CL w/o D_f (+ SI)", "no_dc": "E2CL w/o D_c (+ SI)",
          "nat": "NAT (D_p said to succeed, D_f's failed steps said to fail)",
          "retrieval_minilm": "retrieval: nearest training program's script (MiniLM), no training",
          "retrieval_minilm_remap": "retrieval (MiniLM), ids remapped to the scene",
          "retrieval_minilm_grounded": "retrieval (MiniLM), grounded: ids remapped, a class the scene lacks "
                                       "replaced by its nearest-named one",
          "retrieval_tfidf": "retrieval: nearest training program's script (TF-IDF), no training",
          "retrieval_tfidf_remap": "retrieval (TF-IDF), ids remapped to the scene",
          "fixed_light": "fixed plan: one \"Turn on light\" script for every task",
          "ranker_bc": "ranking planner, BC (trained on D_p; candidates grounded in the scene)",
          "ranker_e2cl": "ranking planner, E2CL (SI: a judge trained on D_f, a correction head on D_c)",
          "ranker_no_dc": "ranking planner, E2CL w/o D_c (SI: the judge, the planner's next best as the correction)"}


def _ms(values: pd.Series, digits: int = 2) -> str:
    values = values.dropna()
    if values.empty:
        return "–"
    mean, std = f"{values.mean():.{digits}f}", f"{values.std(ddof=0):.{digits}f}"
    return mean if len(values) == 1 else f"{mean} ± {std}"


def _cells(rows: pd.DataFrame, splits=("seen", "unseen"), over: str = "seeds") -> dict:
    """Each measure as mean ± std over seeds (or folds), and Exec. pooled as k/n with its interval
    (a table written before a measure existed shows it as –)."""
    out = {}
    for split in splits:
        part = rows[rows["split"] == split]
        executable = int(round((part["executability"] * part["plans"]).sum()))
        for metric, short in COLUMNS:
            values = part[metric] if metric in part else pd.Series(dtype=float)
            out[f"{split} {short}" if len(splits) > 1 else short] = _ms(values)
        out[f"{split} executable plans, all {over}" if len(splits) > 1 else f"executable plans, all {over}"] = \
            rate(executable, int(part["plans"].sum()))
    return out


def _release(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the fold the models trained on (every row of a table from before the folds)."""
    return table[table["fold"] == "release"] if "fold" in table else table


def _measured(table: pd.DataFrame, evaluations, splits=("seen", "unseen")) -> pd.DataFrame:
    table = _release(table)
    return pd.DataFrame([{"row": LABELS[name], **_cells(table[table["evaluation"] == name], splits)}
                         for name in evaluations if (table["evaluation"] == name).any()])


def folds_table(table: pd.DataFrame, record: dict) -> pd.DataFrame:
    """Per leave-tasks-out fold, unseen tasks: its ceiling and each planner's LCS (the trained models'
    on the release fold alone, mean over seeds)."""
    unseen = table[table["split"] == "unseen"]
    rows = []
    for f in record["folds"]["runs"]:
        here = unseen[unseen["fold"] == f["fold"]]
        rows.append({"fold": f["fold"], "unseen tasks": ", ".join(f["unseen_tasks"]),
                     "programs (train / unseen)": f"{f['programs']['train']} / {f['programs']['unseen']}",
                     "ceiling LCS": "–" if f["ceiling_unseen_lcs"] is None else f"{f['ceiling_unseen_lcs']:.2f}",
                     **{f"{SHORT[n]} {short}": _ms(here[here["evaluation"] == n][metric])
                        for n in RANKER_ROWS[:2] for metric, short in (("executability", "Exec."), ("lcs", "LCS"))},
                     **{f"{SHORT[n]} LCS": _ms(here[here["evaluation"] == n]["lcs"])
                        for n in ("bc", "e2cl", *BASELINE_ROWS)}})
    return pd.DataFrame(rows)


def ranker_table(record: dict) -> pd.DataFrame:
    """The ranking planner's training per fold and seed: its loss per epoch (first, every tenth, last),
    what it explored and how well its judge fits D_f."""
    rows = []
    for r in record["folds"].get("ranker", []):
        losses = r["losses"]
        marks = sorted({0, *range(9, len(losses), 10), len(losses) - 1})
        rows.append({"fold": r["fold"], "seed": r["seed"], "D_p steps": r["steps"],
                     "loss by epoch": ", ".join(f"{k + 1}: {losses[k]:.3f}" for k in marks),
                     **({"correction head's loss, first -> last":
                         f"{r['correction_losses'][0]:.3f} -> {r['correction_losses'][-1]:.3f}"}
                        if "correction_losses" in r else {}),
                     "D_f": r["d_f_samples"], "D_f executed": f"{r['d_f_executed']:.2f}", "D_c": r["d_c_samples"],
                     "judge training accuracy": f"{r['judge_accuracy']:.3f}"})
    return pd.DataFrame(rows)


def _prompting(paths: Paths, splits=("seen", "unseen")) -> tuple[pd.DataFrame, str]:
    """The twin e2cl_llm's prompting baseline as Table 1's row, and who answered."""
    twin = read_detail(paths.metrics, STAGE + TWIN)
    path = Path(paths.metrics) / f"{STAGE}{TWIN}.csv"
    if twin is None or not path.exists() or not twin["prompting"]["rows"]:
        return pd.DataFrame(), ""
    who = (twin.get("llm") or {}).get(STAGE + TWIN, {}).get("planner") or {}
    label = f"prompting: {who.get('model', '?')} at {who.get('endpoint', '?')}"
    table = pd.read_csv(path)
    row = {"row": f"{label} (first {twin['prompting']['programs']} programs per split)", **_cells(table, splits)}
    cost = (f" It answered {who['questions']} questions in {who['calls']} HTTP calls ({who['unusable']} unusable)."
            if who.get("questions") else "")
    return pd.DataFrame([row]), (
        f"The prompting row is the twin `{STAGE}{TWIN}` (`llm_runs.e2cl`): the LLM, shown one expert program of the "
        "training task whose name and description share the most words with the task's, answers each next step "
        "(no feedback, no speculative inference); the paper prompts GPT-4o (its Language-planner row)." + cost)


def _paper(name: str) -> pd.DataFrame:
    paper = papers.table(name)
    return pd.DataFrame([{"row": k, **dict(zip(paper["columns"], v))} for k, v in paper["rows"].items()])


def _quote(name: str) -> str:
    paper = papers.table(name)
    return f"The paper ({paper['paper']}; {paper['setting']}), {paper['table']}"


def errors_table(errors: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6: failed steps on unseen tasks by error type, summed over seeds, BC against the method."""
    unseen = errors[errors["split"] == "unseen"]
    pivot = unseen.pivot_table(index="error_type", columns="evaluation", values="count", aggfunc="sum",
                               fill_value=0)
    rows = []
    for error_type in pivot.index:
        bc, ours = int(pivot.get("bc", {}).get(error_type, 0)), int(pivot.get("e2cl", {}).get(error_type, 0))
        rows.append({"error type": error_type, "BC": bc, "E2CL (data + SI)": ours,
                     "change": "–" if not bc else f"{100 * (ours - bc) / bc:+.0f}%"})
    return pd.DataFrame(rows)


def feedback_table(feedback: pd.DataFrame) -> pd.DataFrame:
    """Fig. 5: the method's model on unseen tasks, its check's feedback from four sources."""
    return pd.DataFrame([{"feedback in the check": kind, **_cells(group.assign(split="unseen"), ("unseen",))}
                         for kind, group in feedback.groupby("feedback", sort=False)])


def corrections_table(corrections: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4: of failed steps, how often a model's correction is the expert's step, and executes."""
    rows = []
    for (split, condition), group in corrections.groupby(["split", "condition"], sort=False):
        cases = group["cases"]
        rows.append({"tasks": split, "model": LABELS[condition] if condition == "bc" else "E2CL",
                     "cases per seed": int(cases.iloc[0]),
                     "correction = expert's step": rate(int(round((group["expert_match"] * cases).sum())),
                                                        int(cases.sum())),
                     "correction executes": rate(int(round((group["executable"] * cases).sum())), int(cases.sum()))})
    return pd.DataFrame(rows)


def losses_table(losses: pd.DataFrame) -> pd.DataFrame:
    """Table 5's analogue: mean loss per epoch over seeds, per condition."""
    table = losses.groupby(["condition", "epoch"])["loss"].mean().unstack("epoch")
    return pd.DataFrame([{"condition": c, "training samples": int(losses[losses["condition"] == c]["samples"].iloc[0]),
                          **{f"epoch {e}": f"{v:.4f}" for e, v in row.items()}} for c, row in table.iterrows()])


def plot(errors: pd.DataFrame, feedback: pd.DataFrame, path: Path) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    table = errors_table(errors)
    ys = range(len(table))
    left.barh([y + 0.2 for y in ys], table["BC"], height=0.4, label="BC")
    left.barh([y - 0.2 for y in ys], table["E2CL (data + SI)"], height=0.4, label="E2CL (data + SI)")
    left.set_yticks(list(ys), table["error type"])
    left.set_xlabel("failed steps on unseen tasks (all seeds)")
    left.set_title("Error types (Fig. 6, measured here)")
    left.legend(fontsize=8)
    kinds = list(dict.fromkeys(feedback["feedback"]))
    for offset, metric in zip((-0.25, 0, 0.25), METRICS):
        means = [feedback[feedback["feedback"] == k][metric].mean() for k in kinds]
        right.bar([i + offset for i in range(len(kinds))], means, width=0.25, label=metric)
    right.set_xticks(range(len(kinds)), kinds)
    right.set_ylim(0, 1)
    right.set_title("Feedback in the check, unseen tasks (Fig. 5, measured here)")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def sizes_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """Fig. 3: BC and the method on unseen tasks per model size (smallest first)."""
    unseen = sizes[sizes["split"] == "unseen"].sort_values("parameters", kind="stable")
    rows = []
    for (model, name), group in unseen.groupby(["model", "evaluation"], sort=False):
        rows.append({"model": f"`{model}` ({int(group['parameters'].iloc[0]):,} parameters)",
                     "trained on": "/".join(sorted(set(group["device"]))), "row": LABELS[name],
                     **_cells(group, ("unseen",)), "LCS": _ms(group["lcs"], 3)})  # small values: 3 decimals
    return pd.DataFrame(rows)


def plot_sizes(sizes: pd.DataFrame, path: Path) -> None:
    unseen = sizes[sizes["split"] == "unseen"]
    order = unseen.groupby("model")["parameters"].first().sort_values()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, metric, short in zip(axes, METRICS, ("Exec.", "AR", "LCS")):
        for shift, name in ((-0.05, "bc"), (0.05, "e2cl")):
            part = unseen[unseen["evaluation"] == name].groupby("model")[metric]
            means, stds = part.mean().reindex(order.index), part.std(ddof=0).reindex(order.index)
            ax.errorbar([i + shift for i in range(len(order))], means, yerr=stds, marker="o", capsize=3,
                        label=LABELS[name])
        ax.set_xticks(range(len(order)), [f"{m}\n{p / 1e6:.1f}M" for m, p in order.items()])
        ax.set_title(f"unseen {short}")
    axes[0].legend(fontsize=8)
    fig.suptitle("Model size (Fig. 3, measured here): mean ± std over seeds", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _sizes(paths: Paths, record: dict) -> list[str]:
    path = Path(paths.metrics) / f"{STAGE}_sizes.csv"
    if "sizes" not in record or not path.exists():
        return []
    sizes = pd.read_csv(path)
    plot_sizes(sizes, Path(paths.reports) / SIZES_FIGURE)
    return [
        "### Fig. 3: model size (unseen tasks)", "",
        "BC and the method (data + SI) at each size (`e2cl.model` and `e2cl.sizes`), per training seed, each size "
        "with its own pre-tuning and exploration, the rest of the settings above. Only the plans and a record of "
        "each other size are kept (`data/e2cl/sizes/`), not their weights. *Trained on*: the run that made the "
        "kept units; a GPU's training is not bitwise reproducible, so a rerun there gives other numbers.", "",
        md(sizes_table(sizes)), "",
        "The paper (flan-t5 small, base, large: 77M, 248M, 783M parameters; values not printed): \"larger models "
        "perform relatively better across all aspects\", \"our method outperforms BC in both affordance rate and LCS "
        "across models with different parameter sizes\", and \"when using our method, smaller models achieve "
        "performance surpassing larger models using BC across all metrics\" (§3.4).", "",
        f"![E2CL by model size]({SIZES_FIGURE})", "",
    ]


def _folds(table: pd.DataFrame, record: dict) -> list[str]:
    if not record.get("folds", {}).get("runs"):
        return []
    over = table[table["evaluation"].isin((*RANKER_ROWS, *BASELINE_ROWS))]
    ranker = ranker_table(record)
    return [
        "### Leave-tasks-out folds (unseen tasks)", "",
        "Every task with at least 5 programs is unseen in exactly one fold (`split.make_folds`); `release` is "
        "`split.yaml`, the fold the T5 models train on (they plan it alone: ~40 min a seed on CPU). The ranking "
        "planner trains and plans every fold, every seed; the baselines train nothing and plan every fold. "
        "*Ceiling*: the mean over unseen programs of the best LCS any training program's script reaches as a copy.",
        "",
        md(folds_table(table, record)), "",
        "Over the folds (a cell: mean ± std over the folds, and the seeds for the ranker; executable plans pooled "
        "over them):", "",
        md(pd.DataFrame([{"row": LABELS[n], **_cells(over[over["evaluation"] == n], ("unseen",), "folds")}
                         for n in (*RANKER_ROWS, *BASELINE_ROWS) if (over["evaluation"] == n).any()])), "",
        *(["The ranking planner (`ranker.py`) scores candidate steps: the lines of the nearest training program's "
           "script (MiniLM), grounded in the scene, each training action on the objects of that script, of the "
           "history and of the scene's classes named by the task (where training paired them, or the object has "
           "in the scene's graph the properties the action's objects nearly always have: GRABBABLE, HAS_SWITCH, "
           "...), the put actions for the object last grabbed, and the end action; a small MLP over 18 "
           "features (the end action's among them: how many of the task's named classes and what "
           "share of the script's the plan has not named yet) "
           "ranks them, trained listwise on D_p (each training "
           "program beside a script retrieved from another task). E2CL on it: it explores the training programs "
           "as the T5's pre-tuned agent does (teacher-guided, then teacher-free with the same corrector), a judge "
           "(an MLP on the same and the history's features) learns from D_f whether a step executes, and a "
           "correction head (the same features, and how a candidate stands to the failed step) learns from D_c "
           "which step the corrector put in place of a failed one; under speculative inference a step judged to "
           "fail is replaced by the first of the head's five best judged to pass (w/o D_c: of the planner's next "
           "five). Its training per fold and seed:", "", md(ranker), ""] if not ranker.empty else []),
    ]


def _exploration(record: dict) -> pd.DataFrame:
    rows = []
    for s in record["per_seed"]:
        e = s["explore"]
        rows.append({"seed": s["seed"], **{k: v for k, v in sorted(e.items()) if not isinstance(v, (dict, list))},
                     "D_f samples": s["datasets"]["d_f_samples"], "D_c samples": s["datasets"]["d_c_samples"]})
    return pd.DataFrame(rows)


def section(paths: Paths) -> list[str]:
    record = read_detail(paths.metrics, STAGE)
    if record is None:
        return []
    read = lambda name: pd.read_csv(Path(paths.metrics) / name)  # noqa: E731
    table, errors, feedback = read("e2cl.csv"), read("e2cl_errors.csv"), read("e2cl_feedback.csv")
    corrections, losses = read("e2cl_corrections.csv"), read("e2cl_losses.csv")
    plot(errors, feedback, Path(paths.reports) / FIGURE)
    s, seeds = record["settings"], record["seeds"]
    parameters = record["per_seed"][0]["parameters"] if record["per_seed"] else None
    unseen = ("unseen",)
    prompting_note = _prompting(paths)[1]

    def table1(split: str) -> pd.DataFrame:
        return pd.concat([_measured(table, ("bc", "bc_si", "nat", "e2cl_no_si", "e2cl", *RANKER_ROWS, *BASELINE_ROWS),
                                    (split,)),
                          _prompting(paths, (split,))[0]], ignore_index=True)
    folds = _folds(table, record)
    return [
        "## E2CL: exploration, feedback and self-correction on VirtualHome (seed 002)", "",
        f"Measured here over training seeds {', '.join(map(str, seeds))} (a cell: mean ± std over them; "
        "executable plans pooled over the seeds as k/n with a 95% Wilson interval). "
        f"{record['train_programs']} training programs of the seen tasks (D_p {record['d_p_samples']} samples); the "
        "test plans are the held-out programs of seen tasks and all programs of the unseen tasks "
        "(`src/regula/e2cl/split.yaml`), in VirtualHome's evolving-graph simulator (one scene). "
        "**Stand-ins**, not the paper's: the agent is a T5 trained from scratch on CPU "
        f"(`{s['preset']}`, {parameters:,} parameters; the paper fine-tunes flan-t5, 77M-783M), pre-tuned "
        f"{s['pretune_epochs']} epochs on D_p' ({s['pretune_samples']} samples; the paper: one epoch), then "
        f"{s['epochs']} epochs at lr {s['lr']:g}, batch {s['batch_size']}; teacher-free exploration's "
        f"corrector is `{record['corrector']}` (the paper: GPT-4o). Plans stop after "
        f"{s['max_steps']} steps or at the end action.", "",
        "*Exec.*: the plan ended (the end action) within the step cap and every step executed; *Exec. (any, old)*: "
        "every step executed, ended or not (the number reported before: it counts a plan that walks to one room "
        "until the cap); *ended*: the share of plans that ended; *repeats*: the share with the same step twice in a "
        "row (8 of the 518 recorded programs have one). The rows that train nothing (`baselines.py`): the script "
        "of the training program whose task text (name and description) is nearest by all-MiniLM-L6-v2 or TF-IDF "
        "cosine, copied as it is or with each object id the scene lacks under that class replaced by the scene's "
        "lowest id of the class (*remapped*), or, *grounded* (MiniLM only, `grounding.py`), with also each class "
        "the scene lacks replaced by the scene's class whose name is nearest by MiniLM cosine; and one fixed "
        "\"Turn on light\" script for every task.", "",
        "### Tables 1 and 3: BC against the method, with and without speculative inference", "",
        "Unseen tasks:", "", md(table1("unseen")), "",
        "Seen tasks (held-out programs):", "", md(table1("seen")), "",
        *([prompting_note, ""] if prompting_note else []),
        _quote("e2cl_table1"), "", md(_paper("e2cl_table1")), "",
        _quote("e2cl_table3"), "", md(_paper("e2cl_table3")), "",
        "### Table 2: ablated data (unseen tasks, speculative inference in every row)", "",
        md(_measured(table, ("e2cl", "no_df", "no_dc", "bc_si", *RANKER_ROWS, *BASELINE_ROWS), unseen)), "",
        _quote("e2cl_table2"), "", md(_paper("e2cl_table2")), "",
        *folds,
        *_sizes(paths, record),
        "### Fig. 6: failed steps by error type (unseen tasks)", "",
        md(errors_table(errors)), "",
        "The paper: every error type fell by more than 24% against BC; *Over-occupied Agent* by 94.4%.", "",
        "### Fig. 5: feedback in the speculative check (the method's model, unseen tasks)", "",
        "*random*: a feedback text drawn from D_f's; *boolean*: whether the step executes (the simulator, tried and "
        "undone); *ours*: the model's own prediction; *ground_truth*: the simulator's feedback.", "",
        md(feedback_table(feedback)), "",
        "The paper (values not printed): random worst, then boolean, then the model's own, ground truth best.", "",
        f"![E2CL error types and feedback sources]({FIGURE})", "",
        "### Fig. 4: self-correction of failed steps", "",
        "Failed steps collected as teacher-guided exploration does (the method's model guessing along expert "
        "trajectories): seen = training programs, unseen = unseen tasks; each model corrects the same cases.", "",
        md(corrections_table(corrections)), "",
        "### Exploration and training", "",
        md(_exploration(record)), "",
        "Loss per epoch (mean over seeds; BC and NAT train from scratch, the method and its ablations continue "
        "from the pre-tuned model):", "",
        md(losses_table(losses)), "",
        _quote("e2cl_table5"), "", md(_paper("e2cl_table5")), "",
        f"This run trained {record['this_run']['trained']} models, explored {record['this_run']['explored']} times, "
        f"evaluated {record['this_run']['evaluated']} plan sets and made {record['this_run']['llm_calls']} LLM calls "
        "(a replay of the kept units: 0, 0, 0, 0).", "",
    ]
