"""privtext: reproducible benchmark of private and fair text representations.

The library holds all logic; Snakemake rules call thin scripts in ``workflow/scripts`` that call it.
The library never imports Snakemake.
"""

__version__ = "0.1.0"
