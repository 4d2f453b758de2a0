"""Specifications learned with a person as the equivalence oracle (regula.specs): the person's
answers, recorded, replay the learning with no person; the three ways of answering."""
import json
from pathlib import Path

import pytest

from regula.automata.dfa import DFA
from regula.automata.ops import equivalent
from regula.automata.teachers import NoisyTeacher, formula_dfa
from regula.errors import DataError, RegulaError
from regula.specs.learn import learn_spec
from regula.specs.person import EqCache, FormulaPerson, PersonOracle, describe, hypothesis_key

LETTERS = ("is_night", "shelter", "eat_cow")
# What the person means: after nightfall, shelter before eating (the teacher knows less: it
# only knows that something must be sheltered from, `F shelter`).
MEANT = formula_dfa(["F shelter", "G (is_night -> (!eat_cow U shelter))"], LETTERS)
TEACHER = formula_dfa(["F shelter"], LETTERS)


def _person(path, answers=None, trajectories=()):
    said = []
    script = iter(answers) if answers is not None else None
    ask = (lambda prompt: next(script)) if script is not None else None
    return PersonOracle(LETTERS, EqCache(path), ask=ask, say=said.append, trajectories=list(trajectories)), said


def test_a_person_corrects_the_teacher_and_the_answers_replay(tmp_path):
    cache = tmp_path / "night.eq.jsonl"
    # the person types a word the teacher's language gets wrong, then accepts
    person, said = _person(cache, ["shelter ; yes", "is_night eat_cow shelter ; no", "ok"])
    got = learn_spec("night", "shelter at night", LETTERS, NoisyTeacher(TEACHER.accepts, 0.0), person, tmp_path,
                     svg=False)
    assert got.person_answers == 3 and got.rounds == 3
    assert not got.dfa.accepts(("is_night", "eat_cow", "shelter")) and got.dfa.accepts(("shelter",))
    assert any(line.startswith("it accepts, shortest first: shelter") for line in said)
    assert (tmp_path / "night.json").exists() and (tmp_path / "night.dot").exists()
    # replayed: no person, the same DFA, nothing asked
    replay, _ = _person(cache)
    again = learn_spec("night", "shelter at night", LETTERS, NoisyTeacher(TEACHER.accepts, 0.0), replay,
                       tmp_path / "again", svg=False)
    assert again.dfa == got.dfa and again.person_answers == 0
    # another teacher proposes another hypothesis: nobody answered it
    with pytest.raises(RegulaError, match="no answer recorded for hypothesis .* run `regula spec learn` in a terminal"):
        learn_spec("night", "x", LETTERS, NoisyTeacher(MEANT.accepts, 0.0), _person(cache)[0], tmp_path / "x",
                   svg=False)


def test_a_recorded_trajectory_marked_wrong_is_its_word_with_the_other_label(tmp_path):
    everything = DFA.from_table(LETTERS, {0: {x: 0 for x in LETTERS}}, 0, {0})
    trajectories = [("episode_00000.jsonl", ("shelter",)), ("episode_00001.jsonl", ("is_night", "eat_cow"))]
    person, said = _person(tmp_path / "c.eq.jsonl", ["#3", "#x", "#2"], trajectories)
    [cex] = person.observe(everything)
    assert (cex.word, cex.label, cex.trusted) == (("is_night", "eat_cow"), False, True)
    assert "no trajectory #3 (there are 2)" in said and "no trajectory #x (there are 2)" in said
    assert "#2 episode_00001.jsonl: is_night, eat_cow -> accepted" in describe(everything, trajectories)
    assert EqCache(tmp_path / "c.eq.jsonl").get(hypothesis_key(everything)) == {
        "word": ["is_night", "eat_cow"], "label": False, "how": "trajectory", "trajectory": "episode_00001.jsonl"}


def test_typed_answers_are_checked_before_they_count(tmp_path):
    nothing = DFA.from_table(LETTERS, {0: {x: 0 for x in LETTERS}}, 0, set())
    person, said = _person(tmp_path / "c.eq.jsonl", ["shelter", "fish ; yes", "shelter ; maybe", "shelter ; no",
                                                     "shelter ; yes"])
    [cex] = person.observe(nothing)
    assert (cex.word, cex.label) == (("shelter",), True)
    assert said[-4:] == ["write ok, the symbols then `; yes` or `; no`, or #N",
                         "fish is not a letter (is_night, shelter, eat_cow)", "after the semicolon: yes or no",
                         "the hypothesis already answers that; give a word it gets wrong"]


def test_a_damaged_cache_is_named(tmp_path):
    bad = tmp_path / "c.eq.jsonl"
    bad.write_text('{"hypothesis": "x", "answer": null}\n{"answer": null}\n')
    with pytest.raises(DataError, match="c.eq.jsonl:2: not an EQ cache record"):
        EqCache(bad)


def test_spec_learn_in_a_terminal_and_replayed(tmp_path, monkeypatch, capsys):
    from regula.cli import main
    answers = iter(["shelter ; yes", "is_night eat_cow shelter ; no", "ok"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    args = ["spec", "learn", "shelter at night", "--name", "night", "--letters", ",".join(LETTERS),
            "--formula", "F shelter", "--out", str(tmp_path), "--no-svg"]
    assert main(args) == 0
    assert "night: 4 states, 3 equivalence rounds, 26 teacher askings, 3 new answers from you" in capsys.readouterr().out
    learned = DFA.load(tmp_path / "night.json")
    assert main(args + ["--replay"]) == 0
    assert "0 new answers from you" in capsys.readouterr().out
    assert DFA.load(tmp_path / "night.json") == learned
    assert main(["spec", "learn", "x", "--name", "night", "--letters", "a", "--out", str(tmp_path)]) == 2
    assert "--teacher formula needs at least one --formula clause" in capsys.readouterr().err
    assert main(["spec", "learn", "x", "--name", "a b", "--letters", "a"]) == 2
    assert "--name must be letters, digits, _ and -" in capsys.readouterr().err


def test_the_learned_spec_equals_what_the_person_meant_when_they_answer_from_it(tmp_path):
    # the stand-in person means MEANT and types, for each hypothesis, its shortest wrong word
    stand_in = FormulaPerson(["F shelter", "G (is_night -> (!eat_cow U shelter))"], LETTERS)
    person = PersonOracle(LETTERS, EqCache(tmp_path / "m.eq.jsonl"), ask=stand_in.ask, say=lambda line: None,
                          show=stand_in.show, by=stand_in.name)
    got = learn_spec("m", "shelter at night", LETTERS, NoisyTeacher(TEACHER.accepts, 0.0), person, tmp_path,
                     svg=False)
    assert equivalent(got.dfa, MEANT)[0]
    assert person.asked == got.rounds  # one answer a hypothesis, the last one `ok`
    records = EqCache(tmp_path / "m.eq.jsonl").records
    assert records[-1]["answer"] is None and all(
        r["answer"]["by"] == "formula: F shelter & G (is_night -> (!eat_cow U shelter))" for r in records[:-1])


def test_spec_learn_with_a_stand_in_person_then_replayed(tmp_path, capsys):
    # no terminal: the stand-in who means MEANT answers and its answers are recorded; the
    # replay learns the same DFA from them with no one asked
    from regula.cli import main
    args = ["spec", "learn", "shelter at night", "--name", "night", "--letters", ",".join(LETTERS),
            "--formula", "F shelter", "--out", str(tmp_path), "--no-svg"]
    meant = ["--person-formula", "F shelter", "--person-formula", "G (is_night -> (!eat_cow U shelter))"]
    assert main(args + meant) == 0
    out = capsys.readouterr().out
    assert "new answers from the stand-in person" in out and " 0 new answers" not in out
    learned = DFA.load(tmp_path / "night.json")
    assert equivalent(learned, MEANT)[0]
    assert main(args + ["--replay"]) == 0
    assert "0 new answers from you" in capsys.readouterr().out
    assert DFA.load(tmp_path / "night.json") == learned
    assert main(args + ["--person-formula", "G (is_night -> (!eat_cow U shelter)"]) == 2  # a bad clause: one line
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1


def _stage_root(tmp_path):
    """The recorded answers, two short demonstrations (data/demos is a stage's output) and a one-skill
    library for the studies (data/cedar_skills is one too)."""
    import shutil

    from regula import params as P
    from regula import stages
    from regula.cedar.library import Library, Skill
    root = Path(__file__).resolve().parents[1]
    shutil.copytree(root / "data" / "specs" / "answers", tmp_path / "data" / "specs" / "answers")
    wood = formula_dfa(["F collect_wood"], ("collect_wood",))
    lib, where = tmp_path / "data" / "cedar_skills", "skills/collect_wood.json"
    wood.save(lib / where)
    Library([Skill("collect_wood", "chop a tree for wood", wood)]).save(lib, [
        {"name": "collect_wood", "description": "chop a tree for wood", "dfa": where, "reached": True}])
    tiny = P.validate({"demos": {"episodes": 2, "max_steps": 300, "max_skills": 60}})
    stages.execute("demos", tiny, stages.Paths(tmp_path), stages.SerialWork(progress=lambda line: None))
    return tmp_path


class _Work:
    def __init__(self):
        self.said = []

    def progress(self, line):
        self.said.append(line)


def test_the_specs_stage_replays_the_recorded_answers_and_learns_what_was_meant(tmp_path):
    from regula import params as P
    from regula.specs import stage
    from regula.stages import Paths
    study = {"name": "wood_at_night", "goal": "collect_wood", "spec": "sleep_at_night", "trials": 1, "days": 1}
    params = P.load(Path(__file__).resolve().parents[1] / "params.yaml", {"specs.studies": [study]})
    paths = Paths(root=_stage_root(tmp_path), stage="specs")
    stage.prepare(params, paths)
    work = _Work()
    head = stage.run(params, paths, work)
    names = [i.name for i in params.specs.items]
    assert head == {"specs_equal_to_meant": len(names)}
    out = tmp_path / "data" / "specs" / "dfas"
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{n}{x}" for n in names for x in (".json", ".dot", ".svg"))
    for item in params.specs.items:  # the learned language is the one the person meant
        assert equivalent(DFA.load(out / f"{item.name}.json"), formula_dfa(item.meant, tuple(item.letters)))[0]
    detail = json.loads((tmp_path / "metrics" / "specs_detail.json").read_text())["specs"]
    answers = tmp_path / "data" / "specs" / "answers"  # one person's answer a round, each recorded
    assert [r["person_answers"] for r in detail] == [
        len((answers / f"{n}.eq.jsonl").read_text().splitlines()) for n in names]  # in the detail since the household stage    # the baseline: the teacher's formula alone is wrong on a word each time (the answers made the difference)
    assert [(r["teacher_alone_equals_meant"], r["teacher_alone_differs_on"]) for r in detail] == [
        (False, ["shelter", "is_night"]), (False, ["collect_stone", "make_wood_pickaxe"]),
        (False, ["sleep", "collect_drink"]), (False, ["is_night", "collect_wood", "shelter"]),
        (False, ["collect_stone"]), (False, ["in_area", "not_in_area"])]
    # the study: both agents on seeds.eval's first world, a day in 50-step bins; the shielded one never violates
    studied = json.loads((tmp_path / "metrics" / "specs_detail.json").read_text())["studies"]["wood_at_night"]
    assert studied["worlds"] == [params.seeds.eval.start] and studied["agents"]["with"]["violations"] == 0
    bins = (tmp_path / "metrics" / "specs_studies.csv").read_text().splitlines()
    assert len(bins) == 1 + 2 * 6 and bins[1].startswith("wood_at_night,without,0,50,")
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    first_bins = (tmp_path / "metrics" / "specs_studies.csv").read_bytes()
    assert stage.run(params, paths, _Work()) == head  # replayed again: the same files
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    assert (tmp_path / "metrics" / "specs_studies.csv").read_bytes() == first_bins
    assert any("shelter_at_night: 4 states after 20 of the person's answers" in line for line in work.said)
    # an answer missing from the record stops the stage, naming its file; a missing record, before any work
    answers = tmp_path / "data" / "specs" / "answers"
    lines = (answers / "drink_before_sleep.eq.jsonl").read_text().splitlines()
    (answers / "drink_before_sleep.eq.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(RegulaError, match="no answer recorded for hypothesis .*/drink_before_sleep.eq.jsonl"):
        stage.run(params, paths, _Work())
    (answers / "pickaxe_first.eq.jsonl").unlink()
    with pytest.raises(RegulaError, match=r"specs: no recorded answers for 'pickaxe_first' \(.*pickaxe_first.eq.jsonl\)"):
        stage.prepare(params, paths)


def test_a_bad_spec_in_params_is_refused_in_one_line():
    from regula import params as P
    from regula.errors import ParamsError
    item = {"name": "a b", "instruction": "x", "letters": ["sleep"], "teacher": ["F sleep"], "meant": ["F sleep"]}
    with pytest.raises(ParamsError, match=r"specs.items\[0\].name"):
        P.validate({"specs": {"items": [item]}})
