"""What a claim's builder sees (:class:`ClaimContext`): the saved measures (and per-example evidence, if any), one
dataset and one setting; and the measures in the papers' vocabulary (empirical privacy, leakage, the setting
FEDERATE's relaxation threshold selects).

Settings: ``nominal ε`` runs DPNR and CAPE with their published min-max layer (Lap(1/ε), a (D·ε)-DP release);
``equal effective ε`` swaps in ``dpnr_calibrated``/``cape_calibrated`` (Lap(D/ε)), so every DP method in the
comparison is ε-DP at the paper's ε; the reference code's mechanism (not DP) is a named variant where a verdict
turns on it, and so is the encoder fine-tuned through the noise (DPNR's Algorithm 1): its rows read only the
runs whose encoder segment ends ``+finetune``, every other row only the others. Claims whose DP methods all use
the L1 layer (Noise, FEDERATE) have one row, ``nominal = effective ε``; claims without a DP method have one row,
``no DP method``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from privtext.claims.departures import GridRead
from privtext.claims.evidence import DERIVED_MEASURES
from privtext.claims.margins import printed
from privtext.claims.parts import Measured
from privtext.data.attributes import FIXED_NAMES
from privtext.plan.grid import FINETUNE_SUFFIX
from privtext.report.artefacts.common import TARGET_COLUMN, ArtefactInputs

NOMINAL, EQUAL_EFFECTIVE, L1_SETTING, NO_DP = "nominal ε", "equal effective ε", "nominal = effective ε", "no DP method"
REFERENCE_CODE = "reference code's mechanism (not DP)"
FINE_TUNED = "nominal ε, encoder fine-tuned through the noise"
SETTINGS = {"minmax": (NOMINAL, EQUAL_EFFECTIVE), "l1": (L1_SETTING,), "none": (NO_DP,)}
# The method that plays DPNR or CAPE (or CAPE's DP ablation) in each setting: its honest-ε twin (Lap(D/ε)) at
# equal effective ε, and the reference code's mechanism (one noise scalar per example / one vector per model).
TWINS = {EQUAL_EFFECTIVE: {"dpnr": "dpnr_calibrated", "cape": "cape_calibrated", "cape_dp": "cape_dp_calibrated"},
         REFERENCE_CODE: {"dpnr": "dpnr_code", "cape": "cape_code", "cape_dp": "cape_dp_code"}}
CODE_METHODS = frozenset(TWINS[REFERENCE_CODE].values())


@dataclass
class ClaimContext:
    """One dataset and setting of one claim, over saved measures (``evidence``: per-example test records for
    the intervals, or None: intervals over seeds alone)."""

    inputs: ArtefactInputs
    dataset: str
    setting: str
    evidence: Any = None  # privtext.claims.evidence.ExampleEvidence
    reads: list[GridRead] = field(default_factory=list)  # the sweeps and selections the claim read (departures)

    @property
    def published(self) -> pd.DataFrame | None:
        return self.inputs.published

    def method(self, name: str) -> str:
        """The method that plays ``name`` in this setting (:data:`TWINS`)."""
        return TWINS.get(self.setting, {}).get(name, name)

    def pick(self, measure: str, split: str | None = None, attribute: str | None = None, attacker: str | None = None,
             group: str | None = None, **conditions: Any) -> pd.DataFrame:
        """The saved rows of ``measure`` on this dataset that this setting reads: those of runs whose encoder was
        fine-tuned through the noise in :data:`FINE_TUNED`, the others in every other setting."""
        rows = self.inputs.pick(measure, self.dataset, split, attribute, attacker, group, **conditions)
        if rows.empty or "encoder" not in rows.columns:
            return rows
        tuned = rows["encoder"].astype(str).str.endswith(FINETUNE_SUFFIX)
        return rows[tuned] if self.setting == FINE_TUNED else rows[~tuned]

    def attributes(self, kind: str | None = None) -> list[str]:
        """The dataset's private attributes (of ``kind``: 'demographic' or 'entity'), the names its builder
        writes where we have no build of it (:data:`privtext.data.attributes.FIXED_NAMES`)."""
        attributes = self.inputs.attributes(self.dataset) or list(FIXED_NAMES.get(self.dataset, ()))
        return [a for a in attributes if kind is None or self.inputs.attribute_kind(self.dataset, a) == kind]

    def n_values(self, attribute: str) -> int | None:
        names = self.inputs.value_names(self.dataset, attribute)
        return len(names) if names else PAPER_ATTRIBUTE_SIZES.get((self.dataset, attribute))

    def printed(self, paper: str, table: str, method: str, metric: str, scale: float = 1.0,
                occurrence: int | None = None, **setting: object) -> float:
        return printed(self.published, paper, table, self.dataset, method, metric, scale, occurrence, **setting)

    def measured(self, rows: pd.DataFrame, keep_missing: bool = False) -> Measured:
        """Per seed, the mean over ``rows`` of that seed (attributes/groups left open) of each row's replicates
        (``keep_missing``: rows of a derived measure, whose value only the evidence computes)."""
        rows = rows if keep_missing else rows.dropna(subset=["value"])
        encoders = sorted(rows["encoder"].dropna().unique()) if "encoder" in rows.columns else []
        if len(encoders) > 1:
            # a seed's value would be the mean over encoders (MiniLM and BERT; fine-tuned runs have their setting)
            raise ValueError(f"{self.dataset}: the claims read one encoder per dataset, but the runs of one "
                             f"comparison have {', '.join(map(str, encoders))}; keep one of them in the claims "
                             "studies (config `encoder`)")
        per_seed = {}
        for seed, seed_rows in rows.groupby("seed"):
            arrays = [self.evidence.replicates(row) if self.evidence is not None else np.array([row.value])
                      for row in seed_rows.itertuples(index=False)]
            per_seed[int(seed)] = np.mean(arrays, axis=0)
        return per_seed, tuple(sorted(rows["run_dir"].unique()))

    def series(self, method: str, measure: str, split: str | None = "test", attribute: str | None = None,
               attacker: str | None = None, group: str | None = None, target: str | None = None,
               **params: float) -> Measured:
        """``measure`` of ``method`` (played by its twin in this setting) at ``params`` (μ = 0 unless given) per
        seed; ``target``: the run whose adversary targeted that attribute alone."""
        conditions: dict[str, Any] = {"method": self.method(method), "param_mu": params.pop("mu", 0.0),
                                      **{f"param_{k}": v for k, v in params.items()}}
        if target is not None:  # prepare_measures gives every measures table this column
            conditions[TARGET_COLUMN] = target
        rows = self.pick(measure, split, attribute, attacker, group, **conditions)
        if rows.empty and measure in DERIVED_MEASURES and self.evidence is not None:
            # no job saves it: the runs of the measure it derives from, recomputed from their records
            base = self.pick(DERIVED_MEASURES[measure], split, attribute, attacker, group, **conditions)
            rows = base.assign(measure=measure, value=np.nan)
            return self.measured(rows, keep_missing=True)
        return self.measured(rows)

    def read_grid(self, method: str, param: str, paper: Sequence[float], ran: Sequence[float]) -> None:
        """Note that the claim swept or selected over ``method``'s ``param``, whose paper values are ``paper``
        and whose runs here have ``ran`` (a row's ``grid`` departure: :mod:`privtext.claims.departures`)."""
        read = GridRead(method, param, tuple(float(v) for v in paper), tuple(float(v) for v in ran))
        if read not in self.reads:
            self.reads.append(read)

    def constant(self, value: float, like: Measured) -> Measured:
        """``value`` for every seed of ``like`` (a printed threshold such as chance, with no sampling)."""
        return {s: np.full_like(np.asarray(v, dtype=float), value) for s, v in like[0].items()}, ()


# The sizes of a paper dataset's attributes where a claim reads them and we may not have built it (CAPE §2: six
# equal-sized age bins, five locations, binary gender).
PAPER_ATTRIBUTE_SIZES = {("tp_uk", "gender"): 2, ("tp_uk", "age"): 6, ("tp_uk", "location"): 5}


def ratio(a: Measured, b: Measured) -> Measured:
    """``(a − b) / b`` per seed and resample: a relative difference, for measures whose scale depends on the
    dataset (MDL in kbits)."""
    (values_a, runs_a), (values_b, runs_b) = a, b
    shared = set(values_a) & set(values_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {s: (values_a[s] - values_b[s]) / values_b[s] for s in shared}, runs_a + runs_b


def zero(like: Measured) -> Measured:
    return {s: np.zeros_like(np.asarray(v, dtype=float)) for s, v in like[0].items()}, ()


# --- measures in the papers' vocabulary ------------------------------------------------------------------------

DPNR_ATTACKER = "mlp"  # DPNR's attacker (2 layers, 512 hidden)
CAPE_ATTACKER = "mlp"  # CAPE reported its joint adversary; we use a fresh attacker (docs/methods.md)
LEAKAGE_ATTACKER = "sklearn_mlp"  # FEDERATE's Leakage


def privacy_kind(ctx: ClaimContext) -> str:
    kinds = {ctx.inputs.attribute_kind(ctx.dataset, a) for a in ctx.attributes()}
    return "entity" if "entity" in kinds else "demographic"


def empirical_privacy(ctx: ClaimContext, method: str, **params: float) -> Measured:
    """DPNR's empirical privacy (1 − attacker accuracy, or 1 − micro-F1 on entities), ``mlp`` attacker."""
    return ctx.series(method, f"empirical_privacy_{privacy_kind(ctx)}", attacker=DPNR_ATTACKER, **params)


def accuracy(ctx: ClaimContext, method: str, **params: float) -> Measured:
    return ctx.series(method, "accuracy", **params)


# FEDERATE's model selection: per method, the setting chosen on dev at a relaxation threshold (§5.1)
RT = 1.0  # FEDERATE's main tables select at relaxation threshold 1 point
FEDERATE_FAMILY = ("nonpriv", "adv", "multiadv", "inlp", "noise", "federate")
# a selected run's column -> (measure, split, attacker, on the protected attribute?)
SELECTED_MEASURES = {"test_accuracy": ("accuracy", "test", None, False),
                     "test_fairness": ("fairness", "test", None, True),
                     "test_leakage": ("attack_accuracy", "test", LEAKAGE_ATTACKER, True),
                     "mdl_kbits": ("mdl_kbits", None, None, True)}


def protected(ctx: ClaimContext) -> str | None:
    from privtext.report.artefacts.federate import protected_attribute

    return protected_attribute(ctx.inputs, ctx.dataset)


def chosen(ctx: ClaimContext, rt: float = RT) -> pd.DataFrame:
    """Per-seed rows of each method's setting chosen on dev at relaxation threshold ``rt`` (FEDERATE §5.1)."""
    from privtext.report.artefacts.federate import runs_frame, selected_runs

    key = ("claims_chosen", ctx.dataset, rt)
    if key not in ctx.inputs.cache:
        ctx.inputs.cache[key] = selected_runs(runs_frame(ctx.inputs, ctx.dataset), rt, FEDERATE_FAMILY)
    return ctx.inputs.cache[key]


# The grids FEDERATE selected over (its Appendix D, "Adversarial", "Adversarial + Multiple", "FEDERATE", "INLP"):
# λ "between 0.1 to 3.0 with an interval of 0.2"; λ_ort "between 0.1 and 1.0", 150 runs a seed with λ's 15, so
# ten values; ε "8.0, 9.0, …, 16.0, 20.0" (FEDERATE's; Noise is swept over the same ε in Table 7); INLP's
# iterations "between 15 and 45" on Bias in Bios (the step unstated: its ends), "between 2 to 7" on Twitter
# (Appendix D is silent on Adult and CelebA: Twitter's, the small-data range, is used).
PAPER_LAMBDAS = tuple(round(0.1 + 0.2 * i, 1) for i in range(15))
PAPER_EPSILONS = (8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 20.0)
SELECTION_GRIDS: dict[str, dict[str, tuple[float, ...]]] = {
    "adv": {"lambda": PAPER_LAMBDAS},
    "multiadv": {"lambda": PAPER_LAMBDAS, "lambda_orth": tuple(round(0.1 * i, 1) for i in range(1, 11))},
    "federate": {"epsilon": PAPER_EPSILONS, "lambda": PAPER_LAMBDAS},
    "noise": {"epsilon": PAPER_EPSILONS},
    "inlp": {"n_iter": (2, 3, 4, 5, 6, 7)},
}
INLP_ITERATIONS = {"bios": (15, 45)}


def selection_grid(dataset: str, method: str) -> dict[str, tuple[float, ...]]:
    """The paper's grid of ``method`` that FEDERATE's selection chose from on ``dataset``."""
    if method == "inlp" and dataset in INLP_ITERATIONS:
        return {"n_iter": INLP_ITERATIONS[dataset]}
    return SELECTION_GRIDS.get(method, {})


def selected(ctx: ClaimContext, method: str, column: str, rt: float = RT) -> Measured:
    """Per seed, ``column``'s measure of the ``method`` run chosen at ``rt``."""
    picked = chosen(ctx, rt)
    for param, paper in selection_grid(ctx.dataset, method).items():
        ctx.read_grid(method, param, paper, _ran(ctx, method, "accuracy", param))
    picked = picked[picked["method"] == method]
    measure, split, attacker, on_protected = SELECTED_MEASURES[column]
    rows = ctx.pick(measure, split, protected(ctx) if on_protected else None, attacker, method=method)
    if picked.empty or rows.empty:
        return {}, ()
    params = [c for c in picked.columns if c.startswith("param_")]
    keys = ["method", *params, "seed"]
    wanted = picked[keys].drop_duplicates().astype({c: float for c in [*params, "seed"]})
    return ctx.measured(rows.astype({"seed": float}).merge(wanted, on=keys, how="inner"))


def _ran(ctx: ClaimContext, method: str, measure: str, param: str, **fixed: float) -> list[float]:
    key = ("claims_ran", ctx.dataset, ctx.setting == FINE_TUNED, ctx.method(method), measure, param,
           tuple(sorted(fixed.items())))
    if key not in ctx.inputs.cache:
        rows = ctx.pick(measure, "test", method=ctx.method(method), **{f"param_{k}": v for k, v in fixed.items()})
        ctx.inputs.cache[key] = ([] if f"param_{param}" not in rows.columns else
                                 sorted(pd.to_numeric(rows[f"param_{param}"], errors="coerce").dropna().unique()))
    return list(ctx.inputs.cache[key])


def params_of(ctx: ClaimContext, method: str, measure: str, param: str, paper: Sequence[float] = (),
              **fixed: float) -> list[float]:
    """The values of ``param`` with saved test ``measure`` rows of ``method`` at ``fixed`` (a sweep's points);
    ``paper``: the values the paper swept, which the row's ``grid`` departure compares them with."""
    values = _ran(ctx, method, measure, param, **fixed)
    if paper:
        ctx.read_grid(ctx.method(method), param, paper, values)
    return values

