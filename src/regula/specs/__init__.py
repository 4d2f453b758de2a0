"""Specifications learned as DFAs with a person as the equivalence oracle (seed 000, CEDAR §3.4
and Appendix A.5): `person.py` (the person's answers and their cache), `learn.py` (a learning
session), `cli.py` (`regula spec learn`), `logs.py` (logged episodes as words)."""
