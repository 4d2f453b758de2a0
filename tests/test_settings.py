"""One source for every setting: a stage gets params as the validated, typed model
(`regula.params.validate`) and reads `params.ltlcrit.max_skills`, never `params["ltlcrit"]`;
the configs built from it (`RolloutConfig`, `LoopConfig`, `ExpertConfig`) hold no default that
params holds, so a value comes from params.yaml or from its caller, never from a second place."""
import ast
import dataclasses
from pathlib import Path

import pytest
import yaml

from regula import envs, params as params_mod, stages
from regula.ltlcrit.loop import LoopConfig
from regula.ltlcrit.rollout import RolloutConfig

ROOT = Path(__file__).resolve().parent.parent
# params.py validates and checks the dumped values themselves: the one module that works on them
SCHEMA = ROOT / "src" / "regula" / "params.py"


def _root(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def dict_reads(text: str) -> list[int]:
    """Lines that subscript params, or a part of it, with a key: `params["demos"]`, or `cfg["x"]`
    after `cfg = params.ltlcrit`, in any function that has a `params` argument or name."""
    out = []
    for fn in ast.walk(ast.parse(text)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        names = {"params"}
        for node in ast.walk(fn):  # names bound to params or a part of it: cfg = params.ltlcrit
            if isinstance(node, ast.Assign):
                pairs = [(node.targets[0], node.value)]
                if isinstance(node.targets[0], ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs = list(zip(node.targets[0].elts, node.value.elts))
                pairs += [(t, node.value) for t in node.targets[1:]]
                for target, value in pairs:
                    if isinstance(target, ast.Name) and _root(value) in names:
                        names.add(target.id)
        for node in ast.walk(fn):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str) and _root(node.value) in names:
                out.append(node.lineno)
    return sorted(set(out))


def test_no_code_reads_params_as_a_dict():
    offences = []
    for folder in ("src/regula", "flows", "tasks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != SCHEMA:
                offences += [f"{path.relative_to(ROOT)}:{line}" for line in dict_reads(path.read_text())]
    assert offences == []


def test_the_dict_read_check_sees_one():
    assert dict_reads("def f(params):\n    return params['demos']['episodes']\n") == [2]
    assert dict_reads("def f(params):\n    cfg, n = params.ltlcrit, 1\n    return cfg['goal']\n") == [3]
    assert dict_reads("def f(params):\n    spec = params.cedar.tasks\n    return spec['trials']\n") == [3]
    assert dict_reads("def f(params):\n    return params.demos.episodes, {'a': 1}['a']\n") == []


def test_a_stage_gets_the_typed_model_which_has_no_keys():
    p = params_mod.load(ROOT / "params.yaml")
    assert isinstance(p, params_mod.Params) and p.ltlcrit.max_skills == 150
    with pytest.raises(TypeError):
        p["ltlcrit"]
    twin = stages.params_for("cedar_skills_llm", p)
    assert isinstance(twin, params_mod.Params) and twin.cedar.teacher == "openai" and p.cedar.teacher == "rules"
    # a flow's parameter is the dump; typed again, the same model
    assert params_mod.typed(twin.model_dump()) == twin


def _defaulted(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING}


def test_the_configs_repeat_no_default_params_holds():
    from regula.e2cl.pipeline import Settings
    assert _defaulted(RolloutConfig) == set() and _defaulted(LoopConfig) == set() and _defaulted(Settings) == set()
    expert = envs.get("crafter").ExpertConfig
    assert not _defaulted(expert) & {"goal", "max_steps", "max_skills"}
    assert {"max_failures", "max_idle", "low", "swords"} <= _defaulted(expert)  # knobs params does not hold
    with pytest.raises(TypeError):
        expert(goal="all")
    from regula.cedar.rollout import Budget
    from regula.cedar.stage import budget
    assert _defaulted(Budget) == set()  # every size and switch is the cedar section's
    cedar = params_mod.validate({}).cedar
    assert all(getattr(budget(params_mod.validate({})), f.name) == getattr(cedar, f.name)
               for f in dataclasses.fields(Budget))


def test_the_rollout_and_loop_configs_are_params_values():
    p = params_mod.validate({"ltlcrit": {"max_skills": 7, "fallback": "uniform", "iterations": 2, "episodes": 3},
                             "env": {"length": 500, "skills": {"explore_steps": 9}}})
    assert dataclasses.asdict(RolloutConfig.from_params(p, backend="native")) == {
        "max_skills": 7, "max_steps": 3000, "max_replans": 3, "fallback": "uniform", "upkeep": True, "length": 500,
        "max_skill_steps": 300, "explore_steps": 9, "backend": "native"}  # in this order: rollouts' headers
    assert LoopConfig.from_params(p) == LoopConfig(seeds=(10000, 10001, 10002), iterations=2, patience=2,
                                                   hard_laws=True, workers=2)


def test_e2cls_settings_are_its_section():
    from regula.e2cl.stage import settings
    p = params_mod.validate({"e2cl": {"model": "small", "lr": 0.01, "pretune_epochs": 2}})
    assert dataclasses.asdict(settings(p.e2cl)) == {  # in this order: the size runs' cache keys
        "preset": "small", "vocab_size": 2000, "epochs": 3, "batch_size": 30, "lr": 0.01, "pretune_samples": 1000,
        "pretune_epochs": 2, "max_steps": 20, "max_corrections": 1}


def test_cedars_free_form_planner_plays_ltlcrits_rollout_from_params(tmp_path, monkeypatch):
    """Table 2's planner plays LTLCrit's shielded episode on `ltlcrit`'s budgets and `env`, its
    backend as params write it (its cache key fingerprints `auto`); dvc.yaml lists what it reads."""
    import regula.ltlcrit.rollout as rollout_mod
    from regula.cedar import tasks

    played = []

    def rollout(actor, laws, world, model, cfg):
        played.append(cfg)
        return {"summary": {"success": False, "actor_actions": 1, "steps": 1}, "steps": []}

    monkeypatch.setattr(rollout_mod, "rollout", rollout)
    p = params_mod.validate({"ltlcrit": {"max_skills": 7}, "cedar": {"tasks": {"tasks": ["place_table"], "trials": 1}}})
    tasks.baseline(p, stages.Paths(tmp_path, "cedar_skills"), None)
    assert played and all(cfg == RolloutConfig.from_params(p, backend="auto") for cfg in played)
    listed = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    reads = ["logic.backend", *(f"ltlcrit.{k}" for k in ("max_skills", "max_steps", "max_replans", "fallback",
                                                         "upkeep"))]
    for stage in ("cedar_skills", "cedar_skills_llm"):
        assert set(reads) <= set(listed[stage]["params"]) and "env" in listed[stage]["params"]
