"""How a claim is read and judged (docs/claims.md).

A claim is one or more *parts*, each a difference ``a − b`` (or a trend's Spearman ρ) with a
:class:`Reading`: what the paper's words promise about it.

- **superiority** ("more private than", "fairer than"): the difference lies on the claimed side of 0;
- **non-inferiority** ("without significantly lowering accuracy", "at a small cost"): it is not worse than
  ``−margin`` on the claimed side; a gain is not against the claim;
- **equivalence** ("comparable", "about as much"): it lies within ``±margin``.

Each part is judged on its 95% interval (:mod:`privtext.claims.inference`), that is by one-sided tests at 2.5%: the
part *holds* when the interval lies inside the claimed region, and is *shown opposite* when it lies wholly in
the region the claim rules out (the other side of 0 for superiority, below ``−margin`` for non-inferiority,
beyond ``±margin`` for equivalence). A claim of several parts:

- **holds** when every part holds (an intersection–union test: its error stays at 2.5% with no correction);
- is **contradicted** when Holm's procedure over the parts' "shown opposite" p-values rejects at least one at
  family-wise 2.5%;
- is **untestable** when a part lacks what it needs (runs, 5 seeds, a converged model) and none is
  contradicted; the reason says what would settle it;
- is **not shown** otherwise: the data can tell neither way.

So, with no effect, "holds" and "contradicted" together come out at most 5% of the time (2.5% each), for one
part or many (``tests/test_inference.py`` simulates it). The same reading scores the papers' own printed
numbers (:func:`point_meets`): a paper whose table does not meet its prose is a finding about the paper,
reported apart from what our runs show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence

from privtext.claims.inference import Estimate
from privtext.claims.seed_shape import LEVEL as SEED_SHAPE_LEVEL, seed_shape_reason
from privtext.measures.multiple_testing import holm

OUTCOMES = ("holds", "not shown", "contradicted", "untestable")
MEANINGS = {
    "holds": "every part of the claim is shown on our runs (each 95% interval inside the claimed region)",
    "not shown": "our runs cannot tell: some interval reaches outside the claimed region, none is shown opposite",
    "contradicted": "some part is shown opposite (Holm over the parts, family-wise 2.5%)",
    "untestable": ("a part lacks runs, seeds, a converged model or the paper's margin here, or its seeds fall in "
                   "two groups; the reason says what would settle it"),
}
ALPHA = 0.025  # per side: a 95% two-sided interval
MIN_SEEDS = 5  # the papers averaged 4–5 runs; fewer leave the seed variance too loosely estimated
ACCURACY_MARGIN = 0.02
ACCURACY_MARGIN_REASON = ("accuracy: the project's one convention, 2 points on a 0–1 scale (the papers call "
                          "accuracy differences of 0.3–2.1 points 'comparable')")
Kind = Literal["superiority", "non-inferiority", "equivalence"]


@dataclass(frozen=True)
class Reading:
    """What a part's words promise: ``kind``, the claimed ``direction`` of ``a − b`` (+1 higher, −1 lower;
    unused for equivalence) and a ``margin`` with the one line that justifies it."""

    kind: Kind
    direction: int = 1
    margin: float = 0.0
    margin_reason: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("superiority", "non-inferiority", "equivalence"):
            raise ValueError(f"reading kind must be superiority, non-inferiority or equivalence, got {self.kind!r}")
        if self.direction not in (1, -1):
            raise ValueError(f"reading direction must be +1 or -1, got {self.direction!r}")
        if self.margin < 0 or (self.kind != "superiority" and not self.margin > 0):
            raise ValueError(f"a {self.kind} reading needs a margin > 0 (superiority: >= 0), got {self.margin!r}")

    def describe(self) -> str:
        """'superiority: a − b < 0', 'non-inferiority: a − b > −0.02', 'equivalence: |a − b| < 0.02'."""
        m = f"{self.margin:g}"
        if self.kind == "equivalence":
            return f"equivalence: |a − b| < {m}"
        if self.kind == "superiority":
            return f"superiority: a − b {'>' if self.direction > 0 else '<'} {m if self.margin else '0'}"
        return f"non-inferiority: a − b {'> −' if self.direction > 0 else '< '}{m}"

    def p_holds(self, estimate: Estimate) -> float:
        """p-value of "the claim's region does not contain the truth" (small when the part is shown)."""
        d, m = self.direction, self.margin
        if self.kind == "equivalence":
            return max(estimate.p_greater(-m), estimate.p_less(m))
        bound = m if self.kind == "superiority" else -m
        return estimate.p_greater(bound) if d > 0 else estimate.p_less(-bound)

    def p_opposite(self, estimate: Estimate) -> float:
        """p-value of "the truth is not in the region the claim rules out" (small when shown opposite)."""
        d, m = self.direction, self.margin
        if self.kind == "equivalence":
            return min(estimate.p_greater(m), estimate.p_less(-m))
        bound = 0.0 if self.kind == "superiority" else -m
        return estimate.p_less(bound) if d > 0 else estimate.p_greater(-bound)

    def point_meets(self, value: float) -> bool:
        """Whether a printed difference (no interval) lies in the claimed region."""
        d, m = self.direction, self.margin
        # A margin taken from the paper's own largest difference is met by that difference itself.
        if self.kind == "equivalence":
            return abs(value) <= m
        return d * value > m if self.kind == "superiority" else d * value >= -m


@dataclass(frozen=True)
class PartJudgement:
    label: str
    outcome: str  # holds / not shown / contradicted / untestable, for this part alone after Holm
    p_holds: float
    p_opposite: float
    reason: str


@dataclass(frozen=True)
class Judgement:
    outcome: str
    reason: str
    parts: tuple[PartJudgement, ...]


def untestable_reason(estimate: Estimate, min_seeds: int = MIN_SEEDS, shape_level: float = SEED_SHAPE_LEVEL) -> str:
    """Why an estimate cannot be judged ('' when it can). ``shape_level``: the level of the test for seeds
    in two groups (:func:`privtext.claims.seed_shape.seed_shape_reason`)."""
    if estimate.n_seeds < min_seeds:
        return f"{estimate.n_seeds} seed(s), {min_seeds} needed (run the claims study's seeds)"
    if not (math.isfinite(estimate.low) and math.isfinite(estimate.high)):
        return "the interval is undefined (a measurement is missing or NaN)"
    # The interval assumes seeds spread normally around one optimum (docs/claims.md, "Seeds that are not
    # normal"); a split smaller than the test-set standard error moves no verdict.
    test_variance = estimate.test_variance if math.isfinite(estimate.test_variance) else 0.0
    return seed_shape_reason(estimate.per_seed, negligible_gap=math.sqrt(max(test_variance, 0.0)), level=shape_level)


def _interval(estimate: Estimate) -> str:
    return f"{estimate.mean:.3g} [{estimate.low:.3g}, {estimate.high:.3g}]"


def judge(parts: Sequence[tuple[str, Reading, Estimate, str]], alpha: float = ALPHA,
          min_seeds: int = MIN_SEEDS, need: int | None = None, shape_level: float = SEED_SHAPE_LEVEL) -> Judgement:
    """The verdict on a claim from its parts ``(label, reading, estimate, blocker)``; ``blocker`` is a reason
    the part cannot be judged ('' when it can, e.g. 'not converged'). ``need``: how many parts must hold (the
    paper's hedge, e.g. "in most cases": more than half); all of them by default.

    With every part needed, the claim holds when each part's interval is inside its region (an
    intersection–union test, no correction needed). With fewer, the parts shown to hold are counted after
    Holm's procedure over their p-values, so "at least ``need`` parts hold" keeps a family-wise error of
    ``alpha``; it is contradicted when Holm shows more than ``n − need`` parts opposite (fewer than ``need``
    can then hold). ``shape_level``: the seed-shape check's level per claim (0: not run)."""
    if not parts:
        raise ValueError("judge() needs at least one part")
    n = len(parts)
    need = n if need is None else need
    if not 1 <= need <= n:
        raise ValueError(f"need must be between 1 and the number of parts ({n}), got {need}")
    # the seed-shape test's level is split over the parts (Bonferroni), so a claim of normal seeds is made
    # untestable by it at most SEED_SHAPE_LEVEL of the time, for one part or fifteen
    blockers = [blocker or untestable_reason(estimate, min_seeds, shape_level / len(parts))
                for _, _, estimate, blocker in parts]
    testable = [i for i, b in enumerate(blockers) if not b]
    p_hold = [parts[i][1].p_holds(parts[i][2]) if i in testable else math.nan for i in range(n)]
    p_opp = [parts[i][1].p_opposite(parts[i][2]) if i in testable else math.nan for i in range(n)]
    opposite = holm(p_opp, alpha)
    shown = [p <= alpha for p in p_hold] if need == n else holm(p_hold, alpha)
    judged = []
    for i, (label, reading, estimate, _) in enumerate(parts):
        if blockers[i]:
            outcome, why = "untestable", blockers[i]
        elif opposite[i]:
            outcome, why = "contradicted", f"{_interval(estimate)} is shown opposite to '{reading.describe()}'"
        elif shown[i]:
            outcome, why = "holds", f"{_interval(estimate)} lies inside '{reading.describe()}'"
        else:
            outcome, why = "not shown", f"{_interval(estimate)} reaches outside '{reading.describe()}'"
        judged.append(PartJudgement(label, outcome, p_hold[i], p_opp[i], f"{label}: {why}"))
    outcomes = [j.outcome for j in judged]
    n_holds, n_opposite = outcomes.count("holds"), outcomes.count("contradicted")
    if n_opposite > n - need:
        overall = "contradicted"
    elif n_holds >= need:
        overall = "holds"
    elif "untestable" in outcomes:
        overall = "untestable"
    else:
        overall = "not shown"
    deciding = [j.reason for j in judged if j.outcome == overall]
    if need < n:
        deciding.append(f"{n_holds} of {n} parts shown, {need} needed; {n_opposite} shown opposite "
                        f"(Holm at family-wise {alpha:g})")
    elif overall == "contradicted" and n > 1:
        deciding.append(f"Holm over {len(testable)} part(s) at family-wise {alpha:g}")
    return Judgement(overall, "; ".join(deciding), tuple(judged))


def paper_reading(parts: Sequence[tuple[str, Reading, float]], need: int | None = None) -> str:
    """The papers' own printed differences scored by the same reading: 'meets the claim as read', 'does not
    meet the claim as read: …', 'meets it on the printed parts (…)' or 'not printed'. ``need``: as in
    :func:`judge` (a hedged claim is met when that many parts are)."""
    printed = [(label, reading, value) for label, reading, value in parts if math.isfinite(value)]
    if not printed:
        return "not printed"
    failing = [f"{label} = {value:+.3g} ({reading.describe()})" for label, reading, value in printed
               if not reading.point_meets(value)]
    need = len(parts) if need is None else need
    met = len(printed) - len(failing)
    if met < need and len(failing) > len(parts) - need:
        return "does not meet the claim as read: " + "; ".join(failing)
    if need < len(parts) and met >= need:
        return f"meets the claim as read ({met} of {len(parts)} parts, {need} needed)" + (
            ": misses " + "; ".join(failing) if failing else "")
    if failing:
        return "does not meet the claim as read: " + "; ".join(failing)
    if len(printed) < len(parts):
        return f"meets it on the printed parts ({len(printed)} of {len(parts)})"
    return "meets the claim as read"
