"""params.yaml: every knob a stage reads, with defaults, validated on load.

The defaults below are the schema: a key that is not here is a mistake (a typo, usually),
reported with the keys that do exist; a value must have its default's type.
"""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import yaml

from .errors import ParamsError

DEFAULTS: dict = {
    "seed": 0,
    "env": {
        "length": 10000,  # Crafter's episode length
        "symbols": {
            "thresholds": {"wood": [1, 2, 3, 4], "stone": [1, 2, 4], "coal": [1], "iron": [1],
                           "diamond": [1], "sapling": [1]},
            "low": 3,
            "night_below": 0.35,
        },
        "skills": {"max_steps": 300, "explore_steps": 40},
    },
    "demos": {
        "episodes": 12,
        "goal": "collect_diamond",
        "max_steps": 3000,
        "max_skills": 400,
        "workers": 1,
    },
    "llm": {  # see regula.llm.LLMConfig for what each knob does
        "base_url": "http://127.0.0.1:8000/v1",
        "model": "gpt-4o-mini",
        "api_key_env": "OPENAI_API_KEY",
        "temperature": 0.0,
        "max_tokens": 64,
        "timeout": 60.0,
        "retries": 4,
        "backoff": 1.0,
        "concurrency": 4,
        "mode": "live",
        "cache_dir": "data/cache/llm",
        "reasks": 2,
    },
    "feedback": {
        "backend": "rules",  # rules | openai
        "max_queries": 200,
        "samples": 1,
    },
    "logic": {"backend": "auto"},  # auto (Spot when importable, else native) | native | spot
    "automata_eval": {  # learning random target DFAs under teacher noise (regula vs plain L*)
        "states": [10, 20],
        "letters": [5],
        "noises": [0.0, 0.05, 0.1, 0.2],
        "kinds": ["independent", "persistent"],
        "targets": 20,
        "votes": 5,
        "max_queries": 30000,
    },
    "ltlcrit": {  # LTLCrit: shielded actors, a critic inducing laws from trajectories
        "seed": 100,  # evaluation worlds seed, seed+1, ... (the demos play from `seed`)
        "episodes": 20,
        "actors": ["random", "greedy"],  # random | greedy | naive | saycan | inner_monologue
        "critic": "symbolic",  # symbolic | openai
        "critic_reads_demos": True,  # the critic also reads data/demos, not only the rollouts
        "hard_laws": True,  # shield with data.yaml's hard laws (SayCan's affordance filter)
        "iterations": 5,  # critic rounds at most
        "patience": 2,  # stop after this many rounds without a better success rate / fewer actions
        "max_replans": 3,  # refused proposals per decision before choosing among the allowed
        "max_skills": 150,  # high-level steps per episode
        "max_steps": 3000,  # primitive steps per episode
        "upkeep": True,  # the expert's survival reflex drinks, eats, sleeps and fights
        "history": 6,  # InnerMonologue: past steps kept in the prompt
        "max_tokens": 1024,  # LLM answer length for the actor and critic roles
    },
    "dive": {  # DiVE: dynamics discovered from data/demos, verified, scored against data.yaml
        "discoverer": "statistical",  # statistical (no network) | openai (the LLM above)
        "samples": 8,  # successful transitions the Discoverer reads per action and step
        "inject": 0.3,  # wrong candidates added per discovered one (confounder, in-, out-of-domain)
        "verify_samples": 16,  # fresh transitions the Verifier checks each candidate on
        "chance": 0.05,  # a requirement held this likely by chance has no evidence
        "explore_episodes": 12,  # exploration episodes: fresh experience for the Verifier
        "explore_seed": 1000,
        "epsilon": 0.3,  # the explorer's share of random skills
        "explore_max_steps": 3000,
        "explore_max_skills": 300,
        "evolver": "symbolic",  # symbolic (backward chaining) | openai (the LLM above)
        "max_tokens": 512,  # LLM answer length for the discoverer and evolver roles
        "conditions": ["dive", "no_verifier", "no_evolver", "no_dynamics"],  # agents (Table 3 ablations)
        "agent_episodes": 10,  # worlds per condition
        "agent_seed": 2000,
        "agent_max_steps": 10000,  # a full Crafter episode
        "agent_max_skills": 3000,
    },
    "report": {"title": "regula report"},
}

# Mappings whose keys are data (item names), not schema: checked by their consumers.
OPEN_MAPS = {"env.symbols.thresholds"}


def _check(value, default, where: str):
    if isinstance(default, dict):
        if not isinstance(value, dict):
            raise ParamsError(f"params: {where} must be a mapping, got {type(value).__name__}")
        if where in OPEN_MAPS:
            return copy.deepcopy(value)
        out = copy.deepcopy(default)
        for key, v in value.items():
            name = f"{where}.{key}" if where else str(key)
            if key not in default:
                scope = f" under '{where}'" if where else ""
                raise ParamsError(f"params: unknown key '{name}'; known keys{scope}: "
                                  f"{', '.join(sorted(default))}")
            out[key] = _check(v, default[key], name)
        return out
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ParamsError(f"params: {where} must be {type(default).__name__}, got {value!r}")
    return value


def validate(raw: dict | None) -> dict:
    return _check(raw or {}, DEFAULTS, "")


def load(path: str | Path = "params.yaml") -> dict:
    path = Path(path)
    if not path.exists():
        return validate({})
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ParamsError(f"params: {path} is not valid YAML: {exc}") from None
    return validate(raw)


def at_least(params: dict, section: str, minima: dict) -> None:
    """Numbers a stage cannot work with (no episodes, no samples) stop it with one line."""
    for key, low in minima.items():
        value = params[section][key]
        if value < low:
            raise ParamsError(f"params: {section}.{key} must be >= {low}, got {value}")


def fingerprint(*parts) -> str:
    """A short content hash of JSON-able values (what a cached result depends on)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
