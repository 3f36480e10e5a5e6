"""The verdict rule of SPEC §6 on hand-made intervals: each of the four outcomes, for each kind of claim."""

from __future__ import annotations

import math

import pytest

from privtext.verdicts import COMPARABLE_MARGIN, MIN_SEEDS, Verdict, combine, verdict

SEEDS = 5


@pytest.mark.parametrize("low, high, expected", [
    (0.01, 0.05, "reproduced"),       # above 0, as claimed
    (-0.02, 0.05, "not reproduced"),  # contains 0
    (0.0, 0.05, "not reproduced"),    # touching 0 does not exclude it
    (-0.05, -0.01, "reversed"),       # below 0
])
def test_claimed_increase(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, +1, SEEDS).outcome == expected


@pytest.mark.parametrize("low, high, expected", [
    (-0.05, -0.01, "reproduced"),
    (-0.05, 0.02, "not reproduced"),
    (0.01, 0.05, "reversed"),
])
def test_claimed_decrease(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, -1, SEEDS).outcome == expected


@pytest.mark.parametrize("low, high, expected", [
    (-0.01, 0.015, "reproduced"),      # inside ±0.02
    (-0.01, 0.03, "not reproduced"),   # reaches beyond the margin
    (-0.3, 0.3, "not reproduced"),     # too wide to show anything
    (0.05, 0.09, "reversed"),          # a difference larger than the margin is shown
    (-0.09, -0.05, "reversed"),
])
def test_claimed_comparable_within_a_margin(low: float, high: float, expected: str) -> None:
    assert verdict(low, high, "comparable", SEEDS, margin=COMPARABLE_MARGIN).outcome == expected


@pytest.mark.parametrize("n_seeds", [0, 1, MIN_SEEDS - 1])
def test_fewer_than_three_seeds_are_inconclusive_whatever_the_interval(n_seeds: int) -> None:
    result = verdict(0.2, 0.3, +1, n_seeds)
    assert result.outcome == "inconclusive" and "seed" in result.reason


@pytest.mark.parametrize("low, high", [(math.nan, math.nan), (math.nan, 0.1), (-math.inf, 0.1)])
def test_undefined_interval_is_inconclusive(low: float, high: float) -> None:
    assert verdict(low, high, +1, SEEDS).outcome == "inconclusive"


def test_three_seeds_are_enough() -> None:
    assert verdict(0.01, 0.05, +1, MIN_SEEDS).outcome == "reproduced"


def test_reason_quotes_the_interval_and_the_seeds() -> None:
    reason = verdict(-0.05, -0.01, +1, SEEDS).reason
    assert "[-0.05, -0.01]" in reason and "5 seeds" in reason and "below" in reason


def test_bad_claims_are_rejected_with_the_offending_value() -> None:
    with pytest.raises(ValueError, match="margin"):
        verdict(-0.01, 0.01, "comparable", SEEDS)
    with pytest.raises(ValueError, match="'up'"):
        verdict(0.01, 0.02, "up", SEEDS)
    with pytest.raises(ValueError, match="above its high end"):
        verdict(0.05, 0.01, +1, SEEDS)


def test_a_claim_of_several_parts_holds_only_if_every_part_holds() -> None:
    holds, fails, unknown = (Verdict("reproduced", "a"), Verdict("not reproduced", "b"),
                             Verdict("inconclusive", "c"))
    assert combine([holds, holds]).outcome == "reproduced"
    assert combine([holds, unknown]).outcome == "inconclusive"
    assert combine([unknown, fails, holds]) == Verdict("not reproduced", "b")
    assert combine([fails, Verdict("reversed", "d")]).outcome == "reversed"
