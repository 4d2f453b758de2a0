"""DiVE on Crafter: discover world dynamics from demonstrations, verify, evolve (seed 004)."""

# The names params.yaml may give (`dive.discoverer`, `dive.evolver`, `dive.conditions`). They
# live here, not in stage.py and agent.py, which import pandas: the params schema reads them.
DISCOVERERS = ("statistical", "openai")
EVOLVERS = ("symbolic", "openai")
CONDITIONS = ("dive", "no_verifier", "no_evolver", "no_dynamics")  # the paper's Table 3 ablations
