"""Prefect tasks: thin wrappers around the library, cached on content, never on paths.

Prefect's settings (project-local home, no telemetry, log level) come from `prefect.toml`
at the repository root; nothing here configures Prefect.
"""
import logging

from prefect.logging import get_run_logger

PROGRESS_LOGGER = "progress"


def log_progress(line: str) -> None:
    """One progress line of a stage, logged as INFO through the current flow or task run's
    Prefect logger: it shows on the terminal and in the run's logs in Prefect's UI.

    Prefect logs at WARNING (prefect.toml), which hides its own INFO lines ("Beginning
    flow run", "Finished in state ...") that share the run logger. The line goes to a child
    of the run logger (`prefect.flow_runs.progress` / `prefect.task_runs.progress`, with
    the run's metadata) whose level is INFO. The level is set here, at log time, because
    Prefect's logging set-up resets the level of child loggers that exist before it runs,
    and no setting of Prefect's names a logger level.
    """
    logger = get_run_logger().getChild(PROGRESS_LOGGER)
    if logger.logger.level != logging.INFO:
        logger.logger.setLevel(logging.INFO)
    logger.info(line)
