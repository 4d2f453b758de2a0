"""The `laws` stage: Crafter's hard laws from data.yaml (data/laws/crafter/: the law file and
each law's automaton as DOT), replayed over the demonstrations: how often would they have
blocked the expert, and did a blocked choice in fact succeed (a wrong law)?"""
from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from . import demos, envs, shield_replay, stages
from .io import write_atomic
from .logic import Shield, load_laws, monitor, resolve_backend, save_laws
from .logic.render import to_dot
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params


def prepare(params: Params, paths: Paths) -> None:
    resolve_backend(params.logic.backend)  # `spot` asked for where it does not import


def run(params: Params, paths: Paths, work: Work) -> dict:
    out = paths.data / "laws" / "crafter"
    shutil.rmtree(out, ignore_errors=True)  # a law that is no longer derived leaves no file
    out.mkdir(parents=True)
    crafter = envs.get("crafter")
    symbols = crafter.symbols(params.env.model_dump())
    backend = resolve_backend(params.logic.backend)
    state_atoms, actions = crafter.atoms(symbols)
    laws, skipped = crafter.precondition_laws(symbols)
    laws += crafter.affordance_laws()
    path = out / "crafter_hard.yaml"
    save_laws(path, laws)
    laws = load_laws(path, set(state_atoms) | set(actions), frozenset(actions))  # what users load
    for i, law in enumerate(laws, 1):
        write_atomic(out / f"law_{i:02d}.dot", to_dot(monitor(law.parsed, backend, frozenset(actions)), law.label))
    shield = Shield(laws, actions, state_atoms, backend)
    result = shield_replay.replay(shield, demos.read_episodes(paths.data / "demos"))
    record = {"backend": backend, "laws": len(laws), "not_expressible": skipped, **result}
    work.progress(f"laws: {record['laws']} laws ({record['backend']}), {record['blocked']} of "
                  f"{record['steps']} demo steps blocked, {record['blocked_but_succeeded']} of them had succeeded")
    return stages.write_metrics(paths.metrics, "laws", headline(record), record)


def headline(record: dict) -> dict:
    """What metrics/laws.json holds: demo steps blocked, and blocked but succeeded (the rest, the
    number of laws (a count of data.yaml's, not a result), the demo steps replayed, blocks per law
    and the wrongly blocked steps: metrics/laws_detail.json)."""
    return {k: record[k] for k in ("blocked", "blocked_but_succeeded")}
