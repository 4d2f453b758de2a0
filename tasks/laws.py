"""Tasks of the laws flow (not cached: they read DVC-tracked files)."""
from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from regula import demos, envs, shield_replay
from regula.io import write_atomic
from regula.logic import Shield, load_laws, monitor, resolve_backend, save_laws
from regula.logic.render import to_dot


@task(name="derive-and-check-laws", cache_policy=NO_CACHE)
def derive_and_check(root: str, params: dict) -> dict:
    root_ = Path(root)
    crafter = envs.get("crafter")
    symbols = crafter.symbols(params["env"])
    backend = resolve_backend(params["logic"]["backend"])
    state_atoms, actions = crafter.atoms(symbols)
    laws, skipped = crafter.precondition_laws(symbols)
    laws += crafter.affordance_laws()
    out = root_ / "data" / "laws" / "crafter"
    path = out / "crafter_hard.yaml"
    save_laws(path, laws)
    laws = load_laws(path, set(state_atoms) | set(actions), frozenset(actions))  # what users load
    for i, law in enumerate(laws, 1):
        write_atomic(out / f"law_{i:02d}.dot", to_dot(monitor(law.parsed, backend, frozenset(actions)), law.label))
    shield = Shield(laws, actions, state_atoms, backend)
    result = shield_replay.replay(shield, demos.read_episodes(root_ / "data" / "demos"))
    return {"backend": backend, "laws": len(laws), "not_expressible": skipped, **result}
