"""One grid point as a job: train or fine-tune, release, attack in the same process, write metrics.json."""
