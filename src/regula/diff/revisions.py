"""A revision's tracked files, read without a checkout: the workspace, a git revision, or a DVC
experiment (a git ref under refs/exps).

At a git revision, a file git tracks is read with `git cat-file` (a batch per request); an
output DVC caches (`dvc.lock` at that revision names its md5, a folder's ends in `.dir`: a JSON
manifest of relpath/md5) is read from the local DVC cache. No DVC import: the lock file and the
cache layout are plain files. An output whose object is not in the local cache is named
(`unavailable`), left out on both sides of a diff, never guessed.
"""
from __future__ import annotations

import configparser
import json
import re
import subprocess
from pathlib import Path
from typing import Protocol

import yaml

from regula.errors import DataError, RegulaError

WORKSPACE = "workspace"
PREFIXES = ("params.yaml", "data", "metrics")  # where tracked artifacts live
EXPS = "refs/exps"
_EXP_REF = re.compile(r"^refs/exps/[0-9a-f]{2}/[0-9a-f]{38}/(?P<name>[^/]+)$")  # dvc's ExpRefInfo


def _git(root: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, check=False)
    except FileNotFoundError:
        raise RegulaError("git is not installed: `regula diff` reads revisions with git") from None
    if done.returncode != 0:
        raise RegulaError(f"git {' '.join(args[:2])} failed in {root}: "
                          f"{' '.join(done.stderr.decode(errors='replace').split()) or done.returncode}")
    return done.stdout


def git_root(root: Path) -> Path:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RegulaError(f"{root} is not inside a git repository: `regula diff` compares git revisions")
    return Path(done.stdout.strip())


def experiments(root: Path) -> dict[str, list[str]]:
    """DVC experiment name -> the refs holding it (one per baseline it ran on)."""
    out: dict[str, list[str]] = {}
    for ref in _git(root, "for-each-ref", "--format=%(refname)", EXPS).decode().split():
        m = _EXP_REF.match(ref)
        if m:
            out.setdefault(m["name"], []).append(ref)
    return out


def resolve(root: Path, rev: str) -> tuple[str, str]:
    """(commit sha, how to name it) for a git revision or a DVC experiment name."""
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet", "--end-of-options",
                           f"{rev}^{{commit}}"], capture_output=True, text=True)
    if done.returncode == 0 and not rev.startswith("-"):
        return done.stdout.strip(), rev
    refs = experiments(root).get(rev, [])
    if len(refs) > 1:
        raise RegulaError(f"experiment name {rev!r} is ambiguous: it names {len(refs)} experiments "
                          f"({', '.join(refs)}); give one of those refs instead")
    if refs:
        sha = _git(root, "rev-parse", "--verify", f"{refs[0]}^{{commit}}").decode().strip()
        return sha, f"{rev} (experiment)"
    raise RegulaError(f"unknown revision {rev!r}: neither a git revision nor a DVC experiment name "
                      f"(`git log` and `dvc exp list` show what there is)")


def dvc_cache(root: Path) -> Path:
    """The local DVC cache folder: `cache.dir` of .dvc/config(.local) when set, else .dvc/cache."""
    cache = root / ".dvc" / "cache"
    for name in ("config", "config.local"):  # config.local overrides config
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(root / ".dvc" / name)
        except configparser.Error:
            continue
        if parser.has_option("cache", "dir"):
            cache = (root / ".dvc" / parser.get("cache", "dir")).resolve()
    return cache


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _object(cache: Path, md5: str) -> Path | None:
    for base in (cache / "files" / "md5", cache):  # DVC 3's layout, then DVC 2's
        path = base / md5[:2] / md5[2:]
        if path.is_file():
            return path
    return None


def _under(path: str, prefixes) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


class Revision(Protocol):
    """A project's files under PREFIXES at one revision: `files` (relative path -> a fingerprint
    of its content, or None where there is none to hand) and `read(paths)`. `unavailable`:
    output path -> why its files cannot be read here."""

    label: str
    files: dict[str, str | None]
    unavailable: dict[str, str]
    unread: dict[str, str]  # unavailable path -> the md5 dvc.lock names (same md5 both sides: no change)

    def read(self, paths) -> dict[str, bytes]: ...


class Workspace:
    """The files on disk under `root`: the workspace, or a worktree a revision was replayed in."""

    def __init__(self, root: Path, lock_outs: list[str] = (), label: str = WORKSPACE):
        self.root, self.label = root, label
        self.files, self.unavailable, self.unread = {}, {}, {}
        for prefix in PREFIXES:
            base = root / prefix
            if base.is_file():
                self.files[prefix] = None
            elif base.is_dir():
                for p in sorted(base.rglob("*")):
                    rel = p.relative_to(root)
                    if p.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                        self.files[rel.as_posix()] = None
        for out in lock_outs:  # a DVC output the workspace lacks: not pulled or checked out, not removed
            if not (root / out).exists():
                self.unavailable[out] = "not in the workspace (run `dvc pull` or `dvc checkout`)"

    def read(self, paths) -> dict[str, bytes]:
        return {p: (self.root / p).read_bytes() for p in paths}


class GitRevision:
    def __init__(self, root: Path, rev: str):
        self.root = root
        self.sha, self.label = resolve(root, rev)
        self.files, self.unavailable, self.unread = {}, {}, {}
        self._blobs: dict[str, str] = {}  # path -> git object id
        self._dvc: dict[str, Path] = {}  # path -> DVC cache file
        listing = _git(root, "ls-tree", "-r", "-z", "--full-tree", self.sha, "--", *PREFIXES)
        for entry in listing.split(b"\0"):
            if entry:
                meta, path = entry.decode().split("\t", 1)
                mode, kind, oid = meta.split()
                if kind == "blob":
                    self._blobs[path] = oid
                    self.files[path] = f"git:{oid}"
        self._dvc_outs()

    def lock(self) -> dict:
        """dvc.lock at this revision ({} where there is none)."""
        try:
            text = _git(self.root, "show", f"{self.sha}:dvc.lock")
        except RegulaError:
            return {}
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise DataError(f"dvc.lock at {self.label}: not valid YAML ({' '.join(str(exc).split())})") from None
        return data if isinstance(data, dict) else {}

    def _dvc_outs(self) -> None:
        cache = dvc_cache(self.root)
        tracked = set(self._blobs)
        for out in lock_outs(self.lock()):
            path, md5 = out["path"], str(out.get("md5", ""))
            if not md5 or path in tracked or any(t.startswith(path + "/") for t in tracked):
                continue  # cache: false, kept in git
            obj = _object(cache, md5)
            if obj is None:
                self.unread[path] = md5
                self.unavailable[path] = f"not in the local DVC cache {_shown(cache, self.root)} (run `dvc pull`)"
                continue
            if not md5.endswith(".dir"):
                self._dvc[path], self.files[path] = obj, f"md5:{md5}"
                continue
            try:
                manifest = json.loads(obj.read_text())
                entries = [(e["relpath"], e["md5"]) for e in manifest]
            except (ValueError, TypeError, KeyError) as exc:
                raise DataError(f"DVC cache object {obj} (the manifest of {path} at {self.label}) "
                                f"is corrupt: {exc}") from None
            for relpath, file_md5 in entries:
                full = f"{path}/{relpath}"
                file_obj = _object(cache, file_md5)
                if file_obj is None:
                    self.unread[full] = file_md5
                    self.unavailable[full] = (f"not in the local DVC cache {_shown(cache, self.root)} "
                                              "(run `dvc pull`)")
                else:
                    self._dvc[full], self.files[full] = file_obj, f"md5:{file_md5}"

    def read(self, paths) -> dict[str, bytes]:
        paths = list(paths)
        out = {p: self._dvc[p].read_bytes() for p in paths if p in self._dvc}
        blobs = [p for p in paths if p not in out]
        if blobs:
            data = _git(self.root, "cat-file", "--batch", stdin="".join(f"{self._blobs[p]}\n" for p in blobs).encode())
            pos = 0
            for p in blobs:  # "<oid> blob <size>\n<content>\n" per request, in order
                end = data.index(b"\n", pos)
                size = int(data[pos:end].split()[2])
                out[p] = data[end + 1:end + 1 + size]
                pos = end + 1 + size + 1
        return out


def lock_outs(lock: dict) -> list[dict]:
    """Every output `dvc.lock` records under PREFIXES (path, md5, ...)."""
    outs = []
    for stage in (lock.get("stages") or {}).values():
        for out in (stage or {}).get("outs") or []:
            if isinstance(out, dict) and isinstance(out.get("path"), str) and _under(out["path"], PREFIXES):
                outs.append(out)
    return outs


def open_revision(root: Path, rev: str) -> Revision:
    """The workspace (`workspace`) or a git revision / DVC experiment of the project at `root`."""
    root = git_root(root)
    if rev == WORKSPACE:
        lock_path = root / "dvc.lock"
        try:
            lock = yaml.safe_load(lock_path.read_text()) if lock_path.exists() else {}
        except yaml.YAMLError as exc:
            raise DataError(f"{lock_path}: not valid YAML ({' '.join(str(exc).split())})") from None
        tracked = set(_git(root, "ls-files", "-z", "--", *PREFIXES).decode().split("\0"))
        outs = [o["path"] for o in lock_outs(lock if isinstance(lock, dict) else {})
                if o["path"] not in tracked and not any(t.startswith(o["path"] + "/") for t in tracked)]
        return Workspace(root, outs)
    return GitRevision(root, rev)
