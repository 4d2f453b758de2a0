"""The e2cl stage end to end on a few programs: it explores, trains, plans; a rerun finds every unit
by its key and redoes nothing; a unit deleted is redone alone; a corrupt dataset is one clear error."""
import json

import pytest

from regula import params as params_mod
from regula.e2cl import stage
from regula.errors import DataError
from regula.stages import Paths, SerialWork


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    params = params_mod.validate({})
    params["e2cl"].update(seeds=[0], epochs=1, pretune_samples=40, train_programs=5, test_programs=2, max_steps=3,
                          correction_cases=4)
    root = tmp_path_factory.mktemp("e2cl")
    paths = Paths(root, "e2cl")
    stage.prepare(params, paths)
    first = stage.run(params, paths, SerialWork(lambda line: None))
    return params, paths, first


def test_a_run_writes_every_table(ran):
    params, paths, first = ran
    metrics = paths.metrics
    detail = json.loads((metrics / "e2cl_detail.json").read_text())
    assert detail["train_programs"] == 5 and detail["seeds"] == [0]
    assert first["e2cl_this_run_trained"] == 1 + 5  # the pre-tuned model and the five conditions (NAT's included)
    assert detail["this_run"]["explored"] == 1 and first["e2cl_this_run_llm_calls"] == 0
    rows = (metrics / "e2cl.csv").read_text().splitlines()
    assert rows[0] == "seed,evaluation,condition,speculative,split,plans,executability,affordance_rate,lcs"
    assert len(rows) == 1 + len(stage.EVALUATIONS) * 2
    assert (metrics / "e2cl_feedback.csv").read_text().count("\n") == 1 + len(stage.FEEDBACK_TYPES)
    assert (metrics / "e2cl_losses.csv").read_text().count("\n") == 1 + 5  # one epoch per condition
    models = sorted(p.name.split("-")[0] for p in (paths.data / "e2cl" / "seed0" / "models").iterdir())
    assert models == ["bc", "e2cl", "nat", "no_dc", "no_df"]


def test_a_rerun_redoes_nothing_and_a_deleted_unit_alone(ran):
    params, paths, first = ran
    headline = stage.run(params, paths, SerialWork(lambda line: None))
    detail = json.loads((paths.metrics / "e2cl_detail.json").read_text())
    assert detail["this_run"] == {"trained": 0, "explored": 0, "evaluated": 0, "llm_calls": 0}
    assert {k: v for k, v in headline.items() if "this_run" not in k} == {
        k: v for k, v in first.items() if "this_run" not in k}
    table = (paths.metrics / "e2cl.csv").read_bytes()
    (plan,) = (paths.data / "e2cl" / "seed0" / "plans").glob("bc_unseen-*.jsonl")
    plan.unlink()
    stage.run(params, paths, SerialWork(lambda line: None))
    detail = json.loads((paths.metrics / "e2cl_detail.json").read_text())
    assert (detail["this_run"]["trained"], detail["this_run"]["evaluated"]) == (0, 1)
    assert (paths.metrics / "e2cl.csv").read_bytes() == table


def test_a_corrupt_dataset_is_one_clear_error(ran):
    params, paths, _ = ran
    (d_f,) = (paths.data / "e2cl" / "seed0").glob("d_f-*.jsonl")
    saved = d_f.read_text()
    d_f.write_text(saved[: len(saved) // 2])
    try:
        with pytest.raises(DataError, match=r"d_f-\w+\.jsonl:\d+: not a sample"):
            stage.run(params, paths, SerialWork(lambda line: None))
    finally:
        d_f.write_text(saved)


def test_the_command_writes_under_its_root_and_prints_each_evaluation(tmp_path):
    import yaml
    from cli_run import invoke
    params = yaml.safe_load(open("params.yaml"))
    params["e2cl"].update(pretune_samples=30, max_steps=2, correction_cases=2)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    out = tmp_path / "run"
    out.mkdir()
    result = invoke(["e2cl", "--seed", 3, "--epochs", 1, "--train-programs", 2, "--test-programs", 1,
                     "--params", tmp_path / "params.yaml", "--root", out])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"{name}/{part}" for name, _, _ in sorted(stage.EVALUATIONS)
                                                      for part in ("seen", "unseen")]
    assert json.loads((out / "metrics" / "e2cl_detail.json").read_text())["seeds"] == [3]
    assert (out / "data" / "e2cl" / "seed3").is_dir()


def test_a_corrupt_plan_file_is_one_clear_error(ran):
    params, paths, _ = ran
    (plan,) = (paths.data / "e2cl" / "seed0" / "plans").glob("e2cl_seen-*.jsonl")
    saved = plan.read_text()
    plan.write_text(saved[: len(saved) // 2])
    try:
        with pytest.raises(DataError, match=r"e2cl_seen-\w+\.jsonl:\d+: not valid JSON .*; delete it to redo that unit"):
            stage.run(params, paths, SerialWork(lambda line: None))
    finally:
        plan.write_text(saved)


def test_the_report_section_shows_the_tables_beside_the_papers(ran):
    import pandas as pd

    from regula.report.sections import e2cl as section
    _, paths, _ = ran
    paths.reports.mkdir(parents=True, exist_ok=True)
    text = "\n".join(section.section(paths))
    for heading in ("### Tables 1 and 3", "### Table 2", "### Fig. 6", "### Fig. 5", "### Fig. 4",
                    "### Exploration and training"):
        assert heading in text
    for quoted in ("| E2CL (Ours) | 0.79 | 0.94 | 0.78 | 0.57 | 0.85 | 0.46 |", "| w/o D_f | 0.44 | 0.82 | 0.39 |",
                   "| Ours | 5.3267 | 0.1252 |"):
        assert quoted in text
    assert (paths.reports / section.FIGURE).stat().st_size > 0
    table = pd.read_csv(paths.metrics / "e2cl.csv")
    bc = table[(table["evaluation"] == "bc") & (table["split"] == "unseen")]
    k = int(round((bc["executability"] * bc["plans"]).sum()))
    measured = section._measured(table, ("bc",)).iloc[0]
    assert measured["row"] == "BC"
    assert measured["unseen executable plans, all seeds"].startswith(f"{k}/{int(bc['plans'].sum())} (")
    assert measured["unseen LCS"] == f"{bc['lcs'].mean():.2f}"  # one seed: no spread to show


def test_the_twin_plans_with_the_llm_alone_and_replays_without_calls(tmp_path):
    """e2cl_llm (llm_runs.e2cl: no seeds) trains nothing: the LLM plans the first programs of each test
    split, shown the expert program of the most similar training task (the stub answers its steps)."""
    from regula import stages
    from regula.llm.stub_server import StubLLMServer
    params = params_mod.validate({"e2cl": {"train_programs": 6, "test_programs": 3, "max_steps": 4},
                                  "llm_runs": {"e2cl": {"seeds": [], "prompting_programs": 2}}})
    quiet = SerialWork(lambda line: None)
    with StubLLMServer() as server:
        params["llm"].update(base_url=server.base_url, model=server.model, retries=0)
        headline = stages.execute("e2cl_llm", params, Paths(tmp_path), quiet)
        calls = server.calls
        assert 0 < calls <= 2 * 2 * 4  # two programs per split, at most max_steps answers each
    assert sorted(headline) == ["e2cl_llm_prompting_unseen_executability", "e2cl_llm_prompting_unseen_lcs"]
    rows = (tmp_path / "metrics" / "e2cl_llm.csv").read_text().splitlines()
    assert rows[0] == "seed,evaluation,condition,speculative,split,plans,executability,affordance_rate,lcs"
    assert [r.split(",")[1:5] + [r.split(",")[5]] for r in rows[1:]] == [
        ["prompting", "prompting", "False", "seen", "2"], ["prompting", "prompting", "False", "unseen", "2"]]
    assert not list((tmp_path / "data" / "e2cl_llm").glob("seed*")) and not (tmp_path / "data" / "e2cl").exists()
    assert sorted(p.name for p in (tmp_path / "metrics").iterdir()) == ["e2cl_llm.csv", "e2cl_llm.json",
                                                                       "e2cl_llm_detail.json"]
    detail = json.loads((tmp_path / "metrics" / "e2cl_llm_detail.json").read_text())
    assert detail["this_run"]["llm_calls"] == calls and detail["llm"]["e2cl_llm"]["planner"]["questions"] == calls
    plans = {p.name: p.read_bytes() for p in (tmp_path / "data" / "e2cl_llm").iterdir()}
    assert sorted(plans) == ["prompting-seen.jsonl", "prompting-unseen.jsonl"]
    # a replay: the answers come from the LLM cache (no server at all); the same record and plans
    params["llm"].update(mode="replay")
    assert stages.execute("e2cl_llm", params, Paths(tmp_path), quiet) == headline
    replayed = json.loads((tmp_path / "metrics" / "e2cl_llm_detail.json").read_text())
    assert replayed["this_run"]["llm_calls"] == 0 and replayed["llm"] == detail["llm"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "data" / "e2cl_llm").iterdir()} == plans
