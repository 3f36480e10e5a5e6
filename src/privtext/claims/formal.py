"""Claims about a mechanism or a proof, checked without runs (docs/claims.md, "Formal claims"): by the project's
accounting (:mod:`privtext.privacy.accounting`: the layer's true sensitivity over its noise scale, then DPNR's
Theorem 2) and by the empirical ε audit (:mod:`privtext.privacy.audit`, docs/audit.md).

An audit can refute a guarantee (a measured lower bound above the claimed ε, all of a verdict's bounds together
at 95%) but never prove one: a claim that a mechanism *is* ε-DP holds on the accounting, and is contradicted when the audit proves
more than ε.

Each check takes the audit table (or None) and returns one dict per row, with the columns of the claims table
that a formal row fills (:func:`privtext.claims.table.formal_rows` adds the claim's own).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from privtext.claims.context import L1_SETTING, NOMINAL, EQUAL_EFFECTIVE, REFERENCE_CODE
from privtext.privacy.accounting import epsilon_accounting, word_dropout_epsilon
from privtext.privacy.audit import epsilon_lower_bound

AUDIT_DATASET, AUDIT_KIND = "ε audit", "no data (a mechanism audit)"
FAMILY_LEVEL = 0.95  # every bound one verdict reads holds together at this level (family_wise)
ACCOUNTING_DATASET, ACCOUNTING_KIND = "accounting", "no data (the accounting)"
NO_AUDIT = "no ε audit in this run: make claims runs it (run_audit=true)"
NO_RELEASE_AUDIT = "no audit of the release path in this run: make claims runs it (run_audit=true, audit.release)"
RELEASE_DATASET, RELEASE_KIND = "release path", "real texts (AG, Blog, demo: the end-to-end audit)"
RELEASE_EFFECTIVE = "effective ε (the accounting)"
# The representation sizes the accounting is evaluated at: the papers' BERT-base (768) and our MiniLM (384).
DIMS = {"BERT-base, the papers' encoder": 768, "MiniLM, ours": 384}
THEOREM2_MUS = (0.1, 0.3, 0.5, 0.8)  # DPNR Table 3's μ
THEOREM2_EPSILON = 1.0  # DPNR §4.4.2: "with fixed ε = 1"
# DPNR §4.4.2 prints "privacy budgets are reduced to ε' = ln[(1 − μ) exp(ε) + μ] = 0.62" (μ = 0.5, ε = 1); the
# quote of claim D10 carries the number, and tests/test_claims.py checks it against the paper's text.
PRINTED_EPSILON_PRIME = 0.62
PRINTED_MU = 0.5


def _base(dataset: str, kind: str, setting: str) -> dict[str, Any]:
    return {"dataset": dataset, "dataset_kind": kind, "setting": setting, "estimate": math.nan,
            "ci_low": math.nan, "ci_high": math.nan, "df": math.nan, "n_seeds": 0, "p_value": math.nan,
            "paper_value": math.nan, "attacker": "none", "paper_reading": "not printed"}


def family_wise(rows: pd.DataFrame, level: float = FAMILY_LEVEL) -> pd.DataFrame:
    """``rows`` with each ``epsilon_lower`` recomputed from its error counts so that all of them hold together
    with probability ``level``: one verdict reads every bound of its family, and m bounds at 95% each would
    refute a correct layer by chance up to m times as often. Bonferroni over the 2m Clopper–Pearson limits
    (each bound rests on two). A table without error counts (``alpha``, ``beta``, ``samples``) is read as it is."""
    if rows.empty or not {"alpha", "beta", "samples"} <= set(rows.columns):
        return rows
    confidence = 1.0 - (1.0 - level) / (2 * len(rows))
    n = rows["samples"].to_numpy(dtype=float)
    lower = epsilon_lower_bound(np.round(rows["alpha"].to_numpy(dtype=float) * n),
                                np.round(rows["beta"].to_numpy(dtype=float) * n), n, confidence)
    return rows.assign(epsilon_lower=lower, confidence=confidence)


def _rows_of(audit: pd.DataFrame | None, mechanism: str) -> pd.DataFrame | None:
    """The audit's rows of ``mechanism`` on its hand-picked pair (tables written before the searched audit have
    no ``pair`` column: all their rows are), their bounds at family-wise confidence (:func:`family_wise`)."""
    if audit is not None and "pair" in audit.columns:
        audit = audit[audit["pair"] == "hand-picked"]
    rows = None if audit is None else audit[audit["mechanism"] == mechanism]
    return None if rows is None or rows.empty else family_wise(rows)


def _bounds(rows: pd.DataFrame) -> str:
    return "; ".join(f"D = {r.D}, ε = {r.epsilon_nominal:g}: ε_lower = {r.epsilon_lower:.3g} (guarantee "
                     f"{r.epsilon_effective:.4g})" for r in rows.itertuples(index=False))


def _largest_ratio(rows: pd.DataFrame) -> pd.Series:
    return rows.assign(ratio=rows["epsilon_lower"] / rows["epsilon_nominal"]).sort_values("ratio").iloc[-1]


# --- by the ε audit ---------------------------------------------------------------------------------------------

def multiplied_by_d(audit: pd.DataFrame | None) -> list[dict[str, Any]]:
    """FEDERATE's correction (F12): the min–max layer is D·ε-DP, not ε-DP. Holds when some audit bound exceeds
    the nominal ε and none exceeds D·ε; contradicted when one exceeds even D·ε."""
    row = _base(AUDIT_DATASET, AUDIT_KIND, "min–max layer")
    row["paper_reading"] = "not printed (Appendix C argues it)"
    minmax = _rows_of(audit, "minmax")
    if minmax is None:
        return [{**row, "holds": "untestable", "measurement": "the ε audit of the min–max layer", "reason": NO_AUDIT}]
    above_nominal = minmax[minmax["epsilon_lower"] > minmax["epsilon_nominal"]]
    above_effective = minmax[minmax["epsilon_lower"] > minmax["epsilon_effective"]]
    worst = _largest_ratio(minmax)
    row.update(measurement="largest ε_lower / ε_nominal of the min–max layer", estimate=float(worst["ratio"]),
               epsilon_effective=f"D·ε (D = {', '.join(map(str, sorted(minmax['D'].unique())))})",
               parts=_bounds(minmax))
    if len(above_effective):
        return [{**row, "holds": "contradicted", "reason": f"{len(above_effective)} audit bound(s) exceed even D·ε"}]
    if len(above_nominal):
        return [{**row, "holds": "holds", "reason": (
            f"{len(above_nominal)} of {len(minmax)} audited (ε, D) prove ε above the nominal value (up to "
            f"{worst['ratio']:.3g}× at D = {worst['D']}, ε = {worst['epsilon_nominal']:g}); none exceeds D·ε")}]
    return [{**row, "holds": "not shown", "reason": "no audited (ε, D) proves ε above the nominal value"}]


def nominal_guarantee(mechanism: str, what: str, setting: str = NOMINAL):
    """A check that ``mechanism`` is ε-DP at its nominal ε (``what`` says what the paper claims of it):
    contradicted when some audit bound exceeds the nominal ε; otherwise "not shown" (an audit cannot prove a
    guarantee: the accounting says what the layer really gives)."""
    def check(audit: pd.DataFrame | None) -> list[dict[str, Any]]:
        row = _base(AUDIT_DATASET, AUDIT_KIND, setting)
        rows = _rows_of(audit, mechanism)
        if rows is None:
            return [{**row, "holds": "untestable", "measurement": f"the ε audit of {mechanism}", "reason": NO_AUDIT}]
        worst = _largest_ratio(rows)
        above = rows[rows["epsilon_lower"] > rows["epsilon_nominal"]]
        row.update(measurement=f"largest ε_lower / ε_nominal of {mechanism}", estimate=float(worst["ratio"]),
                   parts=_bounds(rows),
                   epsilon_effective="; ".join(dict.fromkeys(f"{r.epsilon_effective:.4g} at D = {r.D}, ε = "
                                                             f"{r.epsilon_nominal:g}" for r in rows.itertuples())))
        if len(above):
            return [{**row, "holds": "contradicted", "reason": (
                f"{what}: {len(above)} of {len(rows)} audited (ε, D) prove ε above the nominal value, up to "
                f"{worst['ratio']:.3g}× at D = {worst['D']}, ε = {worst['epsilon_nominal']:g} (all bounds together "
                f"at 95%)")}]
        return [{**row, "holds": "not shown", "reason": (
            f"{what}: no audited (ε, D) proves ε above the nominal value; an audit cannot prove a guarantee")}]
    return check


def l1_theorem(audit: pd.DataFrame | None) -> list[dict[str, Any]]:
    """FEDERATE's Theorem 1 (Eq. 3: L1 normalisation, Lap(2/ε)): the accounting gives ε exactly (sensitivity
    2, scale 2/ε); the audit of the layer as implemented must find no bound above ε. Beside it, the reference
    code's mechanism (L2 normalisation with the same noise: √D·ε)."""
    row = _base(AUDIT_DATASET, AUDIT_KIND, L1_SETTING)
    guarantees = {d: epsilon_accounting("l1", 1.0, d)["epsilon_effective"] for d in DIMS.values()}
    accounting = ("accounting: L1 sensitivity 2 over noise scale 2/ε gives ε at every D ("
                  + ", ".join(f"D = {d}: {g:g}·ε" for d, g in guarantees.items()) + ")")
    rows = _rows_of(audit, "l1")
    row.update(measurement="accounting of the l1 layer, and the largest ε_lower / ε of its audit",
               epsilon_effective="ε (L1 layer)")
    if any(not math.isclose(g, 1.0) for g in guarantees.values()):
        paper = {**row, "holds": "contradicted", "reason": accounting}
    elif rows is None:
        paper = {**row, "holds": "holds", "estimate": 1.0, "reason": f"{accounting}; {NO_AUDIT} to look for a violation"}
    else:
        worst = _largest_ratio(rows)
        above = rows[rows["epsilon_lower"] > rows["epsilon_nominal"]]
        paper = {**row, "estimate": float(worst["ratio"]), "parts": _bounds(rows),
                 "holds": "contradicted" if len(above) else "holds",
                 "reason": (f"{accounting}; " + (f"but {len(above)} audit bound(s) exceed ε" if len(above) else
                                                 f"no audited (ε, D) proves more than ε (largest ε_lower / ε "
                                                 f"{worst['ratio']:.3g})"))}
    code = nominal_guarantee("federate_code", "the reference code normalises by the L2 norm with Lap(2/ε), "
                             "a √D·ε guarantee", REFERENCE_CODE)(audit)[0]
    return [paper, code]


# --- by the accounting ----------------------------------------------------------------------------------------

def _epsilon_prime(layer: str, epsilon: float, dim: int, mu: float) -> tuple[float, float]:
    """(the layer's ε, ε' after word dropout at rate μ) by the accounting."""
    layer_eps = epsilon_accounting(layer, epsilon, dim)["epsilon_effective"]
    return layer_eps, word_dropout_epsilon(layer_eps, mu)


def dropout_theorem(audit: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """DPNR's Theorem 2, scored with the project's accounting: word dropout at rate μ turns an ε-DP release
    into ε' = ln((1 − μ)e^ε + μ) < ε. The proof's ε is the release's real guarantee: D·ε for the published
    min–max layer, ε for the calibrated one. Holds when ε' < ε at every μ of Table 3 (ε = 1); the row says
    by how much, since at the layer's real ε the gain is at most ln(1/(1 − μ))."""
    rows = []
    for setting, layer in ((NOMINAL, "minmax"), (EQUAL_EFFECTIVE, "minmax_calibrated")):
        row = _base(ACCOUNTING_DATASET, ACCOUNTING_KIND, setting)
        parts, gains, holds = [], [], True
        for name, dim in DIMS.items():
            for mu in THEOREM2_MUS:
                eps, prime = _epsilon_prime(layer, THEOREM2_EPSILON, dim, mu)
                holds &= prime < eps
                gains.append((eps - prime) / eps)
                parts.append(f"D = {dim} ({name}), μ = {mu:g}: ε {eps:.4g} → ε' {prime:.4g}")
        eps, prime = _epsilon_prime(layer, THEOREM2_EPSILON, DIMS["MiniLM, ours"], PRINTED_MU)
        row.update(measurement=f"ε' at μ = {PRINTED_MU:g}, ε = {THEOREM2_EPSILON:g} ({layer}, D = 384), by the accounting",
                   estimate=prime, epsilon_effective=f"{eps:.4g} before word dropout", parts="; ".join(parts),
                   paper_value=PRINTED_EPSILON_PRIME,
                   paper_reading="meets the claim as read (the printed ε' 0.62 is below ε = 1)",
                   holds="holds" if holds else "contradicted",
                   reason=(f"by the accounting ({layer}), ε' < ε at every μ of Table 3 and every D: word dropout "
                           f"does lower the guarantee, by {min(gains):.2%} to {max(gains):.2%} of it"
                           + (" (at the layer's real ε, D·ε, the gain is at most ln(1/(1 − μ)) nats)"
                              if layer == "minmax" else "")))
        rows.append(row)
    return rows + theorem2_on_the_release_path(audit)


def release_path_rows(audit: pd.DataFrame | None) -> pd.DataFrame | None:
    """The end-to-end audit's rows (:mod:`privtext.jobs.release_audit`; the claims job appends them to the layer
    audit's table), or None where that audit did not run."""
    if audit is None or "adjacency" not in audit.columns:
        return None
    rows = audit[audit["adjacency"].notna()]
    return None if rows.empty else rows


def theorem2_on_the_release_path(audit: pd.DataFrame | None) -> list[dict[str, Any]]:
    """Theorem 2 on real texts: the release path's bounds on one-word pairs under word dropout (μ > 0) against ε'
    of the nominal ε (the theorem as the paper applies it) and of the layer's effective ε (the theorem on the
    real guarantee). Contradicted where a bound exceeds that ε' (all bounds together at 95%), else not shown: an
    audit cannot prove a guarantee. Pairs of any two texts are outside the theorem; the row reports them beside."""
    rows = release_path_rows(audit)
    if rows is not None and "masked_share" in rows.columns:
        # Theorem 2's argument for the one-word pairs audited: the share of the drawn masks that hide the swapped
        # word (the pipeline masks ⌊d·μ⌋ of d words, so at most μ, and 32 draws vary around it). Pairs of any two
        # texts keep ε' at μ: the question there is whether the theorem's number would extend to them.
        one = rows["adjacency"] == "one word"
        rows = rows.assign(
            epsilon_prime_nominal=rows["epsilon_prime_nominal"].where(~one, [
                word_dropout_epsilon(e, f) for e, f in zip(rows["epsilon_nominal"], rows["masked_share"])]),
            epsilon_prime=rows["epsilon_prime"].where(~one, rows["epsilon_prime_audited"]))
    out = []
    for setting, column, what in ((NOMINAL, "epsilon_prime_nominal", "ε' of the nominal ε, as the paper applies it"),
                                  (RELEASE_EFFECTIVE, "epsilon_prime", "ε' of the layer's effective ε")):
        row = _base(RELEASE_DATASET, RELEASE_KIND, setting)
        if rows is None:
            out.append({**row, "holds": "untestable", "measurement": "the release path's audit", "reason": NO_RELEASE_AUDIT})
            continue
        one_word = family_wise(rows[(rows["adjacency"] == "one word") & (rows["mu"] > 0)])
        if one_word.empty:
            out.append({**row, "holds": "untestable", "measurement": "the release path's audit",
                        "reason": "the release audit has no one-word pair under word dropout (audit.release.mus)"})
            continue
        ratio = one_word["epsilon_lower"] / one_word[column]
        worst = one_word.loc[ratio.idxmax()]
        above = one_word[one_word["epsilon_lower"] > one_word[column]]
        others = family_wise(rows[(rows["adjacency"] != "one word") & (rows["mu"] > 0)])
        beyond = others[others["epsilon_lower"] > others[column]]
        row.update(measurement=f"largest ε_lower / ε' on one-word pairs under word dropout ({what})",
                   estimate=float(ratio.max()), paper_value=PRINTED_EPSILON_PRIME,
                   epsilon_effective="; ".join(dict.fromkeys(
                       f"{r.method} ε {r.epsilon_nominal:g}: {r.epsilon_effective:.4g}" for r in one_word.itertuples())),
                   parts="; ".join(f"{r.dataset} {r.method} ε = {r.epsilon_nominal:g}, μ = {r.mu:g}, {r.test}: "
                                   f"ε_lower {r.epsilon_lower:.3g} vs ε' {getattr(r, column):.4g}"
                                   for r in one_word.itertuples()))
        beside = ""
        if len(others):  # word dropout's ε' is not a local-DP guarantee: do these pairs show it?
            top = others.loc[(others["epsilon_lower"] - others[column]).idxmax()]
            beside = (f"; pairs of any two texts, outside the theorem: {len(beyond)} of {len(others)} bounds exceed the "
                      f"same ε' under the same dropout" + (f" (up to {top['epsilon_lower']:.3g} against "
                                                           f"{top[column]:.4g}, {top['dataset']}, {top['method']})"
                                                           if len(beyond) else ""))
        if len(above):
            out.append({**row, "holds": "contradicted", "reason": (
                f"{len(above)} of {len(one_word)} bounds on one-word pairs exceed {what}, up to {worst['epsilon_lower']:.3g} "
                f"against {worst[column]:.4g} ({worst['dataset']}, {worst['method']}, μ = {worst['mu']:g}; all bounds "
                f"together at 95%){beside}")})
        else:
            out.append({**row, "holds": "not shown", "reason": (
                f"no bound on one-word pairs exceeds {what} ({len(one_word)} bounds, all together at 95%; an audit "
                f"cannot prove a guarantee){beside}")})
    return out


def printed_epsilon_prime(audit: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """DPNR §4.4.2's printed ε' = 0.62 (μ = 0.5, ε = 1) against the accounting's ε' of the release: the
    published min–max layer is D·ε-DP, so its ε' is about D·ε − ln 2; the calibrated layer (Lap(D/ε)) gives
    exactly the printed value."""
    rows = []
    for setting, layer in ((NOMINAL, "minmax"), (EQUAL_EFFECTIVE, "minmax_calibrated")):
        row = _base(ACCOUNTING_DATASET, ACCOUNTING_KIND, setting)
        primes = {dim: _epsilon_prime(layer, THEOREM2_EPSILON, dim, PRINTED_MU)[1] for dim in DIMS.values()}
        ours = primes[DIMS["MiniLM, ours"]]
        agrees = all(math.isclose(p, PRINTED_EPSILON_PRIME, abs_tol=0.005) for p in primes.values())
        text = ", ".join(f"{p:.4g} at D = {dim}" for dim, p in primes.items())
        row.update(measurement=f"ε' at μ = {PRINTED_MU:g}, ε = {THEOREM2_EPSILON:g} ({layer}), by the accounting",
                   estimate=ours, paper_value=PRINTED_EPSILON_PRIME, epsilon_effective=text,
                   parts=f"printed {PRINTED_EPSILON_PRIME:g}; accounting {text}",
                   paper_reading=("meets the claim as read" if agrees else
                                  f"does not meet the claim as read: the printed ε' {PRINTED_EPSILON_PRIME:g} is the "
                                  f"formula at the nominal ε; the published layer's ε' is {text}"),
                   holds="holds" if agrees else "contradicted",
                   reason=(f"the accounting's ε' is {text}, against the printed {PRINTED_EPSILON_PRIME:g}"
                           + ("" if agrees else ": the formula was applied to the nominal ε, not to the layer's "
                              "real guarantee D·ε")))
        rows.append(row)
    return rows


def not_measurable(reason: str):
    """A claim the paper states but measures nothing for: one untestable row saying why and what would settle
    it, so that the claim is listed rather than left out."""
    def check(audit: pd.DataFrame | None = None) -> list[dict[str, Any]]:
        return [{**_base("—", "no data (not measurable as stated)", "no DP method"), "holds": "untestable",
                 "measurement": "none: see the reason", "reason": reason}]
    return check
