"""Logging set-up shared by the workflow scripts: everything goes to the rule's log file."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

from privtext.runtime.warm import WORKER_ENV, report_exit

# The first line of a job's log when it runs in a warm worker (benchmarks/paper_scale.py reads it: such a job's
# benchmark lacks the start-up a process of its own pays).
WARM_WORKER_MESSAGE = "running in a warm worker (privtext.runtime.warm)"


def setup_logging(log_path: str | Path | None = None, level: int = logging.INFO) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True
    )
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught
    if os.environ.get(WORKER_ENV):
        logging.getLogger("privtext").info("%s, pid %d", WARM_WORKER_MESSAGE, os.getpid())


def _log_uncaught(kind, error, traceback) -> None:
    """Uncaught errors go to the rule's log too, which Snakemake points users to."""
    logging.getLogger("privtext").critical("job failed", exc_info=(kind, error, traceback))


def finish_job() -> NoReturn:
    """End a job's process once its outputs are written: flush the logs and exit without the interpreter's
    teardown (finalising torch and thousands of modules costs 0.6–0.75 s a job here and writes nothing)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    report_exit(0)  # in a warm worker, the job's process exits with this status (privtext.runtime.warm)
    os._exit(0)
