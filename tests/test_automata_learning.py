"""Active learning, oracles, teachers and the DFA policy."""
import random

import pytest
from aalpy.utils import generate_random_dfa

from regula.automata import DFA, equivalent
from regula.automata.learning import LearningError, learn, learn_plain_lstar
from regula.automata.oracles import ExactOracle, PersonOracle, RandomWordOracle, TraceOracle
from regula.automata.policy import DFAPolicy
from regula.automata.teachers import CrafterRulesTeacher, NoisyTeacher


def random_target(n, alphabet, seed):
    random.seed(seed)
    return DFA.from_aalpy(generate_random_dfa(num_states=n, alphabet=list(alphabet), num_accepting_states=max(1, n // 4)))


@pytest.mark.parametrize("algorithm", ["lstar", "kv"])
def test_noiseless_learning_is_exact(algorithm):
    for seed in range(5):
        target = random_target(12, "abcd", seed)
        result = learn(target.alphabet, NoisyTeacher(target.accepts, 0.0), ExactOracle(target), algorithm=algorithm)
        assert equivalent(result.dfa, target)[0]
        assert result.repairs == 0 and result.teacher_queries <= result.membership_words  # one asking each


def test_baseline_plain_lstar_matches_when_noiseless():
    target = random_target(10, "abc", 1)
    result = learn_plain_lstar(target.alphabet, NoisyTeacher(target.accepts, 0.0), ExactOracle(target))
    assert equivalent(result.dfa, target)[0]


EVEN_A = DFA.from_table(("a", "b"), {0: {"a": 1, "b": 0}, 1: {"a": 0, "b": 1}}, 0, {0})


def test_a_persistently_wrong_answer_is_repaired_from_a_counterexample():
    wrong = {("a", "a"), ("b", "a", "b", "a")}
    teacher = NoisyTeacher(lambda w: EVEN_A.accepts(w) != (w in wrong), 0.0)
    result = learn(EVEN_A.alphabet, teacher, ExactOracle(EVEN_A))
    assert equivalent(result.dfa, EVEN_A)[0]
    assert result.repairs >= 1 and result.restarts == result.repairs
    assert {"word": ["a", "a"], "cached": False, "oracle": True} in result.conflicts


def test_votes_beat_independent_noise_on_a_small_target():
    teacher = NoisyTeacher(EVEN_A.accepts, 0.1, "independent", seed=3)
    result = learn(EVEN_A.alphabet, teacher, ExactOracle(EVEN_A), votes=7)
    assert equivalent(result.dfa, EVEN_A)[0]
    assert result.teacher_queries > result.membership_words  # repeats were asked


def test_budget_stops_with_a_message():
    target = random_target(12, "abcd", 0)
    with pytest.raises(LearningError, match="membership-query budget of 50 spent"):
        learn(target.alphabet, NoisyTeacher(target.accepts, 0.0), ExactOracle(target), max_queries=50)
    with pytest.raises(Exception, match="votes must be odd"):
        learn(target.alphabet, NoisyTeacher(target.accepts, 0.0), ExactOracle(target), votes=2)


def test_crafter_rules_teacher_and_a_learned_skill():
    alphabet = ("collect_wood", "place_table", "make_wood_pickaxe")
    teacher = CrafterRulesTeacher("make_wood_pickaxe")
    assert teacher.member(("collect_wood",) * 3 + ("place_table", "make_wood_pickaxe"))
    assert not teacher.member(("collect_wood", "collect_wood", "place_table", "make_wood_pickaxe"))
    oracle = RandomWordOracle(alphabet, teacher, num_words=3000, max_len=9, seed=1)
    result = learn(alphabet, teacher, oracle)
    dfa = result.dfa
    assert dfa.accepts(("collect_wood",) * 3 + ("place_table", "make_wood_pickaxe"))
    assert dfa.accepts(("collect_wood",) * 4 + ("place_table", "make_wood_pickaxe"))
    assert not dfa.accepts(("place_table", "collect_wood", "collect_wood", "collect_wood", "make_wood_pickaxe"))
    policy = DFAPolicy(dfa)
    plan = []
    while not policy.done:
        sym = policy.next_symbol()
        plan.append(sym)
        policy.advance(sym)
    assert plan == ["collect_wood"] * 3 + ["place_table", "make_wood_pickaxe"]


def test_trace_and_person_oracles(tmp_path):
    hyp = DFA.from_table(("a", "b"), {0: {"a": 0, "b": 0}}, 0, {0})  # accepts everything
    assert TraceOracle([(("b",), True), (("a",), False)]).counterexample(hyp).word == ("a",)
    cex_file = tmp_path / "cex.json"
    cex_file.write_text('[[["a", "b"], false]]')
    got = PersonOracle(("a", "b"), cex_file).counterexample(hyp)
    assert (got.word, got.label, got.trusted) == (("a", "b"), False, True)
    answers = iter(["a c ; no", "a ; maybe", "b ; yes", "a a ; no"])
    said = []
    person = PersonOracle(("a", "b"), read=lambda prompt: next(answers), write=said.append)
    got = person.counterexample(hyp)
    assert got.word == ("a", "a") and got.label is False
    assert any("unknown symbol 'c'" in s for s in said)
    assert "write the symbols, a semicolon, then yes or no" in said
    assert "the hypothesis already answers that; give a word it gets wrong" in said


def test_policy_replans_around_a_failed_symbol():
    # two ways to acceptance: "a" directly, or "b b"
    dfa = DFA.from_table(("a", "b"), {0: {"a": 2, "b": 1}, 1: {"b": 2}}, 0, {2})
    policy = DFAPolicy(dfa)
    assert policy.next_symbol() == "a"
    policy.fail("a")
    assert policy.next_symbol() == "b"
    policy.advance("b")
    policy.fail("b")
    assert policy.next_symbol() is None
    assert policy.why_stuck() == "no accepting state is reachable from state 1 (failed here: b)"


def test_evaluation_harness_rows_and_baseline_failure_path():
    from regula.automata.evaluate import evaluate, summary
    table = evaluate(sizes=(6,), letters=(3,), noises=(0.0, 0.05), kinds=("independent",), targets=2,
                     votes=5, max_queries=5000)
    assert set(table["method"]) == {"regula", "plain_lstar"} and len(table) == 8
    noiseless = table[table["noise"] == 0.0]
    assert noiseless["recovered"].all() and (noiseless["agreement"] == 1.0).all()
    s = summary(table)
    assert list(s.columns[:5]) == ["states", "letters", "noise", "kind", "method"]
    assert s["runs"].sum() == 8


def test_contradictions_beyond_the_budget_stop_with_the_conflicting_words():
    wrong = {("a", "a")}
    teacher = NoisyTeacher(lambda w: EVEN_A.accepts(w) != (w in wrong), 0.0)
    with pytest.raises(LearningError) as err:
        learn(EVEN_A.alphabet, teacher, ExactOracle(EVEN_A), max_restarts=0)
    assert "the teacher keeps contradicting the oracle" in str(err.value)
    assert "{'word': ['a', 'a'], 'cached': False, 'oracle': True}" in str(err.value)


def test_llm_teacher_over_http_is_cached_per_sample(tmp_path):
    from regula.automata.teachers import LLMTeacher
    from regula.llm import Accounting, LLMClient, LLMConfig
    from regula.llm.stub_server import StubLLMServer

    def responder(messages):
        text = messages[-1]["content"]
        seq = text.split("Sequence of actions, in order: ")[1].split("\n")[0]
        return "Yes." if seq.endswith("make_wood_pickaxe") and "place_table" in seq else "No."

    with StubLLMServer(responder) as server:
        client = LLMClient(LLMConfig(base_url=server.base_url, model=server.model,
                                     cache_dir=str(tmp_path)), "cedar", Accounting())
        teacher = LLMTeacher(client, "make a wood pickaxe")
        assert teacher.member(("collect_wood", "place_table", "make_wood_pickaxe"), 0) is True
        assert teacher.member(("collect_wood", "make_wood_pickaxe"), 0) is False
        assert teacher.member(("collect_wood", "make_wood_pickaxe"), 1) is False
        assert teacher.member(("collect_wood", "make_wood_pickaxe"), 1) is False  # cached
        assert server.calls == 3
        asked = server.requests[0]["messages"][-1]["content"]
        assert "Task: make a wood pickaxe" in asked and "collect_wood, place_table, make_wood_pickaxe" in asked


def test_w_method_oracle_finds_what_the_hypothesis_misses():
    from regula.automata.oracles import WMethodOracle
    teacher = NoisyTeacher(EVEN_A.accepts, 0.0)
    everything = DFA.from_table(("a", "b"), {0: {"a": 0, "b": 0}}, 0, {0})
    cex = WMethodOracle(EVEN_A.alphabet, teacher, max_states=3).counterexample(everything)
    assert cex is not None and not cex.trusted and EVEN_A.accepts(cex.word) == cex.label is False
    assert WMethodOracle(EVEN_A.alphabet, teacher, max_states=3).counterexample(EVEN_A) is None
    result = learn(EVEN_A.alphabet, teacher, WMethodOracle(EVEN_A.alphabet, teacher, max_states=3))
    assert equivalent(result.dfa, EVEN_A)[0]


def test_dfa_drawing_files(tmp_path):
    written = EVEN_A.save_dot(tmp_path / "even.dot", "even number of a")
    assert written[0].read_text().startswith("digraph dfa {")
    svg = written[1].read_text()
    assert svg.startswith("<?xml") and "<title>" in svg and ">even number of a<" in svg
    assert EVEN_A.save_dot(tmp_path / "again.dot", "even number of a")[1].read_text() == svg  # same bytes
