import pytest

from regula import params
from regula.errors import ParamsError


def test_defaults_and_override():
    p = params.validate({"demos": {"episodes": 3}})
    assert p["demos"]["episodes"] == 3
    assert p["demos"]["goal"] == params.DEFAULTS["demos"]["goal"]


def test_unknown_key_names_it_and_the_known_keys():
    with pytest.raises(ParamsError) as err:
        params.validate({"demos": {"epsiodes": 3}})
    assert str(err.value) == ("params: unknown key 'demos.epsiodes'; known keys under 'demos': "
                              "episodes, goal, max_skills, max_steps, workers")


def test_unknown_top_level_key():
    with pytest.raises(ParamsError, match=r"unknown key 'sed'; known keys: automata_eval, demos, dive, env, feedback, llm, logic, ltlcrit, report, seed"):
        params.validate({"sed": 1})


def test_wrong_type():
    with pytest.raises(ParamsError, match=r"params: demos.episodes must be int, got 'many'"):
        params.validate({"demos": {"episodes": "many"}})
    with pytest.raises(ParamsError, match="must be a mapping"):
        params.validate({"demos": 3})


def test_repo_params_file_is_valid():
    from pathlib import Path
    p = params.load(Path(__file__).parent.parent / "params.yaml")
    assert p["demos"]["episodes"] >= 1


def test_bad_yaml(tmp_path):
    f = tmp_path / "params.yaml"
    f.write_text("demos: [1,\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        params.load(f)


def test_stage_numbers_it_cannot_use_stop_with_one_line():
    from regula.dive import stage as dive_stage
    from regula.ltlcrit import stage as ltlcrit_stage
    with pytest.raises(ParamsError, match=r"^params: ltlcrit.episodes must be >= 1, got 0$"):
        ltlcrit_stage.check(params.validate({"ltlcrit": {"episodes": 0}}))
    with pytest.raises(ParamsError, match=r"^params: dive.verify_samples must be >= 1, got 0$"):
        dive_stage.check(params.validate({"dive": {"verify_samples": 0}}))
    with pytest.raises(ParamsError, match=r"^params: dive.inject must be within 0..1, got 1.5$"):
        dive_stage.check(params.validate({"dive": {"inject": 1.5}}))
