"""The papers' printed numbers, and the margins their own words imply.

A privacy, leakage or fairness word ("comparable", "similar", "barely above chance") has no number in the
papers. Its margin is the largest difference the paper itself describes with that word, for that measure, in
the table the sentence cites: the paper's own usage says what it meant. It is computed here from
``published.csv`` alone, never from our runs (``tests/test_claims.py`` checks that no run can move it).
Accuracy words keep the project's one convention, 0.02 (:data:`privtext.claims.verdicts.ACCURACY_MARGIN`).
"""

from __future__ import annotations

import math
from typing import Iterable

import pandas as pd

from privtext.claims.verdicts import Reading
from privtext.report.artefacts.common import paper_dataset

# How a margin taken from the paper's own tables begins its reason (the claims table tells those margins apart
# by it, to score the papers again at the conventional 0.02).
OWN_USAGE = "the paper's own usage"


def _setting_items(setting: str) -> set[str]:
    return {item.strip() for item in str(setting).split(";") if item.strip()}


def printed(published: pd.DataFrame | None, paper: str, table: str, dataset: str, method: str, metric: str,
            scale: float = 1.0, occurrence: int | None = None, **setting: object) -> float:
    """One printed number of ``published.csv`` times ``scale`` (NaN when not printed). ``setting`` items must
    all appear in the row's ``;``-separated setting (``eps=0.05``, ``private=gender``, …); ``None`` asks for a
    row without that key. Several matching rows are averaged (a table printing one value per subgroup), unless
    ``occurrence`` picks one in the table's order (CAPE's Table 4 prints ε = 0.1, λ = 1 once in each sweep)."""
    paper_id = paper_dataset(dataset)
    if published is None or not len(published) or paper_id is None:
        return math.nan
    rows = published[(published["paper"] == paper) & (published["table"] == table) & (published["dataset"] == paper_id)
                     & (published["method"] == method) & (published["metric"] == metric)]
    for key, value in setting.items():
        items = rows["setting"].map(_setting_items)
        if value is None:
            keep = [not any(i.startswith(f"{key}=") for i in row) for row in items]
        else:
            keep = [f"{key}={value}" in row for row in items]
        rows = rows.loc[pd.Series(keep, index=rows.index, dtype=bool)]
    if occurrence is not None and len(rows):
        rows = rows.iloc[[occurrence]]
    return float(rows["value"].mean()) * scale if len(rows) else math.nan


def largest(differences: Iterable[tuple[str, float]]) -> tuple[float, str]:
    """The largest |difference| among the printed ones and which it was; (NaN, '') if none was printed."""
    printed_ones = [(label, value) for label, value in differences if math.isfinite(value)]
    if not printed_ones:
        return math.nan, ""
    label, value = max(printed_ones, key=lambda item: abs(item[1]))
    return abs(value), f"{label}: {value:+.4g}"


def paper_margin(kind: str, direction: int, differences: Iterable[tuple[str, float]], word: str, where: str,
                 unit: str = "") -> Reading | None:
    """A reading whose margin is the largest of ``differences`` (each a printed difference the paper describes
    with ``word`` in ``where``); None when the paper printed none of them (no published.csv)."""
    differences = list(differences)
    margin, which = largest(differences)
    if not math.isfinite(margin) or margin <= 0:
        return None
    reason = (f"{OWN_USAGE}: the largest difference it calls '{word}' in {where} "
              f"({which}{unit}, of {len(differences)} printed)")
    return Reading(kind, direction, margin, reason)
