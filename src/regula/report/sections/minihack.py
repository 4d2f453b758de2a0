"""MiniHack's sections: the minihack_demos stage's (the scripted expert's demonstrations), the
minihack_shield stage's (the LTLCrit shield with the hand-written laws), the minihack_dive stage's
(DiVE's Tables 2 and 4) and the minihack_cedar stage's (one CEDAR skill DFA per task)."""
from __future__ import annotations

import pandas as pd

from regula.stages import Paths

from ..tables import md, paired_difference, rate, read_detail


def section(paths: Paths) -> list[str]:
    m = read_detail(paths.metrics, "minihack_demos")
    if not m or not m["demos"]:
        return []
    table = pd.DataFrame([{
        "task": r["task"], "seed": r["seed"], "skills": r["skills"], "steps": r["steps"],
        "achievements": f"{len(r['achievements'])}/{r['of']}: {', '.join(r['achievements'])}",
        "success": "yes" if r["success"] else f"no ({r['end']})"} for r in m["demos"]])
    lo, hi = m["eval_seeds"]
    return ["## MiniHack demonstrations (DiVE §4.2, issue 38)", "",
            "One scripted demonstration per task, as the DiVE paper gives its learner: the adapter's expert "
            "(`regula.envs.minihack`, docs/minihack.md) plays it in skills, recorded in the common episode log "
            f"(`data/minihack/demos/<task>/`). Seed{'s' if len(m['demo_seeds']) > 1 else ''} "
            f"{', '.join(map(str, m['demo_seeds']))}: apart from the "
            f"held-out seeds {lo}-{hi - 1} the MiniHack tables report on. Steps are primitive actions, "
            "prompts' answers included.", "", md(table), ""]


LAW_GROUPS = ("no_lava", "keep_ring_over_lava", "no_melee_minotaur", "never_walk_to_minotaur",
              "no_stairs_past_minotaur", "zap_at_a_target", "zap_the_minotaur")  # laws.yaml's, in its order
CHOOSERS = (("actor", "the actor's first proposal"), ("replan", "its proposal after a refusal"),
            ("fallback", "the shield's draw"))


def _group(law: str) -> str:
    """A law's family: `no_lava_e` -> `no_lava` (the eight directions of one rule)."""
    head, _, last = law.rpartition("_")
    return head if last in ("n", "ne", "e", "se", "s", "sw", "w", "nw") else law


def shield(paths: Paths) -> list[str]:
    """The minihack_shield stage's section: the random actor with and without the hand-written
    laws, the expert under them, rates with 95% Wilson intervals, what the shield refused and
    what its decisions earned."""
    m = read_detail(paths.metrics, "minihack_shield")
    if not m or not m["rows"]:
        return []
    lo, hi = m["seeds"]
    agent = {("random", "none"): "random, no shield", ("random", "laws"): "random, laws",
             ("expert", "laws"): "expert, laws (audit)"}
    table = pd.DataFrame([{
        "task": g["task"], "agent, shield": agent.get((g["agent"], g["shield"]), f"{g['agent']}, {g['shield']}"),
        "reached the stairs (95% Wilson)": rate(g["success"], g["episodes"]),
        "died (95% Wilson)": rate(sum(g["deaths"].values()), g["episodes"]),
        "deaths: lava / minotaur / other": " / ".join(str(g["deaths"].get(c, 0)) for c in ("lava", "minotaur", "other")),
        "skills run": g["skills"],
        "refused: proposals (steps)": f"{g['refused']} ({g['refused_steps']})" if g["shield"] != "none" else "–",
        "fallback draws": g["fallback"] if g["agent"] != "expert" and g["shield"] != "none" else "–",
        "committed skill broke a law": g["broken"] if g["shield"] != "none" else "–"} for g in m["rows"]])
    under = [g for g in m["rows"] if g["agent"] == "random" and g["shield"] == "laws"]
    groups = sorted({_group(law) for g in under for law in g["refused_by"]},
                    key=lambda x: LAW_GROUPS.index(x) if x in LAW_GROUPS else len(LAW_GROUPS))
    by_law = pd.DataFrame([{"task": g["task"], **{
        f"{x}{'_*' if x in ('no_lava', 'zap_at_a_target', 'zap_the_minotaur') else ''}":
            sum(n for law, n in g["refused_by"].items() if _group(law) == x) for x in groups},
        "law refusals / proposals refused": f"{sum(g['refused_by'].values())} / {g['refused']}"} for g in under])
    bare = {g["task"]: g for g in m["rows"] if g["agent"] == "random" and g["shield"] == "none"}
    credit = pd.DataFrame([{"task": g["task"], "achievement": a,
                            "no shield: unlocked": sum(bare[g["task"]]["unlocked_by"].get(a, {}).values())
                            if g["task"] in bare else "–",
                            **{f"laws: {label}": by.get(key, 0) for key, label in CHOOSERS}}
                           for g in under for a, by in g["unlocked_by"].items()])
    diffs, unclear = [], []
    for p in m.get("paired", []):
        n = p["both"] + p["laws_only"] + p["none_only"] + p["neither"]
        d_lo, d_hi = paired_difference(p["both"], p["laws_only"], p["none_only"], p["neither"])
        diffs.append(f"{p['task']} {100 * (p['laws_only'] - p['none_only']) / n:+.0f} points "
                     f"({100 * d_lo:+.0f} to {100 * d_hi:+.0f})")
        if d_lo <= 0:
            unclear.append(p["task"])
    share = [f"{g['task']} {100 * g['refused'] / (g['refused'] + g['skills'] - g['fallback']):.0f}%"
             for g in under if g["refused"] + g["skills"] - g["fallback"]]
    expert = [g for g in m["rows"] if g["agent"] == "expert"]
    expert_refused = sum(g["refused"] for g in expert)
    return ["## The LTLCrit shield on MiniHack (issue 38)", "",
            f"LTLCrit's shield with {m['laws']} hand-written hard laws (`src/regula/envs/minihack/laws.yaml`: no "
            "step into lava without levitation, never walk to the minotaur, zap only at a target, zap the minotaur "
            "when it is in line, ...), run through the environment interface alone (`regula.ltlcrit.transfer`), "
            f"on the held-out seeds {lo}-{hi - 1} (the laws were written on the dev seeds 0-9). The actor is "
            f"`{m['actor']}`: uniform over the {m['skills']} skills, seeded, at most {m['max_skills']} skills an "
            f"episode; a refused proposal goes back to it, at most {m['max_replans']} times, then a seeded draw among "
            "the allowed skills (the fallback). The expert plays the same seeds with every skill checked first: "
            "the laws audit it and refuse nothing it needs when its refusals are 0. Rates are k/n with a 95% "
            "Wilson interval; per-episode rows in `data/minihack/shield/episodes.csv`.", "", md(table), "",
            "Success under the laws minus without, the same seeds paired (95% interval, Newcombe's method for "
            f"paired rates): {'; '.join(diffs) or '–'}. The expert under the laws: "
            f"{sum(g['success'] for g in expert)}/{sum(g['episodes'] for g in expert)} reached the stairs, "
            f"{expert_refused} of its skills refused.", "",
            "What the shield refused: the random actor's refused proposals by law (a proposal can break two laws, "
            "so the law refusals can outnumber the proposals).", "", md(by_law), "",
            "Credit: in how many episodes each achievement was unlocked without the shield, and under the laws "
            "who chose the skill that unlocked it. A skill the "
            "fallback drew was the shield's choice among what it allowed; when the minotaur is in line and the "
            "agent holds the wand, `zap_the_minotaur_*` allows that one zap alone, so a kill there is the shield's "
            "decision, not the actor's.", "", md(credit), "",
            "What to compare it with. LTLCrit's paper (seed 003) measures its critic and shield in Minecraft only; it "
            "has no MiniHack numbers. Its nearest number, the share of an LLM actor's actions the critic blocked "
            "(InnerMonologue + LTLCrit 15%, its Table 2), is of another actor in another game; here the laws refused "
            f"{', '.join(share)} of the random actor's proposals. DiVE's MiniHack numbers (seed 004, Table 2; "
            "0.80 / 0.54 / 1.18 on Lava Crossing / Wand of Death / Quest as issue 38 quotes them) are the rewards of "
            "a different method (an LLM agent guided by discovered dynamics), not of a shield: nothing here is "
            "comparable to them.", "",
            "What the shield can and cannot do. It refuses what the state before a skill forbids, so the deaths a "
            "law names can go: the random actor's lava deaths, "
            f"{_deaths(m, 'lava', 'none')} without the laws and {_deaths(m, 'lava', 'laws')} under them. It cannot "
            "make an actor do what the task needs: in Wand of Death the minotaur walks down the corridor to the "
            "agent whatever the agent does, and only a zap kills it; the random actor rarely holds the wand when "
            "the minotaur is in line, and laws that refuse cannot make it pick the wand up, so the minotaur deaths "
            f"remain ({_deaths(m, 'minotaur', 'none')} without the laws, {_deaths(m, 'minotaur', 'laws')} under "
            "them). "
            + (f"Fewer deaths is not more successes: on {', '.join(unclear)} the paired interval of the gain in "
               "success holds 0. " if unclear else "")
            + "The laws were hand-written for these tasks from NetHack's rules (dynamics.yaml), not learned.", ""]


def _deaths(m: dict, cause: str, shield: str) -> int:
    """The random actor's deaths of one cause, over the tasks, with the shield or without."""
    return sum(g["deaths"].get(cause, 0) for g in m["rows"] if g["agent"] == "random" and g["shield"] == shield)


# Seed 004's Tables 2 and 4, quoted as printed (rewards of the paper's own achievement scheme,
# which its text does not define: "The agent is rewarded for unlocking achievements within each
# task", §4.2); Table 2's note: "Results marked with * were obtained using the official code
# implementation and evaluated over 10 runs."
PAPER_TASKS = ("lava_cross", "wand_of_death", "quest")
PAPER_TABLE2 = {"Reflexion": ("0.8±0.0", "0.32±0.15", "0.87±0.43"), "SSO*": ("0.8±0.0", "0.52±0.31", "0.91±0.29"),
                "DiVE": ("0.8±0.0", "0.54±0.34", "1.18±0.38")}
PAPER_TABLE4 = {"DiVE": ("0.80±0.00", "0.54±0.34", "1.18±0.38"), "w/o E": ("0.72±0.24", "0.52±0.30", "1.16±0.48"),
                "w/o V": ("0.69±0.25", "0.52±0.38", "1.18±0.38"), "w/o V&E": ("0.72±0.24", "0.40±0.40", "1.11±0.48"),
                "w/o D&V&E": ("0.72±0.17", "0.20±0.00", "0.41±0.29")}
ALTERED = "lava_freeze"  # tasks.yaml's §5.4 variant
DIVE_ROWS = {"dive": "DiVE", "no_evolver": "w/o E", "no_verifier": "w/o V", "no_verifier_no_evolver": "w/o V&E",
             "no_dynamics": "w/o D&V&E", "demo_replay": "copy the demonstration (baseline)",
             "random": "random skills (baseline)"}  # regula.dive.fact_agent.ROWS; the report imports no system


def dive(paths: Paths) -> list[str]:
    """The minihack_dive stage's section: Tables 2 and 4 measured, beside the paper's, with how
    each agent's decisions were made and what was learned."""
    m = read_detail(paths.metrics, "minihack_dive")
    if not m or not m["rows"]:
        return []
    tasks = list(dict.fromkeys(g["task"] for g in m["rows"]))
    by = {(g["task"], g["condition"]): g for g in m["rows"]}
    conditions = list(dict.fromkeys(g["condition"] for g in m["rows"]))

    def cell(g):
        return (f"{rate(g['successes'], g['episodes'])}; {g['achieved_mean']:.2f} ± {g['achieved_sd']:.2f}"
                if g else "–")

    ours = pd.DataFrame([{"row": DIVE_ROWS.get(c, c), **{t: cell(by.get((t, c))) for t in tasks}} for c in conditions])
    paper = pd.DataFrame([{"table": table, "row": row, **dict(zip(PAPER_TASKS, cells))}
                          for table, rows in (("Table 2", PAPER_TABLE2), ("Table 4", PAPER_TABLE4))
                          for row, cells in rows.items()])
    how = pd.DataFrame([{"task": d["task"], "row": DIVE_ROWS.get(d["condition"], d["condition"]),
                         **{k: d[k] for k in ("action", "evolved", "random", "retry", "replay")}}
                        for d in m["decisions"] if d["condition"] not in ("demo_replay", "random")])
    learned = pd.DataFrame([{
        "task": t, "facts discovered (precision / recall)":
            f"{f['discovered']['found']} ({f['discovered']['precision']} / {f['discovered']['recall']})",
        "verified (precision / recall)": f"{f['verified']['found']} ({f['verified']['precision']} / "
                                         f"{f['verified']['recall']})",
        "subgoal conditions discovered / verified": f"{f['conditions']['discovered']} / {f['conditions']['verified']}",
        "verified conditions": "; ".join(f["verified_conditions"]) or "–",
        "exploration skills": f["explored_skills"]} for t in tasks if (f := m["facts"].get(t))])
    lo, hi = m["seeds"]
    e_lo, e_hi = m["explore_seeds"]
    return [*_dive_tables(m, ours, paper, how, learned, lo, hi, e_lo, e_hi), *_altered(m, by)]


def _altered(m: dict, by: dict) -> list[str]:
    """The altered-dynamics study (seed 004, §5.4): on lava_freeze, what the discoverer read from
    the demonstration about freezing the lava and what the Verifier kept or rejected, with why."""
    f = m["facts"].get(ALTERED)
    if not f:
        return []
    about = [c for c in f["discovered_conditions"] if " freeze_lava " in c]
    kept = [c for c in f["verified_conditions"] if " freeze_lava " in c]
    gone = pd.DataFrame([r for r in f["rejected_conditions"] if " freeze_lava " in r["condition"]])
    g, bare = by.get((ALTERED, "dive")), by.get((ALTERED, "no_dynamics"))
    return ["### Altered dynamics (seed 004, §5.4): a wand to freeze the lava", "",
            "The paper changes Lava Crossing so that the only way across is to zap a wand that freezes the lava "
            "(it zaps a wand of death, which NetHack's own rules do not let freeze lava; the task `lava_freeze` here "
            "puts a wand of cold, whose ray does, in the ring's place), and shows that its Verifier rejects the "
            "Discoverer's wrong guess about when the zap works (\"adjacent to a wall that the wand can destroy\"). "
            f"Here the demonstration shows {len(about)} conditions for the zap that froze the lava; the Verifier "
            f"kept {len(kept)} ({'; '.join(kept) or 'none'}) and rejected the rest on the exploration's episodes. "
            "The demonstration zapped from the bank, with the lava next to the agent: a random zap in the "
            "exploration that froze lava from farther away (a ray flies 7 to 13 squares) is the counterexample "
            "that rejects `next_to_lava` and `lava_ahead`.", "", md(gone), "",
            (f"DiVE on `lava_freeze`: {rate(g['successes'], g['episodes'])} reached the stairs"
             + (f", against {rate(bare['successes'], bare['episodes'])} with no dynamics at all (w/o D&V&E). "
                if bare else ". ") if g else "")
            + "What it still gets wrong: `go_to stairs requires next_to_lava` passes verification, because the "
            "expert and the exploration around it always head for the stairs from the bank; the agent then looks "
            "for a lava bank before it goes to the stairs it sees. Episodes by another policy are what would "
            "refute such a habit.", ""]


def _dive_tables(m, ours, paper, how, learned, lo, hi, e_lo, e_hi) -> list[str]:
    return ["## DiVE on MiniHack (seed 004, Tables 2 and 4; issue 38)", "",
            "DiVE with its stand-ins (no LLM): the statistical discoverer reads each task's one demonstration "
            f"(seed {m['demo_seed']}), the Verifier checks what it found on {e_hi - e_lo} exploration episodes per "
            f"task (dev seeds {e_lo}-{e_hi - 1}: the expert taking a random skill with probability {m['epsilon']}), "
            "and the symbolic evolver chains the verified facts back from each subgoal's action "
            "(`regula.dive.fact_agent`, `regula.dive.fact_study`). The subgoals are the task's achievements in the "
            "demonstration's order, each with the skill that unlocked it there (the hierarchy every row keeps); "
            "a subgoal's conditions are what held, in the skill's own frame, before every step that unlocked it "
            "(\"zap wand unlocks kill_minotaur when minotaur_ahead\"). Each row plays the held-out seeds "
            f"{lo}-{hi - 1} (seeds 100-109 were looked at while the agent was built), at most {m['max_skills']} "
            "skills an episode. A cell: reached the stairs k/n (95% Wilson); the share of the task's achievements "
            "unlocked, mean ± sd over the seeds.", "", md(ours), "",
            "The paper's numbers, quoted (seed 004, Tables 2 and 4): rewards of its own achievement scheme, which "
            "its text does not define, so only the pattern is comparable, not the values; its DiVE is GPT-4o "
            "guided by LLM-discovered dynamics, ours the stand-ins above.", "", md(paper), "",
            "Credit: how each agent's skills were chosen, summed over the seeds. `action`: the subgoal's own skill; "
            "`evolved`: a step of a strategy the evolver built from the facts (or read from the experience: the "
            "skill that most often made the subgoal's conditions hold); `random`: a seeded draw among the skills the "
            "facts do not mask; `retry`: every allowed skill had failed in that state.", "", md(how), "",
            "What was learned, scored against `src/regula/envs/minihack/dynamics.yaml` (the ground truth, read only "
            "for these scores):", "", md(learned), "",
            "Copying the demonstration is the baseline that could explain a success: where it does as well as "
            "DiVE (the demonstration's skills already work on most held-out seeds), DiVE's dynamics add nothing "
            "there; where the level varies (Quest's monsters and stairs), copying fails and the learned conditions "
            "and strategies carry the agent.", ""]


def cedar(paths: Paths) -> list[str]:
    """The minihack_cedar stage's section: one CEDAR skill DFA per task, how it was learned, the
    DFA played as a policy beside copying the demonstration, and what of CEDAR transfers."""
    m = read_detail(paths.metrics, "minihack_cedar")
    if not m or not m["skills"]:
        return []
    by = {(g["task"], g["condition"]): g for g in m["rows"]}

    def cell(g):
        return f"{rate(g['successes'], g['episodes'])}; deaths {g['deaths']}" if g else "–"

    learned = pd.DataFrame([{
        "task": s["task"], "Σ (the demonstration's skills)": ", ".join(s["letters"]),
        "verified facts": len(s["facts"]), "DFA states": s["states"], "MQ words": s["membership_words"],
        "teacher wrong": s["teacher_wrong"], "EQ rounds (rollouts)": f"{s['rounds']} ({s['rollouts']})",
        "repairs": s["repairs"], "accepts the demonstration's word": "yes" if s["accepts_demo_word"] else "no",
        "its policy's first word": ("not learned: " + s["error"].split(";")[0]) if s["error"]
        else ", ".join(s["shortest_accepted"] or ["(accepts nothing)"])} for s in m["skills"]])
    played = pd.DataFrame([{"task": s["task"], "CEDAR skill DFA (reached the stairs, 95% Wilson)":
                            cell(by.get((s["task"], "cedar"))) + (" (not learned)" if s["error"] else ""),
                            "copy the demonstration (baseline)": cell(by.get((s["task"], "demo_replay")))}
                           for s in m["skills"]])
    lo, hi = m["seeds"]
    w_lo, w_hi = m["worlds"]
    e_lo, e_hi = m["explore_seeds"]
    failed = [s["task"] for s in m["skills"] if s["error"]]
    fights = any("fight requires monster_adjacent" in s["facts"] for s in m["skills"])
    return ["## CEDAR on MiniHack: one skill DFA per task (issue 38)", "",
            "CEDAR's active loop (seed 000, §3.2) on each task's goal, reaching the stairs, through the family "
            "interface alone (`regula.cedar.fact_skill`, stage `minihack_cedar`): Σ is the distinct skills of the "
            f"task's one demonstration (seed {m['demo_seed']}); the teacher, standing in for CEDAR's LLM, answers "
            "\"does this word do the task from the start?\" by simulating the word over the facts DiVE verified "
            f"from the demonstration and {e_hi - e_lo} exploration episodes (dev seeds {e_lo}-{e_hi - 1}; "
            "requires / prevented_by / gives / removes, the ground truth never read): every letter allowed in turn "
            "and the subgoals' skills in the demonstration's order, wrong on a persistent "
            f"{m['noise']:.0%} of the words. The learner is the project's KV learner that pins the world's labels "
            f"(`regula.automata.learning`); each equivalence round plays the hypothesis on dev seeds {w_lo}-"
            f"{w_hi - 1} (the demonstration's own labels pinned first) and labels every word its rollouts show; at "
            f"most {m['max_rounds']} rounds and {m['max_queries']} teacher askings a task. The DFA is then played as "
            "a policy (its shortest accepted word from where it is, re-planned after a refused skill, seeded random "
            f"letters of Σ when nothing accepting is reachable; at most {m['max_skills']} letters) on the held-out "
            f"seeds {lo}-{hi - 1}, the seeds DiVE's table uses, beside copying the demonstration (minihack_dive's "
            "baseline, the same episodes). A skill not learned within the budgets is played as CEDAR plays one: the "
            "DFA that accepts nothing, i.e. random letters of Σ.", "", md(learned), "", md(played), "",
            "What transfers: the learner and its repair of a noisy teacher by the world's labels, the teacher "
            "interface (a truth function in `NoisyTeacher`, asked a word of skills), the DFA run as a policy "
            "(`automata.policy`) and the world's equivalence rounds (rollouts whose prefixes and refused letters are "
            "labelled, each word the worlds' majority): none of them names Crafter. What does not, and why: CEDAR's "
            "retriever (RAG over Crafter's nouns and verbs, widening Σ by what a failed letter lacked) is replaced "
            "by the demonstration's skills, which hold every skill the tasks need (what the failing tasks lack is "
            "not a letter); its rules "
            "teacher reads data.yaml's recipes, and NetHack has no rules file, so the teacher simulates DiVE's "
            "verified facts, gaps included; the rollout budget (the survival upkeep, swords, digging, seeking, "
            "foraging, the explore skill) and the skill library's `@s` calls are Crafter's and have nothing to do "
            "here, where skills walk to their targets themselves. The deeper limit is the word: in Crafter a letter's "
            "preconditions come from earlier letters (items made or collected), so a word is a plan; in MiniHack "
            "they often come from the world: the minotaur walking into the wand's line, a monster coming next to "
            "the agent. No skill gives them, so the teacher refuses words that need them"
            + (" (`fight requires monster_adjacent` was verified, and no skill gives it)" if fights else "")
            + ", and how many waits or fights a seed needs varies, so the worlds label the same "
            "word differently and no DFA over these letters agrees with them"
            + (f" ({', '.join(failed)}: the budgets ran out)" if failed else "")
            + ". DiVE's subgoal conditions, read in a skill's frame and checked at every step, are what carries "
            "those tasks; where the task is a plan of skills (the ring, the wand of cold) the learned DFA is one, and "
            "its shortest word leaves out steps the demonstration took that fail on other seeds.", ""]
