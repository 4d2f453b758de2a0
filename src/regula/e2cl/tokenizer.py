"""The agent model's from-scratch tokenizer: byte-level-free BPE trained on the training texts,
saved as a `tokenizers` tokenizer.json (the same file format a flan-t5 checkpoint ships, so one
loader serves both)."""
from __future__ import annotations

from typing import Iterable

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

# T5's convention (a flan-t5 checkpoint has the same ids): padding doubles as the decoder's start.
PAD, EOS, UNK = "<pad>", "</s>", "<unk>"
SPECIALS = [PAD, EOS, UNK]
SPACE = "\u2581"  # SentencePiece's "▁": marks a word's start, so decoding restores the spaces

# Why this pre-tokenizer: a script line `[WALK] <home_office> (319)` is three units the agent
# must copy or choose whole, so `[ACTION]`, `<object>` and `(id)` each stay one pre-token (BPE
# never merges across pre-tokens, and frequent ones become single tokens); template words and
# punctuation (`Step 3:`) split as usual. Metaspace first marks word starts with "▁" (as T5's
# SentencePiece does) so that decoding is exact; BPE, not a word-level vocabulary, so that an
# object or id never seen in training still spells out (in pieces) instead of becoming <unk>.
_UNITS = (rf"{SPACE}?\[\w+\]|{SPACE}?<\w+>|{SPACE}?\(\d+\)|{SPACE}?\w+|{SPACE}?[^\w\s{SPACE}]|{SPACE}")

# Every printable ASCII character is in the alphabet, so any ASCII text encodes without <unk>.
_ALPHABET = [chr(c) for c in range(33, 127)] + [SPACE]


def pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence([
        pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="always", split=True),
        pre_tokenizers.Split(Regex(_UNITS), behavior="isolated"),
    ])


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2000) -> Tokenizer:
    """A BPE tokenizer over `texts` with at most `vocab_size` tokens (fewer when the texts hold
    fewer distinct units). Deterministic: the same texts give the same tokenizer.json."""
    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.pre_tokenizer = pre_tokenizer()
    tok.decoder = decoders.Metaspace(replacement=SPACE, prepend_scheme="always", split=True)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, initial_alphabet=_ALPHABET,
                                  min_frequency=2, show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    # Every encoded text ends in </s>, as a T5 tokenizer's does.
    tok.post_processor = processors.TemplateProcessing(single=f"$A {EOS}", special_tokens=[(EOS, tok.token_to_id(EOS))])
    return tok
