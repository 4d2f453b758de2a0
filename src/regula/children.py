"""Child processes that never outlive the process that started them."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from contextlib import contextmanager


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
