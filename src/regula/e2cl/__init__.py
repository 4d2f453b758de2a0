"""E2CL (seed 002): exploration that collects environment feedback and corrections, a self-correcting agent
trained on them, speculative inference; on VirtualHome's evolving graph."""
