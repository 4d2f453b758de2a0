"""DFAs over explicit alphabets: operations, language diff, JSON and DOT (CEDAR's automata)."""
from .dfa import DFA, AlphabetError, AutomatonError
from .ops import (complement, concatenate, difference, equivalent, intersection, language_diff, minimize,
                  shortest_accepted, union)

__all__ = ["DFA", "AlphabetError", "AutomatonError", "complement", "concatenate", "difference", "equivalent",
           "intersection", "language_diff", "minimize", "shortest_accepted", "union"]
