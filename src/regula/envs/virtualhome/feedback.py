"""The simulator's failure messages as E2CL's error types and structured causes, and the feedback
text an agent reads (feedback.yaml holds the paper's templates and the message table)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from regula.envs.base import CAUSE_KINDS

TABLE = yaml.safe_load((Path(__file__).with_name("feedback.yaml")).read_text())
SUCCESS = TABLE["success"]  # "True"
ERROR_TYPES = tuple(TABLE["error_types"])  # the paper's eight names, in C.1's order
TEMPLATES = TABLE["templates"]  # Appendix A's planning / feedback / correction data templates

_NODE = r"<[^<>]+> \(\d+\)"
_CHAR = r"<character> \(\d+\)"
_NODE_PARTS = re.compile(r"<(?P<name>[^<>]+)> \((?P<id>\d+)\)")


@dataclass(frozen=True)
class Failure:
    """Why a step failed: for people (`reason`), for programs (`cause`), for the agent (`feedback`)."""

    reason: str
    cause: dict  # {"kind": CAUSE_KINDS kind, "error_type": one of ERROR_TYPES, ...fields}
    feedback: str


def cause(error_type: str, kind: str | None = None, **fields) -> dict:
    if error_type not in TABLE["error_types"]:
        raise ValueError(f"unknown E2CL error type {error_type!r}")
    kind = kind or TABLE["error_types"][error_type]["kind"]
    if kind not in CAUSE_KINDS:
        raise ValueError(f"unknown cause kind {kind!r}")
    return {"kind": kind, "error_type": error_type, **fields}


def feedback_text(key: str, **values) -> str:
    return TABLE["feedback"][key].format(**values)


@lru_cache(maxsize=None)
def _rules() -> list[tuple[re.Pattern, dict]]:
    return [(re.compile(rule["pattern"].replace("{node}", _NODE).replace("{char}", _CHAR)), rule)
            for rule in TABLE["messages"]]


def strip_context(message: str) -> str:
    """The simulator appends ' when executing "<line> [i]"'; what failed is before it."""
    return message.split(" when executing ", 1)[0].strip()


def agent_text(message: str) -> str:
    """The released code's cleaning: no ids, no angle brackets, 'Robot agent' for the character."""
    text = re.sub(r"\([^)]*\)", "", strip_context(message))
    text = re.sub(r"\s+", " ", text.replace("<", "").replace(">", "")).strip()
    return text.replace("character", "Robot agent")


def classify(message: str, category: str | None, action: str | None = None) -> dict:
    """A simulator message (and the simulator's own category: missing, afford, satisfied, unseen,
    other) as a cause; `action` fills `skill` where the kind has it."""
    text = strip_context(message)
    for pattern, rule in _rules():
        if rule.get("sim") not in (None, category):
            continue
        match = pattern.match(text)
        if match is None:
            continue
        fields = {**rule.get("fields", {}), **{k: v for k, v in match.groupdict().items() if v is not None}}
        if "needed" in fields:
            fields["stat"] = TABLE["already_holds"][fields["needed"]]
        return _complete(cause(rule["error_type"], rule.get("kind"), **fields), action)
    error_type = TABLE["by_category"].get(category, "Others")
    first = _NODE_PARTS.search(text)
    return _complete(cause(error_type, thing=first.group(0) if first else None), action)


def _complete(c: dict, action: str | None) -> dict:
    """Every field its kind lists is present (None where the message does not say)."""
    if "skill" in CAUSE_KINDS[c["kind"]][1]:
        c.setdefault("skill", action)
    for name in CAUSE_KINDS[c["kind"]][1]:
        c.setdefault(name, None)
    return c


def from_simulator(message: str, category: str | None, action: str | None = None) -> Failure:
    return Failure(strip_context(message), classify(message, category, action),
                   feedback_text("simulator", message=agent_text(message)))
