"""Where a job runs: threads, devices, logs and the provenance recorded beside every result."""
