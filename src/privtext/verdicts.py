"""The verdict rule of SPEC §6: a claim's estimate (its 95% interval), direction and seeds → a verdict.

A claim states a direction for a difference (ours − reference, in the measurement's unit):

- ``+1`` / ``-1`` (the difference is positive / negative): *reproduced* when the interval excludes 0 on the
  claimed side, *reversed* when it excludes 0 on the other side, *not reproduced* when it contains 0.
- ``"comparable"`` (D3: DPNR's privacy is comparable to MAJORITY; C2: CAPE's accuracy is comparable to Base):
  an equivalence claim, judged against a stated margin m. *Reproduced* when the whole interval lies inside
  [−m, m] (the difference is shown to be smaller than m), *reversed* when it lies wholly outside (a difference
  larger than m is shown), *not reproduced* otherwise (the data cannot show the two are within m).
- *Inconclusive* whatever the interval when fewer than :data:`MIN_SEEDS` seeds stand behind it, or when the
  interval is undefined (NaN or infinite ends).

:data:`COMPARABLE_MARGIN` is 2 points on a 0–1 scale (accuracy, empirical privacy): a gap most NLP readers
would still call comparable, and twice the largest seed-to-seed std CAPE's Table 3 reports (0.009). CAPE's own
numbers (target accuracy 0.748 vs Base 0.818) would not pass it; that is a finding, not a reason to widen it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Literal

OUTCOMES = ("reproduced", "not reproduced", "reversed", "inconclusive")
MIN_SEEDS = 3
COMPARABLE_MARGIN = 0.02
Direction = Literal[1, -1, "comparable"]


@dataclass(frozen=True)
class Verdict:
    """One of :data:`OUTCOMES` and a short reason a reader can check against the interval."""

    outcome: str
    reason: str


def _interval_text(low: float, high: float) -> str:
    return f"95% interval [{low:.3g}, {high:.3g}]"


def _check(low: float, high: float, direction: Direction, margin: float | None) -> None:
    if direction not in (1, -1, "comparable"):
        raise ValueError(f"claim direction must be +1, -1 or 'comparable', got {direction!r}")
    if direction == "comparable" and (margin is None or not margin > 0):
        raise ValueError(f"a 'comparable' claim needs an equivalence margin > 0, got {margin!r}")
    if low > high:  # NaN compares False, so undefined intervals pass here and are judged inconclusive
        raise ValueError(f"interval low end {low!r} is above its high end {high!r}")


def _directional(low: float, high: float, direction: int, seeds: str) -> Verdict:
    claimed, opposite = ("above", "below") if direction > 0 else ("below", "above")
    if (low > 0 and direction > 0) or (high < 0 and direction < 0):
        return Verdict("reproduced", f"{_interval_text(low, high)} lies {claimed} 0, as claimed ({seeds})")
    if low > 0 or high < 0:
        return Verdict("reversed", f"{_interval_text(low, high)} lies {opposite} 0, against the claim ({seeds})")
    return Verdict("not reproduced", f"{_interval_text(low, high)} contains 0: no effect cannot be ruled out ({seeds})")


def _equivalence(low: float, high: float, margin: float, seeds: str) -> Verdict:
    zone = f"±{margin:.3g}"
    if -margin <= low and high <= margin:
        return Verdict("reproduced", f"{_interval_text(low, high)} lies within the margin {zone} ({seeds})")
    if low > margin or high < -margin:
        return Verdict("reversed", f"{_interval_text(low, high)} lies outside the margin {zone}: "
                                   f"a larger difference is shown ({seeds})")
    return Verdict("not reproduced", f"{_interval_text(low, high)} reaches beyond the margin {zone}: "
                                     f"comparability is not shown ({seeds})")


def verdict(low: float, high: float, direction: Direction, n_seeds: int, *, margin: float | None = None) -> Verdict:
    """The verdict on a claim whose difference has 95% interval [``low``, ``high``] over ``n_seeds`` seeds;
    ``margin`` (same unit) is required for ``"comparable"`` claims, e.g. :data:`COMPARABLE_MARGIN`."""
    _check(low, high, direction, margin)
    if n_seeds < MIN_SEEDS:
        return Verdict("inconclusive", f"only {n_seeds} seed(s); at least {MIN_SEEDS} are needed to tell "
                                       "(run more seeds)")
    if not (math.isfinite(low) and math.isfinite(high)):
        return Verdict("inconclusive", f"the interval [{low}, {high}] is undefined (a measurement is missing "
                                       "or constant); rerun the grid points it needs")
    seeds = f"{n_seeds} seeds"
    if direction == "comparable":
        return _equivalence(low, high, margin, seeds)
    return _directional(low, high, direction, seeds)


# A claim of several parts (e.g. D1: less leakage AND no accuracy loss) holds only if every part holds.
_SEVERITY = ("reversed", "not reproduced", "inconclusive", "reproduced")


def combine(parts: Iterable[Verdict]) -> Verdict:
    """The verdict on a conjunction of claims: its weakest part decides (a part shown false settles it
    before a part that lacks data)."""
    parts = list(parts)
    if not parts:
        raise ValueError("combine() needs at least one verdict")
    worst = min(parts, key=lambda v: _SEVERITY.index(v.outcome))
    return Verdict(worst.outcome, "; ".join(v.reason for v in parts if v.outcome == worst.outcome))
