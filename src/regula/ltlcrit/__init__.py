"""LTLCrit on Crafter: shielded actors, a critic that induces laws from trajectories (seed 003)."""

# The role backends this system defines (`regula.roles`): role -> modules.
ROLES = {"actor": ("regula.ltlcrit.actors",), "critic": ("regula.ltlcrit.critic", "regula.ltlcrit.llm_critic")}
