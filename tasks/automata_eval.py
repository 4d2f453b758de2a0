"""Tasks of the automata_eval flow: one cached task per (size, letters, noise, kind) cell."""
from __future__ import annotations

from prefect import task

from regula.automata.evaluate import evaluate


def _key(context, parameters) -> str:
    from regula.params import fingerprint
    from tasks.demos import code_fingerprint
    return f"automata-eval-{fingerprint(parameters['cell'], code_fingerprint())}"


@task(name="learn-cell", cache_key_fn=_key, persist_result=True,
      task_run_name="learn n={cell[states]} k={cell[letters]} noise={cell[noise]} {cell[kind]}")
def learn_cell(cell: dict) -> list[dict]:
    table = evaluate(sizes=(cell["states"],), letters=(cell["letters"],), noises=(cell["noise"],),
                     kinds=(cell["kind"],), targets=cell["targets"], votes=cell["votes"],
                     max_queries=cell["max_queries"])
    return table.to_dict(orient="records")
