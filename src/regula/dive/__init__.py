"""DiVE on Crafter: discover world dynamics from demonstrations, verify, evolve (seed 004).

Its discoverers and evolvers are backends of the `discoverer` and `evolver` roles
(`regula.roles`), chosen by `dive.discoverer` and `dive.evolver`."""

# The ablations params.yaml may name (`dive.conditions`). They live here, not in agent.py,
# which imports the Crafter adapter: the params schema's literal tuple is checked against this.
CONDITIONS = ("dive", "no_verifier", "no_evolver", "no_dynamics")  # the paper's Table 3 ablations
