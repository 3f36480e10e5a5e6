"""How a claims row's runs depart from the paper's procedure (docs/claims.md, "Departures").

Each paper's claims file declares the paper's procedure once (:class:`Procedure`: its encoder, whether it trained
the encoder, the attacker it measured, batch and epochs where the paper states them, the mechanism its code
used); a claim's reads declare the paper's grid where it sweeps or selects over one
(:meth:`privtext.claims.context.ClaimContext.read_grid`). A row's departures are then derived, never typed: from
the settings its runs recorded (``metrics.json``: fine-tuned or not, training rows, batch, epochs, layer), the
measures table (encoder, parameters) and the attackers its parts read, against that declaration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from privtext.attack.joint import JOINT_ADVERSARY

# The fixed vocabulary, in the order a row lists it (docs/claims.md defines each; a test keeps the two equal).
VOCABULARY: dict[str, str] = {
    "encoder": "a sentence encoder other than the paper's (MiniLM for BERT)",
    "frozen": "a head on frozen features where the paper trained the encoder through the release",
    "attacker": "a fresh attacker where the paper measured its jointly trained adversary",
    "grid": "values the paper swept or selected over that our grid cut",
    "size": "training capped below the rows available",
    "data": "a substitute or synthetic dataset in place of the paper's",
    "mechanism": "correct DP noise where the paper's published numbers came from another mechanism (its code's)",
    "batch": "a batch size other than the one the paper states",
    "epochs": "an epoch budget other than the one the paper states",
}
# The datasets whose features are the paper's own inputs (tabular, or the pre-encoded files FEDERATE used).
FEATURES = "features"
JOINT, FRESH = "joint", "fresh"


@dataclass(frozen=True)
class Procedure:
    """What a paper did, as its text states it. ``encoder``: the paper's encoder per dataset (``"*"``: every
    other), a folder segment such as ``bert-base-cased`` or ``features``; ``trains_encoder``: the release's
    encoder trained through the noise (DPNR's Algorithm 1); ``attacker``: ``fresh`` (an attacker trained on the
    frozen release) or ``joint`` (the adversary trained with the model, CAPE's Table 3); ``batch_size`` and
    ``epochs``: the paper's where it states them (None: silent, so no departure can be read); ``code_layers``:
    the privacy layers whose mechanism is the paper's code's (its published numbers came from them)."""

    encoder: Mapping[str, str]
    trains_encoder: bool
    attacker: str
    batch_size: int | None = None
    epochs: int | None = None
    code_layers: tuple[str, ...] = ()
    code_mechanism: str = ""  # in words, for the detail column

    def encoder_for(self, dataset: str) -> str:
        return self.encoder.get(dataset, self.encoder["*"])


@dataclass(frozen=True)
class GridRead:
    """A sweep or selection a claim read: ``method``'s ``param`` over ``paper`` (the paper's values) where the
    runs had ``ran``."""

    method: str
    param: str
    paper: tuple[float, ...]
    ran: tuple[float, ...]

    @property
    def cut(self) -> tuple[float, ...]:
        return tuple(v for v in self.paper if not any(abs(v - r) <= 1e-9 * max(1.0, abs(v)) for r in self.ran))


@dataclass(frozen=True)
class RunSettings:
    """What one run recorded (``metrics.json`` and the measures table)."""

    run_dir: str
    method: str
    encoder: str
    finetune: bool | None = None
    n_train: int | None = None
    n_train_available: int | None = None
    batch_size: int | None = None  # the batch it trained with (the training rule may shrink the configured one)
    epochs_planned: int | None = None
    epochs_run: int | None = None
    layer: str | None = None
    differentially_private: bool | None = None


@dataclass
class Departures:
    """A row's departures: ``terms`` from :data:`VOCABULARY` with one line of detail each."""

    detail: dict[str, list[str]] = field(default_factory=dict)

    def add(self, term: str, text: str) -> None:
        if term not in VOCABULARY:
            raise ValueError(f"departure {term!r} is not in the vocabulary {list(VOCABULARY)}")
        lines = self.detail.setdefault(term, [])
        if text not in lines:
            lines.append(text)

    @property
    def terms(self) -> list[str]:
        return [t for t in VOCABULARY if t in self.detail]

    def text(self) -> str:
        return ", ".join(self.terms)

    def detail_text(self) -> str:
        return "; ".join(f"{t}: {', '.join(self.detail[t])}" for t in self.terms)


def _base_encoder(slug: str) -> str:
    return slug.split("+", 1)[0]


def _span(values: Iterable[int]) -> str:
    ordered = sorted(set(values))
    return f"{ordered[0]}" if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"


def derive(procedure: Procedure | None, dataset: str, dataset_kind: str, runs: Sequence[RunSettings],
           attackers: Iterable[str], reads: Iterable[GridRead]) -> Departures:
    """The departures of one row from its runs' recorded settings, the fresh ``attackers`` its parts read and
    the grid ``reads`` its claim made, against the paper's ``procedure``. A run without a training history (a
    majority-class predictor) trains nothing, so it departs on neither ``frozen``, ``batch`` nor ``epochs``."""
    found = Departures()
    if dataset_kind in ("substitute", "synthetic"):
        found.add("data", f"{dataset} is {dataset_kind}")
    if procedure is None:
        return found
    paper_encoder = procedure.encoder_for(dataset)
    encoders, frozen, rows, batches, budgets, layers = set(), set(), set(), set(), set(), set()
    for run in runs:
        encoder = _base_encoder(run.encoder)
        trained = run.epochs_run is not None
        if encoder and encoder != FEATURES and encoder != paper_encoder:
            encoders.add(encoder)
        if trained and procedure.trains_encoder and encoder != FEATURES and run.finetune is False:
            frozen.add(encoder)
        if run.n_train is not None and run.n_train_available is not None and run.n_train < run.n_train_available:
            rows.add((run.n_train, run.n_train_available))
        if trained and procedure.batch_size is not None and run.batch_size not in (None, procedure.batch_size):
            batches.add(run.batch_size)
        budget = max(run.epochs_planned or 0, run.epochs_run or 0)
        if trained and procedure.epochs is not None and budget and budget != procedure.epochs:
            budgets.add(budget)
        if (run.differentially_private and procedure.code_layers and run.layer is not None
                and run.layer not in procedure.code_layers):
            layers.add(run.layer)
    for encoder in sorted(encoders):
        found.add("encoder", f"{encoder} for {paper_encoder}")
    for encoder in sorted(frozen):
        found.add("frozen", f"heads on frozen {encoder}")
    for used, available in sorted(rows):
        found.add("size", f"{used} of {available} training rows")
    if layers:
        found.add("mechanism", f"{', '.join(sorted(layers))} layer for {procedure.code_mechanism}")
    if batches:
        found.add("batch", f"batch {_span(batches)} for {procedure.batch_size}")
    if budgets:
        found.add("epochs", f"up to {_span(budgets)} epochs for {procedure.epochs}")
    if procedure.attacker == JOINT:
        for attacker in sorted(set(attackers) - {JOINT_ADVERSARY}):
            found.add("attacker", f"fresh {attacker} for the joint adversary")
    for read in reads:
        if read.cut:
            found.add("grid", f"{read.method} {read.param} {len(read.paper) - len(read.cut)} of {len(read.paper)} "
                              f"paper values")
    return found


def run_settings(run_dir: str, method: str, encoder: str, info: Mapping[str, Any] | None) -> RunSettings:
    """A run's :class:`RunSettings` from its measures row (``method``, ``encoder``) and its metrics.json
    ``info`` (:meth:`privtext.claims.evidence.ExampleEvidence.run_info`; None where no evidence was read)."""
    info = info or {}
    return RunSettings(run_dir, method, encoder, info.get("finetune"), info.get("n_train"),
                       info.get("n_train_available"), info.get("batch_size"), info.get("epochs_planned"),
                       info.get("epochs_run"), info.get("layer"), info.get("differentially_private"))
