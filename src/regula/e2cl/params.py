"""E2CL's params section (`e2cl`): exploration, corrections and a self-correcting planner on VirtualHome.

`SECTIONS` is what `regula.params` composes into the schema (one registry line there names this
module); `LLM_RUN` is the default overlay (section -> mapping) of the stage's `_llm` twin (`llm_runs.e2cl`).
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from regula.schema import AtLeast0, AtLeast1, Distinct, Section, Seed, one_of

# The names params may give; each equals the registry of the code that defines it (a test checks).
CORRECTORS = ("openai", "rules")  # regula.roles.names("corrector")
MODEL_PRESETS = ("base", "small", "tiny")  # regula.e2cl.model.PRESETS
DEVICES = ("cpu", "cuda")  # torch devices a model trains on (cuda: not bitwise reproducible)


class E2cl(Section):  # E2CL on VirtualHome's evolving graph (seed 002)
    # training seeds (mean ± std); [] trains nothing (the twin e2cl_llm: the prompting baseline alone)
    seeds: Annotated[list[Seed], Distinct] = Field(default_factory=lambda: [0, 1, 2])
    model: Annotated[str, one_of(MODEL_PRESETS)] = "tiny"  # the agent model's size, trained from scratch
    vocab_size: AtLeast1 = 2000  # its BPE tokenizer's, trained on D_p's texts
    epochs: AtLeast1 = 3  # the paper: 3
    batch_size: AtLeast1 = 30  # the paper: 30
    lr: Annotated[float, Field(gt=0)] = 0.001  # the paper fine-tunes at 1e-4; from scratch needs more
    pretune_samples: AtLeast1 = 1000  # D_p' (the paper: 1,000 samples, one epoch)
    pretune_epochs: AtLeast1 = 6  # the paper: 1; from scratch, 1 epoch gives an explorer with no valid line
    corrector: Annotated[str, one_of(CORRECTORS)] = "rules"  # teacher-free exploration's: rules (a stand-in) | openai
    max_steps: AtLeast1 = 20  # a plan's steps at most (exploration and evaluation)
    max_corrections: AtLeast1 = 1  # speculative inference's corrections per step (Algorithm 1: one)
    correction_cases: AtLeast1 = 100  # Fig. 4: failed steps whose corrections are judged, per split
    ranker_epochs: AtLeast1 = 30  # the ranking planner's (`ranker.py`), over D_p; prototypes: loss flat by ~30
    max_tokens: AtLeast1 = 64  # LLM answer length for the corrector
    train_programs: AtLeast0 = 0  # the split's first training programs used (0: all), for a quick run
    test_programs: AtLeast0 = 0  # likewise per test split
    prompting_programs: AtLeast0 = 0  # Table 1's prompting baseline: the LLM plans this many programs per test split
    # Fig. 3: BC and the method again at these sizes, per seed (their plans and records kept, not their weights)
    sizes: Annotated[list[Annotated[str, one_of(MODEL_PRESETS)]], Distinct] = Field(
        default_factory=lambda: ["small", "base"])
    device: Annotated[str, one_of(DEVICES)] = "cpu"  # where this run trains and plans: cpu | cuda


SECTIONS = {"e2cl": E2cl}
LLM_RUN = {"e2cl": {"seeds": [], "prompting_programs": 10, "max_tokens": 32}}
