"""Child processes that never outlive the process that started them."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path


def die_with_parent(parent: int):
    """A `preexec_fn`: the child gets SIGTERM when `parent` dies (Linux's PR_SET_PDEATHSIG,
    kept across exec), and exits at once if `parent` is already gone. Linux ties the signal to
    the thread that forked: start the child from a thread that lives as long as it should."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: nothing but the call after fork

    def arm():
        prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)
    return arm


def stop(proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds; reaped either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def sigterm_as_exit():
    """Inside: SIGTERM raises SystemExit(143), so `finally` blocks stop this process's children
    (Python's default is to die at once, leaving them). Only in the main thread."""
    def leave(signum, frame):
        raise SystemExit(128 + signum)
    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def become_subreaper() -> bool:
    """Make this process Linux's "child subreaper": a descendant whose parent dies is reparented
    here rather than to init, so `stop_descendants` still finds it (Prefect starts each flow run
    in a session of its own, out of reach of a process-group kill). False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    return ctypes.CDLL(None, use_errno=True).prctl(36, 1) == 0  # 36: PR_SET_CHILD_SUBREAPER


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (from /proc; empty where there is none)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def stop_descendants(timeout: float = 20.0) -> None:
    """SIGTERM every process below this one, SIGKILL what is left after `timeout` seconds, and
    reap them: with `become_subreaper`, orphaned grandchildren included."""
    import time

    def below(pid: int) -> list[int]:
        kids = children_of(pid)
        return kids + [g for k in kids for g in below(k)]

    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        for pid in below(os.getpid()):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                while os.waitpid(-1, os.WNOHANG)[0] > 0:  # reap what has exited (ours, adopted ones too)
                    pass
            except ChildProcessError:
                return  # no child left
            if not below(os.getpid()):
                return
            time.sleep(0.1)
