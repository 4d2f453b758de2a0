"""`regula diff`: artifacts compared by meaning between two revisions (laws and DFAs by
language, DiVE's facts, metrics and tables by value, LLM caches by key), read from git and the
local DVC cache without a checkout."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from cli_run import assert_one_line_error, invoke
from regula.automata import DFA
from regula.diff import automata, caches, diff, dynamics, laws, tables
from regula.errors import DataError
from regula.llm.cache import cache_key

ROOT = Path(__file__).resolve().parent.parent
WHERE = ("A", "B")


def law_file(*laws_: tuple[str, str]) -> bytes:
    items = [{"name": n, "formula": f, "kind": "hard", "source": "hand"} for n, f in laws_]
    return json.dumps({"laws": items}).encode()


# -- laws ------------------------------------------------------------------------------------

def test_a_law_rewritten_with_the_same_language_is_rewritten_not_added_and_removed():
    old = law_file(("law_01", "G(!has_wood -> !make_wood_pickaxe)"), ("law_02", "G(!a -> !b)"))
    new = law_file(("law_01", "G(make_wood_pickaxe -> has_wood)"), ("law_02", "G(!a->!b)"))  # spacing only
    rows = laws.compare("data/laws/x/l.json", old, new, WHERE)
    assert [(r["change"], r["old"], r["new"]) for r in rows] == [
        ("rewritten", "G(!has_wood -> !make_wood_pickaxe)", "G(make_wood_pickaxe -> has_wood)")]


def test_positional_names_do_not_count_and_a_reordered_file_is_no_diff():
    old = law_file(("law_01", "G(!a -> !b)"), ("law_02", "G(!c -> !d)"))
    new = law_file(("law_01", "G(!c -> !d)"), ("law_02", "G(!a -> !b)"))
    assert laws.compare("data/laws/x/l.json", old, new, WHERE) == []


@pytest.mark.parametrize("backend", ["native", "spot"])
def test_a_law_changed_shows_a_shortest_trace_telling_the_two_apart(backend):
    old = law_file(("needs", "G(!a -> !b)"))
    new = law_file(("needs", "G(!a -> X !b)"))
    (row,) = laws.compare("data/laws/x/l.json", old, new, WHERE, backend=backend)
    assert (row["change"], row["trace"], row["holds"]) == ("replaced", [["b"]], "new")
    assert row["detail"] == "only the new law holds on {b}"


def test_laws_added_removed_and_their_other_fields():
    old = law_file(("p", "G(!a -> !b)"), ("q", "G(!x -> !y)"))
    new = json.dumps({"laws": [{"formula": "G(!a -> !b)", "kind": "soft", "source": "hand"},
                               {"formula": "F done"}]}).encode()
    rows = laws.compare("data/laws/x/l.json", old, new, WHERE)
    assert sorted((r["change"], r["old"], r["new"], r["detail"]) for r in rows) == [
        ("added", "", "F done", ""), ("changed", "G(!a -> !b)", "G(!a -> !b)", "kind: 'hard' -> 'soft'"),
        ("removed", "G(!x -> !y)", "", "")]


def test_a_critic_record_compares_its_accepted_and_rejected_lists_an_unparsable_proposal_as_text():
    old = json.dumps({"accepted": [{"formula": "G(!a -> !b)"}], "rejected": [{"formula": "G(... -> X(...))"}],
                      "laws": 1}).encode()
    new = json.dumps({"accepted": [{"formula": "G(!a -> !b)"}], "rejected": [], "laws": 1}).encode()
    rows = laws.compare("data/laws/c/critic_0.json", old, new, WHERE)
    assert [(r["file"], r["change"], r["old"]) for r in rows] == [
        ("data/laws/c/critic_0.json (rejected)", "removed", "G(... -> X(...))")]


# -- DFAs ------------------------------------------------------------------------------------

def ab_dfa(accept_after_b: int) -> DFA:
    """Words over {a, b} ending in state 2; state 1 goes to `accept_after_b` on b."""
    return DFA(("a", "b"), ((1, 0), (2, accept_after_b), (2, 2)), 0, frozenset({2}))


def test_a_dfa_with_one_transition_changed_shows_a_shortest_word_in_each_difference():
    rows = automata.compare("data/s/skills/x.json", ab_dfa(0).dumps().encode(), ab_dfa(2).dumps().encode(), WHERE)
    assert rows == [{"file": "data/s/skills/x.json", "change": "language", "states_old": 3, "states_new": 3,
                     "only_old": None, "only_new": ["a", "b"]}]


def test_a_renumbered_dfa_is_no_diff_and_a_bigger_one_with_the_same_language_says_so():
    a = ab_dfa(0)
    renumbered = DFA(("b", "a"), ((0, 2), (1, 1), (0, 1)), 0, frozenset({1}))  # 0 -> 0, 1 -> 2, 2 -> 1
    assert automata.compare("data/x.json", a.dumps().encode(), renumbered.dumps().encode(), WHERE) == []
    bigger = DFA(("a", "b"), ((1, 0), (2, 0), (3, 3), (2, 2)), 0, frozenset({2, 3}))
    (row,) = automata.compare("data/x.json", a.dumps().encode(), bigger.dumps().encode(), WHERE)
    assert (row["change"], row["states_old"], row["states_new"]) == ("same language", 3, 4)


def test_dfas_over_different_alphabets_are_compared_with_unknown_symbols_rejected():
    old = DFA(("a",), ((1,), (1,)), 0, frozenset({1}))
    new = DFA(("a", "c"), ((1, 1), (1, 1)), 0, frozenset({1}))
    row = automata.compare_dfas(old, new)
    assert (row["only_old"], row["only_new"]) == (None, ["c"])


# -- dynamics, metrics, caches ---------------------------------------------------------------

def fact(element, attribute, arg, value=1, step=1):
    return {"element": element, "attribute": attribute, "arg": arg, "value": value, "step": step, "support": step}


def test_dynamics_facts_added_removed_changed_and_their_verification():
    old = {"discovered": [fact("make_x", "requires", "wood"), fact("make_x", "near", "table"),
                          fact("collect_y", "gives", "y")],
           "verified": [fact("make_x", "requires", "wood")]}
    new = {"discovered": [fact("make_x", "requires", "wood", 2, step=3), fact("make_x", "near", "table", step=4),
                          fact("make_x", "leaves", "path")],
           "verified": [fact("make_x", "near", "table", step=4)]}
    rows = dynamics.compare("data/dive/dynamics.json", json.dumps(old).encode(), json.dumps(new).encode(), WHERE)
    got = [(r["change"], r["fact"], r["part"], r["value_old"], r["value_new"], r["status_old"], r["status_new"])
           for r in rows]
    assert got == [("removed", "collect_y gives y", "outcome", 1, None, "discovered", None),
                   ("added", "make_x leaves path", "outcome", None, 1, None, "discovered"),
                   ("status", "make_x near table", "precondition", 1, 1, "discovered", "verified"),
                   ("changed", "make_x requires wood", "precondition", 1, 2, "verified", "discovered")]


def test_metrics_json_leaves_old_to_new_with_the_change():
    old = {"laws": 27, "rate": 0.1, "nan": float("nan"), "by": {"x": [1, 2]}, "gone": True}
    new = {"laws": 28, "rate": 0.3, "nan": float("nan"), "by": {"x": [1, 3]}, "came": "yes"}
    rows = tables.compare("metrics/m.json", json.dumps(old).encode(), json.dumps(new).encode(), WHERE)
    assert [(r["key"], r["change"], r["old"], r["new"], r["delta"]) for r in rows] == [
        ("by.x[1]", "changed", 2, 3, 1), ("gone", "removed", True, None, None),
        ("laws", "changed", 27, 28, 1), ("rate", "changed", 0.1, 0.3, 0.2), ("came", "added", None, "yes", None)]


def test_a_table_is_matched_on_its_shortest_unique_leading_columns():
    old = "actor,iteration,rate,note\nrandom,0,0.5,a\nrandom,1,0.6,b\ngreedy,0,0.9,c\n"
    new = "actor,iteration,rate,note\ngreedy,0,0.9,c\nrandom,1,0.7,b\nrandom,2,0.8,d\n"  # reordered too
    rows = tables.compare("metrics/t.csv", old.encode(), new.encode(), WHERE)
    assert [(r["key"], r["change"], r["old"], r["new"], r["delta"]) for r in rows] == [
        ("(actor=random, iteration=0)", "removed", "row", None, None),
        ("actor=random, iteration=1: rate", "changed", 0.6, 0.7, 0.1),
        ("(actor=random, iteration=2)", "added", None, "row", None)]
    assert tables.compare("metrics/t.csv", old.encode(), old.replace("\n", "\r\n").encode(), WHERE) == []


def entry(question: str, answer: str, usage: int = 1) -> tuple[str, bytes]:
    request = {"model": "m", "endpoint": "e", "messages": [{"role": "user", "content": question}], "params": {},
               "sample": 0}
    key = cache_key("m", "e", request["messages"], {}, 0)
    body = {"key": key, "request": request, "response": {"content": answer}, "usage": {"total_tokens": usage}}
    return f"data/cache/llm/stage/{key[:2]}/{key}.json", json.dumps(body).encode()


def test_llm_caches_added_removed_and_a_conflicting_answer_for_one_key():
    path, yes = entry("is it?", "yes")
    _, no = entry("is it?", "no", usage=2)
    _, yes_again = entry("is it?", "yes", usage=5)  # other usage, same answer: the same entry
    assert caches.selects(path)
    assert caches.compare(path, yes, yes_again, WHERE) == []
    (row,) = caches.compare(path, yes, no, WHERE)
    assert (row["file"], row["change"], row["old"]["content"], row["new"]["content"]) == \
        ("data/cache/llm/stage", "conflict", "yes", "no")
    assert caches.compare(path, None, no, WHERE)[0]["change"] == "added"


def test_numbers_within_the_tolerance_are_the_same_and_the_default_is_the_reports_precision():
    old = json.dumps({"cosine": 0.4123456, "n": 3}).encode()
    new = json.dumps({"cosine": 0.4123461, "n": 3}).encode()  # another CPU's BLAS: the 7th digit
    assert tables.compare("metrics/rag.json", old, new, WHERE) == []
    assert tables.TOLERANCE == 5e-5
    rows = tables.compare("metrics/rag.json", old, new, WHERE, tolerance=0)
    assert [(r["key"], r["delta"]) for r in rows] == [("cosine", 5e-07)]
    csv_old, csv_new = b"skill,recall\nwood,0.50001\nstone,0.4\n", b"skill,recall\nwood,0.50004\nstone,0.41\n"
    assert [(r["key"], r["old"], r["new"]) for r in tables.compare("metrics/t.csv", csv_old, csv_new, WHERE)] == \
        [("skill=stone: recall", 0.4, 0.41)]
    assert not tables.same(1, True, 1.0) and not tables.same("1", 1, 1.0)


def test_params_are_compared_by_dotted_key_and_come_first():
    from regula.diff import KINDS, params as params_kind
    old = b"seed: 0\nltlcrit:\n  actors: [random, greedy]\n  episodes: 40\n"
    new = b"seed: 0\nltlcrit:\n  actors: [random, naive]\n  episodes: 40\nfeedback:\n  max_queries: 100\n"
    rows = params_kind.compare("params.yaml", old, new, WHERE)
    assert [(r["key"], r["change"], r["old"], r["new"]) for r in rows] == [
        ("ltlcrit.actors[1]", "changed", "greedy", "naive"), ("feedback.max_queries", "added", None, 100)]
    assert list(KINDS)[0] == "params" and params_kind.selects("params.yaml") and not params_kind.selects("x.yaml")
    with pytest.raises(DataError, match=r"^params.yaml at B: not valid YAML"):
        params_kind.compare("params.yaml", old, b"seed: [", WHERE)


def test_markdown_is_one_line_per_row_whatever_the_width():
    from regula.diff.render import markdown
    result = {"a": "A", "b": "B", "kinds": {
        "params": [{"file": "params.yaml", "key": "rag.k", "change": "changed", "old": 20, "new": 10, "delta": -10}],
        "metrics": [{"file": "metrics/x.json", "key": "a|b " * 40, "change": "changed", "old": 1, "new": 2,
                     "delta": 1}]}}
    text = markdown(result)
    lines = text.splitlines()
    assert lines[:4] == ["### params", "", "| key | old | new |", "|---|---|---|"]
    assert lines[4] == "| rag.k | 20 | 10 |"
    assert lines[6] == "### metrics/x.json"
    assert lines[10].startswith("| " + "a\\|b " * 3) and lines[10].endswith(" | changed | 1 | 2 | +1 |")
    assert lines[-1] == "A -> B: changes by kind: params 1, metrics 1"


# -- revisions and the command ---------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def write(repo: Path, files: dict) -> None:
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.fixture
def repo(tmp_path) -> Path:
    """Two commits: one law rewritten (same language), one replaced, one metric changed."""
    r = tmp_path / "proj"
    r.mkdir()
    git(r, "init", "-q")
    write(r, {"data/laws/crafter/hard.yaml": "laws:\n- formula: G(!a -> !b)\n  name: law_01\n"
                                             "- formula: G(!c -> !d)\n  name: law_02\n",
              "metrics/laws.json": json.dumps({"laws": 2, "blocked": 5})})
    git(r, "add", "-A")
    git(r, "commit", "-qm", "one")
    write(r, {"data/laws/crafter/hard.yaml": "laws:\n- formula: G(b -> a)\n  name: law_01\n"
                                             "- formula: G(!c -> !e)\n  name: law_02\n",
              "metrics/laws.json": json.dumps({"laws": 2, "blocked": 7})})
    git(r, "add", "-A")
    git(r, "commit", "-qm", "two")
    return r


def test_diff_head_head_on_this_repository_is_nothing_and_exits_0():
    result = invoke(["diff", "HEAD", "HEAD", "--root", ROOT])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == ("no difference between HEAD and HEAD "
                                     "(params, laws, dfas, dynamics, metrics, caches)")


def test_two_commits_differing_in_a_law_and_a_metric_exit_1_and_show_both(repo):
    result = invoke(["diff", "HEAD~1", "HEAD", "--root", repo, "--format", "table"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "rewritten" in out and "G(b -> a)" in out and "same language" in out
    assert "replaced" in out and "only the new law holds on {d}" in out
    assert "metrics/laws.json" in out and "blocked" in out and "5" in out and "7" in out and "+2" in out
    assert out.strip().endswith("changes by kind: params 0, laws 2, dfas 0, dynamics 0, metrics 1, caches 0")
    as_json = invoke(["diff", "HEAD~1", "HEAD", "--root", repo, "--format", "json"])
    assert as_json.exit_code == 1
    data = json.loads(as_json.stdout)
    assert {k: len(v) for k, v in data["kinds"].items()} == {"params": 0, "laws": 2, "dfas": 0, "dynamics": 0,
                                                            "metrics": 1, "caches": 0}
    assert sorted(r["change"] for r in data["kinds"]["laws"]) == ["replaced", "rewritten"]
    assert data["kinds"]["metrics"] == [{"file": "metrics/laws.json", "key": "blocked", "change": "changed",
                                         "old": 5, "new": 7, "delta": 2}]
    only = invoke(["diff", "HEAD~1", "HEAD", "--root", repo, "--kind", "metrics", "--format", "json"])
    assert list(json.loads(only.stdout)["kinds"]) == ["metrics"]


def test_into_a_pipe_the_diff_is_markdown_params_first_and_float_noise_is_no_change(repo):
    write(repo, {"params.yaml": "seed: 0\nrag:\n  k: 20\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "params")
    write(repo, {"params.yaml": "seed: 0\nrag:\n  k: 10\n",
                 "metrics/laws.json": json.dumps({"laws": 2, "blocked": 7.00000004})})
    result = invoke(["diff", "HEAD", "--root", repo])  # the test runner's stdout is not a terminal
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == ["### params", "", "| key | old | new |", "|---|---|---|",
                                          "| rag.k | 20 | 10 |", "",
                                          "HEAD -> workspace: changes by kind: params 1, laws 0, dfas 0, dynamics 0, "
                                          "metrics 0, caches 0"]
    strict = json.loads(invoke(["diff", "HEAD", "--root", repo, "--format", "json", "--tolerance", "0"]).stdout)
    assert [r["key"] for r in strict["kinds"]["metrics"]] == ["blocked"]
    assert_one_line_error(invoke(["diff", "HEAD", "--root", repo, "--format", "html"]), "unknown format 'html'")


def test_the_commands_default_tolerance_is_the_diffs():
    from regula import cli
    assert cli.DIFF_TOLERANCE == tables.TOLERANCE


def test_the_workspace_is_the_default_b_and_an_experiment_name_a_revision(repo):
    assert invoke(["diff", "--root", repo]).exit_code == 0
    (repo / "metrics" / "laws.json").write_text(json.dumps({"blocked": 7, "laws": 2}, indent=4))  # layout only
    assert invoke(["diff", "--root", repo]).exit_code == 0
    first = git(repo, "rev-parse", "HEAD~1")
    git(repo, "update-ref", f"refs/exps/{first[:2]}/{first[2:]}/my-exp", first)  # where `dvc exp` keeps one
    data = json.loads(invoke(["diff", "my-exp", "--root", repo, "--format", "json"]).stdout)
    assert data["a"] == "my-exp (experiment)" and len(data["kinds"]["metrics"]) == 1


def test_a_bad_revision_is_one_clear_error(repo):
    line = assert_one_line_error(invoke(["diff", "no-such-rev", "--root", repo]), "unknown revision 'no-such-rev'")
    assert "DVC experiment" in line
    assert_one_line_error(invoke(["diff", "HEAD", "--kind", "rules", "--root", repo]), "unknown kind 'rules'")


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_a_dvc_cached_output_is_read_from_the_cache_at_a_revision_and_a_missing_object_is_named(repo):
    """data/dive is a DVC output: dvc.lock names its .dir manifest, the objects lie in .dvc/cache."""
    cache = repo / ".dvc" / "cache" / "files" / "md5"

    def commit_dynamics(facts: list) -> str:
        body = json.dumps({"discovered": facts, "verified": []}).encode()
        manifest = json.dumps([{"md5": md5(body), "relpath": "dynamics.json"}]).encode()
        for obj in (body, manifest):
            h = md5(obj) + (".dir" if obj is manifest else "")
            (cache / h[:2]).mkdir(parents=True, exist_ok=True)
            (cache / h[:2] / h[2:]).write_bytes(obj)
        lock = {"schema": "2.0", "stages": {"dive": {"cmd": "x", "outs": [
            {"path": "data/dive", "hash": "md5", "md5": md5(manifest) + ".dir", "nfiles": 1}]}}}
        write(repo, {"dvc.lock": json.dumps(lock)})
        git(repo, "add", "dvc.lock")
        git(repo, "commit", "-qm", "dive")
        return md5(manifest)

    commit_dynamics([fact("make_x", "requires", "wood")])
    manifest = commit_dynamics([fact("make_x", "requires", "wood", 2)])
    rows = diff(repo, "HEAD~1", "HEAD", ("dynamics",))["kinds"]["dynamics"]
    assert [(r["change"], r["fact"], r["value_old"], r["value_new"]) for r in rows] == \
        [("changed", "make_x requires wood", 1, 2)]
    (cache / manifest[:2] / (manifest[2:] + ".dir")).unlink()
    result = invoke(["diff", "HEAD~1", "HEAD", "--root", repo, "--kind", "dynamics"])
    assert result.exit_code == 0, result.output  # nothing it could read differs
    assert result.stderr.strip() == ("note: at HEAD, data/dive is not in the local DVC cache .dvc/cache "
                                     "(run `dvc pull`): left out of the diff")
    # kinds that never read data/dive are not told about it
    quiet = invoke(["diff", "HEAD~1", "HEAD", "--root", repo, "--kind", "metrics", "--kind", "caches"])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output
    assert "Traceback" not in result.output


def test_a_corrupt_artifact_at_a_revision_is_one_line_naming_it_and_the_revision(repo):
    write(repo, {"metrics/laws.json": '{"laws": 2, "blocked":'})
    git(repo, "commit", "-qam", "broken")
    assert_one_line_error(invoke(["diff", "HEAD~1", "HEAD", "--root", repo]),
                          "metrics/laws.json at HEAD: not valid JSON")


def test_cells_are_shown_as_written_not_as_rich_markup():
    from rich.console import Console

    from regula.diff.render import show
    path, old = entry("q", "[/bold] [red]x")
    _, new = entry("q", "y")
    result = {"a": "A", "b": "B", "kinds": {"caches": caches.compare(path, old, new, WHERE),
                                             "laws": laws.compare("data/laws/l.json", law_file(("n", "X[!] a")),
                                                                  law_file(("n", "X[!] b")), WHERE)}}
    console = Console(width=200, record=True)
    with console.capture() as captured:
        show(result, console)
    assert "[/bold] [red]x" in captured.get() and "X[!] a" in captured.get()
