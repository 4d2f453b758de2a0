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
