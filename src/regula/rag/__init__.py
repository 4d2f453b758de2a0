"""CEDAR's symbol catalogue and sub-alphabet retrieval (§3.1, Appendix A.4): Σ_global per
environment, sub-alphabets grounded into DFA letters, nouns retrieved by sentence embedding and
BM25, verbs chosen by the `alphabet` role, and the paper's Table 4 metrics."""
from .alphabet import KINDS, GlobalAlphabet, SubAlphabet
from .construct import SkillAlphabets, uses_llm
from .evaluate import METRICS, SCOPES, Retrieved, Target, evaluate, halves, targets
from .retrieve import Retriever, Scored

__all__ = ["KINDS", "METRICS", "SCOPES", "GlobalAlphabet", "Retrieved", "Retriever", "Scored", "SkillAlphabets",
           "SubAlphabet", "Target", "evaluate", "halves", "targets", "uses_llm"]
