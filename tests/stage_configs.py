"""The configs the stages build from params, built the same way for a test: from validated params
(`regula.params.validate`, so every value a test leaves alone is params.yaml's default), with the
test's changes on top."""
from __future__ import annotations

from dataclasses import replace

import yaml

from regula import envs, params as params_mod
from regula.ltlcrit.loop import LoopConfig
from regula.ltlcrit.rollout import RolloutConfig

# The expert's budget the tests' expectations were measured with (params holds no expert budget
# outside `demos`, whose episodes are longer).
EXPERT_BUDGET = {"goal": "collect_diamond", "max_steps": 3000, "max_skills": 400}


def rollout_config(backend: str = "auto", **changes) -> RolloutConfig:
    """LTLCrit's rollout settings from the default params (`ltlcrit`, `env`), with `changes`."""
    return replace(RolloutConfig.from_params(params_mod.validate({}), backend=backend), **changes)


def loop_config(seeds, **changes) -> LoopConfig:
    """LTLCrit's loop settings from the default params, on `seeds`, with `changes`."""
    return replace(LoopConfig.from_params(params_mod.validate({})), seeds=tuple(seeds), **changes)


def expert_config(**values):
    """The scripted expert's config: `EXPERT_BUDGET` with `values` over it."""
    return envs.get("crafter").ExpertConfig(**{**EXPERT_BUDGET, **values})


def cedar_budget(**values):
    """CEDAR's rollout budget: the `cedar` section's sizes (max_skills, explore_tries, max_calls)
    from the default params, every switch off unless `values` turns it on (the plain learner
    these tests were written against), with `values` over it."""
    from regula.cedar.rollout import Budget
    cfg = params_mod.validate({}).cedar
    plain = {"upkeep": False, "dig": "never", "dug_calls": False, "arm": False, "seek": False, "call_retry": False,
             "call_held": False, "forage": False}
    return Budget(**{"max_skills": cfg.max_skills, "explore_tries": cfg.explore_tries, "max_calls": cfg.max_calls,
                     **plain, **values})


def params_text(changes: dict | None = None) -> str:
    """A params file's text: every key (a file must give them all, `regula.params.load`), the
    defaults with `changes` laid over them (a mapping key by key)."""
    return yaml.safe_dump(params_mod.laid_over(params_mod.defaults(), changes or {}), sort_keys=False)


def changed(params, changes: dict):
    """`params` (validated) with `changes` laid over it (a mapping key by key, as `llm_runs`
    overlays are), validated again."""
    return params_mod.validate(params_mod.laid_over(params.model_dump(), changes))
