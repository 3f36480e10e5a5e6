"""The claims table (csv + md) and its figure: verdicts per claim and dataset, one panel per paper.

Reads the table :func:`privtext.claims.table.claims_table` returns; matplotlib is imported only by the drawing code.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from privtext.claims.context import EQUAL_EFFECTIVE, FINE_TUNED, L1_SETTING, NO_DP, NOMINAL, REFERENCE_CODE
from privtext.claims.table import CLAIMS
from privtext.claims.verdicts import MEANINGS, OUTCOMES
from privtext.report.artefacts.common import markdown_table  # the project's one markdown writer

VERDICT_COLOURS = {  # Okabe–Ito: blue holds, vermilion contradicted, yellow not shown, grey cannot tell
    "holds": "#0072B2", "not shown": "#F0E442", "contradicted": "#D55E00", "untestable": "#DDDDDD",
}
MARKDOWN_COLUMNS = ("claim", "dataset", "kind", "setting", "measurement", "reading", "estimate", "95% CI", "seeds",
                    "holds on our runs", "one seed left out", "departures", "paper", "matches paper",
                    "paper's own numbers")


def _number(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{float(value):.3g}"


def row_names(table: pd.DataFrame) -> list[str]:
    """Each row's claim, with its reading's label where the sentence is read more than one way: 'C2 (Base)'."""
    labels = table["reading_label"].fillna("").astype(str) if "reading_label" in table else [""] * len(table)
    return [f"{c} ({label})" if label else str(c) for c, label in zip(table["claim"], labels)]


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
        f"methods without a privacy layer. '{REFERENCE_CODE}': dpnr_code / cape_code / cape_dp_code, the mechanism "
        "of the papers' public code (one noise scalar per example; one noise vector per model), DP at no ε: these "
        "rows show whether a published number comes back with the code's mechanism, and count in no DP tally. "
        f"'{FINE_TUNED}': DPNR and NON-PRIV with the text encoder trained through the noise (DPNR's Algorithm 1; "
        "the study claims_finetune, `make claims-finetune`), where every other row reads heads on frozen features.",
        "`paper` is the paper's own difference where it printed both numbers (fractions); 'matches paper' asks "
        "whether it lies inside our interval (or within the margin of our estimate); 'paper's own numbers' scores "
        "the printed difference by the same reading, a finding about the paper apart from our runs.",
    ]


def write_claims_table(table: pd.DataFrame, out_prefix: str | Path, seeds: Sequence[int] = (),
                       paper_table: pd.DataFrame | None = None) -> list[Path]:
    """``out_prefix``.csv (every column) and .md (the readable columns, the tallies and the notes); with
    ``paper_table`` (:func:`privtext.claims.table.paper_readings`) the .md also scores every paper dataset."""
    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md")]
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(paths[0], index=False)
    shown = pd.DataFrame({
        "claim": row_names(table), "dataset": table["dataset"], "kind": table["dataset_kind"],
        "setting": table["setting"], "measurement": table["measurement"], "reading": table["reading"],
        "estimate": table["estimate"].map(_number),
        "95% CI": [f"[{_number(lo)}, {_number(hi)}]" if not math.isnan(lo) else ""
                   for lo, hi in zip(table["ci_low"], table["ci_high"])],
        "seeds": table["n_seeds"],
        "holds on our runs": [f"**{v}**" if v in ("holds", "contradicted") else v for v in table["holds"]],
        "one seed left out": [_stability(v) for v in table["seed_stability"].fillna("")],
        "departures": table["departures"].fillna(""),
        "paper": table["paper_value"].map(_number), "matches paper": table["matches_paper"],
        "paper's own numbers": table["paper_reading"],
    }, columns=list(MARKDOWN_COLUMNS))
    code = table["setting"] == REFERENCE_CODE
    kind = table["dataset_kind"]
    papers = table[(kind == "the paper's") & ~code]
    apart = [(label, table[mask]) for label, mask in (
        ("on substitute datasets (CAPE on AG; FEDERATE's Twitter and Bios figures on Adult and CelebA)",
         (kind == "substitute") & ~code),
        ("on the synthetic `demo`", (kind == "synthetic") & ~code),
        ("checked without runs (the ε audit, the accounting, or not measurable as stated)",
         kind.str.startswith("no data")),
        ("with the reference code's non-DP mechanisms", code))]
    lines = ["# The papers' claims, checked", "",
             f"{len(table)} rows. On the papers' own datasets ({len(papers)} rows): {_tally(papers)}. Kept apart: "
             + "; ".join(f"{label} ({len(rows)} rows: {_tally(rows)})" for label, rows in apart) + ".", "",
             markdown_table(shown), "", *[f"- {note}" for note in claims_notes(table, seeds)]]
    if paper_table is not None and len(paper_table):
        lines += ["", "## The papers' own numbers, read the same way", "",
                  markdown_table(paper_table.assign(claim=row_names(paper_table))[
                      ["claim", "dataset", "source", "paper_values", "paper_reading", "paper_reading_at_0.02"]])]
    lines += departures_and_stability(table)
    lines += reading_dependence(table, paper_table)
    paths[1].write_text("\n".join(lines) + "\n")
    return paths


def _stability(text: str) -> str:
    return "stable" if text.startswith("stable") else text


def departures_and_stability(table: pd.DataFrame) -> list[str]:
    """The section that says, for each contradicted or not-shown row on a paper's own dataset, how its run
    departs from the paper's procedure, and which judged rows a single seed moves (docs/claims.md)."""
    kind, code = table["dataset_kind"], table["setting"] == REFERENCE_CODE
    own = table[(kind == "the paper's") & ~code & table["holds"].isin(["contradicted", "not shown"])]
    stability = table["seed_stability"].fillna("")
    judged = table[table["holds"].isin(["holds", "not shown", "contradicted"]) & (stability != "")]
    moved = judged[~judged["seed_stability"].str.startswith("stable")]
    lines = ["", "## What a verdict rests on", "",
             f"Leave-one-seed-out: {len(judged) - len(moved)} of {len(judged)} judged rows keep their verdict with "
             "any one seed left out (column `seed_stability`; the rule is the same on the seeds left)"
             + (": the others are listed below." if len(moved) else ".")]
    if len(own):
        lines += ["", "Contradicted and not-shown rows on the papers' own datasets, with how our run departs from "
                  "the paper's (column `departures_detail`; docs/claims.md, \"Departures\"):", "",
                  markdown_table(own.assign(claim=row_names(own))[
                      ["claim", "dataset", "setting", "holds", "departures_detail"]])]
    if len(moved):
        lines += ["", "Judged rows a single seed moves:", "",
                  markdown_table(moved.assign(claim=row_names(moved))[
                      ["claim", "dataset", "setting", "holds", "seed_stability"]])]
    return lines


def _met(text: str) -> str:
    return "not printed" if text == "not printed" else "not met" if text.startswith("does not meet") else "met"


def reading_dependence(table: pd.DataFrame, paper_table: pd.DataFrame | None = None) -> list[str]:
    """Markdown lines listing each claim read more than one way, with each reading's verdict on our runs and on
    the paper's own numbers, and which of them turn on the reading."""
    labelled = table[table["reading_label"].fillna("").astype(str) != ""]
    if labelled.empty:
        return []
    lines = ["", "## Claims read more than one way", "",
             "A sentence a fair reader can take two ways is judged both ways, each reading its own row; the table "
             "never chooses for the paper. **depends** marks a verdict that changes with the reading.", "",
             "| claim | dataset | setting | on our runs | on the paper's numbers |", "|---|---|---|---|---|"]
    printed = {}
    if paper_table is not None and len(paper_table):
        printed = {(r.claim, r.dataset, r.reading_label): _met(r.paper_reading)
                   for r in paper_table.itertuples(index=False)}
    for (claim, dataset, setting), rows in labelled.groupby(["claim", "dataset", "setting"], sort=False):
        ours = dict(zip(rows["reading_label"], rows["holds"]))
        paper = {label: printed.get((claim, dataset, label), "") for label in ours}
        lines.append(f"| {claim} | {dataset} | {setting} | {_outcomes(ours)} | {_outcomes(paper)} |")
    return lines


def _outcomes(by_reading: dict[str, str]) -> str:
    """'label: outcome; …', marked **depends** when two readings reach different verdicts."""
    shown = "; ".join(f"{label}: {outcome}" for label, outcome in by_reading.items() if outcome)
    decided = set(by_reading.values()) - {"", "untestable", "not printed"}
    return shown + (" — **depends**" if len(decided) > 1 else "")


def _columns(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(dataset, setting) columns of one paper's panel, measured datasets first, those without runs last. A
    dataset without runs, and a claim's one setting (nominal = effective ε, or no DP method), share one column
    per dataset (setting '')."""
    unmeasured = _unmeasured(rows)
    pairs = list(dict.fromkeys(_column_key(d, s, unmeasured) for d, s in zip(rows["dataset"], rows["setting"])))
    return [p for p in pairs if p[0] not in unmeasured] + [p for p in pairs if p[0] in unmeasured]


def _column_key(dataset: str, setting: str, unmeasured: set[str]) -> tuple[str, str]:
    return (dataset, "") if dataset in unmeasured or setting in (L1_SETTING, NO_DP) else (dataset, setting)


def _unmeasured(rows: pd.DataFrame) -> set[str]:
    """Paper datasets this run has no runs of. The formal rows ('accounting', 'ε audit') need none, and keep a
    column per setting."""
    runs = rows.assign(has=(rows["grid_points"].fillna("").astype(str) != "")
                       | rows["dataset_kind"].astype(str).str.startswith("no data")).groupby("dataset")["has"].any()
    return set(runs.index[~runs])


SETTING_LABELS = {NOMINAL: "nominal ε", EQUAL_EFFECTIVE: "equal effective ε", REFERENCE_CODE: "reference code (not DP)",
                  L1_SETTING: "ε = effective", NO_DP: "no DP method", FINE_TUNED: "fine-tuned encoder"}
KIND_LABELS = {"substitute": "substitute", "synthetic": "synthetic"}


def _column_label(dataset: str, setting: str, kind: str = "", unmeasured: set[str] = frozenset()) -> str:
    """Every column names its dataset, what kind it is and its setting (two columns of one dataset differ)."""
    if dataset == "—":
        return "no dataset\n" + SETTING_LABELS.get(setting, setting)
    head = dataset + (f" ({KIND_LABELS[kind]})" if kind in KIND_LABELS else "")
    tail = "no data here" if dataset in unmeasured else SETTING_LABELS.get(setting, setting)
    return "\n".join(textwrap.wrap(head, 14) + textwrap.wrap(tail, 14))


# The word in each cell says what the verdict means (a cell never reads "no" for "not shown").
WORDS = {"holds": "holds", "not shown": "not\nshown", "contradicted": "contra-\ndicted", "untestable": "untest-\nable"}


def verdict_figure(table: pd.DataFrame) -> Any:
    """One panel per paper: claims (rows, by id, their full text in a legend beside) × dataset and setting
    (columns), each cell coloured and labelled by its verdict."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    table = table.assign(row_name=row_names(table))
    papers = [p for p in ("DPNR", "CAPE", "FEDERATE") if p in set(table["paper"])]
    order = {name: (list(CLAIMS).index(c), i) for i, (name, c) in enumerate(zip(table["row_name"], table["claim"]))}
    layout = {p: (sorted(set(table.loc[table["paper"] == p, "row_name"]), key=order.__getitem__),
                  _columns(table[table["paper"] == p])) for p in papers}
    n_columns = max(len(cols) for _, cols in layout.values())
    legend_width = 4.6
    width = 1.2 + 0.95 * n_columns + legend_width
    heights = [0.5 * len(claims) + 1.3 for claims, _ in layout.values()]
    figure = Figure(figsize=(width, sum(heights) + 1.0), layout="constrained")
    axes = figure.subplots(len(papers), 2, squeeze=False, height_ratios=heights,
                           width_ratios=[width - legend_width, legend_width])
    for (ax, text_ax), paper in zip(axes, papers):
        claims, columns = layout[paper]
        rows = table[table["paper"] == paper]
        kinds = dict(zip(rows["dataset"], rows["dataset_kind"]))
        unmeasured = _unmeasured(rows)
        keys = [_column_key(d, s, unmeasured) for d, s in zip(rows["dataset"], rows["setting"])]
        for i, claim in enumerate(claims):
            for j, column in enumerate(columns):
                hit = rows[(rows["row_name"] == claim) & pd.Series([k == column for k in keys], index=rows.index)]
                outcome = hit["holds"].iloc[0] if len(hit) else None
                ax.add_patch(_cell(j, i, VERDICT_COLOURS.get(outcome, "white")))
                ax.text(j + 0.5, i + 0.5, WORDS.get(outcome, "") if outcome else "–", ha="center", va="center",
                        fontsize=6.5, color="white" if outcome in ("holds", "contradicted") else "black")
        ax.set_xlim(0, len(columns))
        ax.set_ylim(len(claims), 0)
        ax.set_xticks([j + 0.5 for j in range(len(columns))],
                      [_column_label(d, s, kinds.get(d, ""), unmeasured) for d, s in columns], fontsize=6.5)
        ax.xaxis.tick_top()
        ax.set_yticks([i + 0.5 for i in range(len(claims))], claims, fontsize=8)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title(paper, loc="left", fontsize=10, fontweight="bold")
        text_ax.axis("off")
        text_ax.set_ylim(len(claims), 0)
        text_ax.set_xlim(0, 1)
        for i, claim in enumerate(claims):
            text = CLAIMS[claim.split(" ", 1)[0]].text
            text_ax.text(0, i + 0.5, f"{claim}: " + "\n".join(textwrap.wrap(text, 58)),
                         va="center", ha="left", fontsize=6.5)
    handles = [Patch(facecolor=VERDICT_COLOURS[o], edgecolor="#777777", label=f"{o}: {MEANINGS[o].split(';')[0]}")
               for o in OUTCOMES]
    handles.append(Patch(facecolor="white", edgecolor="#777777", label="–: no row (the claim is not about it)"))
    figure.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False, fontsize=7)
    figure.suptitle("Do the papers' claims hold on our runs?", fontsize=10)
    return figure


def _cell(x: float, y: float, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.04, y + 0.06), 0.92, 0.88, facecolor=colour, edgecolor="#777777", linewidth=0.5)


def write_verdict_figure(table: pd.DataFrame, out_prefix: str | Path) -> list[Path]:
    from privtext.report.artefacts.common import save_figure

    return save_figure(verdict_figure(table), out_prefix)


def claims_catalogue(published: pd.DataFrame | None) -> str:
    """docs/claims.md's table of every claim: its quote, where it is printed, how it is read, its margins and
    why (``tests/test_claims.py`` keeps the page equal to this)."""
    from privtext.claims.context import SETTINGS, ClaimContext
    from privtext.claims.table import paper_dataset_inputs

    inputs = paper_dataset_inputs(published)
    lines = ["| claim | quote | where | reading | margin: why |", "|---|---|---|---|---|"]
    for claim in CLAIMS.values():
        tag = " (added)" if claim.added else ""
        if claim.formal is not None:
            where = claim.source.split(f"{claim.paper}, ", 1)[-1] + " (no data: the accounting or the ε audit)"
            quote = " … ".join(f"“{q}”" for q in claim.quote).replace("|", "\\|")
            lines.append(f"| {claim.id}{tag} | {quote} | {where} | {claim.reading} | none (a formal check) |")
            continue
        for sentence in (claim, *claim.variants):
            datasets = sentence.datasets if sentence is not claim else claim.datasets
            readings = ([(a.label, a) for a in claim.alternatives] if sentence is claim and claim.alternatives
                        else [("", sentence)])
            for label, how in readings:
                margins: dict[str, str] = {}
                for dataset in datasets:
                    for part in how.build(ClaimContext(inputs, dataset, SETTINGS[claim.dp][0])):
                        if part.reading.margin > 0:
                            margins.setdefault(f"{part.reading.margin:.4g}", part.reading.margin_reason)
                margin = "<br>".join(f"{m}: {why}" for m, why in margins.items()) or "none (superiority or trend)"
                where = (sentence.source.split(f"{claim.paper}, ", 1)[-1]
                         + (f" ({', '.join(datasets)})" if datasets else ""))
                quote = " … ".join(f"“{q}”" for q in sentence.quote).replace("|", "\\|")
                name = f"{claim.id}{tag}" + (f", reading '{label}'" if label else "")
                lines.append(f"| {name} | {quote} | {where} | {how.reading} | {margin} |")
    return "\n".join(lines)


CATALOGUE_MARKERS = ("<!-- claims-catalogue:start -->", "<!-- claims-catalogue:end -->")


def update_catalogue(page: Path, published: pd.DataFrame | None) -> None:
    """Rewrite the marked block of ``page`` (docs/claims.md) with :func:`claims_catalogue`."""
    start, end = CATALOGUE_MARKERS
    text = page.read_text()
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    page.write_text(f"{before}{start}\n{claims_catalogue(published)}\n{end}{after}")


if __name__ == "__main__":  # python -m privtext.claims.report [published.csv [docs/claims.md]]
    import sys

    from privtext.report.artefacts.common import normalise_published

    root = Path(__file__).resolve().parents[3]
    csv = Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "paper_results" / "published.csv"
    update_catalogue(Path(sys.argv[2]) if len(sys.argv) > 2 else root / "docs" / "claims.md",
                     normalise_published(pd.read_csv(csv)))
