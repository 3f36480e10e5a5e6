"""Which studies a paper table's or figure's file needs, for `make <file>` (docs/reproducing.md, "Paper artefacts").

    python -m privtext.report.artefacts studies results/figures/dpnr/figure3.png       # -> dpnr_eps
    python -m privtext.report.artefacts studies results/tables/extra/effective_epsilon.csv federate_eps,cape_main

Prints the studies, comma-separated, as `run_studies=[...]` takes them. The registry names a paper artefact's
studies; an extra/* artefact reads whichever studies are run, so its studies are the second argument (the
Makefile's STUDIES). Reads the registry only: no torch, pandas or matplotlib, so it costs a few milliseconds.
"""

from __future__ import annotations

import sys
from typing import Sequence

from privtext.report.artefacts import ARTEFACTS, artefact_of_file

USAGE = "usage: python -m privtext.report.artefacts studies FILE [STUDY,STUDY,...]"


def studies_of_file(path: str, given: str = "") -> list[str]:
    """The studies that build ``path``: the registry's, or for an artefact that names none, those ``given``
    (comma-separated). ValueError with the reason otherwise."""
    artefact = artefact_of_file(path)
    named = [s for s in given.replace(" ", ",").split(",") if s]
    if artefact.studies:
        if named and named != list(artefact.studies):
            raise ValueError(f"{path} is built from {','.join(artefact.studies)} (its entry in ARTEFACTS); "
                             f"STUDIES={given} is only for extra/* files")
        return list(artefact.studies)
    if not named:
        raise ValueError(f"{path} ({artefact.name}) reads every study run with it: name them, e.g. "
                         f"make {path} STUDIES=cape_main")
    # a study that feeds no paper artefact (quick, the claims studies) stops at its runs.csv: the file would be empty
    paper = {s for a in ARTEFACTS.values() for s in a.studies}
    if unknown := [s for s in named if s not in paper]:
        raise ValueError(f"STUDIES={given}: {','.join(unknown)} feeds no paper table; the paper studies are "
                         f"{','.join(sorted(paper))}")
    return named


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) not in (2, 3) or argv[0] != "studies":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        print(",".join(studies_of_file(*argv[1:])))
    except ValueError as error:
        print(f"privtext: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
