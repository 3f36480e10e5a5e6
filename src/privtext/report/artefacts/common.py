"""Shared pieces of the paper artefacts: the measures accessor, seed summaries, the published-value join,
table writing (csv + md + tex) and one matplotlib style with one colour per method.

Everything here reads saved results only (STYLE: analysis never retrains). Our accuracies are fractions;
tables show them in the paper's unit (percent for DPNR and FEDERATE, fractions for CAPE).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from privtext.methods import METHODS
from privtext.methods.spec import GRID_PARAMS, TARGET, MethodSpec
from privtext.measures.selection import summarise_over_seeds

# --- vocabulary ---------------------------------------------------------------------------------------

TEXT_COLUMNS = ("study", "dataset", "encoder", "method", "privacy_layer", "run_dir", "measure", "split",
                "attribute", "attacker", "group")
# One column per grid parameter of any method (the method specs are the one list of them).
PARAM_COLUMNS = tuple(f"param_{name}" for name in GRID_PARAMS)
PARAM_TEXT = {f"param_{name}": param.label for name, param in GRID_PARAMS.items()}
# The attribute a one-model-per-attribute point's adversary alone targeted (a study's `target`, CAPE Table 3): text,
# NaN where the adversaries covered every attribute or the method has none.
TARGET_COLUMN = f"param_{TARGET}"
NUMERIC_COLUMNS = ("seed", "epsilon_nominal", "epsilon_effective", "representation_dim", "train_seconds", "value")

# Our dataset id -> the id used in published.csv. Our `ag` is the NER rebuild (other persons, other
# documents), so it must not be matched with the DPNR authors' AG numbers.
PAPER_DATASET = {"ag_dpnr": "ag", "ag": None}
DATASET_LABELS = {
    "tp_us": "TP-US", "ag_dpnr": "AG", "ag": "AG (NER rebuild)", "blog": "BLOG", "tp_uk": "TP-UK",
    "adult": "Adult", "celeba": "CelebA", "twitter": "Twitter", "bios": "Bias in Bios", "demo": "demo (synthetic)",
}
DATASET_ORDER = ("tp_us", "ag_dpnr", "ag", "blog", "tp_uk", "twitter", "bios", "adult", "celeba", "demo")


@dataclass(frozen=True)
class MethodStyle:
    """How every table and figure shows a method: its label, and its colour and marker in figures."""

    label: str
    colour: str
    marker: str


# Rows of the papers' tables that are no method of the registry, each shown after a method: FEDERATE's "Random"
# (the majority rate), beside MAJORITY.
REPORT_ONLY_ROWS: dict[str, tuple[str, MethodStyle]] = {"random": ("majority", MethodStyle("Random", "#999999", "x"))}
# What a method whose spec names no colour or marker gets: Okabe–Ito colours (colour-blind safe) and markers,
# starting from a hash of its name, so the choice does not depend on the Python session.
DEFAULT_COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000")
DEFAULT_MARKERS = ("o", "s", "^", "v", "<", ">", "D", "d", "p", "P", "X", "*", "h", "H", "8", "x", "1", "2", "3", "4")


def method_styles(specs: Mapping[str, MethodSpec]) -> dict[str, MethodStyle]:
    """The style of every method of ``specs`` and of each report-only row, in report order: the registry's.

    What a spec declares (``label``, ``colour``, ``marker``) is kept. A label left out is the method's name; a
    colour or marker left out is the first (colour, marker) pair, from a start chosen by the name's sha256, that
    no spec declares and no earlier method took, so no two methods look alike in a figure."""
    order: list[str] = []
    for name in specs:
        order += [name, *(row for row, (after, _) in REPORT_ONLY_ROWS.items() if after == name)]
    order += [row for row in REPORT_ONLY_ROWS if row not in order]
    declared = {name: (spec.label, spec.colour, spec.marker) for name, spec in specs.items()}
    declared.update({row: (s.label, s.colour, s.marker) for row, (_, s) in REPORT_ONLY_ROWS.items()})
    taken = {(colour, marker) for _, colour, marker in declared.values() if colour and marker}
    styles = {}
    for name in order:
        label, colour, marker = declared[name]
        if not (colour and marker):
            start = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
            colours = [colour] if colour else _rotated(DEFAULT_COLOURS, start)
            markers = [marker] if marker else _rotated(DEFAULT_MARKERS, start // len(DEFAULT_COLOURS))
            free = [(c, m) for c in colours for m in markers if (c, m) not in taken]
            if not free:
                raise ValueError(f"method {name!r}: every default (colour, marker) pair is taken; give its "
                                 "MethodSpec a colour and a marker of its own")
            colour, marker = free[0]
            taken.add((colour, marker))
        styles[name] = MethodStyle(label or name, colour, marker)
    return styles


def _rotated(values: Sequence[str], start: int) -> list[str]:
    start %= len(values)
    return [*values[start:], *values[:start]]


# Every table and figure takes a method's place, label, colour and marker from here: the method registry's order
# and specs, and a default for what a spec leaves out (docs/extending.md, "A method").
METHOD_STYLES = method_styles(METHODS)
METHOD_ORDER = tuple(METHOD_STYLES)
METHOD_LABELS = {name: style.label for name, style in METHOD_STYLES.items()}
PALETTE = {name: style.colour for name, style in METHOD_STYLES.items()}
MARKERS = {name: style.marker for name, style in METHOD_STYLES.items()}
FIGURE_STYLE = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8, "xtick.labelsize": 8,
    "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False,
    "axes.spines.right": False, "lines.linewidth": 1.5, "lines.markersize": 5, "errorbar.capsize": 2,
}
FIGURE_DPI = 150

GREEK = {"ε": r"$\varepsilon$", "μ": r"$\mu$", "λ": r"$\lambda$", "±": r"$\pm$", "Δ": r"$\Delta$",
         "−": "-", "→": r"$\rightarrow$", "≤": r"$\leq$", "≥": r"$\geq$", "–": "--", "—": "---",
         "·": r"$\cdot$"}


def dataset_label(dataset: str) -> str:
    return DATASET_LABELS.get(dataset, dataset)


def method_label(method: str, labels: Mapping[str, str] | None = None) -> str:
    return (labels or {}).get(method, METHOD_LABELS.get(method, method))


def paper_dataset(dataset: str) -> str | None:
    """The published.csv dataset id matching ours, or None when the paper has no such data."""
    return PAPER_DATASET.get(dataset, dataset)


def ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    """``values`` (deduplicated) in ``order`` first, then the rest sorted."""
    values = list(dict.fromkeys(v for v in values if v != ""))
    return [v for v in order if v in values] + sorted(v for v in values if v not in order)


def number_text(value: float) -> str:
    """Short text of a hyper-parameter value: 1.0 -> '1', 0.05 -> '0.05'."""
    return f"{float(value):g}"


# --- inputs ----------------------------------------------------------------------------------------------

@dataclass
class ArtefactInputs:
    """Everything an artefact may read: saved measures, dataset metadata, published numbers."""

    measures: pd.DataFrame
    metas: Mapping[str, Mapping[str, Any]]
    published: pd.DataFrame | None = None
    tsne_inputs: Sequence[tuple] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)  # per-build memo of filtered frames

    def pick(self, measure: str, dataset: str | None = None, split: str | None = None, attribute: str | None = None,
             attacker: str | None = None, group: str | None = None, **conditions: Any) -> pd.DataFrame:
        """:func:`pick` on the rows of one measure (and dataset), split out once per build: filtering the
        whole long table for every cell is what made tables slow."""
        key = ("rows", measure, dataset)
        if key not in self.cache:
            if "by_measure" not in self.cache:
                self.cache["by_measure"] = dict(tuple(self.measures.groupby("measure", sort=False)))
            rows = self.cache["by_measure"].get(measure, self.measures.iloc[0:0])
            self.cache[key] = rows if dataset is None else rows[rows["dataset"] == dataset]
        return pick(self.cache[key], measure, split, attribute, attacker, group, **conditions)

    def datasets(self, wanted: Sequence[str] | None = None) -> list[str]:
        """Datasets present in the measures (in paper order), restricted to ``wanted`` when given."""
        present = ordered(self.measures["dataset"].unique(), DATASET_ORDER)
        return [d for d in present if wanted is None or d in wanted]

    def attributes(self, dataset: str) -> list[str]:
        """Private attributes of ``dataset``: from its meta, else those seen in the measures."""
        meta = self.metas.get(dataset) or {}
        if meta.get("private_attributes"):
            return list(meta["private_attributes"])
        seen = self.measures.loc[self.measures["dataset"] == dataset, "attribute"]
        return ordered(seen.unique(), ())

    def attribute_kind(self, dataset: str, attribute: str) -> str:
        kinds = (self.metas.get(dataset) or {}).get("attribute_kinds") or {}
        return kinds.get(attribute, "entity" if attribute.startswith("entity") else "demographic")

    def value_names(self, dataset: str, attribute: str) -> list[str]:
        names = ((self.metas.get(dataset) or {}).get("private_attributes") or {}).get(attribute)
        if names:
            return list(names)
        rows = self.measures[(self.measures["dataset"] == dataset) & (self.measures["attribute"] == attribute)]
        return ordered(rows["group"].unique(), ())

    def n_labels(self, dataset: str) -> int | None:
        names = (self.metas.get(dataset) or {}).get("label_names")
        return len(names) if names else None


def prepare_measures(measures: pd.DataFrame | None, studies: Sequence[str] = ()) -> pd.DataFrame:
    """Normalise a concatenation of measures.csv files: text columns '' instead of NaN, every parameter
    column present (``param_mu`` NaN -> 0, no word dropout; ``param_target`` text, NaN where no single attribute
    was targeted), rows of ``studies`` only when the table names them, and a run shared by several studies
    counted once."""
    frame = pd.DataFrame() if measures is None else measures.copy()
    for column in TEXT_COLUMNS:
        # plain object columns: row filtering copies them much faster than arrow-backed strings
        frame[column] = (frame[column].fillna("").astype(str).astype(object) if column in frame.columns
                         else pd.Series("", index=frame.index, dtype=object))
    for column in (*PARAM_COLUMNS, *NUMERIC_COLUMNS):
        frame[column] = pd.to_numeric(frame[column], errors="coerce") if column in frame.columns else np.nan
    frame["param_mu"] = frame["param_mu"].fillna(0.0)
    frame[TARGET_COLUMN] = (frame[TARGET_COLUMN].map(_attribute_text).astype(object) if TARGET_COLUMN in frame.columns
                            else pd.Series(np.nan, index=frame.index, dtype=object))
    if studies and frame["study"].isin(studies).any():
        frame = frame[frame["study"].isin(studies)]
    # The same grid point requested by two studies is one run folder: keep one copy of its measures.
    identity = [c for c in frame.columns if c not in ("study", "train_seconds")]
    return frame.drop_duplicates(subset=identity).reset_index(drop=True)


def _attribute_text(value: Any) -> Any:
    """An attribute name as text (a CSV reader makes ``7`` of an attribute called ``7``, ``7.0`` beside NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return np.nan
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def param_columns(frame: pd.DataFrame) -> list[str]:
    """The hyper-parameter columns (``param_*``) of a measures table."""
    return [c for c in frame.columns if c.startswith("param_")]


def pick(
    frame: pd.DataFrame,
    measure: str,
    split: str | None = None,
    attribute: str | None = None,
    attacker: str | None = None,
    group: str | None = None,
    **conditions: Any,
) -> pd.DataFrame:
    """Rows of one measure; ``None`` leaves a key unfiltered. Extra ``column=value`` conditions match floats
    with a tolerance (``column=None`` keeps rows where the column is NaN)."""
    mask = frame["measure"] == measure
    for column, value in (("split", split), ("attribute", attribute), ("attacker", attacker), ("group", group)):
        if value is not None:
            mask &= frame[column] == value
    for column, value in conditions.items():
        mask &= equals(frame[column], value)
    return frame[mask]


def equals(column: pd.Series, value: Any) -> pd.Series:
    """Element-wise ``column == value`` with float tolerance; ``value=None`` matches NaN."""
    if value is None:
        return column.isna()
    if isinstance(value, str):
        return column == value
    return pd.Series(np.isclose(pd.to_numeric(column, errors="coerce"), float(value), rtol=1e-9, atol=1e-12),
                     index=column.index)


def _summary(per_row: pd.DataFrame) -> dict[str, float]:
    """Mean, std, 95% bootstrap interval and number of seeds of a (seed, value) table, from the one
    summariser every table uses (:func:`privtext.measures.selection.summarise_over_seeds`)."""
    per_row = per_row.dropna(subset=["value"])
    if per_row.empty:
        return {"ours_mean": np.nan, "ours_std": np.nan, "ours_ci_low": np.nan, "ours_ci_high": np.nan, "n_seeds": 0}
    summary = summarise_over_seeds(per_row, ["value"], seed_col="seed").iloc[0]
    return {"ours_mean": float(summary["mean"]), "ours_std": float(summary["std"]),
            "ours_ci_low": float(summary["ci_low"]), "ours_ci_high": float(summary["ci_high"]),
            "n_seeds": int(summary["n"])}


def stats_of(frame: pd.DataFrame, scale: float = 1.0) -> dict[str, float]:
    """Mean, std, 95% interval and number of seeds of one cell's rows (each seed counts once)."""
    if frame.empty:
        return _summary(pd.DataFrame(columns=["seed", "value"]))
    return _summary(pd.DataFrame({"seed": frame["seed"], "value": frame["value"] * scale}))


def paired_difference(frame: pd.DataFrame, reference: pd.DataFrame, scale: float = 1.0) -> dict[str, float]:
    """``frame − reference`` paired by seed (summary of the per-seed differences); with no shared seed,
    the difference of the means, with no spread or interval."""
    a = (frame["value"] * scale).groupby(frame["seed"]).mean().dropna()
    b = (reference["value"] * scale).groupby(reference["seed"]).mean().dropna()
    shared = a.index.intersection(b.index)
    if len(shared):
        return _summary(pd.DataFrame({"seed": shared, "value": (a[shared] - b[shared]).to_numpy()}))
    unpaired = {**_summary(pd.DataFrame(columns=["seed", "value"])), "n_seeds": 0}
    if len(a) and len(b):
        unpaired["ours_mean"] = float(a.mean() - b.mean())
    return unpaired


# --- published values --------------------------------------------------------------------------------------

PUBLISHED_TEXT_COLUMNS = ("paper", "table", "dataset", "method", "setting", "metric")
PUBLISHED_COLUMNS = (*PUBLISHED_TEXT_COLUMNS, "value", "std")


def normalise_published(published: pd.DataFrame | None, source: str | Path = "published_results") -> pd.DataFrame | None:
    """published.csv with '' for empty text cells and numeric value/std. A file lacking one of its columns
    (``paper, table, dataset, method, setting, metric, value, std``) is a ValueError naming ``source`` and the
    columns, not a table in which no paper value is ever found."""
    if published is None:
        return None
    missing = [column for column in PUBLISHED_COLUMNS if column not in published.columns]
    if missing:
        raise ValueError(
            f"{source}: published results lack column(s) {missing}; expected {', '.join(PUBLISHED_COLUMNS)} "
            f"(found {[str(c) for c in published.columns][:12]})"
        )
    frame = published.copy()
    for column in PUBLISHED_TEXT_COLUMNS:
        frame[column] = frame[column].fillna("").astype(str).str.strip()
    for column in ("value", "std"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def paper_value(
    published: pd.DataFrame | None,
    paper: str,
    tables: str | Sequence[str],
    dataset: str,
    method: str,
    setting: str,
    metric: str | Sequence[str],
) -> tuple[float, float]:
    """(value, std) published for our ``dataset`` (mapped to the paper's id), or (NaN, NaN)."""
    paper_id = paper_dataset(dataset)
    if published is None or paper_id is None:
        return np.nan, np.nan
    tables = [tables] if isinstance(tables, str) else list(tables)
    metrics = [metric] if isinstance(metric, str) else list(metric)
    hit = published[(published["paper"] == paper) & published["table"].isin(tables)
                    & (published["dataset"] == paper_id) & (published["method"] == method)
                    & (published["setting"] == setting) & published["metric"].isin(metrics)]
    if hit.empty:
        return np.nan, np.nan
    return float(hit["value"].iloc[0]), float(hit["std"].iloc[0])


# --- tables ------------------------------------------------------------------------------------------------

CELL_COLUMNS = ("column", "metric", "ours_mean", "ours_std", "ours_ci_low", "ours_ci_high", "n_seeds", "paper", "paper_std")


@dataclass
class TableArtefact:
    """A paper table: ``cells`` is the long numeric form (one row per table cell, in display order), the
    display pivots it into the paper's layout with rows labelled by ``row_keys`` and columns ``columns``."""

    title: str
    cells: pd.DataFrame
    row_keys: list[str]
    columns: list[str]
    digits: int = 2
    notes: list[str] = field(default_factory=list)
    info_columns: list[str] = field(default_factory=list)  # per-row text shown after the row labels
    show_paper: bool = True
    column_digits: dict[str, int] = field(default_factory=dict)  # per-column override of ``digits``
    unit: str = "percent"  # unit of the numeric cells, written to the csv unless a cell sets its own
    seeds_note: bool = True  # say "mean ± std over N seeds" under the table

    def display(self) -> pd.DataFrame:
        """The paper-layout table of formatted cells ("mean ± std"), each followed by its paper column
        when any published value fills it."""
        header = [*self.row_keys, *self.info_columns]
        if self.cells.empty:
            return pd.DataFrame(columns=[*header, *self.columns])
        cells = self.cells.copy()
        for key in header:
            cells[key] = cells[key].fillna("").astype(str)
        rows = list(dict.fromkeys(map(tuple, cells[self.row_keys].to_numpy().tolist())))
        by_key = {(tuple(r[k] for k in self.row_keys), r["column"]): r for r in cells.to_dict("records")}
        with_paper = [c for c in self.columns
                      if self.show_paper and cells.loc[cells["column"] == c, "paper"].notna().any()]
        records = []
        for row in rows:
            record = dict(zip(self.row_keys, row))
            first = next((r for (k, _), r in by_key.items() if k == row), {})
            record.update({c: first.get(c, "") for c in self.info_columns})
            for column in self.columns:
                cell = by_key.get((row, column), {})
                digits = self.column_digits.get(column, self.digits)
                record[column] = mean_std_text(cell.get("ours_mean", np.nan), cell.get("ours_std", np.nan), digits)
                if column in with_paper:
                    record[f"{column} (paper)"] = mean_std_text(cell.get("paper", np.nan),
                                                                cell.get("paper_std", np.nan), digits)
            records.append(record)
        order = header + [x for c in self.columns for x in ([c, f"{c} (paper)"] if c in with_paper else [c])]
        return pd.DataFrame(records, columns=order)


def cells_frame(records: list[dict[str, Any]], label_columns: Sequence[str]) -> pd.DataFrame:
    """Long cell table with the label columns first and every numeric cell column present."""
    columns = [*label_columns, *CELL_COLUMNS]
    frame = pd.DataFrame(records)
    for column in CELL_COLUMNS:
        if column not in frame.columns:
            frame[column] = np.nan
    extra = [c for c in frame.columns if c not in columns]
    return frame.reindex(columns=[*columns, *extra])


def mean_std_text(mean: float, std: float, digits: int) -> str:
    """'85.53 ± 0.21', '85.53' when std is undefined, '' when there is no value."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    text = f"{mean:.{digits}f}"
    if std is not None and not (isinstance(std, float) and math.isnan(std)):
        text += f" ± {std:.{digits}f}"
    return text


def seeds_note(cells: pd.DataFrame) -> str:
    n = pd.to_numeric(cells.get("n_seeds", pd.Series(dtype=float)), errors="coerce").dropna()
    n = n[n > 0]
    if n.empty:
        return "No seeds were available for any cell."
    low, high = int(n.min()), int(n.max())
    return f"Cells are mean ± std over seeds ({low} seed{'s' if high > 1 else ''} per cell)." if low == high else \
        f"Cells are mean ± std over seeds ({low}–{high} seeds per cell)."


def markdown_table(frame: pd.DataFrame) -> str:
    """GitHub-flavoured markdown of a table of text cells (no tabulate dependency)."""
    def clean(value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return ""
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(clean(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(clean(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def latex_escape(text: Any) -> str:
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    for char, replacement in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                              ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"),
                              ("^", r"\textasciicircum{}")):
        text = text.replace(char, replacement)
    for char, replacement in GREEK.items():
        text = text.replace(char, replacement)
    return text


def latex_table(frame: pd.DataFrame, caption: str, notes: Sequence[str]) -> str:
    """A booktabs ``table`` of text cells with the caption and notes (needs \\usepackage{booktabs})."""
    lines = [r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{" + "l" * max(1, len(frame.columns)) + "}", r"\toprule",
             " & ".join(latex_escape(c) for c in frame.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(v) for v in row) + r" \\" for row in frame.itertuples(index=False)]
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\caption{" + latex_escape(" ".join([caption.rstrip(".") + ".", *notes])) + "}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_table(table: TableArtefact, out_prefix: str | Path) -> list[Path]:
    """Write ``out_prefix``.csv (long numeric cells), .md and .tex (the paper layout)."""
    out_prefix = str(out_prefix)
    Path(out_prefix).parent.mkdir(parents=True, exist_ok=True)
    display = table.display()
    notes = list(table.notes)
    if table.cells.empty or table.cells["ours_mean"].isna().all():
        notes.insert(0, "No data: the saved measures hold none of the runs this table needs.")
    elif table.seeds_note:
        notes.insert(0, seeds_note(table.cells))
    paths = [Path(f"{out_prefix}.csv"), Path(f"{out_prefix}.md"), Path(f"{out_prefix}.tex")]
    cells = table.cells.copy()
    cells["unit"] = cells["unit"].fillna(table.unit) if "unit" in cells.columns else table.unit
    cells.to_csv(paths[0], index=False)
    markdown = [f"# {table.title}", "", markdown_table(display), "", *[f"- {note}" for note in notes]]
    paths[1].write_text("\n".join(markdown) + "\n")
    paths[2].write_text(latex_table(display, table.title, notes))
    return paths


# --- figures -----------------------------------------------------------------------------------------------

def new_figure(n_rows: int, n_cols: int, panel_size: tuple[float, float] = (3.6, 2.8), **kwargs: Any):
    """A matplotlib Figure (no pyplot, no global backend) with an ``n_rows × n_cols`` grid of axes."""
    from matplotlib.figure import Figure

    # at least 5.5 inches wide so a one-panel figure still has room for its title and legend
    width = max(panel_size[0] * max(1, n_cols), 5.5)
    figure = Figure(figsize=(width, panel_size[1] * max(1, n_rows) + 0.6), layout="constrained")
    axes = figure.subplots(max(1, n_rows), max(1, n_cols), squeeze=False, **kwargs)
    return figure, axes


def panel_grid(n_panels: int, max_cols: int = 3, panel_size: tuple[float, float] = (3.6, 2.8), **kwargs: Any):
    """A figure with ``n_panels`` axes wrapped into rows of at most ``max_cols``; returns (figure, axes list)."""
    n_panels = max(1, n_panels)
    n_cols = min(n_panels, max_cols)
    n_rows = -(-n_panels // n_cols)
    figure, axes = new_figure(n_rows, n_cols, panel_size, **kwargs)
    flat = list(axes.flat)
    for ax in flat[n_panels:]:
        ax.set_visible(False)
    return figure, flat[:n_panels]


def empty_panel(ax: Any, message: str) -> None:
    """Mark a panel that has no data, so a missing run is visible rather than silent."""
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="#555555",
            wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def method_legend(figure: Any, methods: Sequence[str], labels: Mapping[str, str] | None = None,
                  styles: Mapping[str, Mapping[str, Any]] | None = None, **kwargs: Any) -> None:
    """One legend for the whole figure, one entry per method in a fixed order, outside the panels;
    ``styles`` overrides a method's line style (e.g. a dashed reference line without marker)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], **{"color": PALETTE.get(m, "#333333"), "marker": MARKERS.get(m, "o"),
                                 "label": method_label(m, labels), **(styles or {}).get(m, {})})
               for m in methods]
    if handles:
        per_row = max(1, int(figure.get_figwidth() / 1.4))  # ~1.4 inches per legend entry
        figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), per_row), frameon=False,
                      **kwargs)


def figure_title(figure: Any, text: str) -> None:
    """Suptitle wrapped to the figure's width (constrained layout does not wrap, so a long title on a narrow
    figure would be cut off)."""
    import textwrap

    characters_per_inch = 11.0  # ~10 pt sans-serif
    width = max(30, int(figure.get_figwidth() * characters_per_inch))
    figure.suptitle("\n".join(textwrap.wrap(text, width)))


def save_figure(figure: Any, out_prefix: str | Path) -> list[Path]:
    """Write ``out_prefix``.png (150 dpi) and .pdf."""
    out_prefix = str(out_prefix)
    Path(out_prefix).parent.mkdir(parents=True, exist_ok=True)
    paths = [Path(f"{out_prefix}.png"), Path(f"{out_prefix}.pdf")]
    figure.savefig(paths[0], dpi=FIGURE_DPI)
    figure.savefig(paths[1])
    return paths
