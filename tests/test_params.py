import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from regula import params
from regula.errors import ParamsError
from stage_configs import params_text

ROOT = Path(__file__).resolve().parent.parent


def message(raw) -> str:
    with pytest.raises(ParamsError) as err:
        params.validate(raw)
    return str(err.value)


def test_defaults_and_override():
    p = params.validate({"demos": {"episodes": 3}})
    assert p.demos.episodes == 3
    assert p.demos.goal == params.defaults()["demos"]["goal"]


def test_schema_defaults_are_params_yaml():
    """One place for defaults: the schema's equal the repo's params.yaml, types included."""
    def typed(x):
        if isinstance(x, dict):
            return {k: typed(v) for k, v in x.items()}
        if isinstance(x, list):
            return [typed(v) for v in x]
        return type(x).__name__, x
    on_disk = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert typed(params.defaults()) == typed(on_disk)
    assert typed(params.load(ROOT / "params.yaml").model_dump()) == typed(on_disk)


def test_validated_values_keep_their_types():
    """What `fingerprint` (cache keys) sees: ints stay ints, a float knob is a float even when
    written as an int, as before the schema."""
    p = params.validate({"llm": {"timeout": 60}, "ltlcrit": {"episodes": 3}})
    assert p.llm.timeout == 60.0 and type(p.llm.timeout) is float
    assert type(p.ltlcrit.episodes) is int
    assert params.fingerprint(p) == params.fingerprint(params.validate({"llm": {"timeout": 60.0},
                                                                         "ltlcrit": {"episodes": 3}}))
    # a model (or a section) hashes as its dumped values, as the plain dict did
    assert params.fingerprint(p) == params.fingerprint(p.model_dump())
    assert params.fingerprint(p.env, 1) == params.fingerprint(p.model_dump()["env"], 1)


def test_unknown_key_names_it_and_the_known_keys():
    assert message({"demos": {"epsiodes": 3}}) == (
        "params: unknown key 'demos.epsiodes'; known keys under 'demos': "
        "episodes, goal, max_skills, max_steps, workers")
    assert message({"env": {"skills": {"max_step": 3}}}) == (
        "params: unknown key 'env.skills.max_step'; known keys under 'env.skills': explore_steps, max_steps")


def test_unknown_top_level_key():
    assert message({"sed": 1}) == ("params: unknown key 'sed'; known keys: automata_eval, cedar, demos, dive, e2cl, env, "
                                   "feedback, household, llm, llm_runs, logic, ltlcrit, membership, minihack, rag, report, runner, "
                                   "seed, seeds, specs")


def test_twin_overlays_are_checked_as_their_stage_section():
    assert message({"llm_runs": {"ltlcrit": {"actors": ["rnadom"]}}}) == (
        "params: llm_runs.ltlcrit.actors[0]: 'rnadom' is not one of greedy, greedy_goal, inner_monologue, naive, random, saycan")
    assert message({"llm_runs": {"dive": {"stpes": 2}}}).startswith(
        "params: unknown key 'llm_runs.dive.stpes'; known keys under 'llm_runs.dive': agent_episodes, ")
    assert message({"llm_runs": {"cedar_skills": {}}}) == (
        "params: unknown key 'llm_runs.cedar_skills'; known keys under 'llm_runs': cedar, dive, e2cl, feedback, "
        "ltlcrit, membership")
    # an overlay holds the section's checked values, only for the keys it gives
    assert params.validate({"llm_runs": {"feedback": {"max_queries": 7}}}).llm_runs.feedback == {"max_queries": 7}


def test_the_cedar_twins_overlay_is_keyed_by_its_section_and_named_in_errors():
    """cedar_skills reads the section `cedar`: its twin's overlay is `llm_runs.cedar`, checked as
    `cedar`, a nested mapping (`tasks`) laid over key by key."""
    assert message({"llm_runs": {"cedar": {"teacher": "gpt"}}}) == (
        "params: llm_runs.cedar.teacher: 'gpt' is not one of openai, rules")
    assert message({"llm_runs": {"cedar": {"max_querie": 5}}}).startswith(
        "params: unknown key 'llm_runs.cedar.max_querie'; known keys under 'llm_runs.cedar': adapt_calls, arm, call_held, call_retry, compare_formula, dig, dug_calls, episodes, ")
    assert message({"llm_runs": {"cedar": {"tasks": {"trials": -1}}}}) == (
        "params: llm_runs.cedar.tasks.trials must be >= 0, got -1")
    assert message({"llm_runs": {"cedar": {"tasks": {"trails": 0}}}}).startswith(
        "params: unknown key 'llm_runs.cedar.tasks.trails'; known keys under 'llm_runs.cedar.tasks': max_queries, ")
    assert message({"llm_runs": {"cedar": {"episodes": 41}}}) == (
        "params: llm_runs.cedar.episodes must be <= seeds.eval.count (40), got 41")
    assert message({"llm_runs": {"cedar": {"explore_seed": 10000}}}).startswith(
        "params: seeds.eval [10000, 10040) overlaps CEDAR's equivalence worlds")
    p = params.validate({"llm_runs": {"cedar": {"tasks": {"trials": 0}}}})
    assert p.llm_runs.cedar == {"tasks": {"trials": 0}}  # the checked values of the keys it gives
    # the default overlay: the teacher on the LLM, Tables 2 and 5 left to the stand-in
    default = params.defaults()["llm_runs"]["cedar"]
    assert default["teacher"] == "openai" and default["simulations"] == 0 and default["tasks"]["trials"] == 0


def test_thresholds_keys_are_item_names_checked_by_the_crafter_adapter():
    p = params.validate({"env": {"symbols": {"thresholds": {"wood": [1, 5]}}}})
    assert p.env.symbols.thresholds == {"wood": [1, 5]}
    assert message({"env": {"symbols": {"thresholds": {"gold": [1]}}}}).startswith(
        "params: env.symbols.thresholds: unknown item 'gold'; valid items: ")
    assert message({"env": {"symbols": {"thresholds": {"wood": [0]}}}}) == (
        "params: env.symbols.thresholds.wood: levels must be integers >= 1")
    assert message({"env": {"symbols": {"thresholds": {"wood": ["a"]}}}}) == (
        "params: env.symbols.thresholds.wood[0] must be int, got 'a'")


def test_wrong_type():
    assert message({"demos": {"episodes": "many"}}) == "params: demos.episodes must be int, got 'many'"
    assert message({"demos": {"episodes": 2.0}}) == "params: demos.episodes must be int, got 2.0"
    assert message({"ltlcrit": {"upkeep": "yes"}}) == "params: ltlcrit.upkeep must be bool, got 'yes'"
    assert message({"dive": {"inject": True}}) == "params: dive.inject must be float, got True"
    assert message({"ltlcrit": {"actors": "random"}}) == "params: ltlcrit.actors must be list, got 'random'"
    assert message({"automata_eval": {"sizes": [[10, "x"]]}}) == (
        "params: automata_eval.sizes[0][1] must be int, got 'x'")
    assert message({"automata_eval": {"sizes": [[10]]}}) == (
        "params: automata_eval.sizes[0] must be [states, letters], got [10]")
    assert message({"demos": 3}) == "params: demos must be a mapping, got int"
    assert message([1]) == "params: the top level must be a mapping, got list"


def test_out_of_range():
    assert message({"demos": {"episodes": -1}}) == "params: demos.episodes must be >= 1, got -1"
    assert message({"ltlcrit": {"episodes": 0}}) == "params: ltlcrit.episodes must be >= 1, got 0"
    assert message({"dive": {"verify_samples": 0}}) == "params: dive.verify_samples must be >= 1, got 0"
    assert message({"dive": {"inject": 1.5}}) == "params: dive.inject must be within 0..1, got 1.5"
    assert message({"llm": {"timeout": 0}}) == "params: llm.timeout must be > 0.0, got 0"
    assert message({"automata_eval": {"noises": [0.0, 0.5]}}) == (
        "params: automata_eval.noises[1] must be in [0, 0.5), got 0.5")


def test_even_votes():
    assert message({"automata_eval": {"votes": 4}}) == "params: automata_eval.votes must be odd and >= 1, got 4"
    assert message({"automata_eval": {"votes": -1}}) == "params: automata_eval.votes must be odd and >= 1, got -1"


def test_bad_names():
    assert message({"ltlcrit": {"actors": ["rnadom"]}}) == (
        "params: ltlcrit.actors[0]: 'rnadom' is not one of greedy, greedy_goal, inner_monologue, naive, random, saycan")
    assert message({"dive": {"conditions": ["dive", "no_verfier"]}}) == (
        "params: dive.conditions[1]: 'no_verfier' is not one of cot, cot_dynamics, dive, dive_no_survival, expert, "
        "human_dynamics, "
        "human_dynamics_evolved, manual_dynamics, manual_dynamics_no_evolver, no_dynamics, no_evolver, no_verifier, "
        "no_verifier_no_evolver, random")
    assert message({"ltlcrit": {"critic": "gpt"}}) == "params: ltlcrit.critic: 'gpt' is not one of openai, symbolic"
    assert message({"dive": {"discoverer": "oracle"}}) == (
        "params: dive.discoverer: 'oracle' is not one of openai, statistical")
    assert message({"dive": {"evolver": "x"}}) == "params: dive.evolver: 'x' is not one of openai, symbolic"
    assert message({"feedback": {"backend": "gpt"}}) == "params: feedback.backend: 'gpt' is not one of openai, rules"
    assert message({"logic": {"backend": "nusmv"}}) == "params: logic.backend: 'nusmv' is not one of auto, native, spot"
    assert message({"llm": {"mode": "offline"}}) == "params: llm.mode: 'offline' is not one of live, refresh, replay"
    assert message({"automata_eval": {"kinds": ["sticky"]}}) == (
        "params: automata_eval.kinds[0]: 'sticky' is not one of independent, persistent")
    assert message({"demos": {"goal": "diamonds"}}).startswith(
        "params: demos.goal: 'diamonds' is not one of all, collect_coal, collect_diamond, ")
    assert params.validate({"demos": {"goal": "all"}}).demos.goal == "all"


def test_every_goal_the_adapter_knows_is_accepted():
    from regula import envs
    for goal in envs.get("crafter").achievement_names() + ["all"]:
        params.validate({"demos": {"goal": goal}})


def test_llm_config_takes_the_schema_defaults_and_checks():
    from regula.llm import LLMConfig
    assert LLMConfig().model_dump() == params.defaults()["llm"]
    assert LLMConfig().max_tokens == 64
    assert LLMConfig.from_params(params.load(ROOT / "params.yaml").llm).sampling() == {
        "temperature": 0.0, "max_tokens": 64}
    assert LLMConfig().replace(max_tokens=512).max_tokens == 512
    with pytest.raises(ParamsError, match=r"^params: llm.retries must be >= 0, got -1$"):
        LLMConfig(retries=-1)
    with pytest.raises(ParamsError, match=r"^params: unknown key 'llm.modle'; known keys under 'llm': "):
        LLMConfig(modle="x")


def test_repo_params_file_is_valid():
    p = params.load(ROOT / "params.yaml")
    assert p.demos.episodes >= 1


def test_bad_yaml(tmp_path):
    f = tmp_path / "params.yaml"
    f.write_text("demos: [1,\n")
    with pytest.raises(ParamsError, match="not valid YAML") as err:
        params.load(f)
    assert "\n" not in str(err.value)


def test_load_with_overrides(tmp_path):
    f = tmp_path / "params.yaml"
    f.write_text(params_text({"demos": {"episodes": 2}}))
    p = params.load(f, {"demos.goal": "all", "seed": None, "ltlcrit.actors": ["greedy"]})
    assert (p.demos.episodes, p.demos.goal, p.seed) == (2, "all", 0)
    assert p.ltlcrit.actors == ["greedy"]
    assert params.load(f, {"demos.episodes": 5}).demos.episodes == 5
    f.write_text("demos: {episodes: 2}\n")  # an override gives a key; it never fills in what the file lacks
    with pytest.raises(ParamsError, match=r"^params: .* lacks seed, seeds, env, demos.goal, demos.max_steps, "):
        params.load(f, {"demos.goal": "all", "seed": 0})
    f.write_text("demos: 3\n")
    with pytest.raises(ParamsError, match="^params: demos must be a mapping, got int$"):
        params.load(f, {"demos.episodes": 5})


def test_a_stage_with_bad_params_exits_2_in_one_line_before_any_work(tmp_path):
    """Through `python -m flows` (what dvc repro runs): a key given twice, which PyYAML would
    read as the last one silently."""
    from project_copy import make_project, project_env
    dst = make_project(tmp_path / "project", {})
    params_file = dst / "params.yaml"
    lines = params_file.read_text().splitlines()
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("seed:"))
    params_file.write_text("\n".join(lines + ["seed: 3"]) + "\n")
    env = {**project_env(dst), "PYTHONDONTWRITEBYTECODE": "1", "PREFECT_HOME": str(tmp_path / "prefect")}

    def tree():
        return sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if ".git" not in p.parts)
    before = tree()
    proc = subprocess.run([sys.executable, "-m", "flows", "demos"], cwd=dst, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        f"error: params: {params_file}:{len(lines) + 1}: key 'seed' given twice (first on line {first})"]
    assert tree() == before


def test_the_schemas_names_equal_the_registries_that_define_them():
    from regula import dive, roles, schema
    from regula.automata.teachers import NOISE_KINDS
    from regula.cedar import params as cedar_params
    from regula.cedar.rollout import DIGS
    from regula.dive import params as dive_params
    from regula.e2cl import params as e2cl_params
    from regula.llm.client import MODES
    from regula.logic.monitor import BACKENDS
    from regula.ltlcrit import params as ltlcrit_params
    from regula.ltlcrit.critic import EFFICIENCY
    from regula.ltlcrit.rollout import FALLBACKS
    assert sorted(ltlcrit_params.ACTORS) == roles.names("actor")
    assert sorted(ltlcrit_params.CRITICS) == roles.names("critic")
    assert ltlcrit_params.FALLBACKS == FALLBACKS and ltlcrit_params.EFFICIENCY == EFFICIENCY
    assert sorted(params.FEEDBACK_BACKENDS) == roles.names("feedback")
    assert sorted(dive_params.DISCOVERERS) == roles.names("discoverer")
    assert sorted(dive_params.EVOLVERS) == roles.names("evolver")
    assert sorted(schema.TEACHERS) == roles.names("teacher")
    assert sorted(e2cl_params.CORRECTORS) == roles.names("corrector")
    assert sorted(cedar_params.VERB_CHOOSERS) == roles.names("alphabet")
    assert sorted(cedar_params.CEDAR_DIGS) == sorted(DIGS)
    assert sorted(params.LOGIC_BACKENDS) == sorted(BACKENDS)
    assert sorted(params.LLM_MODES) == sorted(MODES)
    assert sorted(schema.NOISE_KINDS) == sorted(NOISE_KINDS)
    assert dive_params.CONDITIONS is dive.CONDITIONS
    from regula.e2cl.model import PRESETS
    assert sorted(e2cl_params.MODEL_PRESETS) == sorted(PRESETS)


def test_the_schema_joins_each_systems_sections_and_twin_overlays_from_its_package():
    """A system's section lives in its package and is composed in by one registry line."""
    from regula.cedar.params import Cedar, Rag
    from regula.ltlcrit.params import LLM_RUN, Ltlcrit
    mine = ("regula.ltlcrit.params", "regula.dive.params", "regula.cedar.params", "regula.e2cl.params")
    assert [m for m in params.SYSTEMS if m in mine] == list(mine)  # in this order; a new system adds its line
    assert params.Params.model_fields["ltlcrit"].annotation is Ltlcrit
    assert params.Params.model_fields["rag"].annotation is Rag
    assert params.Params.model_fields["cedar"].annotation is Cedar
    assert params.defaults()["llm_runs"]["ltlcrit"] == LLM_RUN["ltlcrit"]
    assert list(params.defaults()["llm_runs"]) == ["feedback", "membership", "ltlcrit", "dive", "cedar", "e2cl"]
    # each default is a fresh copy: changing one params dict changes no other
    params.defaults()["llm_runs"]["ltlcrit"]["actors"].append("random")
    assert params.defaults()["llm_runs"]["ltlcrit"] == LLM_RUN["ltlcrit"]


def test_lists_a_stage_iterates_over_are_not_empty_and_name_nothing_twice():
    with pytest.raises(ParamsError, match=r"^params: automata_eval.sizes must list at least one value, got \[\]$"):
        params.validate({"automata_eval": {"sizes": []}})
    with pytest.raises(ParamsError, match=r"^params: ltlcrit.actors: lists random more than once$"):
        params.validate({"ltlcrit": {"actors": ["random", "greedy", "random"]}})
    with pytest.raises(ParamsError, match=r"^params: minihack.shield.tasks: lists quest more than once$"):
        params.validate({"minihack": {"shield": {"tasks": ["quest", "lava_cross", "quest"]}}})


def test_the_demos_play_every_achievement_and_ltlcrit_one():
    from regula.ltlcrit.stage import model_from
    p = params.defaults()
    assert (p["demos"]["goal"], p["demos"]["max_steps"], p["ltlcrit"]["goal"]) == ("all", 10000, "collect_diamond")
    assert model_from(params.validate({"ltlcrit": {"goal": "make_iron_pickaxe"}})).goal == "make_iron_pickaxe"
    assert model_from(params.validate({"demos": {"goal": "all"}})).goal == "collect_diamond"
    assert message({"ltlcrit": {"goal": "all"}}).startswith("params: ltlcrit.goal: 'all' is not one of collect_coal, ")
