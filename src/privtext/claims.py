"""The claims of SPEC §6 checked one by one: per (claim, dataset, setting) an estimate, its 95% interval over
seeds and a verdict (:mod:`privtext.verdicts`), from the saved measures of the claims study only.

Every comparison is a *part*: a paired difference over seeds (``a − b``, summarised with the one summariser,
:func:`privtext.selection.summarise_over_seeds`, with a paired t-test p-value beside it) or a trend (Spearman's
ρ between the swept parameter and the measure, one ρ per seed, summarised over seeds). A claim of several parts
(D1: more privacy *and* comparable accuracy) gets the verdict of its weakest part (:func:`combine`); its row shows
that deciding part's estimate and lists every part in ``parts``.

Two settings per claim with a DP method (SPEC §6): ``nominal ε`` runs DPNR and CAPE with their published
min-max layer (Lap(1/ε): (D·ε)-DP), ``equal effective ε`` swaps in ``dpnr_calibrated``/``cape_calibrated``
(Lap(D/ε)), so every DP method in the comparison is ε-DP at the paper's ε. Noise and FEDERATE use the L1 layer,
whose effective ε is its nominal ε, so their two rows use the same runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from privtext.artefacts.common import ArtefactInputs, ordered, paper_dataset
from privtext.selection import paired_test, summarise_over_seeds
from privtext.verdicts import COMPARABLE_MARGIN, Verdict, combine, verdict

NOMINAL, EQUAL_EFFECTIVE = "nominal ε", "equal effective ε"
# The honest-ε twin of each min-max method (the "equal effective ε" setting).
CALIBRATED = {"dpnr": "dpnr_calibrated", "cape": "cape_calibrated"}
DPNR_ATTACKER = "mlp"  # DPNR's attacker (2 layers, 512 hidden)
CAPE_ATTACKER = "mlp"  # CAPE reported its joint adversary; we use a fresh attacker (SPEC §1.3)
LEAKAGE_ATTACKER = "sklearn_mlp"  # FEDERATE's Leakage
RT = 1.0  # FEDERATE's main tables select at relaxation threshold 1 point
RT_SWEEP = (0.0, 1.0, 3.0, 10.0)  # FEDERATE Tables 1, 4–6
MIN_TREND_POINTS = 3
PAPER_DATASETS = {
    "dpnr": ("tp_us", "ag_dpnr", "blog"),
    "cape": ("tp_uk",),
    "federate": ("twitter", "bios", "adult", "celeba"),
}
COLUMNS = ("claim", "paper", "claim_text", "dataset", "setting", "measurement", "estimate", "ci_low", "ci_high",
           "n_seeds", "p_value", "paper_value", "verdict", "reason", "parts", "grid_points")


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    text: str
    build: Callable[["ClaimContext"], list["Part"]]
    uses_dp: bool = True  # a row per setting when a DP method enters the claim
    datasets: Callable[[ArtefactInputs], list[str]] | None = None  # default: every dataset measured


@dataclass(frozen=True)
class Part:
    """One comparison of a claim: its estimate with a 95% interval over seeds, and its verdict."""

    label: str
    estimate: float
    low: float
    high: float
    n_seeds: int
    verdict: Verdict
    p_value: float = math.nan
    paper_value: float = math.nan
    runs: tuple[str, ...] = ()


@dataclass
class ClaimContext:
    """What a claim's builder sees: the inputs, one dataset and one setting."""

    inputs: ArtefactInputs
    dataset: str
    setting: str
    notes: list[str] = field(default_factory=list)

    def method(self, name: str) -> str:
        """The method that plays ``name`` in this setting (its calibrated twin at equal effective ε)."""
        return CALIBRATED.get(name, name) if self.setting == EQUAL_EFFECTIVE else name

    def series(self, method: str, measure: str, split: str | None = "test", attribute: str | None = None,
               attacker: str | None = None, group: str | None = None, **params: float) -> tuple[pd.Series, tuple[str, ...]]:
        """Per-seed value of ``measure`` for ``method`` at ``params`` (μ = 0 unless given), averaged over the
        attributes/groups the filters leave open, and the run folders it came from."""
        conditions = {"method": self.method(method), "param_mu": params.pop("mu", 0.0),
                      **{f"param_{k}": v for k, v in params.items()}}
        rows = self.inputs.pick(measure, self.dataset, split, attribute, attacker, group, **conditions)
        rows = rows.dropna(subset=["value"])
        return rows.groupby("seed")["value"].mean(), tuple(sorted(rows["run_dir"].unique()))


# --- parts ---------------------------------------------------------------------------------------------------

def _missing(label: str, what: str) -> Part:
    return Part(label, math.nan, math.nan, math.nan, 0,
                Verdict("inconclusive", f"{label}: no saved runs of {what}; run the claims study on this dataset"))


def difference(label: str, a: tuple[pd.Series, tuple[str, ...]], b: tuple[pd.Series, tuple[str, ...]],
               direction: Any, *, margin: float | None = None, paper_value: float = math.nan) -> Part:
    """``a − b`` paired by seed: mean, bootstrap 95% interval of the per-seed differences, paired t-test."""
    (values_a, runs_a), (values_b, runs_b) = a, b
    shared = values_a.index.intersection(values_b.index)
    if not len(shared):
        side = "either side" if values_a.empty and values_b.empty else ("the first" if values_a.empty else "the second")
        return _missing(label, f"{side} of the comparison (or no shared seeds)")
    per_seed = (values_a[shared] - values_b[shared]).to_numpy(dtype=float)
    summary = summarise_over_seeds(pd.DataFrame({"seed": shared, "value": per_seed}), ["value"]).iloc[0]
    test = paired_test(values_a[shared].to_numpy(), values_b[shared].to_numpy())
    low, high = float(summary["ci_low"]), float(summary["ci_high"])
    judged = verdict(low, high, direction, int(summary["n"]), margin=margin)
    return Part(label, float(summary["mean"]), low, high, int(summary["n"]),
                Verdict(judged.outcome, f"{label}: {judged.reason}"),
                p_value=math.nan if test["t_pvalue"] is None else float(test["t_pvalue"]),
                paper_value=paper_value, runs=runs_a + runs_b)


def trend(label: str, points: Mapping[float, tuple[pd.Series, tuple[str, ...]]], direction: int) -> Part:
    """Spearman's ρ between the swept value and the measure, one ρ per seed over the points that seed has,
    summarised over seeds; the claimed direction is the sign of ρ."""
    points = {x: p for x, p in points.items() if not p[0].empty}
    runs = tuple(r for _, p in sorted(points.items()) for r in p[1])
    if len(points) < MIN_TREND_POINTS:
        return Part(label, math.nan, math.nan, math.nan, 0, Verdict(
            "inconclusive", f"{label}: a trend needs at least {MIN_TREND_POINTS} swept values with saved runs, "
                            f"have {len(points)} ({', '.join(f'{x:g}' for x in sorted(points)) or 'none'})"), runs=runs)
    frame = pd.DataFrame({x: s for x, (s, _) in points.items()})  # seeds × swept values
    rhos = []
    for seed, row in frame.iterrows():
        row = row.dropna()
        if len(row) >= MIN_TREND_POINTS and np.ptp(row.to_numpy()) > 0:
            rhos.append((seed, float(stats.spearmanr(row.index.to_numpy(dtype=float), row.to_numpy()).statistic)))
    if not rhos:
        return Part(label, math.nan, math.nan, math.nan, 0, Verdict(
            "inconclusive", f"{label}: the measure is constant over the sweep in every seed (ρ undefined)"), runs=runs)
    summary = summarise_over_seeds(pd.DataFrame(rhos, columns=["seed", "value"]), ["value"]).iloc[0]
    low, high = float(summary["ci_low"]), float(summary["ci_high"])
    judged = verdict(low, high, direction, int(summary["n"]))
    return Part(label, float(summary["mean"]), low, high, int(summary["n"]),
                Verdict(judged.outcome, f"{label}: {judged.reason}"), runs=runs)


# --- measures in the papers' vocabulary ------------------------------------------------------------------------

def privacy_kind(ctx: ClaimContext) -> str:
    kinds = {ctx.inputs.attribute_kind(ctx.dataset, a) for a in ctx.inputs.attributes(ctx.dataset)}
    return "entity" if "entity" in kinds else "demographic"


def empirical_privacy(ctx: ClaimContext, method: str, **params: float):
    """DPNR's empirical privacy (1 − attacker accuracy, or 1 − micro-F1 on entities), ``mlp`` attacker."""
    return ctx.series(method, f"empirical_privacy_{privacy_kind(ctx)}", attacker=DPNR_ATTACKER, **params)


def accuracy(ctx: ClaimContext, method: str, **params: float):
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


def d1(ctx: ClaimContext) -> list[Part]:
    dpnr = ctx.method("dpnr")
    return [
        difference(f"empirical privacy, {dpnr} − nonpriv", empirical_privacy(ctx, "dpnr", epsilon=DPNR_EPSILON),
                   empirical_privacy(ctx, "nonpriv"), 1, paper_value=_dpnr_delta(ctx, "dpnr", "empirical_privacy")),
        difference(f"test accuracy, {dpnr} − nonpriv (within ±{COMPARABLE_MARGIN:g})",
                   accuracy(ctx, "dpnr", epsilon=DPNR_EPSILON), accuracy(ctx, "nonpriv"), "comparable",
                   margin=COMPARABLE_MARGIN, paper_value=_dpnr_delta(ctx, "dpnr", "main_accuracy")),
    ]


def d2(ctx: ClaimContext) -> list[Part]:
    paper = _dpnr_delta(ctx, "dpnr", "empirical_privacy") - _dpnr_delta(ctx, "adv", "empirical_privacy")
    return [difference(f"empirical privacy, {ctx.method('dpnr')} − adv (λ = 1)",
                       empirical_privacy(ctx, "dpnr", epsilon=DPNR_EPSILON), empirical_privacy(ctx, "adv", **{"lambda": 1.0}),
                       1, paper_value=paper)]


def d3(ctx: ClaimContext) -> list[Part]:
    paper = (_published(ctx, "dpnr", "table4", "nonpriv", "empirical_privacy", "")
             + _dpnr_delta(ctx, "dpnr", "empirical_privacy")
             - _published(ctx, "dpnr", "table4", "majority", "empirical_privacy", ""))
    return [difference(f"empirical privacy, {ctx.method('dpnr')} − majority (within ±{COMPARABLE_MARGIN:g})",
                       empirical_privacy(ctx, "dpnr", epsilon=DPNR_EPSILON), empirical_privacy(ctx, "majority"),
                       "comparable", margin=COMPARABLE_MARGIN, paper_value=paper)]


def _swept(ctx: ClaimContext, method: str, param: str, fixed: Mapping[str, float], measure: str) -> list[float]:
    """The values of ``param`` with saved ``measure`` rows of ``method`` at ``fixed`` (the sweep to trend over)."""
    rows = ctx.inputs.pick(measure, ctx.dataset, "test", method=ctx.method(method),
                           **{f"param_{k}": v for k, v in fixed.items()})
    return sorted(pd.to_numeric(rows[f"param_{param}"], errors="coerce").dropna().unique())


def _values(swept: Sequence[float]) -> str:
    """'{0, 0.3, 0.8}' for a sweep's label; says so when no run of the sweep is saved."""
    return "{" + ", ".join(f"{v:g}" for v in swept) + "}" if len(swept) else "{} (no runs saved)"


def d4(ctx: ClaimContext) -> list[Part]:
    mus = _swept(ctx, "dpnr", "mu", {"epsilon": 1.0}, f"empirical_privacy_{privacy_kind(ctx)}")
    privacy = {mu: empirical_privacy(ctx, "dpnr", epsilon=1.0, mu=mu) for mu in mus}
    cost = [difference(f"test accuracy, {ctx.method('dpnr')} μ = {mus[-1]:g} − μ = 0 (within ±{COMPARABLE_MARGIN:g})",
                       accuracy(ctx, "dpnr", epsilon=1.0, mu=mus[-1]), accuracy(ctx, "dpnr", epsilon=1.0),
                       "comparable", margin=COMPARABLE_MARGIN)] if len(mus) > 1 and mus[0] == 0 else []
    return [trend(f"Spearman ρ(μ, empirical privacy), {ctx.method('dpnr')} ε = 1, μ ∈ {_values(mus)}", privacy, 1), *cost]


def d5(ctx: ClaimContext) -> list[Part]:
    epsilons = _swept(ctx, "dpnr", "epsilon", {"mu": 0.0}, f"empirical_privacy_{privacy_kind(ctx)}")
    privacy = {eps: empirical_privacy(ctx, "dpnr", epsilon=eps) for eps in epsilons}
    return [trend(f"Spearman ρ(ε, empirical privacy), {ctx.method('dpnr')}, ε ∈ {_values(epsilons)}", privacy, -1)]


def entity_present_accuracy(ctx: ClaimContext, method: str, **params: float):
    """Attacker accuracy on the documents that mention each entity (DPNR Table 5), mean over entities."""
    return ctx.series(method, "attack_subgroup_accuracy", attacker=DPNR_ATTACKER, group="present", **params)


def d6(ctx: ClaimContext) -> list[Part]:
    dpnr = entity_present_accuracy(ctx, "dpnr", epsilon=DPNR_EPSILON)
    return [difference(f"attacker accuracy on entity presence, {ctx.method('dpnr')} − {other}", dpnr,
                       entity_present_accuracy(ctx, other, **params), -1)
            for other, params in (("nonpriv", {}), ("adv", {"lambda": 1.0}))]


def subgroup_gap(ctx: ClaimContext, method: str, **params: float):
    """Test accuracy gap between the demographic subgroups (DPNR Tables 6–7), mean over attributes."""
    return ctx.series(method, "accuracy_gap", **params)


def d7(ctx: ClaimContext) -> list[Part]:
    return [difference(f"subgroup accuracy gap, {ctx.method('dpnr')} − nonpriv", subgroup_gap(ctx, "dpnr", epsilon=DPNR_EPSILON),
                       subgroup_gap(ctx, "nonpriv"), -1)]


# --- CAPE ---------------------------------------------------------------------------------------------------

CAPE_SETTING = {"epsilon": 0.1, "lambda": 1.0}  # CAPE Table 3


def c1(ctx: ClaimContext) -> list[Part]:
    parts = []
    for attribute in ctx.inputs.attributes(ctx.dataset):
        cape = ctx.series("cape", "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER, **CAPE_SETTING)
        for other, params in (("nonpriv", {}), ("adv", {"lambda": 1.0}), ("dpnr", {"epsilon": 0.1})):
            parts.append(difference(
                f"attacker accuracy on {attribute}, {ctx.method('cape')} − {ctx.method(other)}", cape,
                ctx.series(other, "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER, **params), -1,
                paper_value=_published(ctx, "cape", "table3", "cape", "attacker_accuracy", f"private={attribute}", 1.0)
                - _published(ctx, "cape", "table3", other, "attacker_accuracy", f"private={attribute}", 1.0)))
    return parts


def c2(ctx: ClaimContext) -> list[Part]:
    paper = (_published(ctx, "cape", "table3", "cape", "target_accuracy", scale=1.0)
             - _published(ctx, "cape", "table3", "nonpriv", "target_accuracy", scale=1.0))
    return [difference(f"test accuracy, {ctx.method('cape')} − nonpriv (within ±{COMPARABLE_MARGIN:g})",
                       accuracy(ctx, "cape", **CAPE_SETTING), accuracy(ctx, "nonpriv"), "comparable",
                       margin=COMPARABLE_MARGIN, paper_value=paper)]


C3_ATTRIBUTES = {"gender": ("gender", "sex"), "location": ("location",), "age": ("age",)}


def c3(ctx: ClaimContext) -> list[Part]:
    """Attacker advantage over the majority rate on Base: gender and location > 0, age within the margin."""
    parts = []
    for role, names in C3_ATTRIBUTES.items():
        attribute = next((a for a in ctx.inputs.attributes(ctx.dataset) if a in names), None)
        if attribute is None:
            continue
        attack = ctx.series("nonpriv", "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER)
        majority = ctx.series("nonpriv", "attack_majority_rate", attribute=attribute, attacker=CAPE_ATTACKER)
        claimed = ("comparable", COMPARABLE_MARGIN) if role == "age" else (1, None)
        parts.append(difference(f"attacker − majority rate on {attribute} (nonpriv)"
                                + (f" (within ±{COMPARABLE_MARGIN:g})" if role == "age" else ""),
                                attack, majority, claimed[0], margin=claimed[1]))
    return parts


def c3_datasets(inputs: ArtefactInputs) -> list[str]:
    wanted = {n for names in C3_ATTRIBUTES.values() for n in names}
    return [d for d in inputs.datasets() if wanted & set(inputs.attributes(d))]


# --- FEDERATE -----------------------------------------------------------------------------------------------

FEDERATE_TABLE = {"twitter": "table1a", "bios": "table1b", "celeba": "table2", "adult": "table3"}


def _chosen(ctx: ClaimContext, rt: float = RT) -> pd.DataFrame:
    """Per-seed rows of each method's setting chosen at relaxation threshold ``rt`` (FEDERATE §5.1)."""
    from privtext.artefacts.federate import runs_frame, selected_runs

    key = ("claims_chosen", ctx.dataset, rt)
    if key not in ctx.inputs.cache:
        ctx.inputs.cache[key] = selected_runs(runs_frame(ctx.inputs, ctx.dataset), rt,
                                              ("nonpriv", "adv", "multiadv", "inlp", "noise", "federate"))
    return ctx.inputs.cache[key]


def _runs_of(ctx: ClaimContext, chosen: pd.DataFrame) -> tuple[str, ...]:
    """Run folders of chosen rows (matched on method, parameters and seed in the measures)."""
    if chosen.empty:
        return ()
    measures = ctx.inputs.pick("accuracy", ctx.dataset, "test")
    params = [c for c in chosen.columns if c.startswith("param_")]
    keys = ["method", *params, "seed"]
    wanted = chosen[keys].drop_duplicates().astype({c: float for c in [*params, "seed"]})
    merged = measures.astype({"seed": float}).merge(wanted, on=keys, how="inner")
    return tuple(sorted(merged["run_dir"].unique()))


def selected(ctx: ClaimContext, method: str, column: str, rt: float = RT) -> tuple[pd.Series, tuple[str, ...]]:
    """Per-seed ``column`` (test_accuracy, test_fairness, test_leakage, mdl_kbits) of ``method`` at ``rt``."""
    chosen = _chosen(ctx, rt)
    rows = chosen[chosen["method"] == method].dropna(subset=[column])
    return rows.groupby("seed")[column].mean(), _runs_of(ctx, rows)


FEDERATE_METRIC = {"test_accuracy": "accuracy", "test_leakage": "leakage", "mdl_kbits": "mdl"}


def _federate_published(ctx: ClaimContext, method: str, column: str) -> float:
    table = FEDERATE_TABLE.get(paper_dataset(ctx.dataset) or "")
    if table is None:
        return math.nan
    if column == "test_fairness":
        metric = "grms" if table == "table1b" else "tpr_gap"
    else:
        metric = FEDERATE_METRIC[column]
    return _published(ctx, "federate", table, method, metric, "rt=1.0", 1.0 if metric == "mdl" else 0.01)


WORDS = {"test_fairness": "fairness gap (TPR-gap/GRMS)", "test_leakage": f"leakage ({LEAKAGE_ATTACKER})",
         "test_accuracy": "test accuracy", "mdl_kbits": "MDL (kbits)"}


def compare_selected(ctx: ClaimContext, a: str, b: str, column: str, direction: Any,
                     margin: float | None = None) -> Part:
    label = f"{WORDS[column]} at RT = {RT:g}, {a} − {b}" + (f" (within ±{margin:g})" if margin else "")
    return difference(label, selected(ctx, a, column), selected(ctx, b, column), direction, margin=margin,
                      paper_value=_federate_published(ctx, a, column) - _federate_published(ctx, b, column))


def f1(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "federate", other, "test_fairness", -1) for other in ("nonpriv", "noise", "adv", "inlp")]


def f2(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "federate", other, column, direction)
            for other in ("adv", "multiadv") for column, direction in (("test_leakage", -1), ("mdl_kbits", 1))]


def f3(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, other, "nonpriv", "test_leakage", "comparable", COMPARABLE_MARGIN)
            for other in ("adv", "multiadv")]


def f4(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "noise", "federate", "test_leakage", 1),
            compare_selected(ctx, "noise", "federate", "test_accuracy", -1),
            compare_selected(ctx, "noise", "federate", "test_fairness", 1)]


def f5(ctx: ClaimContext) -> list[Part]:
    gap = {rt: selected(ctx, "federate", "test_fairness", rt) for rt in RT_SWEEP}
    low, high = RT_SWEEP[0], RT_SWEEP[-1]
    return [trend(f"Spearman ρ(RT, test fairness gap of the federate model chosen), RT ∈ {{{', '.join(f'{r:g}' for r in RT_SWEEP)}}}",
                  gap, -1),
            difference(f"test accuracy, federate chosen at RT = {high:g} − at RT = {low:g} (within ±{COMPARABLE_MARGIN:g})",
                       selected(ctx, "federate", "test_accuracy", high), selected(ctx, "federate", "test_accuracy", low),
                       "comparable", margin=COMPARABLE_MARGIN)]


def f6(ctx: ClaimContext) -> list[Part]:
    epsilons = _swept(ctx, "noise", "epsilon", {"mu": 0.0}, "attack_accuracy")
    leakage = {eps: ctx.series("noise", "attack_accuracy", attribute=_protected(ctx), attacker=LEAKAGE_ATTACKER,
                               epsilon=eps) for eps in epsilons}
    return [trend(f"Spearman ρ(ε, leakage ({LEAKAGE_ATTACKER})), noise, ε ∈ {_values(epsilons)}", leakage, 1)]


def _protected(ctx: ClaimContext) -> str | None:
    from privtext.artefacts.federate import protected_attribute

    return protected_attribute(ctx.inputs, ctx.dataset)


def f7(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, "federate", "inlp", "test_accuracy", 1),
            compare_selected(ctx, "federate", "inlp", "test_fairness", -1),
            compare_selected(ctx, "federate", "inlp", "test_leakage", -1)]


def f8(ctx: ClaimContext) -> list[Part]:
    return [compare_selected(ctx, private, other, "test_fairness", -1)
            for private in ("noise", "federate") for other in ("nonpriv", "adv")]


def text_datasets(inputs: ArtefactInputs) -> list[str]:
    """Datasets encoded from text: word dropout (D4) has no meaning on feature datasets such as Adult."""
    encoders = inputs.measures.groupby("dataset")["encoder"].first()
    return [d for d in inputs.datasets() if encoders.get(d) != "features"]


def entity_datasets(inputs: ArtefactInputs) -> list[str]:
    return [d for d in inputs.datasets()
            if any(inputs.attribute_kind(d, a) == "entity" for a in inputs.attributes(d))]


CLAIMS: dict[str, Claim] = {c.id: c for c in (
    Claim("D1", "DPNR", "DPNR largely reduces leakage without significantly lowering main accuracy", d1),
    Claim("D2", "DPNR", "DPNR gives more empirical privacy than ADV", d2),
    Claim("D3", "DPNR", "DPNR's empirical privacy is comparable to MAJORITY", d3),
    Claim("D4", "DPNR", "word dropout μ raises privacy at small accuracy cost", d4, datasets=text_datasets),
    Claim("D5", "DPNR", "smaller ε gives more empirical privacy", d5),
    Claim("D6", "DPNR", "DPNR lowers attacker accuracy on entity presence below NON-PRIV and ADV", d6,
          datasets=entity_datasets),
    Claim("D7", "DPNR", "DP noise narrows the accuracy gap between demographic subgroups", d7),
    Claim("C1", "CAPE", "CAPE beats Base, Adv. and DP in privacy for every private attribute", c1),
    Claim("C2", "CAPE", "CAPE's task accuracy is comparable to Base", c2),
    Claim("C3", "CAPE", "gender and location are recoverable, age is barely above chance", c3, uses_dp=False,
          datasets=c3_datasets),
    Claim("F1", "FEDERATE", "at RT=1 FEDERATE is fairer than Unconstrained, Noise, Adversarial, INLP", f1),
    Claim("F2", "FEDERATE", "FEDERATE has lower Leakage and higher MDL than every adversarial method", f2),
    Claim("F3", "FEDERATE", "purely adversarial methods leak about as much as Unconstrained", f3, uses_dp=False),
    Claim("F4", "FEDERATE", "Noise is slightly less private than FEDERATE, with worse accuracy and fairness", f4),
    Claim("F5", "FEDERATE", "raising RT gives fairer models at negligible accuracy cost", f5),
    Claim("F6", "FEDERATE", "ε correlates with empirical leakage", f6),
    Claim("F7", "FEDERATE", "FEDERATE beats INLP on accuracy, fairness and privacy", f7),
    Claim("F8", "FEDERATE", "privacy and fairness reinforce each other", f8),
)}
# Claims whose DP methods all use the L1 layer: the equal-effective row reuses the nominal runs.
L1_ONLY = {"F1", "F2", "F4", "F5", "F6", "F7", "F8"}


# --- the table ------------------------------------------------------------------------------------------------

def _number(value: float) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def _row(claim: Claim, dataset: str, setting: str, parts: list[Part], note: str = "") -> dict[str, Any]:
    if not parts:
        parts = [Part("no measurement", math.nan, math.nan, math.nan, 0,
                      Verdict("inconclusive", "the dataset has none of the attributes this claim is about"))]
    combined = combine(p.verdict for p in parts)
    deciding = next(p for p in parts if p.verdict.outcome == combined.outcome)
    summary = "; ".join(f"{p.label}: {_number(p.estimate) or 'n/a'} [{_number(p.low)}, {_number(p.high)}] → "
                        f"{p.verdict.outcome}" for p in parts)
    runs = list(dict.fromkeys(r for p in parts for r in p.runs))
    return {
        "claim": claim.id, "paper": claim.paper, "claim_text": claim.text, "dataset": dataset, "setting": setting,
        "measurement": deciding.label, "estimate": deciding.estimate, "ci_low": deciding.low, "ci_high": deciding.high,
        "n_seeds": deciding.n_seeds, "p_value": deciding.p_value, "paper_value": deciding.paper_value,
        "verdict": combined.outcome, "reason": (note + " " if note else "") + combined.reason,
        "parts": summary, "grid_points": ";".join(runs),
    }


def _unavailable_row(claim: Claim, datasets: Sequence[str]) -> dict[str, Any]:
    return {
        "claim": claim.id, "paper": claim.paper, "claim_text": claim.text, "dataset": "; ".join(datasets),
        "setting": "—", "measurement": "", "estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
        "n_seeds": 0, "p_value": math.nan, "paper_value": math.nan, "verdict": "inconclusive",
        "reason": f"not tested on the paper's dataset(s) {', '.join(datasets)}: not in this run (no data offline "
                  "for Trustpilot, Twitter and Bias in Bios: put their files in raw_dir; CelebA, Blog and AG are "
                  "offline but were not selected). To settle it, run the claims study with them in `datasets`",
        "parts": "", "grid_points": "",
    }


def claims_table(inputs: ArtefactInputs, claims: Iterable[str] | None = None) -> pd.DataFrame:
    """One row per (claim, dataset, setting) of SPEC §6, plus one row per claim naming the paper datasets that
    were not run. Reads saved measures only."""
    rows = []
    measured = inputs.datasets()
    for claim in (CLAIMS[c] for c in (claims or CLAIMS)):
        datasets = claim.datasets(inputs) if claim.datasets else measured
        settings = (NOMINAL, EQUAL_EFFECTIVE) if claim.uses_dp else (NOMINAL,)
        for dataset in datasets:
            for setting in settings:
                ctx = ClaimContext(inputs, dataset, setting)
                note = ""
                if setting == EQUAL_EFFECTIVE and claim.id in L1_ONLY:
                    note = "Same runs as the nominal row: Noise and FEDERATE use the L1 layer, whose effective ε is its nominal ε."
                rows.append(_row(claim, dataset, setting, claim.build(ctx), note))
        if not datasets:
            rows.append(_row(claim, "—", NOMINAL, [], "No dataset of this run has what the claim needs."))
        missing = [d for d in PAPER_DATASETS[claim.paper.lower()] if d not in measured]
        if missing:
            rows.append(_unavailable_row(claim, missing))
    return pd.DataFrame(rows, columns=list(COLUMNS))
