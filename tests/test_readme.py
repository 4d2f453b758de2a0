"""The architecture pictures (docs/architecture.md) are kept true by the code: the data-flow diagram is
dvc.yaml's graph, and the package diagram names every package of the library."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()


def mermaid_blocks() -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", ARCHITECTURE, flags=re.S)


def _outs(stage: dict) -> list[str]:
    return [next(iter(o)) if isinstance(o, dict) else o
            for kind in ("outs", "metrics", "plots") for o in stage.get(kind, []) or []]


def dvc_edges() -> set[tuple[str, str]]:
    """A -> B when a dep of stage B is (under) an output of stage A."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    edges = set()
    for b, sb in stages.items():
        deps = [next(iter(d)) if isinstance(d, dict) else d for d in sb.get("deps", [])]
        for a, sa in stages.items():
            if a != b and any(d == o or d.startswith(o.rstrip("/") + "/") for d in deps for o in _outs(sa)):
                edges.add((a, b))
    return edges


def test_data_flow_diagram_is_dvc_yamls_graph():
    flow = mermaid_blocks()[0]
    drawn = set(re.findall(r"^\s*(\w+) --> (\w+)\s*$", flow, flags=re.M))
    assert drawn == dvc_edges()


def test_package_diagram_names_every_package_and_stage_module():
    from regula import stages
    packages = mermaid_blocks()[1]
    library = ROOT / "src" / "regula"
    wanted = {f"regula.{p.name}" for p in library.iterdir() if (p / "__init__.py").exists() and p.name != "prompts"}
    wanted |= {"regula.stages", "regula.roles", "regula.agents", "regula.params", "regula.io"}
    wanted |= {".".join(m.split(".")[:2]) for m in stages.STAGES.values()}
    wanted |= {f"regula.envs.{name}" for name in __import__("regula.envs").envs.names()}
    assert sorted(w for w in wanted if w not in packages) == []
