"""E2CL (seed 002): exploration that collects environment feedback and corrections, a self-correcting agent
trained on them, speculative inference; on VirtualHome's evolving graph."""

# The role backends this system defines (`regula.roles`): role -> modules.
ROLES = {"corrector": ("regula.e2cl.correctors",)}
