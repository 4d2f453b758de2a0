"""A content-addressed store of LLM answers: one JSON file per (model, endpoint, messages,
sampling parameters with the seed, sample index, answer schema), sharded by key prefix. The
structured form the answer was asked in is provenance, not key: a replay needs no probe.

An answer that never parsed is stored too, marked `unusable` (the error), so that a replay
drops the answers the live run dropped.

An entry is written once and never changes (except in `refresh` mode): a complete temporary
file is hard-linked into place, which fails if the key is already there, so when two
processes answer one question the first answer stands and the other process takes it. A
lock file per key (`asking`) lets one process ask while the others wait for its answer.
Every reader checks an entry's shape, and that its question hashes to its key, so a damaged
or misplaced file stops the run naming the file instead of answering the wrong question.

Two caches merge as a union. Where both hold a key, the entry whose canonical JSON sorts
first is kept whichever way the merge goes, and an answer that differs is a named conflict.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from regula.errors import RegulaError
from regula.io import write_atomic


class CacheError(RegulaError):
    """A cache entry or folder on disk that cannot be used; the message names it."""


def cache_key(model: str, endpoint: str, messages: list, params: dict, sample: int, schema: dict | None = None) -> str:
    blob = json.dumps({"model": model, "endpoint": endpoint, "messages": messages, "params": params,
                       "sample": sample, "schema": schema}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Message(_Open):
    role: StrictStr
    content: StrictStr


class _Request(_Open):
    model: StrictStr
    endpoint: StrictStr
    messages: list[_Message]
    params: dict
    sample: StrictInt = Field(ge=0)
    schema_: dict | None = Field(None, alias="schema")  # the answer's JSON schema; None: free text


class _Response(_Open):
    content: StrictStr


class _Entry(_Open):
    """What every entry holds at least (more is kept: usage, role, stage, time, re-asks ...)."""

    key: StrictStr
    request: _Request
    response: _Response
    unusable: StrictStr | None = None  # why the answer never parsed, re-asks included


def _canonical(entry: dict) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class QueryCache:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        path = self.path(key)
        text = self._read(path)
        return None if text is None else self._parse(path, text)

    @staticmethod
    def _read(path: Path) -> str | None:
        try:
            return path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise CacheError(f"corrupt LLM cache entry {path}: not UTF-8 text; delete it to ask again") from None
        except OSError as exc:  # a folder where the entry or a file where its shard should be
            raise CacheError(f"LLM cache entry {path} cannot be read ({exc.strerror}); "
                             "remove what is in its place to ask again") from None

    @staticmethod
    def _parse(path: Path, text: str) -> dict:
        def corrupt(what: str) -> CacheError:
            return CacheError(f"corrupt LLM cache entry {path}: {what}; delete it to ask again")
        if not text.strip():
            raise corrupt("an empty file")
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as exc:
            raise corrupt(f"not valid JSON ({exc.msg} at char {exc.pos})") from None
        try:
            _Entry.model_validate(entry)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "the entry"
            raise corrupt(f"{where}: {err['msg']}") from None
        key, request = entry["key"], entry["request"]
        if key != path.stem:
            raise corrupt(f"it holds key {key[:16]}..., not its file name")
        if key != cache_key(request["model"], request["endpoint"], request["messages"], request["params"],
                            request["sample"], request.get("schema")):
            raise corrupt("its request does not hash to its key (the question was changed)")
        if path.parent.name != key[:2]:
            raise corrupt(f"it belongs in shard {key[:2]}/, not {path.parent.name}/")
        return entry

    def put(self, key: str, entry: dict, replace: bool = False) -> dict:
        """Store `entry` under `key` unless an entry is there already (`replace`: overwrite it).
        Returns the entry the key holds afterwards: this one, or the one that was there first."""
        entry = {**entry, "key": key}
        text = json.dumps(entry, sort_keys=True, indent=1, ensure_ascii=False)
        path = self.path(key)
        try:
            if replace:
                write_atomic(path, text)
                return entry
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(text)
                os.chmod(tmp, 0o644)
                os.link(tmp, path)
            finally:
                os.unlink(tmp)
        except FileExistsError:
            return self.get(key)  # another process answered first: its answer stands
        except OSError as exc:
            raise CacheError(f"cannot write LLM cache entry {path} ({exc.strerror})") from None
        return entry

    @contextmanager
    def asking(self, key: str):
        """Held while this process asks for `key`: others asking the same wait, then find its
        answer, so one question is asked once however many processes share the cache. The lock
        file is removed on release (a process killed holding it leaves a file the next asker
        locks and removes)."""
        path = self.path(key).with_name(f".{key}.lock")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    if os.stat(path).st_ino == os.fstat(fd).st_ino:
                        break
                except FileNotFoundError:
                    pass
                os.close(fd)  # its holder removed it while we waited: lock the file there now
        except OSError as exc:
            raise CacheError(f"cannot lock {path} ({exc.strerror})") from None
        try:
            yield
        finally:
            os.unlink(path)
            os.close(fd)

    def _check_root(self) -> None:
        if not self.root.exists():
            raise CacheError(f"LLM cache folder {self.root} does not exist")
        if not self.root.is_dir():
            raise CacheError(f"LLM cache folder {self.root} is not a folder")

    def files(self):
        """Every entry file, shard by shard (lock files and unfinished temporaries left out)."""
        if not self.root.is_dir():
            return
        for shard in sorted(self.root.iterdir()):
            if shard.is_dir():
                yield from sorted(p for p in shard.glob("*.json") if not p.name.startswith(".tmp-"))

    def __len__(self) -> int:
        return sum(1 for _ in self.files())

    def entries(self):
        """(path, entry) for every entry; CacheError at the first that cannot be used."""
        return [(path, self._parse(path, self._read(path))) for path in self.files()]

    def verify(self) -> tuple[int, list[str]]:
        """(entries read, one message per problem): entries that cannot be read or are damaged,
        and files where a shard folder should be. CacheError if the folder is missing."""
        self._check_root()
        bad = [f"{p}: a file where a shard folder should be" for p in sorted(self.root.iterdir())
               if not p.is_dir() and not _ledger(p)]
        n = 0
        for path in self.files():
            n += 1
            try:
                self._parse(path, self._read(path))
            except CacheError as exc:
                bad.append(str(exc))
        return n, bad

    def stats(self) -> dict:
        self._check_root()
        per_model, per_endpoint, per_role, per_stage, per_form = Counter(), Counter(), Counter(), Counter(), Counter()
        tokens_in = tokens_out = unusable = 0
        n = corrupt = 0
        for path in self.files():
            try:
                entry = self._parse(path, self._read(path))
            except CacheError:
                corrupt += 1
                continue
            n += 1
            per_model[entry["request"]["model"]] += 1
            per_endpoint[entry["request"]["endpoint"]] += 1
            per_role[str(entry.get("role", "?"))] += 1
            per_stage[str(entry.get("stage", "?"))] += 1
            per_form[str(entry["request"].get("structured", "?"))] += 1
            unusable += entry.get("unusable") is not None
            usage = entry.get("usage") if isinstance(entry.get("usage"), dict) else {}
            tokens_in += _count(usage.get("prompt_tokens"))
            tokens_out += _count(usage.get("completion_tokens"))
        return {"entries": n, "corrupt": corrupt, "unusable": unusable, "models": dict(per_model),
                "endpoints": dict(per_endpoint), "roles": dict(per_role), "stages": dict(per_stage),
                "structured": dict(per_form), "tokens_in": tokens_in, "tokens_out": tokens_out}


LEDGER = "calls.jsonl"  # beside the shards: the accounting of every call (regula.llm.accounting)


def _ledger(path: Path) -> bool:
    return path.name == LEDGER


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def merge(source: str | Path, target: str | Path) -> dict:
    """Copy into `target` every entry of `source` it lacks (a union). Where both hold a key,
    the entry whose canonical JSON sorts first is kept, so merging a into b leaves the same
    files as merging b into a; keys whose answers differ are listed as conflicts, each with
    the answer kept and the one dropped. Every source entry is checked before anything is
    written: a damaged one stops the merge with `target` untouched."""
    src, dst = QueryCache(source), QueryCache(target)
    for cache in (src, dst) if dst.root.exists() else (src,):
        bad = cache.verify()[1]
        if bad:
            raise CacheError(f"{bad[0]} (nothing was merged)")
    copied = same = 0
    conflicts = []
    for path, entry in src.entries():
        key = entry["key"]
        mine = dst.get(key)
        if mine is None:
            write_atomic(dst.path(key), path.read_text())
            copied += 1
            continue
        keep, drop = sorted((mine, entry), key=_canonical)
        if keep is entry and _canonical(entry) != _canonical(mine):
            write_atomic(dst.path(key), path.read_text())
        if mine["response"]["content"] == entry["response"]["content"]:
            same += 1
        else:
            conflicts.append({"key": key, "kept": keep["response"]["content"],
                              "dropped": drop["response"]["content"]})
    return {"copied": copied, "already_there": same, "conflicts": conflicts}
