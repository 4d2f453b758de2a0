"""E2CL's agent model: it learns a small copy-style task, trains deterministically, saves and
loads whole, scores candidates, and fails clearly on a bad checkpoint."""
import hashlib
import json
import random
import subprocess
import sys

import pytest
import torch

from cli_run import assert_one_line_error, invoke
from regula.e2cl.benchmark import line, synthetic_pairs
from regula.e2cl.model import PRESETS, AgentModel, TrainOptions, train_new
from regula.e2cl.tokenizer import train_tokenizer
from regula.errors import DataError, RegulaError, UnknownNameError
from regula.io import TEMP_PREFIX, write_json

VERBS = ["walk", "find", "grab", "open", "close", "switchon"]
OBJECTS = {"chair": 356, "sink": 12, "plate": 40, "milk": 77, "cup": 5, "lamp": 90, "sofa": 31, "fridge": 150}


def instruction_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """Copy-style: an instruction's verb and object come back as a script line, with the object's id."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        verb, obj = rng.choice(VERBS), rng.choice(sorted(OBJECTS))
        pairs.append((f"Step: {verb} the {obj}", f"[{verb.upper()}] <{obj}> ({OBJECTS[obj]})"))
    return pairs


FAST = TrainOptions(epochs=4, lr=3e-3, batch_size=16, seed=0)


@pytest.fixture(scope="module")
def trained():
    pairs = instruction_pairs(400)
    agent, result = train_new(pairs, "tiny", FAST, progress=False)
    return agent, result, pairs


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_tiny_model_learns_the_task(trained):
    agent, result, pairs = trained
    assert len(result.losses) == 4 and result.losses[-1] < 0.2 < 2.0 < result.losses[0]
    assert all(b < a for a, b in zip(result.losses, result.losses[1:]))
    held_in = pairs[:40]
    assert agent.generate([s for s, _ in held_in], max_new_tokens=16) == [t for _, t in held_in]


def test_scoring_prefers_the_right_candidate(trained):
    agent, _, _ = trained
    right = "[GRAB] <milk> (77)"
    wrong = ["[GRAB] <cup> (5)", "[OPEN] <milk> (77)", "[GRAB] <milk> (12)", "[GRAB] <milk> (77) <sink> (12)"]
    scores = agent.score("Step: grab the milk", [right, *wrong])
    assert len(scores) == 5 and all(s <= 0 for s in scores)
    assert scores[0] == max(scores) and all(scores[0] > s + 1 for s in scores[1:])
    assert agent.score("Step: grab the milk", []) == []


def test_save_and_load_give_the_same_model(trained, tmp_path):
    agent, result, pairs = trained
    folder = agent.save(tmp_path / "model")
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json",
                                                         "training_log.json"]
    log = json.loads((folder / "training_log.json").read_text())
    assert log["losses"] == result.losses and log["options"]["threads"] == 1 and log["preset"] == "tiny"
    assert json.loads((folder / "config.json").read_text())["d_model"] == PRESETS["tiny"]["d_model"]
    back = AgentModel.load(folder)
    sources = [s for s, _ in pairs[:20]] + ["Step: wash the sink", "a text of words never seen"]
    assert back.generate(sources) == agent.generate(sources)
    assert back.score(sources[0], ["[WALK] <sofa> (31)"]) == agent.score(sources[0], ["[WALK] <sofa> (31)"])
    assert back.parameters == agent.parameters and back.log == log


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    pairs = instruction_pairs(96)
    options = TrainOptions(epochs=1, batch_size=16, seed=3)
    first, second, other = (train_new(pairs, "tiny", o, progress=False)[0].save(tmp_path / name)
                            for name, o in (("a", options), ("b", options),
                                            ("c", TrainOptions(epochs=1, batch_size=16, seed=4))))
    assert sha(first / "model.safetensors") == sha(second / "model.safetensors")
    assert sha(first / "model.safetensors") != sha(other / "model.safetensors")
    assert sha(first / "tokenizer.json") == sha(other / "tokenizer.json")  # from the texts only


def test_training_pins_its_thread_count(tmp_path):
    """Matmul sums split by thread, so another count can change the weights' last bits (2 threads
    against 1 did here): the count is pinned while training, whatever the process's is."""
    pairs = instruction_pairs(64)
    before = torch.get_num_threads()
    digests = []
    try:
        for process_threads in (1, 2):
            torch.set_num_threads(process_threads)
            agent, _ = train_new(pairs, "tiny", TrainOptions(epochs=1, batch_size=16, threads=1), progress=False)
            assert torch.get_num_threads() == process_threads  # restored
            digests.append(sha(agent.save(tmp_path / f"t{process_threads}") / "model.safetensors"))
    finally:
        torch.set_num_threads(before)
    assert digests[0] == digests[1]


def test_a_failed_save_leaves_the_old_folder(trained, tmp_path):
    agent, _, _ = trained
    folder = agent.save(tmp_path / "model")
    before = {p.name: sha(p) for p in folder.iterdir()}
    broken = AgentModel(agent.model, agent.tokenizer, {"bad": object()})  # the log does not serialise
    with pytest.raises(TypeError):
        broken.save(folder)
    assert {p.name: sha(p) for p in folder.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # no temporary left


def test_a_killed_saves_folder_is_swept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    leftover = tmp_path / f"{TEMP_PREFIX}{dead}-abc"
    (leftover / "inner").mkdir(parents=True)
    (leftover / "inner" / "model.safetensors").write_bytes(b"half")
    write_json(tmp_path / "metrics.json", {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json"]


def test_missing_or_broken_checkpoints_are_one_clear_error(trained, tmp_path):
    with pytest.raises(RegulaError, match=r"^no model checkpoint at .*flan-t5-small \(a folder with config.json, "
                                          r"model.safetensors or pytorch_model.bin, and tokenizer.json\); "
                                          r"nothing is downloaded$"):
        AgentModel.load(tmp_path / "flan-t5-small")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RegulaError, match=r"^model checkpoint .*empty lacks config.json, tokenizer.json, "
                                          r"model.safetensors$"):
        AgentModel.load(tmp_path / "empty")
    folder = trained[0].save(tmp_path / "model")
    (folder / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(DataError, match=r"model.*: the model does not load"):
        AgentModel.load(folder)
    (folder / "tokenizer.json").write_text("{")
    with pytest.raises(DataError, match=r"tokenizer.json: not a tokenizer.json"):
        AgentModel.load(folder)


def test_bad_names_and_options():
    with pytest.raises(UnknownNameError, match=r"^unknown model preset 'huge'; valid model presets: base, small, "
                                               r"tiny$"):
        AgentModel.from_scratch(["a b"], "huge")
    with pytest.raises(RegulaError, match=r"^bad training options: epochs=0, lr=0.0 "):
        TrainOptions(epochs=0, lr=0.0)
    with pytest.raises(RegulaError, match="^no training samples$"):
        AgentModel.from_scratch(["a b"]).train([])


def test_the_tokenizer_keeps_script_units_whole_and_decodes_exactly():
    texts = [s + " " + t for s, t in synthetic_pairs(300)]
    tokenizer = train_tokenizer(texts, 500)
    assert tokenizer.to_str() == train_tokenizer(texts, 500).to_str()
    text = line("PUTBACK", "plate", "table")
    assert text == "[PUTBACK] <plate> (198) <table> (231)"
    assert tokenizer.encode(text).tokens == ["▁[PUTBACK]", "▁<plate>", "▁(198)", "▁<table>", "▁(231)", "</s>"]
    for s in [text, "Step 12: [WALK] <xylophone> (99999); unseen, words!"]:
        ids = tokenizer.encode(s).ids
        assert "<unk>" not in tokenizer.encode(s).tokens and tokenizer.decode(ids) == s


def test_presets_grow_about_one_three_eight_million():
    counts = {name: AgentModel.from_scratch([f"w{i} w{i}" for i in range(3000)], name, 2000).parameters
              for name in PRESETS}
    assert 0.8e6 < counts["tiny"] < 1.3e6 < 2.5e6 < counts["small"] < 3.5e6 < 7e6 < counts["base"] < 9e6


def test_bench_command_prints_the_numbers():
    result = invoke(["bench", "e2cl-model", "--samples", "60", "--generations", "6", "--batch-size", "20"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)
    assert row["preset"] == "tiny" and row["samples"] == 60 and len(row["epoch_s"]) == 1
    assert row["peak_rss_mib"] >= row["peak_rss_mib_before"] > 0 and row["generate_steps_per_s_single"] > 0
    assert_one_line_error(invoke(["bench", "e2cl-model", "--preset", "huge"]),
                          "unknown model preset 'huge'; valid model presets: base, small, tiny")


def test_a_local_flan_t5_style_checkpoint_fine_tunes_with_the_same_code(tmp_path):
    """flan-t5 (T5 v1.1: gated-GELU, an output layer of its own, unscaled decoder outputs) loads
    from a folder with its tokenizer.json, trains, saves and loads back as v1.1; a tiny random
    checkpoint written in that layout stands in for the real weights."""
    from safetensors.torch import save_file
    from transformers import T5Config, T5ForConditionalGeneration
    pairs = instruction_pairs(64)
    tokenizer = train_tokenizer([x for pair in pairs for x in pair], 300)
    config = T5Config(vocab_size=tokenizer.get_vocab_size(), d_model=32, d_ff=64, num_layers=1, num_heads=2, d_kv=16,
                      feed_forward_proj="gated-gelu", tie_word_embeddings=False, pad_token_id=0, eos_token_id=1,
                      decoder_start_token_id=0)
    torch.manual_seed(0)
    weights = {k: v.clone() for k, v in T5ForConditionalGeneration(config).state_dict().items()}
    weights["lm_head.weight"] = torch.randn_like(weights["shared.weight"])
    config.save_pretrained(tmp_path / "flan")
    save_file(weights, str(tmp_path / "flan" / "model.safetensors"))
    tokenizer.save(str(tmp_path / "flan" / "tokenizer.json"))

    agent = AgentModel.load(tmp_path / "flan")
    untied = lambda a: a.model.lm_head.weight.data_ptr() != a.model.shared.weight.data_ptr()  # noqa: E731
    assert agent.log == {} and untied(agent) and not agent.model.config.scale_decoder_outputs
    assert torch.equal(agent.model.lm_head.weight, weights["lm_head.weight"])
    result = agent.train(pairs, TrainOptions(epochs=2, lr=1e-3, batch_size=16), progress=False)
    assert result.losses[1] < result.losses[0]
    back = AgentModel.load(agent.save(tmp_path / "tuned"))
    assert untied(back) and not back.model.config.scale_decoder_outputs and back.log["losses"] == result.losses
    assert torch.equal(back.model.lm_head.weight, agent.model.lm_head.weight)
    assert back.generate([s for s, _ in pairs[:8]]) == agent.generate([s for s, _ in pairs[:8]])


def test_long_samples_are_cut_and_counted():
    short = instruction_pairs(200)
    pairs = [("Step: walk the chair " + "then more words " * 40, "[WALK] <chair> (356) " * 3)] * 4 + short[:4]
    agent = AgentModel.from_scratch([x for pair in short + pairs for x in pair])  # script units are whole tokens
    result = agent.train(pairs, TrainOptions(epochs=1, max_source_len=16, max_target_len=6), progress=False)
    assert (result.truncated_sources, result.truncated_targets) == (4, 4)
    assert (agent.log["truncated_sources"], agent.log["truncated_targets"]) == (4, 4)


def test_a_second_training_keeps_the_first_ones_record():
    pairs = instruction_pairs(32)
    agent, first = train_new(pairs, "tiny", TrainOptions(epochs=1, batch_size=16), progress=False)
    second = agent.train(pairs, TrainOptions(epochs=2, batch_size=16, seed=1), progress=False)
    assert agent.log["losses"] == second.losses and agent.log["options"]["seed"] == 1
    assert [e["losses"] for e in agent.log["earlier"]] == [first.losses]
