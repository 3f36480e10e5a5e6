"""Snakemake's command line for local runs, without its job-rate limiter: what `make run` and `make claims` start.

    .venv/bin/python workflow/local_snakemake.py <snakemake's arguments>

The command line's default ``--max-jobs-per-timespan 100/1s`` is meant for cluster submission. Locally it cost
`make claims` 0.4 of a core (docs/performance.md, "Snakemake's own scheduling"): with a limiter, every
scheduling round that leaves a job waiting for a core arms a timer for one more round a second later, and every
finished job starts a round of its own, so the rounds a second grow with the jobs finished while others wait
(Snakemake 9.27; its issues #2967 and #3955 describe the symptom). Each round stats the inputs of every ready job;
`make claims` keeps hundreds ready for most of its run.

Snakemake's own API has no limiter unless one is asked for (``SchedulingSettings.max_jobs_per_timespan`` is
``None`` by default), and the local executor needs none: jobs start when cores free up. This entry point parses
the command line as Snakemake does, drops the limiter when the run is local and the limit was not set on the
command line or in a profile, and hands the arguments to Snakemake unchanged otherwise. Which job starts when
may differ; what a job computes does not. Kept outside ``src/privtext`` because the library never imports
Snakemake.
"""

from __future__ import annotations

import argparse
import sys

from snakemake.cli import args_to_api, parse_args, print_exception

LIMIT_OPTIONS = ("--max-jobs-per-timespan", "--max-jobs-per-second")
CLI_DEFAULT_LIMIT = (100, 1)  # snakemake.cli's default, 100/1s: a profile may set another


def limit_was_asked_for(argv: list[str], args: argparse.Namespace) -> bool:
    """Whether the user set a job-rate limit: on the command line, or (through a profile) to a non-default value."""
    if any(word == option or word.startswith(option + "=") for word in argv for option in LIMIT_OPTIONS):
        return True
    limit = args.max_jobs_per_timespan
    return args.max_jobs_per_second is not None or (
        limit is not None and (limit.max_jobs, limit.timespan) != CLI_DEFAULT_LIMIT)


def is_local(args: argparse.Namespace) -> bool:
    """Whether jobs run on this machine (no executor plugin that submits them)."""
    return getattr(args, "executor", None) in (None, "local", "dryrun", "touch")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser, args = parse_args(argv)
        if is_local(args) and not limit_was_asked_for(argv, args):
            args.max_jobs_per_timespan = None
        success = args_to_api(args, parser)
    except Exception as error:  # as snakemake.cli.main reports it
        print_exception(error)
        sys.exit(1)
    sys.exit(0 if success else 1)


if __name__ == "__main__":
    main()
