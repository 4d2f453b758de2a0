"""The layering the design promises, checked on the source: adapters stay behind
`regula.envs`, and the library imports neither Prefect nor DVC."""
import ast
from pathlib import Path

import pytest

from regula import envs
from regula.errors import UnknownNameError

ROOT = Path(__file__).resolve().parent.parent
SIMULATORS = {"crafter", "nle", "minihack", "virtualhome", "virtualhome_eval", "ai2thor"}


def imports(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file (or in `text` as if it were that
    file), relative ones resolved."""
    rel = path.relative_to(ROOT)
    package = list(rel.with_suffix("").parts[1:] if rel.parts[0] == "src" else rel.with_suffix("").parts)
    if path.name != "__init__.py":
        package = package[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return out


def sources():
    for folder in ("src/regula", "flows", "tasks"):
        yield from sorted((ROOT / folder).rglob("*.py"))


def adapter_of(path: Path) -> str | None:
    """The adapter a file belongs to (`crafter` for src/regula/envs/crafter/...), if any."""
    parts = path.relative_to(ROOT / "src" / "regula").parts if path.is_relative_to(ROOT / "src") else ()
    return parts[1] if len(parts) > 2 and parts[0] == "envs" else None


def test_only_an_adapter_imports_its_simulator_and_its_modules():
    offences = []
    for path in sources():
        own = adapter_of(path)
        for line, module in imports(path):
            top = module.split(".")[0]
            if top in SIMULATORS and own is None:
                offences.append(f"{path.relative_to(ROOT)}:{line} imports the simulator {module}")
            parts = module.split(".")
            if parts[:2] == ["regula", "envs"] and len(parts) > 2 and parts[2] in envs.names() \
                    and parts[2] != own:
                offences.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert offences == []


def test_the_import_check_sees_an_offence():
    text = "from regula.envs.crafter.rules import RULES\nfrom ..envs.crafter import planner\nimport crafter\n"
    found = [m for _, m in imports(ROOT / "src" / "regula" / "ltlcrit" / "model.py", text)]
    assert "regula.envs.crafter.rules" in found and "regula.envs.crafter.planner" in found and "crafter" in found


def test_library_imports_neither_prefect_nor_dvc():
    offences = [f"{p.relative_to(ROOT)}:{line} imports {m}" for p in sorted((ROOT / "src" / "regula").rglob("*.py"))
                for line, m in imports(p) if m.split(".")[0] in {"prefect", "dvc"}]
    assert offences == []


def test_registry_gives_families_and_episodes():
    assert "crafter" in envs.names()
    crafter = envs.get("crafter")
    assert isinstance(crafter, envs.EnvSpec)
    world = envs.make("crafter", 3)
    assert isinstance(world, envs.Environment)
    assert world.seed == 3 and world.steps == 0 and not world.done
    assert sorted(world.props()) == sorted(crafter.proposition_names())
    step = world.run_skill("collect_wood")
    assert world.events == [step] and step.skill == "collect_wood"
    assert envs.true_props(world.props()) == step.props_after


def test_unknown_environment_names_the_known_ones():
    with pytest.raises(UnknownNameError, match=r"^unknown environment 'crafterr'; valid environments: crafter, virtualhome$"):
        envs.get("crafterr")


def test_the_report_imports_no_system_package():
    """The report reads artifacts (and the papers' tables), never a system's or an adapter's code."""
    systems = {"regula.demos", "regula.feedback", "regula.laws", "regula.automata", "regula.ltlcrit",
               "regula.dive", "regula.envs", "regula.metrics", "regula.agents", "regula.roles", "regula.llm"}
    offences = [f"{p.relative_to(ROOT)}:{line} imports {m}"
                for p in sorted((ROOT / "src" / "regula" / "report").rglob("*.py"))
                for line, m in imports(p) if any(m == s or m.startswith(s + ".") for s in systems)]
    assert offences == []
