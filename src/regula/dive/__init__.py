"""DiVE on Crafter: discover world dynamics from demonstrations, verify, evolve (seed 004)."""
