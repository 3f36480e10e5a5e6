"""privtext: reproducible benchmark of private and fair text representations.

The library holds all logic; Snakemake rules call thin scripts in ``workflow/scripts`` that call it.
The library never imports Snakemake. Its wings, in the order a grid point meets them:

- ``plan``: the configuration and the grid it expands to;
- ``data``: dataset builders, their sources and splits; ``encoding``: frozen text features and word dropout;
- ``methods``: the registry of methods; ``training``: the loop they train with; ``privacy``: the layers, their
  ε and the audit;
- ``jobs``: one grid point as a job; ``attack``: fresh attackers on the releases; ``measures``: metrics,
  fairness, MDL and selection;
- ``claims``: the claims table and its verdicts; ``report``: tables, figures and the paper artefacts;
- ``runtime``: threads, devices, logs, provenance; ``standins``: hand-written stand-ins for libraries, there
  only to cut start-up.
"""

__version__ = "0.1.0"
