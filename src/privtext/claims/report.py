"""The claims table (csv + md) and its figure: verdicts per claim and dataset, one panel per paper.

Reads the table :func:`privtext.claims.table.claims_table` returns; matplotlib is imported only by the drawing code.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from privtext.claims.table import CLAIMS, EQUAL_EFFECTIVE, L1_SETTING, NO_DP, NOMINAL, REFERENCE_CODE
from privtext.claims.verdicts import MEANINGS, OUTCOMES

VERDICT_COLOURS = {  # Okabe–Ito: blue holds, vermilion contradicted, yellow not shown, grey cannot tell
    "holds": "#0072B2", "not shown": "#F0E442", "contradicted": "#D55E00", "untestable": "#DDDDDD",
}
MARKDOWN_COLUMNS = ("claim", "dataset", "kind", "setting", "measurement", "reading", "estimate", "95% CI", "seeds",
                    "holds on our runs", "paper", "matches paper", "paper's own numbers")


def _number(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3g}"


def _tally(rows: pd.DataFrame) -> str:
    counts = rows["holds"].value_counts()
    return ", ".join(f"{counts.get(o, 0)} {o}" for o in OUTCOMES)


def claims_notes(table: pd.DataFrame, seeds: Sequence[int] = ()) -> list[str]:
    seeds_text = f"seeds {', '.join(map(str, seeds))}" if seeds else "the claims study's seeds"
    return [
        f"Estimates are differences (ours − reference, fractions; MDL in kbits) or Spearman's ρ over a sweep, one "
        f"value per seed ({seeds_text}). The 95% interval combines the spread over seeds with test-set sampling "
        "(privtext.claims.inference: seeds × a bootstrap of the shared test examples); the csv's `per_seed` column holds "
        "each part's per-seed values and both variance parts, so anyone can recompute it. docs/claims.md has the "
        "method and its simulated coverage.",
        "Verdicts (privtext.claims.verdicts), one meaning each: "
        + "; ".join(f"**{o}**: {MEANINGS[o]}" for o in OUTCOMES) + ".",
        "Readings: superiority (the claimed side of 0), non-inferiority (not worse than the margin), equivalence "
        "(within ±margin); the csv's `reading` and `margin_reason` columns give each part's.",
        f"Settings: '{NOMINAL}' runs DPNR and CAPE with their published min-max layer (Lap(1/ε), guarantee D·ε); "
        f"'{EQUAL_EFFECTIVE}' swaps in dpnr_calibrated / cape_calibrated (Lap(D/ε)), ε-DP at the paper's ε. "
        f"'{L1_SETTING}': Noise and FEDERATE (L1 layer) are ε-DP as published. '{NO_DP}': the claim compares "
        f"methods without a privacy layer. '{REFERENCE_CODE}': dpnr_code / cape_code, the mechanism of the papers' "
        "public code (one noise scalar per example; one noise vector per model), DP at no ε: these rows show "
        "whether a published number comes back with the code's mechanism, and count in no DP tally.",
        "`paper` is the paper's own difference where it printed both numbers (fractions); 'matches paper' asks "
        "whether it lies inside our interval (or within the margin of our estimate); 'paper's own numbers' scores "
        "the printed difference by the same reading, a finding about the paper apart from our runs.",
    ]


def write_claims_table(table: pd.DataFrame, out_prefix: str | Path, seeds: Sequence[int] = (),
                       paper_table: pd.DataFrame | None = None) -> list[Path]:
    """``out_prefix``.csv (every column) and .md (the readable columns, the tallies and the notes); with
    ``paper_table`` (:func:`privtext.claims.table.paper_readings`) the .md also scores every paper dataset."""
    from privtext.report.artefacts.common import markdown_table  # the project's one markdown writer

    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md")]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(paths[0], index=False)
    shown = pd.DataFrame({
        "claim": table["claim"], "dataset": table["dataset"], "kind": table["dataset_kind"],
        "setting": table["setting"], "measurement": table["measurement"], "reading": table["reading"],
        "estimate": table["estimate"].map(_number),
        "95% CI": [f"[{_number(lo)}, {_number(hi)}]" if not math.isnan(lo) else ""
                   for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "seeds": table["n_seeds"],
        "holds on our runs": [f"**{v}**" if v in ("holds", "contradicted") else v for v in table["holds"]],
        "paper": table["paper_value"].map(_number), "matches paper": table["matches_paper"],
        "paper's own numbers": table["paper_reading"],
    }, columns=list(MARKDOWN_COLUMNS))
    code = table["setting"] == REFERENCE_CODE
    synthetic = table["dataset_kind"] == "synthetic"
    real = table[~synthetic & ~code]
    lines = ["# The papers' claims, checked", "",
             f"{len(table)} rows. On real data ({len(real)} rows): {_tally(real)}. Kept apart: the synthetic "
             f"`demo` ({int((synthetic & ~code).sum())} rows: {_tally(table[synthetic & ~code])}) and the "
             f"reference code's non-DP mechanisms ({int(code.sum())} rows: {_tally(table[code])}).", "",
             markdown_table(shown), "", *[f"- {note}" for note in claims_notes(table, seeds)]]
    if paper_table is not None and len(paper_table):
        lines += ["", "## The papers' own numbers, read the same way", "",
                  markdown_table(paper_table[["claim", "dataset", "paper_values", "paper_reading"]])]
    paths[1].write_text("\n".join(lines) + "\n")
    return paths


def _columns(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, setting) columns of one paper's panel, measured datasets first, those without runs last."""
    pairs = list(dict.fromkeys(zip(rows["dataset"], rows["setting"])))
    unmeasured = _unmeasured(rows)
    return [p for p in pairs if p[0] not in unmeasured] + [p for p in pairs if p[0] in unmeasured]


def _unmeasured(rows: pd.DataFrame) -> set[str]:
    runs = rows.assign(has=rows["grid_points"].fillna("").astype(str) != "").groupby("dataset")["has"].any()
    return set(runs.index[~runs])


def _column_label(dataset: str, setting: str, unmeasured: set[str] = frozenset()) -> str:
    if dataset == "—":
        return "no dataset\nfits"
    if dataset in unmeasured:
        return dataset + "\n(no data)"
    return dataset + {NOMINAL: "\nnominal ε", EQUAL_EFFECTIVE: "\nequal\neffective ε",
                      REFERENCE_CODE: "\nreference code\n(not DP)"}.get(setting, "")


SHORT = {"holds": "yes", "not shown": "no", "contradicted": "contra", "untestable": "?"}


def verdict_figure(table: pd.DataFrame) -> Any:
    """One panel per paper: claims (rows) × dataset and setting (columns), cells coloured by verdict."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    papers = [p for p in ("DPNR", "CAPE", "FEDERATE") if p in set(table["paper"])]
    layout = {p: (sorted({c for c in table.loc[table["paper"] == p, "claim"]}, key=list(CLAIMS).index),
                  _columns(table[table["paper"] == p])) for p in papers}
    width = max(6.5, 3.6 + 0.95 * max(len(cols) for _, cols in layout.values()))  # 3.6 in: claim labels
    heights = [0.32 * len(claims) + 1.0 for claims, _ in layout.values()]
    figure = Figure(figsize=(width, sum(heights) + 0.9), layout="constrained")
    axes = figure.subplots(len(papers), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, paper in zip(axes, papers):
        claims, columns = layout[paper]
        rows = table[table["paper"] == paper]
        for i, claim in enumerate(claims):
            for j, (dataset, setting) in enumerate(columns):
                hit = rows[(rows["claim"] == claim) & (rows["dataset"] == dataset) & (rows["setting"] == setting)]
                outcome = hit["holds"].iloc[0] if len(hit) else None
                colour = VERDICT_COLOURS.get(outcome, "white")
                ax.add_patch(_cell(j, i, colour))
                ax.text(j + 0.5, i + 0.5, SHORT.get(outcome, "") if outcome else "–", ha="center", va="center",
                        fontsize=8, color="white" if outcome in ("holds", "contradicted") else "black")
        ax.set_xlim(0, len(columns))
        ax.set_ylim(len(claims), 0)
        ax.set_xticks([j + 0.5 for j in range(len(columns))],
                      [_column_label(d, s, _unmeasured(rows)) for d, s in columns], fontsize=7)
        ax.set_yticks([i + 0.5 for i in range(len(claims))],
                      [f"{c}: {_short_text(CLAIMS[c].text)}" for c in claims], fontsize=7)
        ax.tick_params(length=0)
        ax.grid(False)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title(paper, loc="left", fontsize=10, fontweight="bold")
    handles = [Patch(facecolor=VERDICT_COLOURS[o], edgecolor="#777777", label=f"{SHORT[o]} = {o}") for o in OUTCOMES]
    handles.append(Patch(facecolor="white", edgecolor="#777777", label="– = no row (claim does not apply)"))
    figure.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False, fontsize=8)
    figure.suptitle("Do the papers' claims hold on our runs?", fontsize=10)
    return figure


def _cell(x: float, y: float, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.04, y + 0.06), 0.92, 0.88, facecolor=colour, edgecolor="#777777", linewidth=0.5)


def _short_text(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def write_verdict_figure(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    from privtext.report.artefacts.common import save_figure

    return save_figure(verdict_figure(table), out_prefix)
