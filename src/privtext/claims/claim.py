"""A claim as the paper wrote it: one declarative entry per claim (``claims/dpnr.py``, ``cape.py``,
``federate.py``) with the paper's exact sentence, where it is printed, the datasets it is about, how its words
are read, and the builder of its parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from privtext.claims.context import FINE_TUNED, SETTINGS, REFERENCE_CODE, ClaimContext
from privtext.claims.parts import Part

Builder = Callable[[ClaimContext], list[Part]]
# A claim checked without runs (a theorem, a sensitivity, a printed ε): the ε audit's table (or None) -> one dict
# per row with at least ``holds``, ``measurement``, ``reason`` (privtext.claims.formal).
FormalCheck = Callable[[Any], list[dict[str, Any]]]
# How many parts must hold, by the paper's hedge (docs/claims.md, "Hedges"): "consistently", "for all
# variables" and an unhedged sentence need every part; "in most cases" more than half; "almost all" all but one;
# "can" (CAPE §4: "can produce superior outcomes") at least one.
HEDGES = {"all": lambda n: n, "most": lambda n: n // 2 + 1, "almost all": lambda n: max(1, n - 1),
          "can": lambda n: 1}
SYNTHETIC = ("demo",)


@dataclass(frozen=True)
class Variant:
    """Another sentence of the same paper that is the claim on some datasets (FEDERATE's Appendix D.5 on
    Adult and CelebA, where it says otherwise than §5.1)."""

    datasets: tuple[str, ...]
    quote: tuple[str, ...]
    source: str
    reading: str
    build: Builder
    hedge: str = "all"


@dataclass(frozen=True)
class Alternative:
    """One fair reading of a sentence that can be read more than one way (CAPE's "competitive baseline": Base,
    or DP alone). The claims table gives each its own labelled row and never chooses between them."""

    label: str
    reading: str
    build: Builder
    hedge: str = "all"


@dataclass(frozen=True)
class Claim:
    """``quote``: the paper's sentences, each an exact substring of its text (whitespace aside; ``tests/
    test_claims.py`` checks it against ``../shared/papers``). ``datasets``: those the sentence is about;
    ``substitutes``: datasets run in their place (counted apart). ``dp``: 'minmax' (a row per setting), 'l1'
    (one row, nominal = effective ε) or 'none'. ``added``: a claim found in the paper beyond the reference list
    (D1–D8, C1–C6, F1–F12). ``alternatives``: the readings of a sentence a fair reader can take two ways, each
    judged in its own row (``reading``/``build``/``hedge`` are then the first's). ``formal``: a claim about a
    mechanism or a proof, checked by the ε audit or the accounting rather than by runs (no datasets)."""

    id: str
    paper: str
    text: str
    quote: tuple[str, ...]
    source: str
    reading: str
    build: Builder
    datasets: tuple[str, ...]
    substitutes: tuple[str, ...] = ()
    dp: str = "minmax"
    hedge: str = "all"
    code_variant: bool = False  # a row with the reference code's mechanism too, where the verdict turns on it
    # a row on runs whose encoder was fine-tuned through the noise (DPNR's Algorithm 1; `make claims-finetune`)
    finetune_variant: bool = False
    variants: tuple[Variant, ...] = ()
    added: bool = False
    alternatives: tuple[Alternative, ...] = ()
    formal: FormalCheck | None = None

    def __post_init__(self) -> None:
        hedges = [self.hedge, *(v.hedge for v in self.variants), *(a.hedge for a in self.alternatives)]
        if any(h not in HEDGES for h in hedges):
            raise ValueError(f"claim {self.id}: hedge must be one of {sorted(HEDGES)}")
        if len(self.alternatives) == 1 or len({a.label for a in self.alternatives}) < len(self.alternatives):
            raise ValueError(f"claim {self.id}: alternatives are two or more readings with distinct labels")
        if not self.quote or not all(self.quote):
            raise ValueError(f"claim {self.id}: every claim quotes the paper's own sentence")

    @property
    def settings(self) -> tuple[str, ...]:
        return (SETTINGS[self.dp] + ((REFERENCE_CODE,) if self.code_variant else ())
                + ((FINE_TUNED,) if self.finetune_variant else ()))

    @property
    def all_datasets(self) -> tuple[str, ...]:
        return self.datasets + tuple(d for v in self.variants for d in v.datasets if d not in self.datasets)

    def on(self, dataset: str) -> "Claim | Variant":
        """The sentence that is the claim on ``dataset``: a variant's where one covers it, else the claim's."""
        return next((v for v in self.variants if dataset in v.datasets), self)

    def readings(self, dataset: str) -> list[tuple[str, "Claim | Variant | Alternative"]]:
        """(label, how it is read) for each row of the claim on ``dataset``: one unlabelled reading, or each of
        the claim's alternatives (a variant, D.5's own sentence, is read one way)."""
        sentence = self.on(dataset)
        if sentence is self and self.alternatives:
            return [(a.label, a) for a in self.alternatives]
        return [("", sentence)]

    def kind(self, dataset: str) -> str | None:
        """'the paper's', 'substitute', 'synthetic', or None where the claim does not apply."""
        if dataset in SYNTHETIC:
            return "synthetic"
        if dataset in self.all_datasets:
            return "the paper's"
        return "substitute" if dataset in self.substitutes else None
