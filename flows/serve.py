"""Run a command with one Prefect server for all of it: `python -m flows.serve dvc repro`.

Without `PREFECT_API_URL`, every process that runs a flow starts a temporary server
(~13 s each here); one server shared by all stages costs ~10 s once. A user-set
`PREFECT_API_URL` is respected and no server is started. The server reads the project's
`prefect.toml` like every stage (run this from the repository root); its log goes to
`<PREFECT_HOME>/server.log`. The server dies with this process, however it ends (a
SIGKILL included: `regula.children.die_with_parent`), so no server outlives the command it served.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import flows  # noqa: F401  (DO_NOT_TRACK for the server and the stages)
from regula.children import die_with_parent, stop


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prefect server exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"prefect server did not answer on {url} within {timeout:.0f} s")


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m flows.serve COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if os.environ.get("PREFECT_API_URL"):
        return subprocess.call(argv)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    from prefect.settings import get_current_settings
    home = get_current_settings().home  # prefect.toml's, or PREFECT_HOME where set
    home.mkdir(parents=True, exist_ok=True)  # the server's log goes there before Prefect makes it
    log = open(home / "server.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent(os.getpid()))
    try:
        _wait_healthy(url, server)
        return subprocess.call(argv, env={**os.environ, "PREFECT_API_URL": url})
    finally:
        stop(server)
        log.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
