"""The claims table (csv + md) and its figure: verdicts per claim and dataset, one panel per paper.

Reads the table :func:`privtext.claims.claims_table` returns; matplotlib is imported only by the drawing code.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from privtext.claims import CLAIMS, EQUAL_EFFECTIVE, NOMINAL
from privtext.verdicts import COMPARABLE_MARGIN, OUTCOMES

VERDICT_COLOURS = {  # Okabe–Ito: blue holds, vermilion reversed, yellow not shown, grey cannot tell
    "reproduced": "#0072B2", "not reproduced": "#F0E442", "reversed": "#D55E00", "inconclusive": "#DDDDDD",
}
MARKDOWN_COLUMNS = ("claim", "dataset", "setting", "measurement", "estimate", "95% CI", "seeds", "paper",
                    "verdict", "reason")


def _number(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3g}"


def claims_notes(table: pd.DataFrame, seeds: Sequence[int] = ()) -> list[str]:
    seeds_text = f"seeds {', '.join(map(str, seeds))}" if seeds else "the claims study's seeds"
    return [
        f"Estimates are differences (ours − reference, fractions; MDL in kbits) or Spearman's ρ over a sweep, one "
        f"value per seed ({seeds_text}); the 95% interval is a percentile bootstrap of the seed mean "
        "(privtext.selection.summarise_over_seeds); `p_value` in the csv is a paired t-test over seeds.",
        "Verdicts (SPEC §6, privtext.verdicts): reproduced = the claimed direction holds and the interval excludes "
        "0; not reproduced = the interval contains 0; reversed = the interval excludes 0 on the other side; "
        f"'comparable' claims must lie wholly within ±{COMPARABLE_MARGIN:g}; fewer than 3 seeds or no runs = "
        "inconclusive. A claim of several parts takes its weakest part's verdict; the row shows that part "
        "(every part is in the csv column `parts`, every run folder in `grid_points`).",
        f"Settings: '{NOMINAL}' runs DPNR and CAPE with their published min-max layer (Lap(1/ε), guarantee D·ε); "
        f"'{EQUAL_EFFECTIVE}' swaps in dpnr_calibrated / cape_calibrated (Lap(D/ε)), ε-DP at the paper's ε. "
        "Noise and FEDERATE (L1 layer) are ε-DP as published, so their two rows use the same runs.",
        "`paper` is the paper's own difference where it printed both numbers (fractions; DPNR's Table 4, CAPE's "
        "Table 3, FEDERATE's Tables 1–3), on the matching dataset only.",
    ]


def write_claims_table(table: pd.DataFrame, out_prefix: str | Path, seeds: Sequence[int] = ()) -> list[Path]:
    """``out_prefix``.csv (every column) and .md (the readable columns and the notes)."""
    from privtext.artefacts.common import markdown_table  # the project's one markdown writer

    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md")]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(paths[0], index=False)
    shown = pd.DataFrame({
        "claim": table["claim"], "dataset": table["dataset"], "setting": table["setting"],
        "measurement": table["measurement"], "estimate": table["estimate"].map(_number),
        "95% CI": [f"[{_number(lo)}, {_number(hi)}]" if not math.isnan(lo) else ""
                   for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "seeds": table["n_seeds"], "paper": table["paper_value"].map(_number),
        "verdict": [f"**{v}**" if v in ("reproduced", "reversed") else v for v in table["verdict"]],
        "reason": table["reason"],
    }, columns=list(MARKDOWN_COLUMNS))
    counts = table["verdict"].value_counts()
    tally = ", ".join(f"{counts.get(o, 0)} {o}" for o in OUTCOMES)
    lines = ["# The papers' claims, checked (SPEC §6)", "", f"{len(table)} rows: {tally}.", "",
             markdown_table(shown), "", *[f"- {note}" for note in claims_notes(table, seeds)]]
    paths[1].write_text("\n".join(lines) + "\n")
    return paths


def _columns(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, setting) columns of one paper's panel, tested datasets first, untested ones last."""
    pairs = list(dict.fromkeys(zip(rows["dataset"], rows["setting"])))
    return [p for p in pairs if p[1] != "—"] + [p for p in pairs if p[1] == "—"]


def _column_label(dataset: str, setting: str) -> str:
    if dataset == "—":
        return "no dataset\nfits"
    if setting == "—":
        return dataset.replace("; ", "\n") + "\n(no data)"
    return dataset + ("\nnominal ε" if setting == NOMINAL else "\nequal\neffective ε")


SHORT = {"reproduced": "yes", "not reproduced": "no", "reversed": "rev.", "inconclusive": "?"}


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
                outcome = hit["verdict"].iloc[0] if len(hit) else None
                colour = VERDICT_COLOURS.get(outcome, "white")
                ax.add_patch(_cell(j, i, colour))
                ax.text(j + 0.5, i + 0.5, SHORT.get(outcome, "") if outcome else "–", ha="center", va="center",
                        fontsize=8, color="white" if outcome in ("reproduced", "reversed") else "black")
        ax.set_xlim(0, len(columns))
        ax.set_ylim(len(claims), 0)
        ax.set_xticks([j + 0.5 for j in range(len(columns))],
                      [_column_label(d, s) for d, s in columns], fontsize=7)
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
    figure.suptitle("Verdicts on the papers' claims (SPEC §6)", fontsize=10)
    return figure


def _cell(x: float, y: float, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.04, y + 0.06), 0.92, 0.88, facecolor=colour, edgecolor="#777777", linewidth=0.5)


def _short_text(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def write_verdict_figure(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    from privtext.artefacts.common import save_figure

    return save_figure(verdict_figure(table), out_prefix)
