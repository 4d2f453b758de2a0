"""`regula ltlcrit`: the `ltlcrit` stage from the command line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from regula.cli_common import PROJECT, echo_work, load_params


def ltlcrit(actor: Optional[list[str]] = typer.Option(None, help="actor (repeatable): random, greedy, naive, "
                                                             "saycan, inner_monologue (ltlcrit.actors)"),
            critic: Optional[str] = typer.Option(None, help="symbolic | openai (ltlcrit.critic)"),
            episodes: Optional[int] = typer.Option(None, help="worlds per iteration (ltlcrit.episodes)"),
            iterations: Optional[int] = typer.Option(None, help="critic rounds at most (ltlcrit.iterations)"),
            params: Path = typer.Option(Path("params.yaml"), help="params file"),
            root: Path = typer.Option(Path("."), help="project root: reads data/demos, writes data/ and metrics/",
                                      **PROJECT)):
    """Run LTLCrit (the `ltlcrit` stage without Prefect or DVC): actors, critic, law iterations."""
    from regula import stages
    p = load_params(params, {"ltlcrit.actors": actor or None, "ltlcrit.critic": critic,
                             "ltlcrit.episodes": episodes, "ltlcrit.iterations": iterations})
    stages.execute("ltlcrit", p, stages.Paths(root), echo_work())
    m = json.loads(stages.detail_path(stages.Paths(root).metrics, "ltlcrit").read_text())
    for name, a in {**m["actors"], **m["demos_ablation"]}.items():
        first, last = a["without_critic"], a["with_critic"]
        typer.echo(f"{name}: success {first['successes']}/{first['episodes']} -> {last['successes']}/"
                   f"{last['episodes']} after {a['iterations']} critic rounds ({a['critic_laws']} critic laws); "
                   f"expert {m['expert']['successes']}/{m['expert']['episodes']}; fallback share "
                   f"{last['fallback_share']}; task actions / optimum {last['task_actions_over_optimum']}")


def register(app: typer.Typer, bench: typer.Typer) -> None:
    app.command()(ltlcrit)
