"""The e2cl stage end to end on a few programs: it explores, trains, plans (and again at another model
size, Fig. 3); a rerun finds every unit by its key and redoes nothing; a unit deleted is redone alone;
a size's unit that died halfway resumes from its work folder; a corrupt dataset is one clear error."""
import json

import pytest

from regula import params as params_mod
from regula.e2cl import stage
from regula.errors import DataError
from regula.stages import Paths, SerialWork
from stage_configs import changed


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    params = params_mod.validate({"e2cl": dict(seeds=[0], epochs=1, pretune_samples=40, train_programs=5,
                                                test_programs=2, max_steps=3, correction_cases=4, sizes=["small"],
                                                ranker_epochs=3)})
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
    # the pre-tuned model and the five conditions (NAT's included); at `small`: pre-tuned, BC and the method;
    # the ranking planner's unit on each of the 5 folds (one seed)
    assert first["e2cl_this_run_trained"] == 1 + 5 + 3 + 5
    assert detail["this_run"]["explored"] == 1 + 1 + 5 and first["e2cl_this_run_llm_calls"] == 0
    rows = (metrics / "e2cl.csv").read_text().splitlines()
    assert rows[0] == ("fold,seed,evaluation,condition,speculative,split,plans,executability,executability_any,"
                       "ended,repeats,affordance_rate,lcs")
    folds = [f["fold"] for f in detail["folds"]["runs"]]
    assert folds == ["release", "fold1", "fold2", "fold3", "fold4"]
    # the models' rows on the release fold, each baseline's on every fold (no seed: nothing trained), then
    # the ranker's on every fold and seed
    n_models, n_fixed = len(stage.EVALUATIONS) * 2, len(stage.baselines.BASELINES) * 2 * len(folds)
    assert len(rows) == 1 + n_models + n_fixed + len(stage.pl.RANKER_EVALUATIONS) * 2 * len(folds)
    assert [r.split(",")[:3] for r in rows[1:3]] == [["release", "0", "bc"]] * 2
    assert {tuple(r.split(",")[:2]) for r in rows[1 + n_models:1 + n_models + n_fixed]} == {(f, "") for f in folds}
    assert [r.split(",")[:6] for r in rows[1 + n_models + n_fixed:][:6]] == [
        ["release", "0", name, "ranker", str(name != "ranker_bc"), part]
        for name in ("ranker_bc", "ranker_e2cl", "ranker_no_dc") for part in ("seen", "unseen")]
    assert set(first) >= {"e2cl_ranker_bc_unseen_lcs", "e2cl_ranker_e2cl_unseen_executability"}
    assert (metrics / "e2cl_feedback.csv").read_text().count("\n") == 1 + len(stage.FEEDBACK_TYPES)
    assert (metrics / "e2cl_losses.csv").read_text().count("\n") == 1 + 5  # one epoch per condition
    models = sorted(p.name.split("-")[0] for p in (paths.data / "e2cl" / "seed0" / "models").iterdir())
    assert models == ["bc", "e2cl", "nat", "no_dc", "no_df"]
    unit = paths.data / "e2cl" / "ranker" / "fold2" / "seed0"  # its plans and record, not its weights
    assert sorted(str(p.relative_to(unit)).split("-")[0] for p in unit.rglob("*") if p.is_file()) == [
        f"plans/{name}_{part}" for name in ("ranker_bc", "ranker_e2cl", "ranker_no_dc")
        for part in ("seen", "unseen")] + ["run"]
    (record,) = [r for r in detail["folds"]["ranker"] if r["fold"] == "fold2"]
    assert len(record["losses"]) == len(record["correction_losses"]) == params.e2cl.ranker_epochs
    assert record["d_f_samples"] > 0 and record["d_c_samples"] > 0


def test_another_size_keeps_its_plans_and_record_not_its_weights(ran):
    params, paths, _ = ran
    sizes = (paths.metrics / "e2cl_sizes.csv").read_text().splitlines()
    assert sizes[0] == ("model,parameters,device,seed,evaluation,condition,speculative,split,plans,executability,"
                        "executability_any,ended,repeats,affordance_rate,lcs")
    # tiny's rows are the main run's own BC and method rows; small's come from its unit
    assert [r.split(",")[0:1] + r.split(",")[2:8] for r in sizes[1:]] == [
        [model, "cpu", "0", name, name, str(name == "e2cl"), part]
        for model in ("tiny", "small") for name in ("bc", "e2cl") for part in ("seen", "unseen")]
    main = (paths.metrics / "e2cl.csv").read_text().splitlines()
    bc_seen = next(r for r in main if r.startswith("release,0,bc,bc,False,seen,"))
    assert sizes[1].split(",")[7:] == bc_seen.split(",")[5:]
    unit = paths.data / "e2cl" / "sizes" / "small" / "seed0"
    assert sorted(str(p.relative_to(unit)).split("-")[0] for p in unit.rglob("*") if p.is_file()) == [
        "plans/bc_seen", "plans/bc_unseen", "plans/e2cl_seen", "plans/e2cl_unseen", "run"]
    record = json.loads(next(unit.glob("run-*.json")).read_text())
    assert record["model"] == "small" and record["device"] == "cpu" and len(record["losses"]["e2cl"]) == 1
    detail = json.loads((paths.metrics / "e2cl_detail.json").read_text())
    small, tiny = detail["sizes"]["summary"]["small"], detail["sizes"]["summary"]["tiny"]
    assert small["parameters"] == record["parameters"] > tiny["parameters"] == detail["per_seed"][0]["parameters"]
    assert set(small) == {"parameters", "bc/seen", "bc/unseen", "e2cl/seen", "e2cl/unseen"}


def test_a_size_unit_that_died_halfway_resumes_from_its_work_folder(ran, monkeypatch):
    params, paths, _ = ran
    unit = paths.data / "e2cl" / "sizes" / "small" / "seed0"
    kept = {p: p.read_bytes() for p in unit.rglob("*") if p.is_file()}
    for p in kept:
        p.unlink()
    evaluate = stage.pl.evaluate

    class Killed(Exception):
        pass

    def dies(model, *args, **kwargs):
        if model.log.get("preset") == "small":
            raise Killed  # killed while planning: the trainings before it are on disk
        return evaluate(model, *args, **kwargs)
    monkeypatch.setattr(stage.pl, "evaluate", dies)
    with pytest.raises(Killed):
        stage.run(params, paths, SerialWork(lambda line: None))
    assert sorted(p.name.split("-")[0] for p in (unit / "work").iterdir()) == [
        "bc", "d_c", "d_f", "e2cl", "explore_stats", "pretuned"]
    monkeypatch.setattr(stage.pl, "evaluate", evaluate)
    stage.run(params, paths, SerialWork(lambda line: None))
    detail = json.loads((paths.metrics / "e2cl_detail.json").read_text())
    assert detail["this_run"] == {"trained": 0, "explored": 0, "evaluated": 4, "llm_calls": 0}
    assert not (unit / "work").exists()
    assert {p: p.read_bytes() for p in unit.rglob("*") if p.is_file()} == kept  # CPU training: the same bytes


def test_a_size_or_device_it_cannot_use_is_one_clear_error(ran, monkeypatch):
    from regula.errors import ParamsError, RegulaError
    with pytest.raises(ParamsError, match=r"e2cl\.sizes\[0\]: 'huge' is not one of base, small, tiny"):
        params_mod.validate({"e2cl": {"sizes": ["huge"]}})
    with pytest.raises(ParamsError, match=r"e2cl\.device: 'tpu' is not one of cpu, cuda"):
        params_mod.validate({"e2cl": {"device": "tpu"}})
    params, paths, _ = ran
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cuda = changed(params, {"e2cl": {"device": "cuda"}})
    with pytest.raises(RegulaError, match=r"device 'cuda' asked for, but this torch build \(.*\) sees no GPU"):
        stage.run(cuda, paths, SerialWork(lambda line: None))


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
    # a ranker unit missing a plan is redone whole (train, explore, plan: 6 plan sets), to the same bytes
    (plan,) = (paths.data / "e2cl" / "ranker" / "fold3" / "seed0" / "plans").glob("ranker_e2cl_unseen-*.jsonl")
    kept = plan.read_bytes()
    plan.unlink()
    stage.run(params, paths, SerialWork(lambda line: None))
    detail = json.loads((paths.metrics / "e2cl_detail.json").read_text())
    assert detail["this_run"] == {"trained": 1, "explored": 1, "evaluated": 6, "llm_calls": 0}
    assert plan.read_bytes() == kept and (paths.metrics / "e2cl.csv").read_bytes() == table


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
    params["e2cl"].update(pretune_samples=30, pretune_epochs=2, max_steps=2, correction_cases=2, ranker_epochs=2)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    out = tmp_path / "run"
    out.mkdir()
    result = invoke(["e2cl", "--seed", 3, "--epochs", 1, "--train-programs", 2, "--test-programs", 1,
                     "--sizes", "small", "--params", tmp_path / "params.yaml", "--root", out])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    names = sorted([name for name, _, _ in stage.EVALUATIONS] + list(stage.baselines.BASELINES))
    assert [line.split(":")[0] for line in lines] == [f"{name}/{part}" for name in names
                                                      for part in ("seen", "unseen")] + [
        f"small {name}/{part}" for name in ("bc", "e2cl") for part in ("seen", "unseen")] + [
        f"{name}/{part} (every fold)" for name in ("ranker_bc", "ranker_e2cl", "ranker_no_dc")
        for part in ("seen", "unseen")]
    assert json.loads((out / "metrics" / "e2cl_detail.json").read_text())["seeds"] == [3]
    assert (out / "data" / "e2cl" / "seed3").is_dir() and (out / "data" / "e2cl" / "sizes" / "small" / "seed3").is_dir()
    assert not (out / "data" / "e2cl" / "sizes" / "base").exists()  # --sizes replaced params.yaml's [small, base]


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

    from regula.e2cl import report as section
    _, paths, _ = ran
    paths.reports.mkdir(parents=True, exist_ok=True)
    text = "\n".join(section.section(paths))
    assert f"| {section.LABELS['ranker_e2cl']} |" in text and "| fold4 | 0 | " in text  # its training per fold
    for heading in ("### Tables 1 and 3", "### Table 2", "### Leave-tasks-out folds", "### Fig. 3", "### Fig. 6",
                    "### Fig. 5", "### Fig. 4", "### Exploration and training"):
        assert heading in text
    # the baselines are rows of Tables 1-3 (twice: unseen and seen) and Table 2, and of the folds' table
    assert text.count(f"| {section.LABELS['retrieval_minilm']} |") == 4
    assert "| fold4 | " in text and "Exec. (any, old)" in text
    assert "| `small` (" in text and "our method outperforms BC in both affordance rate and LCS" in text
    assert (paths.reports / section.SIZES_FIGURE).stat().st_size > 0
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
        params = changed(params, {"llm": {"base_url": server.base_url, "model": server.model, "retries": 0}})
        headline = stages.execute("e2cl_llm", params, Paths(tmp_path), quiet)
        calls = server.calls
        assert 0 < calls <= 2 * 2 * 4  # two programs per split, at most max_steps answers each
    assert sorted(headline) == ["e2cl_llm_prompting_unseen_executability", "e2cl_llm_prompting_unseen_lcs"]
    rows = (tmp_path / "metrics" / "e2cl_llm.csv").read_text().splitlines()
    assert rows[0] == ("fold,seed,evaluation,condition,speculative,split,plans,executability,executability_any,"
                       "ended,repeats,affordance_rate,lcs")
    assert [r.split(",")[2:6] + [r.split(",")[6]] for r in rows[1:]] == [
        ["prompting", "prompting", "False", "seen", "2"], ["prompting", "prompting", "False", "unseen", "2"]]
    assert not list((tmp_path / "data" / "e2cl_llm").glob("seed*")) and not (tmp_path / "data" / "e2cl").exists()
    assert sorted(p.name for p in (tmp_path / "metrics").iterdir()) == ["e2cl_llm.csv", "e2cl_llm.json",
                                                                       "e2cl_llm_detail.json"]
    detail = json.loads((tmp_path / "metrics" / "e2cl_llm_detail.json").read_text())
    assert detail["this_run"]["llm_calls"] == calls and detail["llm"]["e2cl_llm"]["planner"]["questions"] == calls
    plans = {p.name: p.read_bytes() for p in (tmp_path / "data" / "e2cl_llm").iterdir()}
    assert sorted(plans) == ["prompting-seen.jsonl", "prompting-unseen.jsonl"]
    # a replay: the answers come from the LLM cache (no server at all); the same record and plans
    params = changed(params, {"llm": {"mode": "replay"}})
    assert stages.execute("e2cl_llm", params, Paths(tmp_path), quiet) == headline
    replayed = json.loads((tmp_path / "metrics" / "e2cl_llm_detail.json").read_text())
    assert replayed["this_run"]["llm_calls"] == 0 and replayed["llm"] == detail["llm"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "data" / "e2cl_llm").iterdir()} == plans
