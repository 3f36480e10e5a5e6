"""The one entry point of a train job: a grid point, on frozen features or fine-tuning its encoder.

Above :mod:`privtext.jobs.runs` (frozen features) and :mod:`privtext.jobs.finetune_runs` (end to end), which share
:class:`~privtext.jobs.runs.TrainJob` and the ``metrics.json`` writer, so neither imports the other.
"""

from __future__ import annotations

from typing import Any

from privtext.plan.grid import GridPoint
from privtext.jobs.attack_cache import discard
from privtext.jobs.runs import TrainJob, train_grid_point


def run_grid_point(point: GridPoint, job: TrainJob) -> dict[str, Any]:
    """Train one grid point, on frozen features or (where the point says so) fine-tuning its encoder end to
    end, and write its run folder: model, releases, predictions, ``metrics.json`` and the stored attacks. The
    attacks stored by an earlier job of the folder go first, before anything can fail."""
    discard(job.out_dir)
    if point.finetune:
        from privtext.jobs.finetune_runs import finetune_grid_point  # torch and transformers: only when fine-tuning

        return finetune_grid_point(point, job)
    return train_grid_point(point, job)
