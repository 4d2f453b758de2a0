"""dvc.yaml's deps cover the code and data each stage reads, and its params exist.

DVC reruns a stage only when a listed dep or param changed, so a module a stage imports but
does not list can leave a number stale while `dvc status` says clean. This test computes, from
the code in this checkout (never a hand-kept list of modules), what each stage's flow reaches:

* modules: the closure of project imports from the modules the stage's `cmd` runs
  (`python -m flows <name>`: the generic flow and the stage's module in regula.stages.STAGES), followed statically with `ast` through `import a.b`,
  `from a import b` (b a submodule counts b), relative imports, imports inside functions
  (many are lazy), and string constants naming a project module (`"regula.envs.crafter"`, or
  `"regula.dive.report:section"` for a function in it: a registry that imports its entries on
  first use). Importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py`, so those and
  their own imports count too. Only files under src/regula, flows/ and tasks/ are followed.
  The roles registry (`regula.roles`) imports a role's backends on the role's first use: a call
  `roles.make("critic", ...)` (or `names`, `uses_llm`) reaches the modules listed for "critic" in
  roles.py's `SHARED` or in the `ROLES` of a package its `SYSTEMS` names (which it imports); a call whose role is not a literal, or those functions imported by name,
  reach every role's modules. The environments registry (`regula.envs`) imports an adapter on
  its first lookup in the same way: a call `envs.get("minihack")` (or `envs.make`) reaches the
  package its `_ADAPTERS` names for "minihack"; a call whose name is not a literal, or `get` and
  `make` imported by name, reach every adapter; the registry's own strings reach none. The body
  of `if TYPE_CHECKING:` never runs and is not followed.
* data files: a non-Python file under those folders (e.g. src/regula/prompts/*.yaml) is read
  when a reached module names it (its file name, or its stem as `prompts.load` takes it, as a
  string constant) and that module either lives in the file's folder or imports the folder's
  package (the loader that resolves names against its own `__file__`).

Limits: imports built from runtime strings (importlib with a name computed from parts) and data files
opened through a name assembled at run time are not seen; the closure is static, so a module
imported on a branch a given params.yaml never takes still counts (a dep that cannot change
the output only costs a spurious rerun). Nothing outside the project (site-packages, e.g.
Crafter's own data.yaml) is tracked here: uv.lock pins that.

Runs in well under a second and imports no project code.
"""
from __future__ import annotations

import ast
import copy
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
# Where top-level project modules live: `regula` under src/, `flows` and `tasks` at the root.
SOURCE_ROOTS = (ROOT / "src", ROOT)
PROJECT_DIRS = (ROOT / "src" / "regula", ROOT / "flows", ROOT / "tasks")


def _in_project(path: Path) -> bool:
    return any(path == d or d in path.parents for d in PROJECT_DIRS)


def _resolve(dotted: str) -> Path | None:
    """The file of a project module or package (its __init__.py), or None."""
    parts = dotted.split(".")
    for root in SOURCE_ROOTS:
        base = root.joinpath(*parts)
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file() and _in_project(path):
                return path
    return None


def _module_name(path: Path) -> str:
    for root in SOURCE_ROOTS:
        if root in path.parents:
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            if _resolve(".".join(parts)) == path:
                return ".".join(parts)
    raise ValueError(f"{path} is not a project module")


def _with_parents(dotted: str) -> list[str]:
    """`a.b.c` -> a, a.b, a.b.c: importing a submodule runs every enclosing __init__."""
    parts = dotted.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@lru_cache(maxsize=None)
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


ROLES = "regula.roles"  # the roles registry (see the module doc)
ROLE_LOOKUPS = {"make", "names", "uses_llm"}
ENVS = "regula.envs"  # the environments registry (see the module doc)
ENV_LOOKUPS = {"get", "make"}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node of a module, less the bodies of `if TYPE_CHECKING:` (never run) and a
    system's `ROLES` declaration (its modules are imported by the roles registry on a role's
    first use, which the role lookups below follow)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo += [node.test] + node.orelse
        elif _declares_roles(node):
            continue
        else:
            todo.extend(ast.iter_child_nodes(node))


def _declares_roles(node: ast.AST) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return any(isinstance(t, ast.Name) and t.id == "ROLES" for t in targets)


@lru_cache(maxsize=None)
def _literal(path: Path, name: str):
    """A module's top-level literal assignment `name = ...` (None when it has none)."""
    for node in _parse(path).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(node.value)
    return None


def _role_systems(path: Path) -> tuple[str, ...]:
    """roles.py's literal `SYSTEMS`: the packages whose `ROLES` it reads on first use."""
    systems = _literal(path, "SYSTEMS")
    if systems is None:
        raise ValueError(f"{path}: no literal SYSTEMS")
    return systems


def _role_modules(path: Path) -> dict[str, tuple[str, ...]]:
    """role -> the modules that define its backends: roles.py's literal `SHARED`, and the
    literal `ROLES` of each package its `SYSTEMS` lists (in the package's __init__.py)."""
    shared = _literal(path, "SHARED")
    if shared is None:
        raise ValueError(f"{path}: no literal SHARED")
    found = {role: tuple(mods) for role, mods in shared.items()}
    for package in _role_systems(path):
        init = _resolve(package)
        for role, mods in (_literal(init, "ROLES") or {}).items() if init is not None else ():
            found[role] = found.get(role, ()) + tuple(mods)
    return found


def _env_lookup(node: ast.AST) -> bool:
    """`envs.get(...)`, `regula.envs.make(...)`: a call that imports an adapter."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ENV_LOOKUPS \
        and ((isinstance(node.func.value, ast.Name) and node.func.value.id == "envs")
             or (isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "envs"))


def _adapters() -> dict[str, str]:
    """regula/envs/__init__.py's literal `_ADAPTERS`: environment name -> its adapter's module."""
    adapters = _literal(_resolve(ENVS), "_ADAPTERS")
    if adapters is None:
        raise ValueError("regula/envs/__init__.py: no literal _ADAPTERS")
    return adapters


def _role_lookup(node: ast.AST) -> bool:
    """`roles.make(...)`, `regula.roles.names(...)`, ...: a call that loads a role's backends."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ROLE_LOOKUPS \
        and ((isinstance(node.func.value, ast.Name) and node.func.value.id == "roles")
             or (isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "roles"))


@lru_cache(maxsize=None)
def direct_imports(path: Path) -> frozenset[Path]:
    """Project files one module imports, at any depth of its body (lazy imports too)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    wanted: list[str] = []
    lookups: list[ast.Call] = []
    env_lookups: list[ast.Call] = []
    by_name = False  # make/names/uses_llm imported from the registry: any role
    env_by_name = False  # get/make imported from regula.envs: any adapter
    for node in _runtime_nodes(_parse(path)):
        if _role_lookup(node):
            lookups.append(node)
        if _env_lookup(node):
            env_lookups.append(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                wanted += _with_parents(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                if node.level - 1 > len(parts) - 1:
                    raise ImportError(f"{path}: relative import beyond the top-level package")
                anchor = ".".join(parts[:len(parts) - (node.level - 1)])
                base = f"{anchor}.{node.module}" if node.module else anchor
            else:
                base = node.module
            wanted += _with_parents(base)
            # `from pkg import name`: name may be a submodule (then it is imported) or an attribute.
            wanted += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
            by_name |= base == ROLES and any(alias.name in ROLE_LOOKUPS | {"*"} for alias in node.names)
            env_by_name |= base == ENVS and any(alias.name in ENV_LOOKUPS | {"*"} for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and name not in (ROLES, ENVS) \
                and path != _stage_registry() \
                and re.fullmatch(r"regula(\.\w+)+(:\w+)?", node.value):
            # A registry naming a module it imports on first use (`regula.envs`' adapters), or a
            # function in one, `module:function` (the report's sections).
            wanted += _with_parents(node.value.partition(":")[0])
    roles_path = _resolve(ROLES)
    if name == ROLES:  # it imports each registered system's package to read its ROLES
        for package in _role_systems(path):
            wanted += _with_parents(package)
    if name != ROLES and roles_path is not None and ROLES in wanted and (lookups or by_name):
        modules = _role_modules(roles_path)
        for role in ({c.args[0].value if c.args and isinstance(c.args[0], ast.Constant) else None
                      for c in lookups} | ({None} if by_name else set())):
            for module in modules.get(role, ()) if role is not None else sum(modules.values(), ()):
                wanted += _with_parents(module)
    if name != ENVS and (env_lookups or env_by_name):
        adapters = _adapters()
        for env in ({c.args[0].value if c.args and isinstance(c.args[0], ast.Constant) else None
                     for c in env_lookups} | ({None} if env_by_name else set())):
            for module in [adapters[env]] if env in adapters else adapters.values() if env is None else []:
                wanted += _with_parents(module)
    return frozenset(p for p in map(_resolve, wanted) if p is not None and p != path)


def module_closure(entry: str) -> set[Path]:
    """Every project file `python -m entry` can import."""
    todo = [p for p in map(_resolve, _with_parents(entry)) if p is not None]
    if not todo or todo[-1] != _resolve(entry):
        raise FileNotFoundError(f"module {entry!r} is not a project module")
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(direct_imports(path) - seen)
    return seen


@lru_cache(maxsize=None)
def _data_files(dirs: tuple[Path, ...]) -> tuple[Path, ...]:
    return tuple(sorted(p for d in dirs for p in d.rglob("*")
                        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts))


@lru_cache(maxsize=None)
def _strings(path: Path) -> frozenset[str]:
    return frozenset(n.value for n in ast.walk(_parse(path))
                     if isinstance(n, ast.Constant) and isinstance(n.value, str))


def data_closure(modules: set[Path]) -> set[Path]:
    """Non-Python project files that the given modules load by name."""
    found = set()
    for data in _data_files(PROJECT_DIRS):
        loader = data.parent / "__init__.py"
        for module in modules:
            if module.parent != data.parent and loader not in direct_imports(module):
                continue
            if any(s in (data.name, data.stem) or s.endswith("/" + data.name) for s in _strings(module)):
                found.add(data)
                break
    return found


def _stage_registry() -> Path:
    return ROOT / "src" / "regula" / "stages.py"


def stage_modules() -> dict[str, str]:
    """regula.stages.STAGES (stage name -> module) and the `_llm` twins of LLM_STAGES (a twin
    runs its original's module), read from the source."""
    found = {}
    for node in ast.walk(_parse(_stage_registry())):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
    if "STAGES" not in found:
        raise LookupError("no STAGES in src/regula/stages.py")
    modules = ast.literal_eval(found["STAGES"])
    twin = ast.literal_eval(found["TWIN"])
    return {**modules, **{name + twin: modules[name] for name in ast.literal_eval(found["LLM_STAGES"])}}


def stage_entries(stage: dict) -> tuple[str, ...]:
    """The modules a stage's cmd runs. `python -m flows NAME` (the generic flow) runs the
    package `flows`, its `__main__` and the stage's module from `regula.stages.STAGES` (the
    registry names every stage's module; only this one is imported). `python -m flows.x` or
    `python flows/x.py` run that module."""
    cmd = stage["cmd"] if isinstance(stage["cmd"], str) else " ".join(stage["cmd"])
    if m := re.search(r"\bpython3?\s+-m\s+flows\s+(\w+)", cmd):
        return ("flows.__main__", stage_modules()[m.group(1)])
    if m := re.search(r"\bpython3?\s+-m\s+([\w.]+)", cmd):
        return (m.group(1),)
    if m := re.search(r"\bpython3?\s+([\w/]+)\.py\b", cmd):
        return (m.group(1).replace("/", "."),)
    raise ValueError(f"cannot tell which module cmd {cmd!r} runs")


def stage_reads(stage: dict) -> frozenset[str]:
    """Paths (relative to the repository root, POSIX) of the code and data the stage reads."""
    return _reads(ROOT, stage_entries(stage))


@lru_cache(maxsize=None)
def _reads(root: Path, entries: tuple[str, ...]) -> frozenset[str]:
    modules = set().union(*(module_closure(e) for e in entries))
    return frozenset(p.relative_to(root).as_posix() for p in modules | data_closure(modules))


def _entry_path(item) -> str:
    """A deps/outs entry is a path or a one-key mapping {path: options}."""
    return next(iter(item)) if isinstance(item, dict) else item


def _covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


def missing_deps(name: str, stage: dict) -> list[str]:
    """What the stage reads that its deps do not cover (a directory dep covers its contents)."""
    deps = [_entry_path(d) for d in stage.get("deps", [])]
    return sorted(p for p in stage_reads(stage) if not _covered(p, deps))


def check_stage(name: str, stage: dict) -> None:
    missing = missing_deps(name, stage)
    assert not missing, f"stage {name!r}: dvc.yaml deps miss {', '.join(missing)}"


def _load(path: Path) -> dict:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


DVC = _load(ROOT / "dvc.yaml")
STAGES = DVC["stages"]
PARAMS = _load(ROOT / "params.yaml")


def _outputs() -> set[str]:
    return {_entry_path(o) for s in STAGES.values() for kind in ("outs", "metrics", "plots")
            for o in s.get(kind, []) or []}


def test_every_stage_runs_the_generic_flow():
    assert STAGES
    for name, stage in STAGES.items():
        assert stage.get("wdir", ".") == ".", f"stage {name!r}: paths here assume the repository root"
        assert stage["cmd"] == f"python -m flows {name}", f"stage {name!r} runs {stage['cmd']}"
    assert sorted(STAGES) == sorted(stage_modules()), "every stage in regula.stages has a dvc.yaml entry"


@pytest.mark.parametrize("name", sorted(STAGES))
def test_deps_cover_what_the_stage_reads(name):
    check_stage(name, STAGES[name])


@pytest.mark.parametrize("name", sorted(STAGES))
def test_deps_exist(name):
    """A dep is in this checkout, or is (under) another stage's output."""
    outputs = _outputs()
    bad = [d for d in map(_entry_path, STAGES[name].get("deps", []))
           if not (ROOT / d).exists() and not _covered(d, sorted(outputs))]
    assert not bad, f"stage {name!r}: deps that neither exist nor are a stage's output: {', '.join(bad)}"


@pytest.mark.parametrize("name", sorted(STAGES))
def test_deps_are_not_tests(name):
    bad = [d for d in map(_entry_path, STAGES[name].get("deps", []))
           if _covered("tests/conftest.py", [d]) or _covered(d, ["tests"])]
    assert not bad, f"stage {name!r}: tests are no input: {', '.join(bad)}"


@pytest.mark.parametrize("name", sorted(STAGES))
def test_params_exist(name):
    """Every params key a stage lists (dotted: `llm.model`) is in params.yaml."""
    bad = []
    for key in STAGES[name].get("params", []) or []:
        if isinstance(key, dict):  # {other_file.yaml: [keys]}: not used here
            bad.append(str(key))
            continue
        node = PARAMS
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                bad.append(key)
                break
            node = node[part]
    assert not bad, f"stage {name!r}: params not in params.yaml: {', '.join(bad)}"


@pytest.mark.parametrize("name", sorted(STAGES))
def test_removing_a_dep_is_caught(name):
    """The check is not vacuous: dropping any one code dep of a stage makes it fail."""
    stage = STAGES[name]
    reads = stage_reads(stage)
    deps = [_entry_path(d) for d in stage.get("deps", [])]
    code = [d for d in deps if any(_covered(p, [d]) for p in reads)]
    assert code, f"stage {name!r} lists none of the code it reads"
    for dep in code:
        broken = copy.deepcopy(stage)
        broken["deps"] = [d for d in broken["deps"] if _entry_path(d) != dep]
        others = [d for d in deps if d != dep]
        expected = sorted({p for p in reads if _covered(p, [dep]) and not _covered(p, others)}
                          | set(missing_deps(name, stage)))
        with pytest.raises(AssertionError, match=rf"stage '{name}': dvc.yaml deps miss .*"):
            check_stage(name, broken)
        assert missing_deps(name, broken) == expected
        assert stage["deps"] != broken["deps"] and dep in map(_entry_path, stage["deps"])  # a copy


@pytest.mark.parametrize("name", sorted(STAGES))
def test_code_deps_are_read(name):
    """No dead code dep: each dep inside the project's code covers something the stage reads."""
    reads = stage_reads(STAGES[name])
    code_dirs = [d.relative_to(ROOT).as_posix() for d in PROJECT_DIRS]
    dead = [d for d in map(_entry_path, STAGES[name].get("deps", []))
            if (_covered(d, code_dirs) or any(_covered(c, [d]) for c in code_dirs))
            and not any(_covered(p, [d]) for p in reads)]
    assert not dead, f"stage {name!r}: deps it never reads: {', '.join(dead)}"


def test_import_rules_on_a_small_tree(tmp_path, monkeypatch):
    """Lazy, relative, `from pkg import submodule`, parent packages, data files by name."""
    files = {
        "src/regula/__init__.py": "",
        "src/regula/a.py": "def f():\n    from .sub import b  # lazy, relative, a submodule\n",
        "src/regula/sub/__init__.py": "from . import c\n",
        "src/regula/sub/b.py": "import regula.deep.x\n",
        "src/regula/sub/c.py": "X = 1\n",
        "src/regula/sub/unused.py": "",
        "src/regula/deep/__init__.py": "",
        "src/regula/deep/x.py": "from regula import prompts\nNAME = 'greet'\n",
        "src/regula/prompts/__init__.py": "from pathlib import Path\n_DIR = Path(__file__).parent\n",
        "src/regula/prompts/greet.yaml": "",
        "src/regula/prompts/other.yaml": "",
        "flows/__init__.py": "",
        "flows/s.py": "from regula.a import f\nimport tasks.t\n",
        "tasks/__init__.py": "",
        "tasks/t.py": "from regula.sub import c as renamed\n",
    }
    _fake_project(tmp_path, monkeypatch, files)
    stage = {"cmd": "python -m flows.s", "deps": ["flows/s.py", "src/regula/sub", "tasks"]}
    assert stage_reads(stage) == set(files) - {"src/regula/sub/unused.py", "src/regula/prompts/other.yaml"}
    assert missing_deps("s", stage) == [
        "flows/__init__.py", "src/regula/__init__.py", "src/regula/a.py", "src/regula/deep/__init__.py",
        "src/regula/deep/x.py", "src/regula/prompts/__init__.py", "src/regula/prompts/greet.yaml"]


def test_role_registry_rules_on_a_small_tree(tmp_path, monkeypatch):
    """A literal role reaches its own backends' modules only; any other lookup reaches them all;
    roles.py's own strings and `if TYPE_CHECKING:` imports reach nothing."""
    files = {
        "src/regula/__init__.py": "",
        "src/regula/roles.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from regula.sys.b import T\n"
                                "SHARED: dict = {'ra': ('regula.a',)}\nSYSTEMS = ('regula.sys',)\n"),
        "src/regula/a.py": "from regula import roles\n",
        "src/regula/sys/__init__.py": "ROLES = {'rb': ('regula.sys.b',)}\n",
        "src/regula/sys/b.py": "from regula import roles\n",
        "src/regula/one.py": "from regula import roles\n\ndef f(name):\n    return roles.make('ra', name)\n",
        "src/regula/any.py": "from regula import roles\n\ndef f(role):\n    return roles.names(role)\n",
        "src/regula/named.py": "from regula.roles import uses_llm\n",
        "flows/__init__.py": "",
        "flows/one.py": "import regula.one\n",
        "flows/any.py": "import regula.any\n",
        "flows/named.py": "import regula.named\n",
    }
    _fake_project(tmp_path, monkeypatch, files)
    base = {"flows/__init__.py", "src/regula/__init__.py", "src/regula/roles.py", "src/regula/sys/__init__.py"}
    assert stage_reads({"cmd": "python -m flows.one"}) == base | {"flows/one.py", "src/regula/one.py", "src/regula/a.py"}
    both = {"src/regula/a.py", "src/regula/sys/b.py"}
    assert stage_reads({"cmd": "python -m flows.any"}) == base | {"flows/any.py", "src/regula/any.py"} | both
    assert stage_reads({"cmd": "python -m flows.named"}) == base | {"flows/named.py", "src/regula/named.py"} | both


def test_env_registry_rules_on_a_small_tree(tmp_path, monkeypatch):
    """A literal environment reaches its own adapter only; any other lookup reaches them all; the
    registry's own strings (`_ADAPTERS`) reach none."""
    files = {
        "src/regula/__init__.py": "",
        "src/regula/envs/__init__.py": ("_ADAPTERS = {'a': 'regula.envs.a', 'b': 'regula.envs.b'}\n"
                                        "def get(name):\n    return name\n"),
        "src/regula/envs/a/__init__.py": "",
        "src/regula/envs/b/__init__.py": "",
        "src/regula/one.py": "from regula import envs\n\ndef f():\n    return envs.get('a')\n",
        "src/regula/made.py": "import regula.envs\n\ndef f():\n    return regula.envs.make('b', 0)\n",
        "src/regula/any.py": "from regula import envs\n\ndef f(name):\n    return envs.get(name)\n",
        "src/regula/named.py": "from regula.envs import get\n",
        "src/regula/none.py": "from regula import envs\n",
        "flows/__init__.py": "",
        **{f"flows/{n}.py": f"import regula.{n}\n" for n in ("one", "made", "any", "named", "none")},
    }
    _fake_project(tmp_path, monkeypatch, files)
    base = {"flows/__init__.py", "src/regula/__init__.py", "src/regula/envs/__init__.py"}
    a, b = "src/regula/envs/a/__init__.py", "src/regula/envs/b/__init__.py"
    reads = {n: stage_reads({"cmd": f"python -m flows.{n}"}) - base - {f"flows/{n}.py", f"src/regula/{n}.py"}
             for n in ("one", "made", "any", "named", "none")}
    assert reads == {"one": {a}, "made": {b}, "any": {a, b}, "named": {a, b}, "none": set()}


def _fake_project(tmp_path, monkeypatch, files: dict) -> None:
    """`files` (path -> text) written under `tmp_path`, and this module's roots pointed there."""
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "ROOT", tmp_path)
    monkeypatch.setattr(this, "SOURCE_ROOTS", (tmp_path / "src", tmp_path))
    monkeypatch.setattr(this, "PROJECT_DIRS", (tmp_path / "src" / "regula", tmp_path / "flows", tmp_path / "tasks"))
