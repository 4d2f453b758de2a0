"""Prefect flows, one per pipeline; each DVC stage runs one (`python -m flows.<name>`).

Importing this package configures Prefect for the project before Prefect is imported:
a project-local home, no telemetry, quiet logs, and a generous start-up timeout for the
temporary server that Prefect starts when no `PREFECT_API_URL` is set.
"""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_home = Path(os.environ.setdefault("PREFECT_HOME", str(ROOT / ".prefect")))
_home.mkdir(parents=True, exist_ok=True)  # Prefect's start-up hangs when it is missing
for key, value in {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_LOGGING_LOG_PRINTS": "false",
}.items():
    os.environ.setdefault(key, value)
