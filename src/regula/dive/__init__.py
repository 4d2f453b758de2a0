"""DiVE on Crafter: discover world dynamics from demonstrations, verify, evolve (seed 004).

Its discoverers and evolvers are backends of the `discoverer` and `evolver` roles
(`regula.roles`), chosen by `dive.discoverer` and `dive.evolver`."""

# The ablations params.yaml may name (`dive.conditions`). They live here, not in agent.py,
# which imports the Crafter adapter: the params schema's literal tuple is checked against this.
# The paper's Table 3 rows (the CoT ones ask an LLM), then Table 1's Random and the scripted
# expert, H† with the evolver and DiVE without the survival layer (none in the paper); agent.py's
# doc maps each to its row.
CONDITIONS = ("dive", "no_evolver", "no_verifier", "no_verifier_no_evolver", "no_dynamics", "human_dynamics",
              "manual_dynamics", "manual_dynamics_no_evolver", "cot", "cot_dynamics", "random", "expert",
              "human_dynamics_evolved", "dive_no_survival")

# The conditions of DiVE on a family with propositional facts (MiniHack: `fact_agent.py`, the
# stage minihack_dive's `minihack.dive.conditions`): the paper's Table 4 rows, then two baselines.
FACT_CONDITIONS = ("dive", "no_evolver", "no_verifier", "no_verifier_no_evolver", "no_dynamics", "demo_replay",
                   "random")

# The role backends this system defines (`regula.roles`): role -> modules.
ROLES = {"discoverer": ("regula.dive.discover", "regula.dive.llm_discover"), "evolver": ("regula.dive.agent",)}
