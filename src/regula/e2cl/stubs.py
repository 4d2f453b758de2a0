"""The stub server's answers to E2CL's prompts (`regula.llm.stub_answers` merges them), from
the prompt's text alone: the corrector's and the prompting baseline's."""
from __future__ import annotations

import re


def corrector(source: str) -> str:
    """E2CL's corrector, from the correction sample's text alone: walk to the object the feedback
    says the agent is not close to; anything else, the failed step again (no scene to read)."""
    action = re.search(r"Initial Action:\nStep \d+: (.*)", source)
    feedback = re.search(r"Feedback: (.*)", source)
    line = action.group(1).strip() if action else ""
    far = re.search(r"is not close to (\S+)", feedback.group(1)) if feedback else None
    thing = re.search(rf"<{re.escape(far.group(1))}> \(\d+\)", line) if far else None
    return f"[WALK] {thing.group(0)}" if thing else line


def planner(example: str, source: str) -> str:
    """E2CL's prompting baseline: the example's step at the same position, then the end action."""
    steps = re.findall(r"^Step \d+: (.*)$", example, re.M)
    done = len(re.findall(r"^Step \d+: ", source.split("Interaction history:")[-1], re.M))
    return steps[done] if done < len(steps) else "[END]"


# prompt template -> its answer, from the fields the role filled in
ANSWERS = {"e2cl_corrector": corrector, "e2cl_planner": planner}
