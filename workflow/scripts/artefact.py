"""Build one paper table or figure from saved measures (never retrains)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from privtext.report.artefacts import build_artefact
from privtext.runtime.logs import setup_logging

setup_logging(snakemake.log[0])
measures = pd.concat(
    [pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in snakemake.input.measures], ignore_index=True
)
metas = {Path(p).parent.name: json.loads(Path(p).read_text()) for p in snakemake.input.metas}
published = pd.read_csv(snakemake.input.published) if "published" in snakemake.input.keys() else None
tsne_inputs = None
if "tsne" in snakemake.input.keys():
    tsne_inputs = []
    for released in snakemake.input.tsne:
        run = json.loads((Path(released).parent / "metrics.json").read_text())
        meta = metas[run["dataset"]]
        # DPNR Figure 4 colours by age group; otherwise the dataset's first private attribute.
        attribute = "age" if "age" in meta["private_attributes"] else next(iter(meta["private_attributes"]))
        data_dir = Path("results/data") / run["dataset"]
        labels = pd.read_parquet(data_dir / "test.parquet", columns=[f"z_{attribute}"])[f"z_{attribute}"].to_numpy()
        tsne_inputs.append((run["method"], run["dataset"], released, labels, meta["private_attributes"][attribute], attribute))
out_prefix = str(snakemake.output[0]).rsplit(".", 1)[0]
build_artefact(
    snakemake.params.artefact, measures, metas, published, out_prefix,
    tsne_inputs=tsne_inputs, options={"threads": snakemake.threads},
)
