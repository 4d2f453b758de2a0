"""One shielded episode: the actor proposes, the shield checks, the skill runs, all logged.

Per decision: the actor proposes; an unknown action is a failed action with feedback; a
blocked one gets the violated laws as feedback and the actor re-plans, at most `max_replans`
times; then the declared `fallback` policy picks among the allowed actions (`FALLBACKS`: a
simple policy, never a planner). When every action is blocked the shield falls back to the
hard laws and records the conflict (the critic's third source).

An episode is a `regula.episodes` episode: each step is the environment's record, chosen `by`
the actor or the survival layer (`upkeep`); an actor's step adds the proposals the shield `refused`,
the `conflict`s it recorded, and the actor's `thought` (a decision the fallback made ends its
`refused` list with `{"why": "fallback", "policy": ...}`), and how many actions the laws
`allowed` there (after the one that just failed is taken out). The summary holds the conflicts,
the laws the fallback broke, and the per-milestone costs.
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from regula import envs, episodes
from regula.episodes import attribution, unlocks_by
from regula.agents import SURVIVAL, Budget, Decision, run_episode
from regula.logic import Shield

from . import hard_facts
from .actors import Actor, Choice, View
from .model import MILESTONES, CrafterModel

if TYPE_CHECKING:
    from regula.params import Params

CRAFTER = envs.get("crafter")

# What picks the action once `max_replans` proposals were refused: `uniform`, a seeded uniform
# draw over the actions the laws allow; `ranked`, the actor's own choice restricted to them
# (`Actor.choose_allowed`), and a uniform draw where it names none of them (an LLM's unusable
# or off-list answer).
FALLBACKS = ("ranked", "uniform")
# The step record's version, in every rollout's inputs: 2 records the actions the laws allowed at
# each decision (an episode kept from version 1 cannot say who decided).
RECORD = 2


@dataclass(frozen=True, kw_only=True)
class RolloutConfig:
    """A shielded episode's settings, from params alone (`from_params`): every rollout's header
    holds them (`rollout_inputs`), in this order."""

    max_skills: int  # high-level steps (actor and upkeep) per episode
    max_steps: int  # primitive steps per episode
    max_replans: int  # proposals refused per decision before the fallback picks among the allowed
    fallback: str  # FALLBACKS
    upkeep: bool  # the survival layer runs before the actor chooses
    length: int
    max_skill_steps: int
    explore_steps: int
    backend: str  # logic backend of the shield

    @classmethod
    def from_params(cls, params: Params, backend: str) -> "RolloutConfig":
        """`ltlcrit`'s budgets and fallback, `env`'s episode and skill lengths; `backend` is
        `logic.backend` as the caller fingerprints it (resolved or as written)."""
        cfg, env = params.ltlcrit, params.env
        return cls(max_skills=cfg.max_skills, max_steps=cfg.max_steps, max_replans=cfg.max_replans,
                   fallback=cfg.fallback, upkeep=cfg.upkeep, length=env.length,
                   max_skill_steps=env.skills.max_steps, explore_steps=env.skills.explore_steps, backend=backend)


def _new_on_map(before: set):
    def until(world) -> bool:
        return any(world.memory.seen(m) for m in CRAFTER.map_materials if m not in before)
    return until


class ShieldedActor:
    """An LTLCrit actor as an agent (`regula.agents`): the survival layer first when `upkeep`
    is on, then the actor's proposals through the shield, each recorded for the critic."""

    def __init__(self, actor: Actor, laws: list, model: CrafterModel, cfg: RolloutConfig):
        self.actor, self.laws, self.model, self.cfg = actor, laws, model, cfg

    def start(self, world) -> None:
        self.survival = CRAFTER.Survival(world)
        self.shield = Shield(self.laws, self.model.actions, self.model.state_atoms, self.cfg.backend,
                             restart_violated=True)
        self.actor.reset(world.seed)
        self.draw = random.Random(f"fallback:{world.seed}")
        self.just_failed: tuple | None = None  # (action, reason) of the actor's last action, if it failed

    def decide(self, world) -> Decision:
        model, cfg, shield, actor, just_failed = self.model, self.cfg, self.shield, self.actor, self.just_failed
        state = envs.true_props(world.props())
        upkeep = self.survival.survival_skill() if cfg.upkeep else None
        if upkeep:
            skill, until = upkeep
            return Decision(skill, until, self.survival.interrupt(skill, None), by=SURVIVAL, info={"state": state})
        n_conflicts = len(shield.conflicts)
        allowed, _ = shield.allowed(state)
        # The paper's actor "sees this error and modifies its action immediately": an action
        # that just failed is not taken again at the next decision, even where a law asks for it.
        if just_failed and just_failed[0] in allowed:
            allowed = [a for a in allowed if a != just_failed[0]] or [
                a for a in model.actions if a != just_failed[0] and shield.check(state, a, ("hard",)).allowed]
        view = View(text=world.text(), state=state, goal=model.goal, actions=model.actions,
                    allowed=allowed, unlocked=list(world.unlocked))
        refused, choice = [], None
        for _ in range(cfg.max_replans + 1):
            choice = actor.choose(view)
            view.tried.append(choice.action)
            if choice.action not in model.actions:
                msg = f"there is no action '{choice.action}'; the actions are: {', '.join(model.actions)}"
                refused.append({"action": choice.action, "why": "unknown"})
                view.feedback.append(msg)
                continue
            if choice.action in allowed:
                break
            if just_failed and choice.action == just_failed[0]:
                refused.append({"action": choice.action, "why": "just failed"})
                view.feedback.append(f"{choice.action} just failed here ({just_failed[1]}); choose another action")
                continue
            decision = shield.check(state, choice.action)
            view.refusals[choice.action] = list(decision.violated)
            kinds = sorted({law.kind for law in decision.violated}) or ["hard"]
            refused.append({"action": choice.action, "why": "blocked", "kinds": kinds,
                            "laws": [law.formula for law in decision.violated]})
            view.feedback.append(decision.explain())
        else:
            choice, policy = self._fallback(view)
            refused.append({"action": choice.action, "why": "fallback", "policy": policy})
        action = choice.action
        before = {m for m in CRAFTER.map_materials if world.memory.seen(m)}
        return Decision(action, _new_on_map(before) if action == "explore" else None,
                        self.survival.danger if cfg.upkeep else None, by="actor",
                        info={"state": state, "n_conflicts": n_conflicts},
                        note={"refused": refused, "allowed": len(allowed),
                              **({"thought": choice.thought} if choice.thought else {})})

    def _fallback(self, view: View) -> tuple[Choice, str]:
        """The declared fallback's pick among `view.allowed`, and the policy that made it."""
        if self.cfg.fallback == "ranked":
            choice = self.actor.choose_allowed(view)
            if choice.action in view.allowed:
                return choice, "ranked"
        return Choice(self.draw.choice(view.allowed)), "uniform"

    def observe(self, world, decision: Decision, done) -> None:
        if decision.by == SURVIVAL:
            return None
        info = decision.info
        self.shield.commit(info["state"], decision.skill)
        decision.note["conflict"] = len(self.shield.conflicts) - info["n_conflicts"]
        self.actor.observe("succeeded" if done.success else f"failed: {done.reason}")
        self.just_failed = (decision.skill, done.reason) if failed(
            {"success": done.success, "cause": done.cause}) else None
        return None


def rollout_inputs(actor: Actor, laws: list, seed: int, model: CrafterModel, cfg: RolloutConfig) -> dict:
    """Everything one shielded episode depends on (its file's header fingerprints it)."""
    who = {"name": actor.name}
    if getattr(actor, "client", None) is not None:  # an LLM actor: its prompt history and endpoint
        llm = actor.client.config
        who.update(history=actor.history_len, llm={**llm.who(), "temperature": llm.temperature,
                                                    "max_tokens": llm.max_tokens})
    return {"seed": seed, "actor": who, "laws": [law.to_json() for law in laws], "rollout": asdict(cfg),
            "goal": model.goal, "symbols": asdict(model.symbols), "record": RECORD}


def rollout(actor: Actor, laws: list, seed: int, model: CrafterModel, cfg: RolloutConfig) -> dict:
    """One shielded episode on world `seed`; returns the episode (`regula.episodes`)."""
    world = CRAFTER.make(seed, length=cfg.length, symbols=model.symbols,
                         max_skill_steps=cfg.max_skill_steps, explore_steps=cfg.explore_steps)
    agent = ShieldedActor(actor, laws, model, cfg)
    notes: dict = {}
    end = run_episode(world, agent, Budget(cfg.max_steps, cfg.max_skills, model.goal), notes)
    steps = episodes.steps(world, notes)
    shield = agent.shield
    summary = {"seed": seed, "success": model.goal in world.unlocked, "end": end, "steps": world.steps,
               "skills": len(world.events), "actor_actions": sum(s["by"] == "actor" for s in steps),
               "task_actions": sum(s["by"] == "actor" and model.is_task_action(s["skill"]) for s in steps),
               "upkeep_actions": sum(s["by"] == SURVIVAL for s in steps),
               "reward": round(world.reward_total, 3), "achievements": sorted(world.unlocked),
               "milestones": milestones(steps, model),
               "conflicts": [asdict(c) for c in shield.conflicts], "broken": [list(b) for b in shield.broken]}
    head = episodes.header(seed, f"ltlcrit:{actor.name}", rollout_inputs(actor, laws, seed, model, cfg),
                           world.proposition_names(), model.goal)
    return episodes.episode(head, steps, summary)


# Who chose a step that keeps the agent alive rather than pursuing its goal: the survival layer
# (LTLCrit's upkeep, the scripted expert's). Milestone costs count the other steps.
UPKEEP = (SURVIVAL,)


def failed(rec: dict) -> bool:
    """An action that failed through the actor's choice (not the survival layer interrupting it, not the
    episode ending under it): what the critic's environment-failure laws and the actor's
    "just failed" feedback read."""
    return not rec["success"] and rec["cause"]["kind"] not in ("interrupted", "episode_over")


def failed_action(rec: dict) -> bool:
    """Table 2's failed action: any executed action that did not succeed, an actor's skill cut
    off midway by the survival layer or danger (`interrupted`) or by the agent's death included;
    only a skill the episode's length cut off is not the action's failure."""
    cause = rec["cause"] or {}
    return not rec["success"] and not (cause.get("kind") == "episode_over" and not cause.get("died"))


def resources(rec: dict) -> tuple[dict, dict]:
    """A step's resource counts before it, and their change (the critic's view of the
    inventory: propositions only say "at least n", and whether a step changed anything needs
    the counts). Which items are resources is a read of the hard laws the critic declares
    (`hard_facts`)."""
    delta, kinds = rec["inventory_delta"], hard_facts.resources()
    before = {k: rec["inventory"].get(k, 0) - delta.get(k, 0) for k in kinds}
    return before, {k: v for k, v in delta.items() if k in kinds}


def milestones(steps: list[dict], model: CrafterModel) -> dict:
    """Per milestone, when an episode first reached it: primitive steps, the agent's actions and
    its task actions (the survival layer's steps left out)."""
    prims = (p for s in steps for p in s["primitives"])
    first_step = {a: i for i, p in enumerate(prims, 1) for a in p["unlocked"]}
    actions = task = 0
    first_actions, first_task = {}, {}
    for s in steps:
        if s["by"] not in UPKEEP:
            actions += 1
            task += model.is_task_action(s["skill"])
        for a in s["unlocked"]:
            first_actions.setdefault(a, actions)
            first_task.setdefault(a, task)
    return {name: {"step": first_step.get(a), "actions": first_actions.get(a), "task_actions": first_task.get(a)}
            for name, a in {**MILESTONES, "goal": model.goal}.items()}


def summarize(episodes: list[dict]) -> dict:
    """Table 1 and Table 2 quantities over episodes (one actor, one law set), with their counts.

    Per actor decision the actor proposes until a proposal passes, at most `max_replans` times
    refused, then the fallback picks. Proposals: every action the actor named (refused ones
    and the one executed when the actor's own). Failed actions (`failed_action`): executed
    actor actions that did not succeed plus proposals naming no action, over executed actions
    plus those proposals. Critic-blocked: proposals a critic law refused; hard-blocked: those
    only the hand-written hard laws refused; both over proposals. Idle episodes: those in which
    the agent never took a primitive step (each action failing at once), failures counted apart.

    Who decided (`decided_by`): where the laws allowed one action, the laws; where they left
    two or more (`choice_share`), the actor when the action executed is its own (a proposal that
    passed, or its ranking among the allowed through the `ranked` fallback: `actor_share`), else
    the fallback's uniform draw. `deaths` and `alive`: the death census (`CRAFTER.census`)."""
    actor = [r for e in episodes for r in e["steps"] if r["by"] == "actor"]
    refusals = [p for r in actor for p in r["refused"] if p["why"] != "fallback"]
    fallback = sum(any(p["why"] == "fallback" for p in r["refused"]) for r in actor)
    proposals = len(actor) - fallback + len(refusals)
    unknown = sum(p["why"] == "unknown" for p in refusals)
    critic_blocked = sum(p["why"] == "blocked" and "soft" in p["kinds"] for p in refusals)
    hard_blocked = sum(p["why"] == "blocked" and p["kinds"] == ["hard"] for p in refusals)
    failures = sum(failed_action(r) for r in actor) + unknown
    who = decided_by(actor)
    summaries = [e["summary"] for e in episodes]
    out = {"decisions": len(actor), "proposals": proposals, "failed_actions": failures,
           "failed_of": len(actor) + unknown, "failed_actions_pct": _pct(failures, len(actor) + unknown),
           "critic_blocked": critic_blocked, "critic_blocked_pct": _pct(critic_blocked, proposals),
           "hard_blocked": hard_blocked, "hard_blocked_pct": _pct(hard_blocked, proposals),
           "replans": len(refusals), "replans_per_decision": round(len(refusals) / len(actor), 3) if actor else None,
           "fallback_decisions": fallback, "fallback_share": round(fallback / len(actor), 4) if actor else None,
           "choice_decisions": who["actor"] + who["uniform"], "choice_share": _share(who["actor"] + who["uniform"], actor),
           "actor_decisions": who["actor"], "actor_share": _share(who["actor"], actor),
           "laws_decisions": who["laws"], "laws_share": _share(who["laws"], actor),
           "unlocks_by": unlocks_by(episodes), "attribution": attribution(episodes),
           "conflicts": sum(len(e["conflicts"]) for e in summaries),
           "upkeep_actions": sum(e["upkeep_actions"] for e in summaries),
           "idle_episodes": sum(e["steps"] == 0 for e in summaries), **CRAFTER.census(episodes)}
    return {**out, **milestone_summary(summaries)}


def decided_by(actor_steps: list[dict]) -> dict:
    """Who made each actor decision: `laws` (they allowed one action), `actor` (two or more
    allowed, the executed action its own proposal or its own ranking among them) or `uniform`
    (two or more allowed, the fallback's seeded draw)."""
    out = {"laws": 0, "actor": 0, "uniform": 0}
    for r in actor_steps:
        if r["allowed"] < 2:
            out["laws"] += 1
        elif any(p["why"] == "fallback" and p["policy"] == "uniform" for p in r["refused"]):
            out["uniform"] += 1
        else:
            out["actor"] += 1
    return out


def milestone_summary(episodes: list[dict]) -> dict:
    """Table 1: successes, and per milestone how many episodes reached it and the mean cost to
    get there (over episode summaries)."""
    wins = sum(e["success"] for e in episodes)
    out = {"episodes": len(episodes), "successes": wins,
           "success_rate": round(wins / len(episodes), 4) if episodes else None,
           "success_seeds": [e["seed"] for e in episodes if e["success"]]}
    for name in list(MILESTONES) + ["goal"]:
        got = [e["milestones"][name] for e in episodes if e["milestones"][name]["step"] is not None]
        out[name] = {"reached": len(got),
                     "steps": _mean([g["step"] for g in got]),
                     "actions": _mean([g["actions"] for g in got]),
                     "task_actions": _mean([g["task_actions"] for g in got])}
    return out


def _mean(xs):
    return round(sum(xs) / len(xs), 2) if xs else None


def _share(k: int, of: list):
    return round(k / len(of), 4) if of else None


def _pct(a, b):
    return round(100.0 * a / b, 2) if b else None


__all__ = ["FALLBACKS", "RECORD", "RolloutConfig", "decided_by", "failed", "failed_action", "milestone_summary", "milestones", "resources", "rollout",
           "rollout_inputs", "summarize"]
