"""The papers' claims checked one by one (docs/claims.md): per (claim, dataset, setting) a row with the claim's
words, how they are read, two separate answers (does it hold on our runs? do our runs match the paper's printed
numbers?), the paper's own numbers scored by the same reading, and the conditions the row was measured under.

Every comparison is a *part*: a paired difference ``a − b`` over seeds, or a trend (Spearman's ρ between a swept
parameter and a measure, one ρ per seed). Each part's interval combines the spread over seeds with test-set
sampling (:mod:`privtext.claims.inference`, through the per-example records of :mod:`privtext.claims.evidence`; without
them, as in unit tests on hand-made measures, the interval is over seeds alone). :func:`privtext.claims.verdicts.judge`
turns the parts and their readings into one verdict per row.

Settings: ``nominal ε`` runs DPNR and CAPE with their published min-max layer (Lap(1/ε), a (D·ε)-DP release);
``equal effective ε`` swaps in ``dpnr_calibrated``/``cape_calibrated`` (Lap(D/ε)), so every DP method in the
comparison is ε-DP at the paper's ε. Claims whose DP methods all use the L1 layer (Noise, FEDERATE) have one
row, ``nominal = effective ε``; claims without a DP method have one row, ``no DP method``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from privtext.report.artefacts.common import ArtefactInputs, paper_dataset
from privtext.claims.inference import Estimate, crossed_estimate, missing_estimate
from privtext.methods.spec import TRAINING_RULE
from privtext.training.loop import CONVERGENCE_RULE
from privtext.claims.verdicts import (ACCURACY_MARGIN, ACCURACY_MARGIN_REASON, MIN_SEEDS, Reading, judge,
                               paper_reading)

NOMINAL, EQUAL_EFFECTIVE, L1_SETTING, NO_DP = "nominal ε", "equal effective ε", "nominal = effective ε", "no DP method"
REFERENCE_CODE = "reference code's mechanism (not DP)"
# The method that plays DPNR or CAPE in each setting: its honest-ε twin (Lap(D/ε)) at equal effective ε, and
# the reference code's mechanism (one noise scalar per example / one vector per model), which is not DP.
TWINS = {EQUAL_EFFECTIVE: {"dpnr": "dpnr_calibrated", "cape": "cape_calibrated", "cape_dp": "cape_dp_calibrated"},
         REFERENCE_CODE: {"dpnr": "dpnr_code", "cape": "cape_code"}}
CODE_METHODS = frozenset(TWINS[REFERENCE_CODE].values())
DPNR_ATTACKER = "mlp"  # DPNR's attacker (2 layers, 512 hidden)
CAPE_ATTACKER = "mlp"  # CAPE reported its joint adversary; we use a fresh attacker (docs/methods.md)
LEAKAGE_ATTACKER = "sklearn_mlp"  # FEDERATE's Leakage
RT = 1.0  # FEDERATE's main tables select at relaxation threshold 1 point
RT_SWEEP = (0.0, 1.0, 3.0, 10.0)  # FEDERATE Tables 1, 4–6
MIN_TREND_POINTS = 3
PAPER_DATASETS = {
    "dpnr": ("tp_us", "ag_dpnr", "blog"),
    "cape": ("tp_uk",),
    "federate": ("twitter", "bios", "adult", "celeba"),
}
SYNTHETIC = ("demo",)
# A paper's claims apply on the datasets where its methods ran (the method or an ablation of it)
PAPER_METHODS = {"DPNR": ("dpnr",), "CAPE": ("cape",), "FEDERATE": ("federate", "noise")}
# The private attributes of paper datasets we may not have built (their published rows still get scored).
PAPER_ATTRIBUTES = {"tp_uk": ("gender", "age", "location")}
COLUMNS = ("claim", "paper", "claim_text", "quote", "source", "dataset", "dataset_kind", "setting", "reading",
           "margin_reason", "measurement", "estimate", "ci_low", "ci_high", "df", "n_seeds", "p_value", "holds",
           "paper_value", "matches_paper", "paper_reading", "epsilon_effective", "encoder", "train_rows",
           "attacker", "seeds", "converged", "reason", "parts", "per_seed", "grid_points")

# --- readings ------------------------------------------------------------------------------------------------

HIGHER, LOWER = Reading("superiority", 1), Reading("superiority", -1)
NOT_LOWER = Reading("non-inferiority", 1, ACCURACY_MARGIN, ACCURACY_MARGIN_REASON)
NOT_HIGHER = Reading("non-inferiority", -1, ACCURACY_MARGIN, ACCURACY_MARGIN_REASON)
COMPARABLE = Reading("equivalence", 1, ACCURACY_MARGIN, ACCURACY_MARGIN_REASON)

Measured = tuple[dict[int, np.ndarray], tuple[str, ...]]  # per-seed replicates, run folders


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    text: str  # the claim in one line
    quote: str  # the paper's words, verbatim, or '' where no copy of the text could be checked
    source: str  # where the claim is made
    build: Callable[["ClaimContext"], list["Part"]]
    dp: str = "minmax"  # 'minmax' (a row per setting), 'l1' (one row, nominal = effective) or 'none'
    datasets: Callable[[ArtefactInputs], list[str]] | None = None  # default: every dataset measured
    # a row with the reference code's mechanism too, where the verdict turns on it (D1, C2: accuracy at ε)
    code_variant: bool = False

    @property
    def settings(self) -> tuple[str, ...]:
        return SETTINGS[self.dp] + ((REFERENCE_CODE,) if self.code_variant else ())


@dataclass(frozen=True)
class Part:
    """One comparison of a claim: its reading, its estimate, the paper's printed value where there is one."""

    label: str
    reading: Reading
    estimate: Estimate
    paper_value: float = math.nan
    runs: tuple[str, ...] = ()
    attacker: str = ""
    blocker: str = ""  # why the part cannot be judged ('' when it can)


@dataclass
class ClaimContext:
    """What a claim's builder sees: the inputs (and per-example evidence, if any), one dataset, one setting."""

    inputs: ArtefactInputs
    dataset: str
    setting: str
    evidence: Any = None  # privtext.claims.evidence.ExampleEvidence, or None: intervals over seeds alone

    def method(self, name: str) -> str:
        """The method that plays ``name`` in this setting (:data:`TWINS`)."""
        return TWINS.get(self.setting, {}).get(name, name)

    def attributes(self) -> list[str]:
        return self.inputs.attributes(self.dataset) or list(PAPER_ATTRIBUTES.get(self.dataset, ()))

    def measured(self, rows: pd.DataFrame) -> Measured:
        """Per seed, the mean over ``rows`` of that seed (attributes/groups left open) of each row's replicates."""
        rows = rows.dropna(subset=["value"])
        per_seed = {}
        for seed, seed_rows in rows.groupby("seed"):
            arrays = [self.evidence.replicates(row) if self.evidence is not None else np.array([row.value])
                      for row in seed_rows.itertuples(index=False)]
            per_seed[int(seed)] = np.mean(arrays, axis=0)
        return per_seed, tuple(sorted(rows["run_dir"].unique()))

    def series(self, method: str, measure: str, split: str | None = "test", attribute: str | None = None,
               attacker: str | None = None, group: str | None = None, **params: float) -> Measured:
        """``measure`` of ``method`` at ``params`` (μ = 0 unless given) per seed."""
        conditions = {"method": self.method(method), "param_mu": params.pop("mu", 0.0),
                      **{f"param_{k}": v for k, v in params.items()}}
        return self.measured(self.inputs.pick(measure, self.dataset, split, attribute, attacker, group, **conditions))


# --- parts ---------------------------------------------------------------------------------------------------

def difference(label: str, a: Measured, b: Measured, reading: Reading, *, paper_value: float = math.nan,
               attacker: str = "") -> Part:
    """``a − b`` paired by seed (and by bootstrap resample of the shared test set)."""
    (values_a, runs_a), (values_b, runs_b) = a, b
    shared = sorted(set(values_a) & set(values_b))
    if not shared:
        side = "either side" if not values_a and not values_b else ("the first" if not values_a else "the second")
        return Part(label, reading, missing_estimate(), paper_value, runs_a + runs_b, attacker,
                    f"no saved runs of {side} of the comparison (or no shared seeds); run the claims study here")
    estimate = crossed_estimate({s: values_a[s] - values_b[s] for s in shared})
    return Part(label, reading, estimate, paper_value, runs_a + runs_b, attacker)


def _spearman_columns(x: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Spearman's ρ between ``x`` and each column of ``matrix`` (points × resamples); NaN for a constant column."""
    ranks = stats.rankdata(matrix, axis=0)
    x_ranks = stats.rankdata(x)[:, None]
    x_c, r_c = x_ranks - x_ranks.mean(), ranks - ranks.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x_c * r_c).sum(axis=0) / np.sqrt((x_c**2).sum() * (r_c**2).sum(axis=0))


def trend(label: str, points: Mapping[float, Measured], reading: Reading, attacker: str = "") -> Part:
    """Spearman's ρ between the swept value and the measure, one ρ per seed over the points that seed has (and
    per resample of the test set); the claimed direction is the sign of ρ."""
    points = {x: p for x, p in points.items() if p[0]}
    runs = tuple(r for _, p in sorted(points.items()) for r in p[1])
    if len(points) < MIN_TREND_POINTS:
        return Part(label, reading, missing_estimate(), runs=runs, attacker=attacker, blocker=(
            f"a trend needs at least {MIN_TREND_POINTS} swept values with saved runs, have {len(points)} "
            f"({', '.join(f'{x:g}' for x in sorted(points)) or 'none'})"))
    seeds = sorted({s for values, _ in points.values() for s in values})
    per_seed = {}
    for seed in seeds:
        xs = [x for x in sorted(points) if seed in points[x][0]]
        if len(xs) < MIN_TREND_POINTS:
            continue
        matrix = np.vstack([points[x][0][seed] for x in xs])
        if np.ptp(matrix[:, 0]) == 0:
            continue  # ρ is undefined for a measure constant over the sweep
        per_seed[seed] = _spearman_columns(np.asarray(xs, dtype=float), matrix)
    if not per_seed:
        return Part(label, reading, missing_estimate(), runs=runs, attacker=attacker,
                    blocker="the measure is constant over the sweep in every seed (ρ undefined)")
    return Part(label, reading, crossed_estimate(per_seed), runs=runs, attacker=attacker)


# --- measures in the papers' vocabulary ------------------------------------------------------------------------

def privacy_kind(ctx: ClaimContext) -> str:
    kinds = {ctx.inputs.attribute_kind(ctx.dataset, a) for a in ctx.attributes()}
    return "entity" if "entity" in kinds else "demographic"


def empirical_privacy(ctx: ClaimContext, method: str, **params: float) -> Measured:
    """DPNR's empirical privacy (1 − attacker accuracy, or 1 − micro-F1 on entities), ``mlp`` attacker."""
    return ctx.series(method, f"empirical_privacy_{privacy_kind(ctx)}", attacker=DPNR_ATTACKER, **params)


def accuracy(ctx: ClaimContext, method: str, **params: float) -> Measured:
    return ctx.series(method, "accuracy", **params)


def _published(ctx: ClaimContext, paper: str, table: str, method: str, metric: str, setting: str | None = None,
               scale: float = 0.01) -> float:
    """A published number in our unit (fractions: the papers print percent), mean over matching rows."""
    published, paper_id = ctx.inputs.published, paper_dataset(ctx.dataset)
    if published is None or paper_id is None:
        return math.nan
    hit = published[(published["paper"] == paper) & (published["table"] == table) & (published["dataset"] == paper_id)
                    & (published["method"] == method) & (published["metric"] == metric)]
    if setting is not None:
        hit = hit[hit["setting"].str.startswith(setting)]
    return float(hit["value"].mean()) * scale if len(hit) else math.nan


# --- DPNR ---------------------------------------------------------------------------------------------------

DPNR_EPSILON = 0.05  # DPNR's default ε (Tables 4–7)
DPNR_TABLE4 = f"eps={DPNR_EPSILON:g};mu=0;relative_to=nonpriv"


def _dpnr_delta(ctx: ClaimContext, method: str, metric: str) -> float:
    return _published(ctx, "dpnr", "table4", method, f"{metric}_delta", DPNR_TABLE4)


# DPNR's NON-PRIV is DPNR's own architecture without noise (Table 4): the difference is the noise alone.
DPNR_BASE = "dpnr_nonpriv"


def d1(ctx: ClaimContext) -> list[Part]:
    dpnr = ctx.method("dpnr")
    return [
        difference(f"empirical privacy, {dpnr} − {DPNR_BASE}", empirical_privacy(ctx, "dpnr", epsilon=DPNR_EPSILON),
                   empirical_privacy(ctx, DPNR_BASE), HIGHER,
                   paper_value=_dpnr_delta(ctx, "dpnr", "empirical_privacy"), attacker=DPNR_ATTACKER),
        difference(f"test accuracy, {dpnr} − {DPNR_BASE}", accuracy(ctx, "dpnr", epsilon=DPNR_EPSILON),
                   accuracy(ctx, DPNR_BASE), NOT_LOWER, paper_value=_dpnr_delta(ctx, "dpnr", "main_accuracy")),
    ]


def d2(ctx: ClaimContext) -> list[Part]:
    paper = _dpnr_delta(ctx, "dpnr", "empirical_privacy") - _dpnr_delta(ctx, "adv", "empirical_privacy")
    return [difference(f"empirical privacy, {ctx.method('dpnr')} − adv (λ = 1)",
                       empirical_privacy(ctx, "dpnr", epsilon=DPNR_EPSILON),
                       empirical_privacy(ctx, "adv", **{"lambda": 1.0}), HIGHER, paper_value=paper,
                       attacker=DPNR_ATTACKER)]


def d3(ctx: ClaimContext) -> list[Part]:
    paper = (_published(ctx, "dpnr", "table4", "nonpriv", "empirical_privacy", "")
             + _dpnr_delta(ctx, "dpnr", "empirical_privacy")
             - _published(ctx, "dpnr", "table4", "majority", "empirical_privacy", ""))
    return [difference(f"empirical privacy, {ctx.method('dpnr')} − majority",
                       empirical_privacy(ctx, "dpnr", epsilon=DPNR_EPSILON), empirical_privacy(ctx, "majority"),
                       COMPARABLE, paper_value=paper, attacker=DPNR_ATTACKER)]


def _swept(ctx: ClaimContext, method: str, param: str, fixed: Mapping[str, float], measure: str) -> list[float]:
    """The values of ``param`` with saved ``measure`` rows of ``method`` at ``fixed`` (the sweep to trend over)."""
    rows = ctx.inputs.pick(measure, ctx.dataset, "test", method=ctx.method(method),
                           **{f"param_{k}": v for k, v in fixed.items()})
    return sorted(pd.to_numeric(rows[f"param_{param}"], errors="coerce").dropna().unique())


def _values(swept: Sequence[float]) -> str:
    """'{0, 0.3, 0.8}' for a sweep's label; says so when no run of the sweep is saved."""
    return "{" + ", ".join(f"{v:g}" for v in swept) + "}" if len(swept) else "{} (no runs saved)"


DPNR_MU = (0.1, 0.3, 0.5, 0.8)  # DPNR Table 3


def d4(ctx: ClaimContext) -> list[Part]:
    mus = _swept(ctx, "dpnr", "mu", {"epsilon": 1.0}, f"empirical_privacy_{privacy_kind(ctx)}")
    privacy = {mu: empirical_privacy(ctx, "dpnr", epsilon=1.0, mu=mu) for mu in mus}
    top = mus[-1] if mus and mus[-1] > 0 else DPNR_MU[-1]  # the largest μ run (the paper's 0.8 if none)
    paper = (_published(ctx, "dpnr", "table3", "dpnr", "main_accuracy", f"eps=1;mu={top:g}")
             - _published(ctx, "dpnr", "table2", "dpnr", "main_accuracy", "eps=1;mu=0"))
    return [trend(f"Spearman ρ(μ, empirical privacy), {ctx.method('dpnr')} ε = 1, μ ∈ {_values(mus)}", privacy,
                  HIGHER, attacker=DPNR_ATTACKER),
            difference(f"test accuracy, {ctx.method('dpnr')} ε = 1, μ = {top:g} − μ = 0",
                       accuracy(ctx, "dpnr", epsilon=1.0, mu=top), accuracy(ctx, "dpnr", epsilon=1.0), NOT_LOWER,
                       paper_value=paper)]


def d5(ctx: ClaimContext) -> list[Part]:
    epsilons = _swept(ctx, "dpnr", "epsilon", {"mu": 0.0}, f"empirical_privacy_{privacy_kind(ctx)}")
    privacy = {eps: empirical_privacy(ctx, "dpnr", epsilon=eps) for eps in epsilons}
    return [trend(f"Spearman ρ(ε, empirical privacy), {ctx.method('dpnr')}, ε ∈ {_values(epsilons)}", privacy,
                  LOWER, attacker=DPNR_ATTACKER)]


def entity_present_accuracy(ctx: ClaimContext, method: str, **params: float) -> Measured:
    """Attacker accuracy on the documents that mention each entity (DPNR Table 5), mean over entities."""
    return ctx.series(method, "attack_subgroup_accuracy", attacker=DPNR_ATTACKER, group="present", **params)


def d6(ctx: ClaimContext) -> list[Part]:
    dpnr = entity_present_accuracy(ctx, "dpnr", epsilon=DPNR_EPSILON)
    ours = _published(ctx, "dpnr", "table5", "dpnr", "attacker_accuracy_present")
    return [difference(f"attacker accuracy on entity presence, {ctx.method('dpnr')} − {other}", dpnr,
                       entity_present_accuracy(ctx, other, **params), LOWER, attacker=DPNR_ATTACKER,
                       paper_value=ours - _published(ctx, "dpnr", "table5", PUBLISHED_AS.get(other, other),
                                                     "attacker_accuracy_present"))
            for other, params in ((DPNR_BASE, {}), ("adv", {"lambda": 1.0}))]


def subgroup_gap(ctx: ClaimContext, method: str, **params: float) -> Measured:
    """Test accuracy gap between the demographic subgroups (DPNR Tables 6–7), mean over attributes."""
    return ctx.series(method, "accuracy_gap", **params)


def d7(ctx: ClaimContext) -> list[Part]:
    return [difference(f"subgroup accuracy gap, {ctx.method('dpnr')} − {DPNR_BASE}",
                       subgroup_gap(ctx, "dpnr", epsilon=DPNR_EPSILON), subgroup_gap(ctx, DPNR_BASE), LOWER)]


# --- CAPE ---------------------------------------------------------------------------------------------------

CAPE_SETTING = {"epsilon": 0.1, "lambda": 1.0}  # CAPE Table 3
# CAPE's Base, Adv. and DP are CAPE's own architecture and hyper-parameters without noise and/or adversary.
CAPE_ABLATIONS = (("cape_base", {}), ("cape_adv", {"lambda": 1.0}), ("cape_dp", {"epsilon": 0.1}))
# Our ablations under the names published.csv gives the papers' rows.
PUBLISHED_AS = {"dpnr_nonpriv": "nonpriv", "cape_base": "nonpriv", "cape_adv": "adv", "cape_dp": "dpnr"}


def c1(ctx: ClaimContext) -> list[Part]:
    parts = []
    for attribute in ctx.attributes():
        cape = ctx.series("cape", "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER, **CAPE_SETTING)
        for other, params in CAPE_ABLATIONS:
            parts.append(difference(
                f"attacker accuracy on {attribute}, {ctx.method('cape')} − {ctx.method(other)}", cape,
                ctx.series(other, "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER, **params), LOWER,
                attacker=CAPE_ATTACKER,
                paper_value=_published(ctx, "cape", "table3", "cape", "attacker_accuracy", f"private={attribute}", 1.0)
                - _published(ctx, "cape", "table3", PUBLISHED_AS[other], "attacker_accuracy", f"private={attribute}",
                             1.0)))
    return parts


def c2(ctx: ClaimContext) -> list[Part]:
    paper = (_published(ctx, "cape", "table3", "cape", "target_accuracy", scale=1.0)
             - _published(ctx, "cape", "table3", "nonpriv", "target_accuracy", scale=1.0))
    return [difference(f"test accuracy, {ctx.method('cape')} − cape_base", accuracy(ctx, "cape", **CAPE_SETTING),
                       accuracy(ctx, "cape_base"), NOT_LOWER, paper_value=paper)]


C3_ATTRIBUTES = {"gender": HIGHER, "location": HIGHER, "age": NOT_HIGHER}  # "barely above chance": ≤ margin


def c3(ctx: ClaimContext) -> list[Part]:
    """Attacker advantage over the majority rate on Base, on TP-UK's own attributes (6-bin age)."""
    parts = []
    for attribute, reading in C3_ATTRIBUTES.items():
        if attribute not in ctx.attributes():
            continue
        attack = ctx.series("cape_base", "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER)
        majority = ctx.series("cape_base", "attack_majority_rate", attribute=attribute, attacker=CAPE_ATTACKER)
        parts.append(difference(f"attacker − majority rate on {attribute} (cape_base)", attack, majority, reading,
                                attacker=CAPE_ATTACKER))
    return parts


def paper_only(paper: str) -> Callable[[ArtefactInputs], list[str]]:
    """The claim is about the paper's own datasets and attributes only (C3: TP-UK's 6-bin age)."""
    return lambda inputs: [d for d in inputs.datasets() if d in PAPER_DATASETS[paper]]


# --- FEDERATE -----------------------------------------------------------------------------------------------

FEDERATE_TABLE = {"twitter": "table1a", "bios": "table1b", "celeba": "table2", "adult": "table3"}
FEDERATE_FAMILY = ("nonpriv", "adv", "multiadv", "inlp", "noise", "federate")


def _chosen(ctx: ClaimContext, rt: float = RT) -> pd.DataFrame:
    """Per-seed rows of each method's setting chosen on dev at relaxation threshold ``rt`` (FEDERATE §5.1)."""
    from privtext.report.artefacts.federate import runs_frame, selected_runs

    key = ("claims_chosen", ctx.dataset, rt)
    if key not in ctx.inputs.cache:
        ctx.inputs.cache[key] = selected_runs(runs_frame(ctx.inputs, ctx.dataset), rt, FEDERATE_FAMILY)
    return ctx.inputs.cache[key]


def _protected(ctx: ClaimContext) -> str | None:
    from privtext.report.artefacts.federate import protected_attribute

    return protected_attribute(ctx.inputs, ctx.dataset)


# a selected run's column -> (measure, split, attacker, on the protected attribute?)
SELECTED_MEASURES = {"test_accuracy": ("accuracy", "test", None, False),
                     "test_fairness": ("fairness", "test", None, True),
                     "test_leakage": ("attack_accuracy", "test", LEAKAGE_ATTACKER, True),
                     "mdl_kbits": ("mdl_kbits", None, None, True)}


def selected(ctx: ClaimContext, method: str, column: str, rt: float = RT) -> Measured:
    """Per seed, ``column``'s measure of the ``method`` run chosen at ``rt``."""
    chosen = _chosen(ctx, rt)
    chosen = chosen[chosen["method"] == method]
    measure, split, attacker, protected = SELECTED_MEASURES[column]
    rows = ctx.inputs.pick(measure, ctx.dataset, split, _protected(ctx) if protected else None, attacker,
                           method=method)
    if chosen.empty or rows.empty:
        return {}, ()
    params = [c for c in chosen.columns if c.startswith("param_")]
    keys = ["method", *params, "seed"]
    wanted = chosen[keys].drop_duplicates().astype({c: float for c in [*params, "seed"]})
    return ctx.measured(rows.astype({"seed": float}).merge(wanted, on=keys, how="inner"))


FEDERATE_METRIC = {"test_accuracy": "accuracy", "test_leakage": "leakage", "mdl_kbits": "mdl"}
WORDS = {"test_fairness": "fairness gap (TPR-gap/GRMS)", "test_leakage": f"leakage ({LEAKAGE_ATTACKER})",
         "test_accuracy": "test accuracy", "mdl_kbits": "MDL (kbits)"}


def _federate_published(ctx: ClaimContext, method: str, column: str) -> float:
    table = FEDERATE_TABLE.get(paper_dataset(ctx.dataset) or "")
    if table is None:
        return math.nan
    metric = ("grms" if table == "table1b" else "tpr_gap") if column == "test_fairness" else FEDERATE_METRIC[column]
    return _published(ctx, "federate", table, method, metric, "rt=1.0", 1.0 if metric == "mdl" else 0.01)


def compare_selected(ctx: ClaimContext, a: str, b: str, column: str, reading: Reading) -> Part:
    return difference(f"{WORDS[column]} at RT = {RT:g}, {a} − {b}", selected(ctx, a, column), selected(ctx, b, column),
                      reading, paper_value=_federate_published(ctx, a, column) - _federate_published(ctx, b, column),
                      attacker=LEAKAGE_ATTACKER if column == "test_leakage" else "")


def f1(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "federate", other, "test_fairness", LOWER)
            for other in ("nonpriv", "noise", "adv", "inlp")]


def f2(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "federate", other, column, reading)
            for other in ("adv", "multiadv") for column, reading in (("test_leakage", LOWER), ("mdl_kbits", HIGHER))]


def f3(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, other, "nonpriv", "test_leakage", COMPARABLE) for other in ("adv", "multiadv")]


def f4(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "noise", "federate", "test_leakage", HIGHER),
            compare_selected(ctx, "noise", "federate", "test_accuracy", LOWER),
            compare_selected(ctx, "noise", "federate", "test_fairness", HIGHER)]


def f5(ctx: ClaimContext) -> list[Part]:
    gap = {rt: selected(ctx, "federate", "test_fairness", rt) for rt in RT_SWEEP}
    low, high = RT_SWEEP[0], RT_SWEEP[-1]
    return [trend(f"Spearman ρ(RT, test fairness gap of the federate model chosen), "
                  f"RT ∈ {{{', '.join(f'{r:g}' for r in RT_SWEEP)}}}", gap, LOWER),
            difference(f"test accuracy, federate chosen at RT = {high:g} − at RT = {low:g}",
                       selected(ctx, "federate", "test_accuracy", high), selected(ctx, "federate", "test_accuracy", low),
                       NOT_LOWER)]


def f6(ctx: ClaimContext) -> list[Part]:
    epsilons = _swept(ctx, "noise", "epsilon", {"mu": 0.0}, "attack_accuracy")
    leakage = {eps: ctx.series("noise", "attack_accuracy", attribute=_protected(ctx), attacker=LEAKAGE_ATTACKER,
                               epsilon=eps) for eps in epsilons}
    return [trend(f"Spearman ρ(ε, leakage ({LEAKAGE_ATTACKER})), noise, ε ∈ {_values(epsilons)}", leakage, HIGHER,
                  attacker=LEAKAGE_ATTACKER)]


def f7(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "federate", "inlp", "test_accuracy", HIGHER),
            compare_selected(ctx, "federate", "inlp", "test_fairness", LOWER),
            compare_selected(ctx, "federate", "inlp", "test_leakage", LOWER)]


def f8(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, private, other, "test_fairness", LOWER)
            for private in ("noise", "federate") for other in ("nonpriv", "adv")]


def text_datasets(inputs: ArtefactInputs) -> list[str]:
    """Datasets encoded from text: word dropout (D4) has no meaning on feature datasets such as Adult."""
    encoders = inputs.measures.groupby("dataset")["encoder"].first()
    return [d for d in inputs.datasets() if encoders.get(d) != "features"]


def entity_datasets(inputs: ArtefactInputs) -> list[str]:
    return [d for d in inputs.datasets()
            if any(inputs.attribute_kind(d, a) == "entity" for a in inputs.attributes(d))]


_DPNR = "Lyu, He & Li (2020), DPNR"
_CAPE = "Plant, Giuffrida & Gkatzia (2021), CAPE"
_FEDERATE = "Maheshwari, Denis, Keller & Bellet (2022), FEDERATE"
CLAIMS: dict[str, Claim] = {c.id: c for c in (
    Claim("D1", "DPNR", "DPNR largely reduces leakage without significantly lowering main accuracy",
          "DPNR largely reduces privacy leakage without significantly sacrificing the main task performance",
          f"{_DPNR}, abstract; Table 4", d1, code_variant=True),
    Claim("D2", "DPNR", "DPNR gives more empirical privacy than ADV", "", f"{_DPNR}, Table 4", d2),
    Claim("D3", "DPNR", "DPNR's empirical privacy is comparable to MAJORITY", "", f"{_DPNR}, Table 4", d3),
    Claim("D4", "DPNR", "word dropout μ raises privacy at small accuracy cost",
          "we show that masking words via dropout can further enhance privacy",
          f"{_DPNR}, abstract; Table 3, §3.4", d4, datasets=text_datasets),
    Claim("D5", "DPNR", "smaller ε gives more empirical privacy", "", f"{_DPNR}, Figure 3", d5),
    Claim("D6", "DPNR", "DPNR lowers attacker accuracy on entity presence below NON-PRIV and ADV", "",
          f"{_DPNR}, Table 5", d6, datasets=entity_datasets),
    Claim("D7", "DPNR", "DP noise narrows the accuracy gap between demographic subgroups",
          "a robust target model, which also helps for model fairness over various demographic variables",
          f"{_DPNR}, abstract; Tables 6–7", d7),
    Claim("C1", "CAPE", "CAPE beats Base, Adv. and DP in privacy for every private attribute",
          "more effective in reducing private information leakage than either single intervention",
          f"{_CAPE}, abstract; Table 3", c1),
    Claim("C2", "CAPE", "CAPE's task accuracy is comparable to Base", "", f"{_CAPE}, Table 3", c2, code_variant=True),
    Claim("C3", "CAPE", "gender and location are recoverable, age is barely above chance", "", f"{_CAPE}, §5", c3,
          dp="none", datasets=paper_only("cape")),
    Claim("F1", "FEDERATE", "at RT=1 FEDERATE is fairer than Unconstrained, Noise, Adversarial, INLP", "",
          f"{_FEDERATE}, Table 1, App. D.6", f1, dp="l1"),
    Claim("F2", "FEDERATE", "FEDERATE has lower Leakage and higher MDL than every adversarial method", "",
          f"{_FEDERATE}, §5.1", f2, dp="l1"),
    Claim("F3", "FEDERATE", "purely adversarial methods leak about as much as Unconstrained", "",
          f"{_FEDERATE}, §5.1", f3, dp="none"),
    Claim("F4", "FEDERATE", "Noise is slightly less private than FEDERATE, with worse accuracy and fairness", "",
          f"{_FEDERATE}, §5.1 (App. D.5 on Adult reads otherwise)", f4, dp="l1"),
    Claim("F5", "FEDERATE", "raising RT gives fairer models at negligible accuracy cost", "",
          f"{_FEDERATE}, Fig. 2, Tables 4–6", f5, dp="l1"),
    Claim("F6", "FEDERATE", "ε correlates with empirical leakage", "", f"{_FEDERATE}, Fig. 4", f6, dp="l1"),
    Claim("F7", "FEDERATE", "FEDERATE beats INLP on accuracy, fairness and privacy", "", f"{_FEDERATE}, §5.1", f7,
          dp="l1"),
    Claim("F8", "FEDERATE", "privacy and fairness reinforce each other",
          "FEDERATE consistently improves upon previous methods, and thus suggest that privacy and fairness can "
          "positively reinforce each other", f"{_FEDERATE}, abstract", f8, dp="l1"),
)}
SETTINGS = {"minmax": (NOMINAL, EQUAL_EFFECTIVE), "l1": (L1_SETTING,), "none": (NO_DP,)}


# --- the table ------------------------------------------------------------------------------------------------

def _number(value: float) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def dataset_kind(claim: Claim, dataset: str) -> str:
    if dataset in SYNTHETIC:
        return "synthetic"
    return "the paper's" if dataset in PAPER_DATASETS[claim.paper.lower()] else "substitute"


def _matches(part: Part) -> str:
    """Do our runs match the paper's printed difference: inside our interval, or within the margin of our
    estimate? '' where the paper printed no such difference or we have no interval."""
    est, paper = part.estimate, part.paper_value
    if not (math.isfinite(paper) and math.isfinite(est.low)):
        return ""
    near = part.reading.margin > 0 and abs(paper - est.mean) <= part.reading.margin
    return "matches" if est.low <= paper <= est.high or near else "differs"


def _conditions(ctx: ClaimContext, parts: Sequence[Part]) -> dict[str, str]:
    runs = list(dict.fromkeys(r for p in parts for r in p.runs))
    index = ctx.inputs.cache.get("run_index")
    if index is None:
        index = ctx.inputs.measures.drop_duplicates("run_dir").set_index("run_dir")
        ctx.inputs.cache["run_index"] = index
    known = index.loc[[r for r in runs if r in index.index]]
    dp = known[known["epsilon_effective"].notna()]
    epsilon = [f"{m}: {', '.join(f'{e:.3g}' for e in sorted(g['epsilon_effective'].unique()))}"
               for m, g in dp.groupby("method")]
    epsilon += [f"{m}: not DP (the reference code's mechanism)" for m in sorted(set(known["method"]) & CODE_METHODS)]
    epsilon = "; ".join(epsilon) if epsilon else ("no DP method" if len(known) else "")
    info = [ctx.evidence.run_info(r) for r in runs] if ctx.evidence is not None else []
    rows = sorted({(i["n_train"], i.get("n_train_available")) for i in info if i.get("n_train") is not None},
                  key=lambda pair: pair[0])
    converged = [i.get("converged") for i in info]
    seeds = sorted({s for p in parts for s in p.estimate.per_seed})
    return {
        "epsilon_effective": epsilon,
        "encoder": ", ".join(sorted(known["encoder"].dropna().unique())) if len(known) else "",
        "train_rows": ", ".join(_train_rows(*r) for r in rows) if rows else ("not recorded" if info else ""),
        "attacker": ", ".join(sorted({p.attacker for p in parts if p.attacker})) or "none",
        "seeds": ", ".join(map(str, seeds)),
        "converged": ("" if not info else "not recorded" if any(c is None for c in converged)
                      else "yes" if all(converged) else "no"),
    }


def _train_rows(used: int, available: int | None) -> str:
    """'10000 of 32561 (capped)' where the training cap left rows out, else '32561'."""
    return f"{used} of {available} (capped)" if available is not None and used < available else str(used)


def _per_seed(parts: Sequence[Part]) -> str:
    """Per part: the per-seed values and the interval's two variance parts, so anyone can recompute it."""
    return json.dumps([{"part": p.label, "values": {str(s): round(v, 6) for s, v in p.estimate.per_seed.items()},
                        "seed_variance": p.estimate.seed_variance, "test_variance": p.estimate.test_variance,
                        "df": p.estimate.df} for p in parts], allow_nan=True, ensure_ascii=False)


def _unconverged(ctx: ClaimContext, part: Part) -> Part:
    """A part resting on a run that did not converge, or took fewer optimiser steps than the training rule
    asks (:meth:`privtext.training.loop.TrainingSettings.required_steps`), cannot be judged: it says so."""
    if part.blocker or ctx.evidence is None:
        return part
    info = {r: ctx.evidence.run_info(r) for r in part.runs}
    short = [r for r, i in info.items()
             if i.get("required_steps") is not None and (i.get("optimizer_steps") or 0) < i["required_steps"]]
    stale = [r for r, i in info.items() if i.get("converged") is False]
    if short:
        return dataclasses.replace(part, blocker=f"{len(short)} of its {len(part.runs)} runs took fewer optimiser "
                                                 f"steps than the training rule asks ({TRAINING_RULE['min_epochs']} "
                                                 f"epochs of at least {TRAINING_RULE['min_steps_per_epoch']} steps); "
                                                 "train them longer")
    if stale:
        return dataclasses.replace(part, blocker=f"{len(stale)} of its {len(part.runs)} runs did not converge "
                                                 f"({CONVERGENCE_RULE}); train them longer")
    return part


def _row(claim: Claim, ctx: ClaimContext, parts: list[Part], note: str = "") -> dict[str, Any]:
    if not parts:
        parts = [Part("no measurement", HIGHER, missing_estimate(),
                      blocker="the dataset has none of the attributes this claim is about")]
    parts = [_unconverged(ctx, p) for p in parts]
    judgement = judge([(p.label, p.reading, p.estimate, p.blocker) for p in parts], min_seeds=MIN_SEEDS)
    index = next(i for i, j in enumerate(judgement.parts) if j.outcome == judgement.outcome)
    deciding, decided = parts[index], judgement.parts[index]
    p_value = decided.p_opposite if judgement.outcome == "contradicted" else decided.p_holds
    matches = [(p.label, _matches(p)) for p in parts]
    differing = [label for label, m in matches if m == "differs"]
    summary = "; ".join(f"{p.label}: {_number(p.estimate.mean) or 'n/a'} [{_number(p.estimate.low)}, "
                        f"{_number(p.estimate.high)}] → {j.outcome}" for p, j in zip(parts, judgement.parts))
    return {
        "claim": claim.id, "paper": claim.paper, "claim_text": claim.text,
        "quote": f"“{claim.quote}”" if claim.quote else "no verbatim copy checked offline; the claim as the spec states it",
        "source": claim.source, "dataset": ctx.dataset, "dataset_kind": dataset_kind(claim, ctx.dataset),
        "setting": ctx.setting, "reading": "; ".join(f"{p.label}: {p.reading.describe()}" for p in parts),
        "margin_reason": "; ".join(dict.fromkeys(p.reading.margin_reason for p in parts if p.reading.margin_reason)),
        "measurement": deciding.label, "estimate": deciding.estimate.mean, "ci_low": deciding.estimate.low,
        "ci_high": deciding.estimate.high, "df": deciding.estimate.df, "n_seeds": deciding.estimate.n_seeds,
        "p_value": p_value, "holds": judgement.outcome, "paper_value": deciding.paper_value,
        "matches_paper": ("differs: " + "; ".join(differing) if differing
                          else "matches" if any(m == "matches" for _, m in matches) else ""),
        "paper_reading": paper_reading([(p.label, p.reading, p.paper_value) for p in parts]),
        **_conditions(ctx, parts),
        "reason": (note + " " if note else "") + judgement.reason, "parts": summary, "per_seed": _per_seed(parts),
        "grid_points": ";".join(dict.fromkeys(r for p in parts for r in p.runs)),
    }


def _unavailable_row(claim: Claim, ctx: ClaimContext) -> dict[str, Any]:
    """A paper dataset this run does not have: untestable, with the paper's own numbers still scored."""
    row = _row(claim, ctx, claim.build(ctx))
    row.update(holds="untestable", matches_paper="", reason=(
        f"not in this run: {ctx.dataset} is not available offline or was not selected (Trustpilot, Twitter and "
        "Bias in Bios need their files in raw_dir; CelebA, Blog and AG are offline). To settle it, run the claims "
        "study with it in `datasets`"))
    return row


def _ran(inputs: ArtefactInputs, prefixes: tuple[str, ...]) -> list[str]:
    """The measured datasets with runs of a method whose name starts with one of ``prefixes``."""
    pairs = inputs.measures[["dataset", "method"]].drop_duplicates()
    hits = set(pairs.loc[pairs["method"].str.startswith(prefixes), "dataset"])
    return [d for d in inputs.datasets() if d in hits]


def claims_table(inputs: ArtefactInputs, claims: Iterable[str] | None = None, evidence: Any = None) -> pd.DataFrame:
    """One row per (claim, dataset, setting), plus one row per paper dataset not measured (its published
    numbers scored). Reads saved measures (and, with ``evidence``, the runs' per-example test records)."""
    rows = []
    measured = inputs.datasets()
    # a paper's claims are judged where its methods ran (its claims study's datasets)
    ran_by_paper = {paper: _ran(inputs, prefixes) for paper, prefixes in PAPER_METHODS.items()}
    for claim in (CLAIMS[c] for c in (claims or CLAIMS)):
        ran = ran_by_paper[claim.paper]
        datasets = [d for d in (claim.datasets(inputs) if claim.datasets else measured) if d in ran]
        for dataset in datasets:
            for setting in claim.settings:
                ctx = ClaimContext(inputs, dataset, setting, evidence)
                rows.append(_row(claim, ctx, claim.build(ctx)))
        missing = [d for d in PAPER_DATASETS[claim.paper.lower()] if d not in ran]
        for dataset in missing:
            rows.append(_unavailable_row(claim, ClaimContext(inputs, dataset, SETTINGS[claim.dp][0], None)))
        if not datasets and not missing:
            ctx = ClaimContext(inputs, "—", SETTINGS[claim.dp][0], evidence)
            rows.append(_row(claim, ctx, [], "No dataset of this run has what the claim needs."))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def paper_readings(published: pd.DataFrame) -> pd.DataFrame:
    """Every claim on every paper dataset, scored on the paper's printed numbers alone (no runs needed)."""
    empty = pd.DataFrame(columns=["dataset", "measure", "method", "split", "attribute", "attacker", "group",
                                  "seed", "value", "run_dir", "encoder", "epsilon_effective"])
    from privtext.report.artefacts.common import prepare_measures

    inputs = ArtefactInputs(measures=prepare_measures(empty), metas={}, published=published)
    rows = []
    for claim in CLAIMS.values():
        for dataset in PAPER_DATASETS[claim.paper.lower()]:
            parts = claim.build(ClaimContext(inputs, dataset, SETTINGS[claim.dp][0]))
            rows.append({"claim": claim.id, "dataset": dataset,
                         "reading": "; ".join(f"{p.label}: {p.reading.describe()}" for p in parts),
                         "paper_values": "; ".join(f"{p.label} = {_number(p.paper_value) or 'not printed'}"
                                                   for p in parts),
                         "paper_reading": paper_reading([(p.label, p.reading, p.paper_value) for p in parts])
                         if parts else "not printed"})
    return pd.DataFrame(rows)
