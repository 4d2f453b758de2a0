"""LTLCrit on Crafter: shielded actors, a critic that induces laws from trajectories (seed 003)."""
