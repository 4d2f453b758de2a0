"""E2CL's agent model: a text-to-text T5 (strings in, strings out) that the E2CL stage trains on
planning, feedback and correction samples.

By default a small T5 is trained from scratch on CPU (no pretrained weights are reachable here),
with a BPE tokenizer trained on the same texts; the same code fine-tunes a local flan-t5
checkpoint (`AgentModel.load(path)`), never downloading anything. Training is seeded and, on CPU,
deterministic: the same seed, data and options give byte-identical `model.safetensors`.

A saved model is a folder: `model.safetensors`, `config.json`, `tokenizer.json` and
`training_log.json` (options and loss per epoch; no timings, so the folder's bytes depend on the
inputs only). It is written to a temporary sibling and renamed into place: a killed run leaves
the old folder or none, never a half-written one.
"""
from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

# Nothing may reach a model hub: set before transformers is imported, and every load is local.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from safetensors import SafetensorError  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from transformers import T5Config, T5ForConditionalGeneration  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from ..errors import DataError, RegulaError, UnknownNameError  # noqa: E402
from ..io import TEMP_PREFIX, dumps_json, sweep  # noqa: E402
from .tokenizer import EOS, PAD, train_tokenizer  # noqa: E402

log = logging.getLogger(__name__)

WEIGHTS, CONFIG, TOKENIZER, TRAINING_LOG = "model.safetensors", "config.json", "tokenizer.json", "training_log.json"

# Fig. 3's three sizes, scaled to CPU (the paper: flan-t5-small/base/large, 77M/248M/783M). The
# parameter counts (about 1M, 3M, 8M) are with a 2,000-token vocabulary; `AgentModel.parameters`
# gives the exact number. T5 v1.0's ReLU feed-forward and tied embeddings: fewest parameters.
PRESETS: dict[str, dict] = {
    "tiny": dict(d_model=128, d_ff=256, num_layers=2, num_decoder_layers=2, num_heads=4, d_kv=32),
    "small": dict(d_model=192, d_ff=512, num_layers=3, num_decoder_layers=3, num_heads=6, d_kv=32),
    "base": dict(d_model=256, d_ff=1024, num_layers=4, num_decoder_layers=4, num_heads=8, d_kv=32),
}


@dataclass(frozen=True)
class TrainOptions:
    """How a model trains. The paper fine-tunes flan-t5 with batch 30, 3 epochs, lr 1e-4; from
    scratch a small model needs a larger rate (1e-3 here)."""
    epochs: int = 3
    batch_size: int = 30
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.05  # share of the steps with a linearly rising rate, then constant
    max_source_len: int = 512
    max_target_len: int = 64
    seed: int = 0
    # Thread count pinned while training: CPU matmul kernels split their sums by thread, so another
    # count can change the last bits of the weights (measured: see tests/test_e2cl_model.py).
    threads: int = 1
    device: str = "cpu"  # "cuda" to fine-tune on a GPU (not bitwise reproducible there)

    def __post_init__(self):
        bad = [f"{k}={v!r}" for k, v in (("epochs", self.epochs), ("batch_size", self.batch_size),
                                         ("max_source_len", self.max_source_len),
                                         ("max_target_len", self.max_target_len), ("threads", self.threads))
               if not isinstance(v, int) or v < 1]
        if not self.lr > 0:
            bad.append(f"lr={self.lr!r}")
        if not 0 <= self.warmup < 1:
            bad.append(f"warmup={self.warmup!r}")
        if bad:
            raise RegulaError(f"bad training options: {', '.join(bad)} (counts at least 1, lr > 0, 0 <= warmup < 1)")


@dataclass
class TrainResult:
    losses: list[float]  # mean token loss per epoch (the paper's Table 5)
    seconds: list[float]  # per epoch; measured here, never written into the saved folder
    samples: int
    truncated_sources: int
    truncated_targets: int
    options: TrainOptions = field(default_factory=TrainOptions)


@contextmanager
def _threads(n: int):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _fit(ids: list[int], limit: int, middle: bool) -> list[int]:
    """`ids` cut to `limit` tokens. A source (`middle`) keeps its head (the instruction and task)
    and its tail (the latest history and the prefix to continue): the middle of the history goes.
    A target keeps its head."""
    if len(ids) <= limit:
        return ids
    if not middle:
        return ids[:limit]
    head = limit // 4
    return ids[:head] + ids[len(ids) - (limit - head):]


class AgentModel:
    """A T5 and its tokenizer; `log` is the training log it was saved with (empty if untrained)."""

    def __init__(self, model: T5ForConditionalGeneration, tokenizer: Tokenizer, log: dict | None = None):
        self.model, self.tokenizer, self.log = model, tokenizer, dict(log or {})
        self.pad_id = model.config.pad_token_id
        if tokenizer.token_to_id(PAD) != self.pad_id or tokenizer.token_to_id(EOS) != model.config.eos_token_id:
            raise DataError(f"the tokenizer's {PAD}/{EOS} ids do not match the model config's pad/eos ids")

    # ---------------------------------------------------------------- building, saving, loading

    @classmethod
    def from_scratch(cls, texts: Iterable[str], preset: str = "tiny", vocab_size: int = 2000,
                     seed: int = 0) -> "AgentModel":
        """A randomly initialised T5 of a named size, with a tokenizer trained on `texts` (the
        training sources and targets)."""
        if preset not in PRESETS:
            raise UnknownNameError("model preset", preset, PRESETS)
        tokenizer = train_tokenizer(texts, vocab_size)
        config = T5Config(vocab_size=tokenizer.get_vocab_size(), **PRESETS[preset], feed_forward_proj="relu",
                          tie_word_embeddings=True, dropout_rate=0.1, pad_token_id=tokenizer.token_to_id(PAD),
                          eos_token_id=tokenizer.token_to_id(EOS), decoder_start_token_id=tokenizer.token_to_id(PAD))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = T5ForConditionalGeneration(config)
        return cls(model, tokenizer, {"preset": preset, "init_seed": seed})

    @classmethod
    def load(cls, folder: str | Path) -> "AgentModel":
        """A saved model, or a local flan-t5 checkpoint (a folder with config.json, the weights
        and tokenizer.json). Never downloads: a missing folder or file is one clear error."""
        folder = Path(folder)
        if not folder.is_dir():
            raise RegulaError(f"no model checkpoint at {folder} (a folder with {CONFIG}, {WEIGHTS} or "
                              f"pytorch_model.bin, and {TOKENIZER}); nothing is downloaded")
        missing = [name for name in (CONFIG, TOKENIZER) if not (folder / name).is_file()]
        if not any((folder / name).is_file() for name in (WEIGHTS, "pytorch_model.bin")):
            missing.append(WEIGHTS)
        if missing:
            raise RegulaError(f"model checkpoint {folder} lacks {', '.join(missing)}")
        try:
            tokenizer = Tokenizer.from_file(str(folder / TOKENIZER))
        except Exception as exc:  # tokenizers raises a bare Exception on a malformed file
            raise DataError(f"{folder / TOKENIZER}: not a tokenizer.json ({exc})") from None
        verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
        hf_logging.set_verbosity_error()  # its load report lists tied weights as "missing": noise
        hf_logging.disable_progress_bar()  # its "Loading weights" bar: noise on every load
        try:
            model = T5ForConditionalGeneration.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError, RuntimeError, SafetensorError) as exc:
            raise DataError(f"{folder}: the model does not load ({' '.join(str(exc).split())[:300]})") from None
        finally:
            hf_logging.set_verbosity(verbosity)
            if bars:
                hf_logging.enable_progress_bar()
        model.eval()
        training_log = {}
        if (folder / TRAINING_LOG).is_file():
            import json
            try:
                training_log = json.loads((folder / TRAINING_LOG).read_text())
            except json.JSONDecodeError as exc:
                raise DataError(f"{folder / TRAINING_LOG}: not valid JSON ({exc.msg})") from None
        return cls(model, tokenizer, training_log)

    def save(self, folder: str | Path) -> Path:
        """Write the folder through a temporary sibling and a rename (an existing folder is
        replaced whole only once the new one is complete)."""
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        sweep(folder.parent)  # a killed save's temporary folder
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # its per-shard bar: noise on every save
        try:
            self.model.save_pretrained(tmp, safe_serialization=True)
            (tmp / "generation_config.json").unlink(missing_ok=True)  # derived from config.json
            self.tokenizer.save(str(tmp / TOKENIZER))
            (tmp / TRAINING_LOG).write_text(dumps_json(self.log))
            os.chmod(tmp, 0o755)
            if folder.exists():
                old = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-"))
                os.replace(folder, old / "old")
                os.replace(tmp, folder)
                shutil.rmtree(old)
            else:
                os.replace(tmp, folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        return folder

    @staticmethod
    def check_device(device: str) -> torch.device:
        """`device` as torch's, or one clear error where this torch build cannot use it."""
        if torch.device(device).type == "cuda" and not torch.cuda.is_available():
            raise RegulaError(f"device {device!r} asked for, but this torch build ({torch.__version__}) sees no GPU")
        return torch.device(device)

    def to(self, device: str) -> "AgentModel":
        """The model moved to `device` ("cpu" or "cuda"), for planning there; returns itself."""
        self.model.to(self.check_device(device))
        return self

    @property
    def parameters(self) -> int:
        """Distinct parameters (tied embeddings counted once)."""
        return sum(p.numel() for p in {id(p): p for p in self.model.parameters()}.values())

    # ---------------------------------------------------------------- training

    def _encode(self, texts: Sequence[str], limit: int, middle: bool = True) -> tuple[list[list[int]], int]:
        """Token ids (each ending in </s>) cut to `limit`, and how many were cut."""
        encoded = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        return [_fit(ids, limit, middle) for ids in encoded], sum(len(ids) > limit for ids in encoded)

    def _pad(self, rows: Sequence[list[int]], value: int) -> torch.Tensor:
        width = max(len(r) for r in rows)
        return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=torch.long)

    def _batches(self, sources: list[list[int]], batch_size: int, generator: torch.Generator) -> list[list[int]]:
        """Shuffled batches of similar-length sources (little padding): shuffle, sort each window
        of 50 batches by length, cut it into batches, shuffle the batches."""
        order = torch.randperm(len(sources), generator=generator).tolist()
        window = batch_size * 50
        batches = []
        for start in range(0, len(order), window):
            chunk = sorted(order[start:start + window], key=lambda i: len(sources[i]))
            batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
        return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]

    def train(self, pairs: Sequence[tuple[str, str]], options: TrainOptions = TrainOptions(),
              progress: bool = True, echo: Callable[[str], None] | None = None) -> TrainResult:
        """Train on (source, target) pairs with AdamW; returns (and logs) the loss per epoch.
        `progress` shows a rich bar on stderr; `echo` gets one line per epoch."""
        if not pairs:
            raise RegulaError("no training samples")
        device = self.check_device(options.device)
        sources, cut_sources = self._encode([s for s, _ in pairs], options.max_source_len)
        targets, cut_targets = self._encode([t for _, t in pairs], options.max_target_len, middle=False)
        model = self.model.to(device)
        losses, seconds = [], []
        with _threads(options.threads), torch.random.fork_rng(devices=[]):
            torch.manual_seed(options.seed)  # dropout
            generator = torch.Generator().manual_seed(options.seed)  # batch order
            optimizer = torch.optim.AdamW(model.parameters(), lr=options.lr, weight_decay=options.weight_decay)
            steps = options.epochs * math.ceil(len(pairs) / options.batch_size)
            warm = max(1, int(options.warmup * steps))
            schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warm))
            model.train()
            with _bar(progress) as bar:
                task = bar.add_task("training", total=steps) if bar else None
                for epoch in range(1, options.epochs + 1):
                    started, total_loss, total_tokens = time.perf_counter(), 0.0, 0
                    for batch in self._batches(sources, options.batch_size, generator):
                        input_ids = self._pad([sources[i] for i in batch], self.pad_id).to(device)
                        labels = self._pad([targets[i] for i in batch], -100).to(device)
                        out = model(input_ids=input_ids, attention_mask=(input_ids != self.pad_id).long(),
                                    labels=labels)
                        optimizer.zero_grad(set_to_none=True)
                        out.loss.backward()
                        optimizer.step()
                        schedule.step()
                        tokens = int((labels != -100).sum())
                        total_loss += out.loss.item() * tokens
                        total_tokens += tokens
                        if bar:
                            bar.update(task, advance=1,
                                       description=f"epoch {epoch}/{options.epochs} loss {out.loss.item():.4f}")
                    losses.append(total_loss / total_tokens)
                    seconds.append(time.perf_counter() - started)
                    line = f"epoch {epoch}/{options.epochs}: loss {losses[-1]:.4f} ({seconds[-1]:.1f} s)"
                    log.info(line)
                    if echo:
                        echo(line)
            model.eval()
        keys = ("options", "losses", "samples", "truncated_sources", "truncated_targets")
        if "losses" in self.log:  # trained before (pre-tuning, then E2CL's training): keep that one's record
            self.log.setdefault("earlier", []).append({k: self.log.pop(k) for k in keys if k in self.log})
        self.log.update(zip(keys, (asdict(options), losses, len(pairs), cut_sources, cut_targets)))
        return TrainResult(losses, seconds, len(pairs), cut_sources, cut_targets, options)

    # ---------------------------------------------------------------- inference

    @torch.inference_mode()
    def generate(self, sources: Sequence[str], max_new_tokens: int = 64, batch_size: int = 64,
                 max_source_len: int = 512, threads: int = 1) -> list[str]:
        """Greedy outputs for `sources`, in their order (batched by length). On `threads` CPU threads,
        as training (the same outputs on any machine); torch's default, one per core, also stalled
        beside a busy process here: 2 programs planned in 109 s with 2 threads, ~2 s with one."""
        with _threads(threads):
            return self._generate(sources, max_new_tokens, batch_size, max_source_len)

    def _generate(self, sources, max_new_tokens, batch_size, max_source_len) -> list[str]:
        encoded, _ = self._encode(sources, max_source_len)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        out: list[str] = [""] * len(encoded)
        device = self.model.device
        self.model.eval()
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            input_ids = self._pad([encoded[i] for i in batch], self.pad_id).to(device)
            generated = self.model.generate(input_ids=input_ids, attention_mask=(input_ids != self.pad_id).long(),
                                            max_new_tokens=max_new_tokens, do_sample=False, num_beams=1)
            for i, text in zip(batch, self.tokenizer.decode_batch(generated.tolist(), skip_special_tokens=True)):
                out[i] = text
        return out

    @torch.inference_mode()
    def score(self, source: str, candidates: Sequence[str], max_source_len: int = 512,
              threads: int = 1) -> list[float]:
        """Log-likelihood (natural log, summed over the tokens and the final </s>) of each
        candidate as the output for `source`: for choosing among actions or feedback labels (on
        `threads` CPU threads, as `generate`)."""
        with _threads(threads):
            return self._score(source, candidates, max_source_len)

    def _score(self, source: str, candidates: Sequence[str], max_source_len: int) -> list[float]:
        if not candidates:
            return []
        (source_ids,), _ = self._encode([source], max_source_len)
        targets = [e.ids for e in self.tokenizer.encode_batch(list(candidates))]
        device = self.model.device
        self.model.eval()
        input_ids = torch.tensor([source_ids], device=device)
        hidden = self.model.get_encoder()(input_ids=input_ids).last_hidden_state
        labels = self._pad(targets, -100).to(device)
        logits = self.model(encoder_outputs=(hidden.expand(len(targets), -1, -1),), labels=labels).logits
        picked = torch.log_softmax(logits.float(), -1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        return (picked * (labels != -100)).sum(-1).tolist()


@contextmanager
def _bar(show: bool):
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        yield bar


def train_new(pairs: Sequence[tuple[str, str]], preset: str = "tiny", options: TrainOptions = TrainOptions(),
              vocab_size: int = 2000, progress: bool = True,
              echo: Callable[[str], None] | None = None) -> tuple[AgentModel, TrainResult]:
    """A from-scratch model (tokenizer trained on the pairs' texts, weights seeded with
    `options.seed`) trained on `pairs`."""
    agent = AgentModel.from_scratch((text for pair in pairs for text in pair), preset, vocab_size, options.seed)
    return agent, agent.train(pairs, options, progress, echo)
