"""E2CL's task split: the committed file is what its seed generates, and it keeps unseen tasks out of training."""
import pytest

from regula import envs
from regula.e2cl import split as S
from regula.errors import DataError

TASKS = S.program_tasks(envs.get("virtualhome").programs())


@pytest.fixture(scope="module")
def committed():
    return S.load_split(TASKS)


def test_committed_split_is_what_its_seed_generates(tmp_path, committed):
    again = tmp_path / "split.yaml"
    S.write_split(TASKS, again, seed=committed.seed)
    assert again.read_text() == S.SPLIT_FILE.read_text()


def test_split_counts(committed):
    assert (len(committed.seen_tasks), len(committed.unseen_tasks)) == (21, 5)
    assert committed.unseen_tasks == ("Brush teeth", "Make coffee", "Read book", "Relax on sofa", "Wash clothes")
    assert (len(committed.train), len(committed.test_seen), len(committed.test_unseen)) == (370, 49, 99)
    assert committed.part("file286_2") in S.PARTS


def test_no_unseen_task_in_training_and_no_program_in_two_parts(committed):
    unseen = set(committed.unseen_tasks)
    assert not any(TASKS[p] in unseen for p in committed.train + committed.test_seen)
    assert all(TASKS[p] in unseen for p in committed.test_unseen)
    parts = [set(committed.train), set(committed.test_seen), set(committed.test_unseen)]
    assert sum(map(len, parts)) == len(set().union(*parts)) == len(TASKS)
    # every seen task keeps programs to train on
    assert {TASKS[p] for p in committed.train} == set(committed.seen_tasks)


def test_seed_changes_the_split():
    a, b = S.make_split(TASKS, seed=0), S.make_split(TASKS, seed=1)
    assert a == S.make_split(TASKS, seed=0) and a != b


def corrupt(tmp_path, edit):
    text = S.SPLIT_FILE.read_text()
    path = tmp_path / "split.yaml"
    path.write_text(edit(text))
    return path


def test_a_program_in_two_parts_is_one_clear_error(tmp_path, committed):
    pid = committed.train[0]
    path = corrupt(tmp_path, lambda t: t.replace("  test_unseen:\n", f"  test_unseen:\n  - {pid}\n"))
    with pytest.raises(DataError) as e:
        S.load_split(TASKS, path)
    assert str(e.value) == (f"{path}: the split does not match the programs: program {pid} in train and "
                            f"test_unseen; program {pid} ({TASKS[pid]}) in test_unseen, its task is not unseen")


def test_unseen_task_in_training_is_caught(tmp_path, committed):
    pid = committed.test_unseen[0]
    path = corrupt(tmp_path, lambda t: t.replace(f"  - {pid}\n", "").replace("  train:\n", f"  train:\n  - {pid}\n"))
    with pytest.raises(DataError, match=rf"program {pid} \({TASKS[pid]}\) in train, its task is not seen$"):
        S.load_split(TASKS, path)


def test_unknown_and_missing_programs_are_caught(tmp_path, committed):
    pid = committed.test_seen[0]
    path = corrupt(tmp_path, lambda t: t.replace(f"  - {pid}\n", "  - file0_0\n"))
    with pytest.raises(DataError, match=rf"unknown program file0_0; program {pid} in no part$"):
        S.load_split(TASKS, path)


def test_unreadable_split_files(tmp_path):
    path = corrupt(tmp_path, lambda t: t.replace("seed: 0", "seed: [0"))
    with pytest.raises(DataError, match=rf"^{path}: cannot read the split"):
        S.load_split(TASKS, path)
    path.write_text("seed: 0\ntasks: {seen: [], unseen: []}\n")
    with pytest.raises(DataError, match=rf"^{path}: not a split file \(needs seed, tasks.seen/unseen, "
                                        r"programs.train/test_seen/test_unseen; KeyError: 'programs'\)$"):
        S.load_split(TASKS, path)
    with pytest.raises(DataError, match="cannot read the split"):
        S.load_split(TASKS, tmp_path / "absent.yaml")


def test_folds_leave_each_eligible_task_out_exactly_once(committed):
    folds = S.make_folds(TASKS, committed)
    assert folds[0] == S.Fold(S.RELEASE, committed)  # split.yaml is one fold, as it is
    counts = {t: list(TASKS.values()).count(t) for t in set(TASKS.values())}
    eligible = sorted(t for t, n in counts.items() if n >= 5)
    unseen = [t for f in folds for t in f.split.unseen_tasks]
    assert sorted(unseen) == eligible and len(eligible) == 24  # each once, none twice
    for f in folds:
        assert not S._problems(f.split, TASKS)  # every program in one part, no unseen task's program in training
        assert {TASKS[p] for p in f.split.train} == set(f.split.seen_tasks)
    # a program held out of a seen task is held out in every fold where its task is seen
    for a in folds:
        for b in folds:
            both = [p for p in TASKS if TASKS[p] in set(a.split.seen_tasks) & set(b.split.seen_tasks)]
            assert [p in a.split.test_seen for p in both] == [p in b.split.test_seen for p in both]
    assert [len(f.split.unseen_tasks) for f in folds] == [5, 5, 5, 5, 4]
