"""Critics: read trajectories, propose laws `G(phi_s -> X(phi_a))` from the paper's three sources.

1. environment failures: an action failed for a cause the state shows (the step's structured
   `cause`: an item missing, a thing never seen or not in view) -> `G(phi_s -> !a)`;
2. efficiency, as the critic's `efficiency` option says (`EFFICIENCY`):
   - `restrict` (the paper's critic, the default): actions the actor's rollouts show wasted,
     forbidden: an action that gained nothing (no achievement, no proposition made true, no
     resource gained; exploring or placing: nothing new on the map), in states told apart
     from those where it gained something -> `G(phi_s -> !a)`; and an action off the way to
     the goal, whose every observed gain is a proposition the goal never needs (the needs
     regressed from the goal as for `plan`, below) -> `G(!a)`. Laws only block: the choice
     among what is left stays the actor's;
   - `plan` (an option, not the paper's): the graph the trajectories trace, read as "action a
     was seen making proposition p true" edges, with each action's needs read off the hard
     laws; regressing from the goal through it gives, for each state on the way, the one
     action that moves toward the goal -> `G(phi_s -> a)` (laws that together spell a plan and
     leave the actor one action), and actions that changed nothing the agent holds or knows
     -> `G(phi_s -> !a)`;
3. over-constraint: states where the laws left no action (the shield's recorded conflicts)
   -> the laws that applied there are refined to exclude them, or removed.

Two critics behind one interface (the `critic` role, `regula.roles.Critic`):
`propose(evidence) -> CriticOutput`: the symbolic one (the embedded default, below) and the LLM
one (`llm_critic.py`). Neither decides what is kept:
`gate.py` parses, grounds and checks every proposal the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from regula import envs, roles
from regula.logic.formula import binary
from regula.logic.laws import Law

from . import hard_facts
from .form import conjunction_text, disjunction, letter_form, read
from .model import CrafterModel
from .rollout import failed, resources

CRAFTER = envs.get("crafter")
# The symbolic critic's efficiency source: `restrict` blocks wasted actions (the paper's critic),
# `plan` asks for the one action on the way to the goal (module doc).
EFFICIENCY = ("restrict", "plan")


@dataclass
class Proposal:
    formula: str
    source: str  # environment_failure | efficiency | over_constraint
    explanation: str = ""
    grounding: dict = field(default_factory=dict)  # an observed step where phi_s held


@dataclass
class CriticOutput:
    proposals: list = field(default_factory=list)
    removals: list = field(default_factory=list)  # (formula, reason)
    notes: list = field(default_factory=list)  # what the critic could not turn into a law


@dataclass
class Evidence:
    """Everything a critic may read: trajectories (rollouts, and demonstrations if given),
    the current laws, and the over-constraint conflicts the shield recorded. Steps are
    `regula.episodes` step records (props_before, skill, success, cause, props_after,
    inventory, inventory_delta, by, ...)."""

    model: CrafterModel
    episodes: list  # [{"origin": "rollout"|"demo", "seed", "iteration", "steps": [step records]}]
    hard: list
    soft: list
    conflicts: list = field(default_factory=list)  # [{"state": [...], "blocked": {...}}]

    def steps(self, origin: str | None = None):
        for e in self.episodes:
            if origin is None or e["origin"] == origin:
                for rec in e["steps"]:
                    yield e, rec

    def chosen(self):
        """The steps an agent chose toward its goal: a rollout's actor steps, and every step of
        a demonstration (the demonstrator's choices, its survival layer included)."""
        for e, rec in self.steps():
            if e["origin"] == "demo" or rec["by"] == "actor":
                yield e, rec

    def observed_states(self) -> list[frozenset]:
        seen, out = set(), []
        for _, rec in self.steps():
            s = frozenset(rec["props_before"])
            if s not in seen:
                seen.add(s)
                out.append(s)
        return out


@roles.register("critic", "symbolic")
class SymbolicCritic:
    """Induces laws from the trajectories alone (no LLM): see the module doc."""

    name = "symbolic"
    uses_llm = False

    def __init__(self, efficiency: str = "restrict"):
        if efficiency not in EFFICIENCY:
            raise ValueError(f"unknown efficiency source {efficiency!r}; one of {', '.join(EFFICIENCY)}")
        self.efficiency = efficiency

    def propose(self, ev: Evidence) -> CriticOutput:
        out = CriticOutput()
        self.model = ev.model
        self.atoms = ev.model.critic_atoms
        failures = self._failures(ev, out)
        fail_laws = [Law(p.formula, kind="soft", source=p.source) for p in failures]
        if self.efficiency == "plan":
            efficient = self._efficiency(ev, fail_laws, out)
            blocked = self._noops(ev, efficient, _made_progress)
        else:
            efficient, blocked = [], self._off_the_way(ev, fail_laws, out) + self._noops(ev, [], _gained)
        wanted = failures + self._refine(efficient + blocked, ev, out)
        wanted = list({p.formula: p for p in wanted}.values())
        current = {law.formula for law in ev.soft} | {law.formula for law in ev.hard}
        out.proposals = [p for p in wanted if p.formula not in current]
        wanted = {p.formula for p in wanted}
        for law in ev.soft:
            if law.formula not in wanted:
                out.removals.append((law.formula, "no longer the law the trajectories support "
                                                  "(refined or contradicted by newer evidence)"))
        return out

    # -- abstraction ------------------------------------------------------------------------
    def _project(self, props) -> frozenset:
        return frozenset(props) & frozenset(self.atoms)

    def _literals(self, props: frozenset) -> list[str]:
        return [a if a in props else f"!{a}" for a in self.atoms]

    def _separate(self, props: frozenset, against: list[frozenset]) -> list[str] | None:
        """A short conjunction of `props`' literals false in every state of `against`
        (greedy set cover); None when some state there agrees with `props` on every atom."""
        left = [s for s in set(against) if s != props]
        if len(left) < len(set(against)):
            return None
        chosen, lits = [], self._literals(props)
        while left:
            def kills(lit):
                return sum((lit[1:] in s) if lit.startswith("!") else (lit not in s) for s in left)
            best = max(lits, key=lambda lit: (kills(lit), -lits.index(lit)))
            if kills(best) == 0:
                return None
            chosen.append(best)
            left = [s for s in left if not ((best[1:] in s) if best.startswith("!") else (best not in s))]
        return sorted(chosen, key=lits.index)

    # -- source 1: environment failures -------------------------------------------------------
    def _failures(self, ev: Evidence, out: CriticOutput) -> list[Proposal]:
        found: dict[str, Proposal] = {}
        atoms = set(ev.model.state_atoms)
        for ep, rec in ev.steps("rollout"):
            if rec["by"] != "actor" or not failed(rec):
                continue
            atom = self._atom_for(rec["cause"])
            if atom is None or atom not in atoms:
                out.notes.append(f"{rec['skill']} failed ({rec['reason']}): no proposition says why")
                continue
            if atom in rec["props_before"]:
                continue  # the cause is not what the state shows
            formula = letter_form(conjunction_text([f"!{atom}"]), disjunction([rec["skill"]], negate=True))
            if formula not in found:
                found[formula] = Proposal(
                    formula, "environment_failure",
                    f"{rec['skill']} failed with '{rec['reason']}' when {atom} was false",
                    {"seed": ep["seed"], "iteration": ep.get("iteration"), "t": rec["t"]})
        return list(found.values())

    def _atom_for(self, cause: dict) -> str | None:
        """The proposition whose falsity the failure's cause names, if one does."""
        kind = cause["kind"]
        if kind == "missing":
            if cause["item"] in hard_facts.tools():
                return f"has_{cause['item']}"
            return self.model.symbols.has_name(cause["item"], cause["need"])
        if kind == "not_seen":
            return f"{cause['thing']}_on_map"
        if kind == "not_in_view":
            return f"{cause['thing']}_in_view"
        return None

    # -- source 3: over-constraint ---------------------------------------------------------------
    def _refine(self, proposals: list[Proposal], ev: Evidence, out: CriticOutput) -> list[Proposal]:
        """A candidate that applies where the shield found no action left gets a literal more,
        one true in some other observed state where it applies, false in those conflict
        states; with no such literal it is dropped."""
        conflicts = {frozenset(c["state"]) for c in ev.conflicts}
        if not conflicts:
            return proposals
        states = ev.observed_states()
        kept = []
        for p in proposals:
            sa = read(Law(p.formula, kind="soft", source=p.source), ev.model.state_atoms, ev.model.actions)
            bad = [c for c in conflicts if sa.applies(c)]
            if not bad:
                kept.append(p)
                continue
            good = sorted((s for s in states if s not in conflicts and sa.applies(s)), key=sorted)
            extra = next((lits for g in good
                          if (lits := self._separate(self._project(g), [self._project(c) for c in bad]))), None)
            if extra is None:
                out.notes.append(f"dropped {p.formula}: it applies where the laws left no action, "
                                 "and no proposition tells those states apart")
                continue
            phi = sa.phi_s if sa.phi_s.op != "true" else None
            lits = conjunction_text(extra)
            formula = letter_form(binary("and", phi, lits) if phi is not None else lits, sa.phi_a)
            kept.append(Proposal(formula, "over_constraint",
                                 f"{p.explanation}; narrowed ({' & '.join(extra)}) after the laws left no "
                                 f"action in {len(bad)} state{'s' if len(bad) > 1 else ''}", p.grounding))
        return kept

    # -- source 2: efficiency, by regression over the observed effect graph -------------------
    def _achievers(self, ev: Evidence) -> dict[str, str]:
        """For each proposition, the action most often seen making it true (its edge in the
        abstract graph the trajectories trace)."""
        made: dict = {}
        for _, rec in ev.steps():
            if not rec["success"]:
                continue
            for p in set(rec["props_after"]) - set(rec["props_before"]):
                made.setdefault(p, {}).setdefault(rec["skill"], 0)
                made[p][rec["skill"]] += 1
        order = ev.model.actions
        return {p: max(counts, key=lambda a: (counts[a], -order.index(a))) for p, counts in made.items()}

    def _preconditions(self, laws) -> dict[str, list[str]]:
        """Atoms an action needs, read off laws `G(!(p & q) -> !a)` (hard ones and failure ones)."""
        need: dict = {}
        for law in laws:
            f = law.parsed
            if f.op != "G" or f.args[0].op != "implies":
                continue
            cond, act = f.args[0].args
            if act.op != "not" or act.args[0].op != "ap" or cond.op != "not":
                continue
            atoms = _conjuncts(cond.args[0])
            if atoms is not None:
                need.setdefault(act.args[0].name, [])
                need[act.args[0].name] += [a for a in atoms if a not in need[act.args[0].name]]
        return need

    def _efficiency(self, ev: Evidence, failure_laws: list, out: CriticOutput) -> list[Proposal]:
        """Backward from the goal: the goal action needs its preconditions; each missing one is
        made true by its achiever, which needs its own, and so on. Every node of that regression
        becomes `G(context & !p & needs(a) -> a)`: when p is the first missing precondition on
        the way to the goal and a can run, do a. Cycles are cut, and a precondition nothing has
        been seen to achieve ends its branch (noted)."""
        achievers = self._achievers(ev)
        need = self._preconditions(list(ev.hard) + failure_laws)
        goal = ev.model.goal
        if goal not in ev.model.actions:
            out.notes.append(f"goal {goal} is not an action; no efficiency laws")
            return []
        rules: dict[str, Proposal] = {}

        def action(a: str, ctx: list[str], stack: tuple, target: str | None):
            pre = [p for p in need.get(a, []) if p not in ctx]
            for i, p in enumerate(pre):
                atom(p, ctx + pre[:i] + [f"!{p}"], stack + (a,))
            lits = _dedupe(ctx + pre)
            formula = letter_form(conjunction_text(lits), disjunction([a]))
            if formula not in rules:
                why = f"on the way to {goal}" + (f", {a} makes {target} true" if target else "")
                rules[formula] = Proposal(formula, "efficiency", why + (f" (needs {', '.join(pre)})" if pre else ""),
                                          {"depth": len(stack), "action": a})

        def atom(p: str, ctx: list[str], stack: tuple):
            a = achievers.get(p)
            if a is None:
                out.notes.append(f"nothing was seen making {p} true; no law for it")
                return
            if a in stack:
                return
            action(a, ctx, stack, p)

        action(goal, [], (), None)
        # Deepest first: the laws for the first steps toward the goal come before those near it.
        return sorted(rules.values(), key=lambda p: -p.grounding["depth"])

    def _needed(self, ev: Evidence, failure_laws: list, out: CriticOutput) -> set[str] | None:
        """The propositions the goal needs, regressed through the observed achievers and the
        laws' needs (as `_efficiency`); None when the goal is not an action or some needed
        proposition was never seen true (the way is not known to its end: what lies off it is
        not known either)."""
        achievers = self._achievers(ev)
        need = self._preconditions(list(ev.hard) + failure_laws)
        if ev.model.goal not in ev.model.actions:
            out.notes.append(f"goal {ev.model.goal} is not an action; no efficiency laws")
            return None
        needed, todo, seen = set(), [ev.model.goal], set()
        while todo:
            a = todo.pop()
            seen.add(a)
            for p in need.get(a, []):
                needed.add(p)
                if achievers.get(p) and achievers[p] not in seen:
                    todo.append(achievers[p])
        seen_true = {p for _, rec in ev.steps() for p in (*rec["props_before"], *rec["props_after"])}
        unknown = sorted(needed - seen_true)
        if unknown:
            out.notes.append(f"{', '.join(unknown)} never seen true; no action is called off the way")
            return None
        return needed

    def _off_the_way(self, ev: Evidence, failure_laws: list, out: CriticOutput) -> list[Proposal]:
        """Task actions the actor took whose every gain (propositions it made true, over all the
        trajectories) is one the goal never needs: `G(!a)`. The goal action, exploring and the
        survival actions are never blocked this way."""
        needed = self._needed(ev, failure_laws, out)
        if needed is None:
            return []
        gains: dict = {}
        for _, rec in ev.steps():
            if rec["success"]:
                gains.setdefault(rec["skill"], set()).update(set(rec["props_after"]) - set(rec["props_before"]))
        found: dict[str, Proposal] = {}
        for ep, rec in ev.steps("rollout"):
            a = rec["skill"]
            if (rec["by"] != "actor" or not rec["success"] or a == ev.model.goal or not ev.model.is_task_action(a)
                    or a in CRAFTER.fights or gains.get(a, set()) & needed):
                continue
            made = sorted(gains.get(a, set())) or ["nothing"]
            found.setdefault(a, Proposal(
                letter_form(conjunction_text([]), disjunction([a], negate=True)), "efficiency",
                f"{a} is off the way to {ev.model.goal}: it was seen making {', '.join(made)}, none of which "
                f"the goal needs", {"seed": ep["seed"], "iteration": ep.get("iteration"), "t": rec["t"]}))
        return list(found.values())

    def _noops(self, ev: Evidence, keep: list[Proposal], progress) -> list[Proposal]:
        """Actions whose step made no `progress`, forbidden where they did so (kept out of
        states where they made some), unless an efficiency law asks for them."""
        asked = {p.grounding["action"] for p in keep}
        changed: dict = {}
        noop: dict = {}
        for ep, rec in ev.steps():
            if not rec["success"]:
                continue
            props = self._project(rec["props_before"])
            if progress(rec):
                changed.setdefault(rec["skill"], []).append(props)
            elif ep["origin"] == "rollout" and rec["by"] == "actor":
                noop.setdefault((props, rec["skill"]), (ep, rec))
        found: dict[str, Proposal] = {}
        for (props, action), (ep, rec) in sorted(noop.items(), key=lambda kv: (sorted(kv[0][0]), kv[0][1])):
            if action in asked:
                continue
            lits = self._separate(props, changed.get(action, []))
            if lits is None:
                continue
            formula = letter_form(conjunction_text(lits), disjunction([action], negate=True))
            found.setdefault(formula, Proposal(
                formula, "efficiency", f"{action} left the abstract state unchanged here",
                {"seed": ep["seed"], "iteration": ep.get("iteration"), "t": rec["t"]}))
        return list(found.values())


def _made_progress(rec: dict) -> bool:
    """Did the step change what the agent holds (or, exploring or placing, what it knows of
    the map)? Walking reveals things as a side effect; only these two actions are for that."""
    before, after = set(rec["props_before"]), set(rec["props_after"])
    if resources(rec)[1] or {p for p in before ^ after if p.startswith("has_")}:
        return True
    if rec["skill"] == "explore" or rec["skill"].startswith("place_"):
        return any(p.endswith("_on_map") for p in after - before)
    return False


def _gained(rec: dict) -> bool:
    """Did the step gain something: an achievement, a proposition made true, a resource more
    (exploring or placing: something new on the map)? Spending alone is no gain: a second
    wooden pickaxe spends wood and gives nothing the agent did not have (the paper's example law
    `G(has_wooden_pickaxe -> X(!craft_wooden_pickaxe))`)."""
    before, after = set(rec["props_before"]), set(rec["props_after"])
    if rec["unlocked"] or any(v > 0 for v in resources(rec)[1].values()):
        return True
    if rec["skill"] == "explore" or rec["skill"].startswith("place_"):
        return any(p.endswith("_on_map") for p in after - before)
    return any(p.startswith("has_") for p in after - before)


def _conjuncts(f) -> list[str] | None:
    if f.op == "ap":
        return [f.name]
    if f.op == "and":
        a, b = (_conjuncts(x) for x in f.args)
        return None if a is None or b is None else a + b
    return None


def _dedupe(lits: list[str]) -> list[str]:
    out = []
    for lit in lits:
        if lit not in out:
            out.append(lit)
    return out
