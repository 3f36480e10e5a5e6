"""Empirical ε audit (docs/audit.md, "How the audit works"): what ε can a distinguishing test prove from outside a mechanism?

If a mechanism is ε-DP, no test seeing one output tells ``M(x)`` from ``M(x')`` with false-positive rate α
and false-negative rate β such that ``ln((1 − β)/α) > ε`` or ``ln((1 − α)/β) > ε``. For each mechanism we
take the worst-case adjacent pair of its normalisation, draw ``samples`` outputs of each input for a
*calibration* half (fit the test, choose its threshold) and as many again for a *measurement* half (count α
and β), bound α and β by one-sided Clopper–Pearson upper limits and report ``epsilon_lower`` = the largest
ε those bounds prove. Two tests: the likelihood ratio (optimal, the noise law being known) and a logistic
regression on the outputs (a generic learned test that does not use that knowledge).

Beside each bound: the tests' measured trade-off (power at each false-positive rate) and the pair's exact curves
from dp-accounting (:mod:`privtext.privacy.tradeoff`); and for every project layer, the same audit on the pair a
search finds (:mod:`privtext.privacy.search`, rows with ``pair = searched``).

``l1``, ``minmax`` and ``minmax_calibrated`` are the project's layers, drawn through
:class:`privtext.privacy.layers.PrivacyLayer` itself. ``dpnr_code``, ``cape_code`` and ``federate_code`` are the
public reference code's layers (docs/methods.md, "The reference code's departures"), kept here only, as examples of what not to do. ``laplace`` is
the textbook scalar Laplace mechanism (sensitivity 1), the audit's own calibration check.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
from scipy import special, stats
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privtext.privacy.accounting import epsilon_accounting
from privtext.privacy.layers import (
    LAYER_KINDS, NoiseGenerator, PrivacyLayer, laplace_noise, minmax_normalise, noise_scale,
)
from privtext.privacy.search import LayerFactory, SearchSettings, batch_release, normalised, pair_epsilon, search_pair
from privtext.privacy.tradeoff import ExactCurve, exact_curve

TESTS = ("likelihood_ratio", "logistic_regression")
COLUMNS = ["mechanism", "pair", "D", "epsilon_nominal", "epsilon_effective", "epsilon_lower", "samples", "test"]
PAIRS = ("hand-picked", "searched")  # the worst case written for the mechanism, or found by privtext.privacy.search
EXTRA_COLUMNS = ["alpha", "beta", "alpha_upper", "beta_upper", "pair_epsilon", "epsilon_reachable", "epsilon_ceiling",
                 "confidence", "seed"]
# The trade-off table: measured (a test's threshold chosen on the calibration half for each target false-positive
# rate, both rates counted on the measurement half, with two-sided Clopper–Pearson intervals) and exact (dp-accounting)
TRADEOFF_COLUMNS = ["mechanism", "D", "epsilon_nominal", "test", "source", "fpr_target", "fpr", "fpr_low",
                    "fpr_high", "tpr", "tpr_low", "tpr_high"]
REPORTED_FPR = (1e-3, 1e-2)  # the false-positive rates whose power the audit table states
PROFILE_COLUMNS = ["mechanism", "D", "epsilon_nominal", "delta", "epsilon"]  # exact ε(δ), dp-accounting
PROFILE_DELTAS = np.concatenate([[0.0], np.geomspace(1e-12, 0.5, 116)])
CHUNK_ROWS = 10_000  # outputs drawn at once per input: 30 MB at D = 384 in float64

Release = Callable[[np.ndarray, int], np.ndarray]  # (input vector, n) -> n outputs, shape (n, D)


# --- the mechanisms ---------------------------------------------------------------------------------------

def _tile(x: np.ndarray, n: int) -> torch.Tensor:
    return torch.from_numpy(np.tile(x.astype(np.float64), (n, 1)))


def _project_layer(kind: str) -> Callable[[float, int, NoiseGenerator], Release]:
    """The layer exactly as the pipeline runs it (float64 so the audit is not about float32 rounding)."""
    def build(epsilon: float, dim: int, generator: NoiseGenerator) -> Release:
        layer = PrivacyLayer(kind, epsilon, dim, generator=generator)

        def release(x: np.ndarray, n: int) -> np.ndarray:
            with torch.no_grad():
                return layer(_tile(x, n)).numpy()
        return release
    return build


def dpnr_code_release(epsilon: float, dim: int, generator: NoiseGenerator) -> Release:
    """What not to do (DPNR's code, noise of shape [batch, 1]): min-max, then ONE Lap(1/ε) scalar per example
    added to every coordinate. The min of a min-max vector is 0, so ``o − min(o)`` gives the vector back
    exactly: the release hides nothing (not DP at any ε)."""
    def release(x: np.ndarray, n: int) -> np.ndarray:
        shift = laplace_noise((n, 1), 1.0 / epsilon, generator, dtype=torch.float64)
        return (minmax_normalise(_tile(x, n)) + shift).numpy()
    return release


def cape_code_release(epsilon: float, dim: int, generator: NoiseGenerator) -> Release:
    """What not to do (CAPE's code): ONE Lap(1/ε) vector drawn when the model is built and added to every
    example, so outputs are a deterministic function of the input (not DP at any ε)."""
    constant = laplace_noise((1, dim), 1.0 / epsilon, generator, dtype=torch.float64)

    def release(x: np.ndarray, n: int) -> np.ndarray:
        return (minmax_normalise(_tile(x, n)) + constant).numpy()
    return release


def federate_code_release(epsilon: float, dim: int, generator: NoiseGenerator) -> Release:
    """What not to do (FEDERATE's code): L2 normalisation with Lap(2/ε) noise. Unit-L2 vectors differ by up to
    2√D in L1 (u vs −u), so the guarantee is √D·ε, not ε."""
    def release(x: np.ndarray, n: int) -> np.ndarray:
        v = _tile(x, n)
        unit = v / v.norm(dim=-1, keepdim=True)
        return (unit + laplace_noise(unit.shape, 2.0 / epsilon, generator, dtype=torch.float64)).numpy()
    return release


def laplace_release(epsilon: float, dim: int, generator: NoiseGenerator) -> Release:
    """Textbook Laplace mechanism on a scalar of sensitivity 1: exactly ε-DP (the audit's calibration check)."""
    def release(x: np.ndarray, n: int) -> np.ndarray:
        return (_tile(x, n) + laplace_noise((n, 1), 1.0 / epsilon, generator, dtype=torch.float64)).numpy()
    return release


def minmax_pair(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """[0,1,…,1] vs [1,0,…,0]: fixed points of min-max, D apart in L1 (FEDERATE Appendix C)."""
    a = np.ones(dim)
    a[0] = 0.0
    return a, 1.0 - a


def l1_pair(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """e_1 vs −e_1: fixed points of L1 normalisation, 2 apart in L1."""
    a = np.zeros(dim)
    a[0] = 1.0
    return a, -a


def l2_pair(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """u vs −u with u = (1,…,1)/√D: fixed points of L2 normalisation, 2√D apart in L1."""
    u = np.full(dim, 1.0 / math.sqrt(dim))
    return u, -u


def scalar_pair(dim: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(1), np.ones(1)


def _layer_effective(kind: str) -> Callable[[float, int], float]:
    return lambda epsilon, dim: epsilon_accounting(kind, epsilon, dim)["epsilon_effective"]


@dataclass(frozen=True)
class Mechanism:
    """How to build a mechanism, its worst-case pair and what it really guarantees.

    ``statistic`` names the likelihood-ratio test: ``laplace`` (i.i.d. Laplace around the normalised input),
    ``shared_shift`` (one scalar on every coordinate: undo it by subtracting the min) or ``fixed_offset``
    (a constant the auditor learns from the calibration half)."""

    build: Callable[[float, int, NoiseGenerator], Release]
    pair: Callable[[int], tuple[np.ndarray, np.ndarray]]
    scale: Callable[[float, int], float]
    epsilon_effective: Callable[[float, int], float]
    statistic: str = "laplace"
    scalar: bool = False  # D is 1 whatever the config says
    layer: str | None = None  # the PrivacyLayer kind it is, if any: the searched audit audits that layer


MECHANISMS: dict[str, Mechanism] = {
    "l1": Mechanism(_project_layer("l1"), l1_pair, lambda e, d: noise_scale("l1", e, d), _layer_effective("l1"),
                    layer="l1"),
    "minmax": Mechanism(_project_layer("minmax"), minmax_pair, lambda e, d: noise_scale("minmax", e, d),
                        _layer_effective("minmax"), layer="minmax"),
    "minmax_calibrated": Mechanism(_project_layer("minmax_calibrated"), minmax_pair,
                                   lambda e, d: noise_scale("minmax_calibrated", e, d),
                                   _layer_effective("minmax_calibrated"), layer="minmax_calibrated"),
    # The scalar cannot mask [0,1,…,1] vs [1,0,…,0]: their difference is not along (1,…,1), and o − min(o)
    # recovers the min-max vector exactly. Not DP at any ε (D·ε would need independent noise per coordinate).
    "dpnr_code": Mechanism(dpnr_code_release, minmax_pair, lambda e, d: 1.0 / e, lambda e, d: math.inf,
                           statistic="shared_shift", layer="minmax_dpnr_code"),
    # Deterministic given the input: two inputs give two distinct points, ln(1/0) = ∞.
    "cape_code": Mechanism(cape_code_release, minmax_pair, lambda e, d: 1.0 / e, lambda e, d: math.inf,
                           statistic="fixed_offset", layer="minmax_cape_code"),
    # Lap(2/ε) on a vector of L1 sensitivity 2√D: (2√D)/(2/ε) = √D·ε (docs/methods.md, "The reference code's departures").
    "federate_code": Mechanism(federate_code_release, l2_pair, lambda e, d: 2.0 / e,
                               lambda e, d: math.sqrt(d) * e),
    "laplace": Mechanism(laplace_release, scalar_pair, lambda e, d: 1.0 / e, lambda e, d: e, scalar=True),
}


# --- bounds -----------------------------------------------------------------------------------------------

def clopper_pearson_upper(errors: np.ndarray | int, n: int, confidence: float = 0.95) -> np.ndarray:
    """One-sided Clopper–Pearson upper limit of a binomial rate (``errors`` out of ``n``); 0 errors give
    1 − (1 − confidence)^(1/n), ``n`` errors give 1."""
    errors = np.asarray(errors, dtype=float)
    upper = stats.beta.ppf(confidence, errors + 1, np.maximum(n - errors, 1e-300))
    return np.where(errors >= n, 1.0, upper)


def epsilon_from_rates(alpha: np.ndarray | float, beta: np.ndarray | float) -> np.ndarray:
    """The ε that error rates α (false positive) and β (false negative) prove: max of ln((1−β)/α) and
    ln((1−α)/β), or 0 when the test does no better than chance."""
    alpha, beta = np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        proved = np.fmax(np.log1p(-beta) - np.log(alpha), np.log1p(-alpha) - np.log(beta))
    return np.fmax(proved, 0.0)


def epsilon_lower_bound(false_positives: np.ndarray | int, false_negatives: np.ndarray | int, n: int,
                        confidence: float = 0.95) -> np.ndarray:
    """``epsilon_lower`` from error counts out of ``n`` outputs of each input, α and β replaced by their
    Clopper–Pearson upper limits (each holds with ``confidence``, so both at once with ≥ 2·confidence − 1)."""
    return epsilon_from_rates(clopper_pearson_upper(false_positives, n, confidence),
                              clopper_pearson_upper(false_negatives, n, confidence))


def epsilon_ceiling(n: int, confidence: float = 0.95) -> float:
    """The largest ε ``n`` outputs per input can ever prove (a perfect test: no error at all)."""
    return float(epsilon_lower_bound(0, 0, n, confidence))


def clopper_pearson_interval(successes: np.ndarray | int, n: int,
                             confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson interval of a binomial rate (``successes`` out of ``n``)."""
    k = np.asarray(successes, dtype=float)
    tail = (1.0 - confidence) / 2
    low = np.where(k > 0, stats.beta.ppf(tail, np.maximum(k, 1e-300), n - k + 1), 0.0)
    high = np.where(k < n, stats.beta.ppf(1.0 - tail, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return low, high


def reachable_epsilon(curve: ExactCurve, samples: int, confidence: float = 0.95, points: int = 400) -> float:
    """The ε_lower the best test would prove with ``samples`` outputs per input if its error counts came out at
    their expected values α·n and f(α)·n (``curve``'s trade-off): what the audit can hope for at that size."""
    alpha = np.concatenate([[0.0], np.geomspace(0.5 / samples, 0.5, points)])
    beta = curve.false_negative_rate(alpha)
    proved = epsilon_lower_bound(np.round(alpha * samples), np.round(beta * samples), samples, confidence)
    return float(np.max(proved))


# --- tests and thresholds ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Threshold:
    """Say "input b" when the statistic is > ``value`` (``strict``) or ≥ ``value``."""

    value: float
    strict: bool


def _errors(stat_a: np.ndarray, stat_b: np.ndarray, values: np.ndarray, strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """(false positives, false negatives) of thresholds ``values``; both statistics sorted ascending."""
    side = "right" if strict else "left"
    return len(stat_a) - np.searchsorted(stat_a, values, side), np.searchsorted(stat_b, values, side)


def choose_threshold(stat_a: np.ndarray, stat_b: np.ndarray, confidence: float = 0.95) -> Threshold:
    """The threshold maximising ``epsilon_lower`` on the calibration draws. Candidates are values of the first
    half of the draws (dense in a's upper and b's lower tail, where a test with few errors must cut); errors
    are counted on the second half, because a threshold at a counted sample's own extreme looks error-free
    by construction."""
    half = len(stat_a) // 2
    source_a, source_b = stat_a[:half], stat_b[:half]
    stat_a, stat_b = np.sort(stat_a[half:]), np.sort(stat_b[half:])
    tail = np.geomspace(0.5 / half, 0.5, 400)
    candidates = np.unique(np.concatenate([
        np.quantile(source_a, 1.0 - tail, method="inverted_cdf"), np.quantile(source_b, tail, method="inverted_cdf"),
        np.quantile(np.concatenate([source_a, source_b]), np.linspace(0.0, 1.0, 1001), method="inverted_cdf"),
    ]))
    best, best_epsilon = Threshold(float(candidates[0]), False), -1.0
    for strict in (False, True):
        epsilon = epsilon_lower_bound(*_errors(stat_a, stat_b, candidates, strict), len(stat_a), confidence)
        i = int(np.argmax(epsilon))
        if epsilon[i] > best_epsilon:
            best, best_epsilon = Threshold(float(candidates[i]), strict), float(epsilon[i])
    return best


def measure(stat_a: np.ndarray, stat_b: np.ndarray, threshold: Threshold, confidence: float = 0.95) -> dict[str, float]:
    """α, β of ``threshold`` on the measurement half, their upper limits and the ε they prove."""
    n = len(stat_a)
    false_pos, false_neg = _errors(np.sort(stat_a), np.sort(stat_b), np.array([threshold.value]), threshold.strict)
    alpha_upper = float(clopper_pearson_upper(false_pos[0], n, confidence))
    beta_upper = float(clopper_pearson_upper(false_neg[0], n, confidence))
    return {"alpha": false_pos[0] / n, "beta": false_neg[0] / n, "alpha_upper": alpha_upper,
            "beta_upper": beta_upper, "epsilon_lower": float(epsilon_from_rates(alpha_upper, beta_upper))}


def mixture_log_density(outputs: np.ndarray, centres: np.ndarray, scale: float) -> np.ndarray:
    """ln of the density of each output under an equal mixture of i.i.d. Laplace(``scale``) laws around the rows
    of ``centres`` [M, D], less the constant −D·ln(2·scale) the two inputs share."""
    distance = torch.cdist(torch.from_numpy(np.ascontiguousarray(outputs, dtype=np.float64)),
                           torch.from_numpy(np.ascontiguousarray(centres, dtype=np.float64)), p=1).numpy()
    return special.logsumexp(-distance / scale, axis=1) - math.log(len(centres))


def likelihood_ratio(outputs: np.ndarray, centre_a: np.ndarray, centre_b: np.ndarray, scale: float,
                     statistic: str = "laplace") -> np.ndarray:
    """ln p_b(o)/p_a(o) for i.i.d. Laplace(``scale``) noise around the centres: Σ(|o − a| − |o − b|)/scale. A
    centre given as a matrix [M, D] is an equal mixture of its rows (an input whose noise-free output is itself
    random, as under word dropout: :mod:`privtext.jobs.release_audit`).

    For ``shared_shift`` and ``fixed_offset`` the true ratio is ±∞ (the two inputs' outputs never coincide);
    the same sum, after undoing the shared scalar, orders outputs as it does."""
    if statistic == "shared_shift":
        outputs = outputs - outputs.min(axis=1, keepdims=True)  # a min-max vector's min is 0
    if np.ndim(centre_a) == 1 and np.ndim(centre_b) == 1:
        llr = (np.abs(outputs - centre_a) - np.abs(outputs - centre_b)).sum(axis=1) / scale
    else:
        llr = mixture_log_density(outputs, np.atleast_2d(centre_b), scale) - mixture_log_density(
            outputs, np.atleast_2d(centre_a), scale)
    return np.round(llr, 9)  # the clipped Laplace ratio has atoms; rounding keeps them from splitting in ulps


# --- running the audit ------------------------------------------------------------------------------------

Scorer = Callable[[np.ndarray], np.ndarray]


def _generator(seed: int, name: str, epsilon: float, dim: int) -> np.random.Generator:
    """One stream per (mechanism, ε, D), whatever else is audited, so any row can be rerun alone; numpy's
    PCG64, as :class:`~privtext.privacy.layers.PrivacyLayer` draws its noise, so the audit checks the sampler the
    pipeline runs."""
    entropy = [seed, zlib.crc32(name.encode()), dim, zlib.crc32(repr(float(epsilon)).encode())]
    return np.random.default_rng(np.random.SeedSequence(entropy))


def _fit_tests(statistic: str, first_a: np.ndarray, first_b: np.ndarray, pair: tuple[np.ndarray, np.ndarray],
               scale: float, logistic_samples: int) -> dict[str, Scorer]:
    """Both tests, fitted on the first calibration chunk; larger scores mean "input b". The likelihood ratio
    reads an output's first D columns (a release may append more: the searched audit's batch-mate); a centre may
    be a mixture's [M, D] rows."""
    centres, dim = pair, np.shape(pair[0])[-1]
    if statistic == "fixed_offset":  # the auditor learns the constant from the outputs it sees
        centres = (np.median(first_a[:, :dim], axis=0), np.median(first_b[:, :dim], axis=0))
    k = min(logistic_samples, len(first_a))
    labels = np.repeat([0, 1], k)
    logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    logistic.fit(np.vstack([first_a[:k], first_b[:k]]), labels)
    return {
        "likelihood_ratio": lambda o: likelihood_ratio(o[:, :dim], *centres, scale, statistic),
        "logistic_regression": logistic.decision_function,
    }


def _chunks(samples: int) -> list[int]:
    return [min(CHUNK_ROWS, samples - start) for start in range(0, samples, CHUNK_ROWS)]


def _half(release: Release, pair: tuple[np.ndarray, np.ndarray], samples: int, tests: dict[str, Scorer],
          first: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Scores of ``samples`` outputs of each input under every test, drawn in chunks (D = 384 would not fit
    at once); ``first`` is an already-drawn first chunk (the one the tests were fitted on)."""
    scores: tuple[dict, dict] = ({}, {})
    for i, rows in enumerate(_chunks(samples)):
        outputs = first if (i == 0 and first is not None) else (release(pair[0], rows), release(pair[1], rows))
        for side, out in zip(scores, outputs):
            for name, scorer in tests.items():
                side.setdefault(name, []).append(scorer(out))
    return tuple({name: np.concatenate(parts) for name, parts in side.items()} for side in scores)


def _break_ties(statistic: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The statistic plus a random amount below its resolution (a randomised test). The likelihood ratio of
    clipped Laplace noise has atoms (l1: a fifth of the outputs share its largest value at ε = 1); a threshold
    inside an atom needs a coin to reach every false-positive rate, as the Neyman–Pearson test does."""
    return statistic + rng.random(len(statistic)) * 1e-10 * np.maximum(1.0, np.abs(statistic))


def measured_tradeoff(calibration: tuple[np.ndarray, np.ndarray], measurement: tuple[np.ndarray, np.ndarray],
                      targets: Sequence[float], confidence: float = 0.95, *,
                      rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Power of the test "statistic > t" at each target false-positive rate x: t is the smallest calibration value
    of input a with at most x·n calibration values above it, and both rates are counted on the measurement half
    (fresh outputs, so choosing t does not flatter them), with two-sided Clopper–Pearson intervals. With ``rng``,
    ties are broken at random (:func:`_break_ties`)."""
    if rng is not None:
        calibration = tuple(_break_ties(side, rng) for side in calibration)
        measurement = tuple(_break_ties(side, rng) for side in measurement)
    targets = np.asarray(targets, dtype=float)
    calibration_a = np.sort(calibration[0])
    allowed = np.floor(targets * len(calibration_a)).astype(int)
    thresholds = calibration_a[np.clip(len(calibration_a) - 1 - allowed, 0, len(calibration_a) - 1)]
    n = len(measurement[0])
    false_pos = n - np.searchsorted(np.sort(measurement[0]), thresholds, "right")
    true_pos = n - np.searchsorted(np.sort(measurement[1]), thresholds, "right")
    fpr_low, fpr_high = clopper_pearson_interval(false_pos, n, confidence)
    tpr_low, tpr_high = clopper_pearson_interval(true_pos, n, confidence)
    return pd.DataFrame({"fpr_target": targets, "fpr": false_pos / n, "fpr_low": fpr_low, "fpr_high": fpr_high,
                         "tpr": true_pos / n, "tpr_low": tpr_low, "tpr_high": tpr_high})


def mechanism_curve(name: str, epsilon: float, dim: int) -> ExactCurve | None:
    """The exact curves of ``name``'s audited pair (dp-accounting), or None where the output is not i.i.d.
    Laplace around the normalised input (the reference code's DPNR and CAPE layers: not DP at any ε)."""
    mechanism = MECHANISMS[name]
    if mechanism.statistic != "laplace":
        return None
    dim = 1 if mechanism.scalar else dim
    first, second = mechanism.pair(dim)  # fixed points of the normalisation: they are the centres
    return exact_curve(first - second, mechanism.scale(epsilon, dim))


def _tradeoff_targets(samples: int) -> np.ndarray:
    return np.unique(np.concatenate([np.geomspace(max(1.0 / samples, 1e-5), 0.5, 30), REPORTED_FPR]))


EXACT_FPR = np.concatenate([[0.0], np.geomspace(1e-6, 1.0, 241)])


def audit_release(release: Release, pair: tuple[np.ndarray, np.ndarray], *, centres: tuple[np.ndarray, np.ndarray],
                  scale: float, statistic: str, samples: int, confidence: float, logistic_samples: int,
                  tie_break: Callable[[str], np.random.Generator]) -> tuple[list[dict], list[pd.DataFrame]]:
    """Both tests on ``release``'s outputs of ``pair``: per test, its ``measure`` result and its measured
    trade-off. ``centres`` are the noise-free outputs the likelihood ratio is centred on; ``tie_break(test)``
    gives the coin of :func:`measured_tradeoff`."""
    rows = min(CHUNK_ROWS, samples)
    first = (release(pair[0], rows), release(pair[1], rows))
    tests = _fit_tests(statistic, *first, centres, scale, logistic_samples)
    calibration = _half(release, pair, samples, tests, first)
    measurement = _half(release, pair, samples, tests)
    results, curves = [], []
    for test in TESTS:
        threshold = choose_threshold(calibration[0][test], calibration[1][test], confidence)
        results.append({**measure(measurement[0][test], measurement[1][test], threshold, confidence), "test": test})
        curves.append(measured_tradeoff((calibration[0][test], calibration[1][test]),
                                        (measurement[0][test], measurement[1][test]), _tradeoff_targets(samples),
                                        confidence, rng=tie_break(test)).assign(test=test, source="measured"))
    return results, curves


def _records(results: list[dict], key: dict, pair: str, epsilon_effective: float, *, samples: int,
             pair_epsilon: float, reachable: float, confidence: float, seed: int) -> list[dict]:
    """The audit table's rows of one mechanism × D × ε on one pair: ``results`` (one per test) with what they share."""
    ceiling = epsilon_ceiling(samples, confidence)
    return [{**key, "pair": pair, "epsilon_effective": float(epsilon_effective), **result, "samples": samples,
             "pair_epsilon": pair_epsilon, "epsilon_reachable": reachable, "epsilon_ceiling": ceiling,
             "confidence": confidence, "seed": seed} for result in results]


def audit_mechanism(name: str, epsilon: float, dim: int, samples: int, *, seed: int, confidence: float = 0.95,
                    logistic_samples: int = 5000) -> tuple[list[dict], pd.DataFrame, pd.DataFrame]:
    """One row per test for mechanism ``name`` at nominal ``epsilon`` and dimension ``dim``, its trade-off rows
    (measured for each test, exact where the noise law allows) and its exact ε(δ) (empty where it does not)."""
    mechanism = MECHANISMS[name]
    dim = 1 if mechanism.scalar else dim
    pair = mechanism.pair(dim)
    results, tradeoff = audit_release(
        mechanism.build(epsilon, dim, _generator(seed, name, epsilon, dim)), pair, centres=pair,
        scale=mechanism.scale(epsilon, dim), statistic=mechanism.statistic, samples=samples, confidence=confidence,
        logistic_samples=logistic_samples,
        tie_break=lambda test: _generator(seed, f"{name}/tie-break/{test}", epsilon, dim))
    curve = mechanism_curve(name, epsilon, dim)
    reachable = math.inf if curve is None else reachable_epsilon(curve, samples, confidence)
    key = {"mechanism": name, "D": dim, "epsilon_nominal": float(epsilon)}
    distance = float(np.abs(pair[0] - pair[1]).sum())  # the pairs are fixed points of their normalisation
    records = _records(results, key, PAIRS[0], mechanism.epsilon_effective(epsilon, dim), samples=samples,
                       pair_epsilon=distance / mechanism.scale(epsilon, dim),
                       reachable=min(reachable, epsilon_ceiling(samples, confidence)), confidence=confidence,
                       seed=seed)
    tradeoff = [part.assign(**key) for part in tradeoff]
    profile = pd.DataFrame(columns=PROFILE_COLUMNS)
    if curve is not None:
        tpr = curve.true_positive_rate(EXACT_FPR)
        tradeoff.append(pd.DataFrame({**key, "test": "optimal", "source": "exact", "fpr_target": EXACT_FPR,
                                      "fpr": EXACT_FPR, "tpr": tpr}))
        profile = pd.DataFrame({**key, "delta": PROFILE_DELTAS,
                                "epsilon": [curve.epsilon_for_delta(d) for d in PROFILE_DELTAS]})
    return records, pd.concat(tradeoff, ignore_index=True).reindex(columns=TRADEOFF_COLUMNS), profile


def layer_factory(kind: str) -> LayerFactory:
    """A project layer, in float64 as the audit draws it."""
    return lambda epsilon, dim, generator: PrivacyLayer(kind, epsilon, dim, generator=generator)


def searched_layers(mechanisms: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Audit name -> (PrivacyLayer kind, likelihood-ratio statistic) for every layer the searched audit covers:
    each requested mechanism that is a project layer, and every registered layer no mechanism names (a layer
    added to privtext.privacy.layers is audited with no pair written for it)."""
    chosen = {name: (MECHANISMS[name].layer, MECHANISMS[name].statistic) for name in mechanisms
              if MECHANISMS[name].layer is not None}
    named = {MECHANISMS[name].layer for name in MECHANISMS}
    return {**chosen, **{kind: (kind, "laplace") for kind in LAYER_KINDS if kind not in named}}


def audit_searched(name: str, factory: LayerFactory, epsilon: float, dim: int, samples: int, *, seed: int,
                   epsilon_effective: float, settings: SearchSettings, statistic: str = "laplace",
                   confidence: float = 0.95, logistic_samples: int = 5000) -> list[dict]:
    """One row per test: the layer ``factory`` builds, audited on the pair :func:`search_pair` finds, each output
    released beside a known batch-mate (:func:`privtext.privacy.search.batch_release`)."""
    layer = factory(epsilon, dim, _generator(seed, f"{name}/searched", epsilon, dim))
    found = search_pair(layer, dim, settings, _generator(seed, f"{name}/search", epsilon, dim))
    pair = (found.first, found.second)
    layer.generator = _generator(seed, f"{name}/searched-draws", epsilon, dim)  # the search left its own there
    results, _ = audit_release(
        batch_release(layer, pair[0]), pair, centres=(normalised(layer, pair[0]), normalised(layer, pair[1])),
        scale=layer.scale, statistic=statistic, samples=samples, confidence=confidence,
        logistic_samples=logistic_samples,
        tie_break=lambda test: _generator(seed, f"{name}/searched/tie-break/{test}", epsilon, dim))
    key = {"mechanism": name, "D": dim, "epsilon_nominal": float(epsilon)}
    return _records(results, key, PAIRS[1], epsilon_effective, samples=samples,
                    pair_epsilon=pair_epsilon(layer, *pair), reachable=math.nan, confidence=confidence, seed=seed)


@dataclass(frozen=True)
class AuditResult:
    """The audit table (one row per mechanism × D × ε × test), its trade-off curves (TRADEOFF_COLUMNS) and the
    exact privacy profiles ε(δ) (PROFILE_COLUMNS)."""

    table: pd.DataFrame
    tradeoff: pd.DataFrame
    profile: pd.DataFrame


def run_audit(mechanisms: Sequence[str], epsilons: Sequence[float], dims: Sequence[int], samples: int, *,
              seed: int, confidence: float = 0.95, logistic_samples: int = 5000, search: SearchSettings | None = None,
              progress: Callable[[str], None] | None = None) -> AuditResult:
    """The audit of every mechanism × D × ε on its hand-picked pair (scalar mechanisms once per ε), and with
    ``search`` of every :func:`searched_layers` layer on the pair a search finds."""
    unknown = [m for m in mechanisms if m not in MECHANISMS]
    if unknown:
        raise ValueError(f"unknown mechanism(s) {unknown}; known: {', '.join(MECHANISMS)}")
    if samples < 4:  # the calibration half is split in two again to choose the threshold
        raise ValueError(f"audit samples must be at least 4, got {samples!r}")
    records, tradeoff, profile = [], [], []
    for name in mechanisms:
        for dim in ([1] if MECHANISMS[name].scalar else dims):
            for epsilon in epsilons:
                if progress:
                    progress(f"auditing {name} at D={dim}, epsilon={epsilon}")
                rows, curves, exact = audit_mechanism(name, epsilon, dim, samples, seed=seed, confidence=confidence,
                                                      logistic_samples=logistic_samples)
                records += rows
                tradeoff.append(curves)
                profile.append(exact)
    for name, (kind, statistic) in (searched_layers(mechanisms) if search is not None else {}).items():
        for dim in dims:
            for epsilon in epsilons:
                if progress:
                    progress(f"searching and auditing layer {kind} at D={dim}, epsilon={epsilon}")
                records += audit_searched(name, layer_factory(kind), epsilon, dim, samples, seed=seed,
                                          epsilon_effective=epsilon_accounting(kind, epsilon, dim)["epsilon_effective"],
                                          settings=search, statistic=statistic, confidence=confidence,
                                          logistic_samples=logistic_samples)
    def joined(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
        parts = [part for part in parts if len(part)] or [pd.DataFrame(columns=columns)]
        return pd.concat(parts, ignore_index=True).reindex(columns=columns)

    return AuditResult(pd.DataFrame(records, columns=COLUMNS + EXTRA_COLUMNS), joined(tradeoff, TRADEOFF_COLUMNS),
                       joined(profile, PROFILE_COLUMNS))
