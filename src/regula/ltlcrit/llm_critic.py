"""The LLM critic: the trajectories, laws and conflicts as text; laws back as JSON.

Its proposals go through the same gate as the symbolic critic's, so a malformed, ungrounded
or over-constraining law is rejected with its reason and the run goes on. An answer that is
not usable JSON after the client's re-asks ends the round with no proposals and a note; a
call that fails (endpoint down, time-out) or a replay miss stops the run with its error.
"""
from __future__ import annotations

import pydantic

from regula import prompts, roles
from regula.llm import LLMClient
from regula.llm.client import UnusableAnswer

from .critic import CriticOutput, Evidence, Proposal

ROLE = "critic"


class LawAnswer(pydantic.BaseModel):
    formula: str
    source: str = "efficiency"
    explanation: str = ""


class RemoveAnswer(pydantic.BaseModel):
    formula: str
    reason: str = ""


class CriticAnswer(pydantic.BaseModel):
    laws: list[LawAnswer] = []
    remove: list[RemoveAnswer] = []


@roles.register("critic", "openai")
class LLMCritic:
    name = "openai"
    uses_llm = True

    def __init__(self, client: LLMClient, episodes: int = 4, steps: int = 60):
        self.client, self.max_episodes, self.max_steps = client, episodes, steps

    def digest(self, ev: Evidence) -> str:
        """The latest rollouts (at most `episodes`, `steps` actor steps each), compactly."""
        atoms = set(ev.model.critic_atoms)
        rollouts = [e for e in ev.episodes if e["origin"] == "rollout"]
        latest = max((e.get("iteration", 0) for e in rollouts), default=0)
        chosen = [e for e in rollouts if e.get("iteration", 0) == latest][: self.max_episodes]
        blocks = []
        for e in chosen:
            lines = [f"episode (seed {e['seed']}):"]
            for rec in [r for r in e["steps"] if r["by"] == "actor"][: self.max_steps]:
                state = ", ".join(sorted(set(rec["props_before"]) & atoms)) or "(nothing)"
                result = "ok" if rec["success"] else f"failed: {rec['reason']}"
                refused = [f"{p['action']} ({p['why']})" for p in rec["refused"] if p["why"] != "fallback"]
                extra = f" [refused first: {', '.join(refused)}]" if refused else ""
                lines.append(f"  {{{state}}} {rec['skill']} -> {result}{extra}")
            blocks.append("\n".join(lines))
        return "\n".join(blocks) or "(no rollouts yet)"

    def propose(self, ev: Evidence) -> CriticOutput:
        laws = "\n".join(f"- {law.formula} [{law.kind}, {law.source}]" + (f": {law.explanation}" if law.explanation else "")
                         for law in list(ev.hard) + list(ev.soft)) or "(none)"
        conflicts = "\n".join("- {" + ", ".join(sorted(c["state"])) + "}" for c in ev.conflicts[:10]) or "(none)"
        msgs = prompts.messages("ltlcrit_critic", goal=ev.model.goal, vocabulary=ev.model.vocabulary(),
                                laws=laws, trajectories=self.digest(ev), conflicts=conflicts)
        out = CriticOutput()
        try:
            answer = self.client.ask_json(msgs, CriticAnswer, ROLE)
        except UnusableAnswer as exc:
            out.notes.append(f"the critic's answer could not be used: {exc}")
            return out
        out.proposals = [Proposal(a.formula, a.source, a.explanation) for a in answer.laws]
        out.removals = [(r.formula, r.reason or "the LLM critic removed it") for r in answer.remove]
        return out
