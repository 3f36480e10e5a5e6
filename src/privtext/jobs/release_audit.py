"""The ε audit of a method's whole release path (docs/audit.md, "The release path, end to end").

What a user releases is not a layer's output on a chosen vector: a text goes through word dropout at rate μ,
the frozen encoder, the method's trained encoder ``E`` and its privacy layer (normalisation, then noise). This
module audits that path on real text pairs with the tests of :mod:`privtext.privacy.audit`:

- **pairs** from a dataset's test split, of two adjacencies: ``one word`` (the second text is the first with
  one word swapped: DPNR Theorem 2's word-level adjacency) and ``any`` (two different texts: local DP's
  adjacency). Among the candidates, the pair whose noise-free outputs lie farthest apart in L1, for each
  method;
- **word dropout** with the pipeline's own masks (:func:`privtext.encoding.word_dropout.apply_word_dropout`):
  ``masks`` draws per text, the same positions for the two texts of a one-word pair (they have as many words).
  The audited release picks one of the masked texts at random for each output and adds fresh noise, so each
  pre-noise vector is encoded once and reused across many noise draws. The audit is of that release: word
  dropout restricted to the drawn masks, a fair sample of the mask law;
- **tests**: the likelihood ratio of the two outputs' laws (equal mixtures of Laplace laws around the masked
  texts' noise-free outputs; at μ = 0 a single Laplace law) and the logistic regression, each output released
  beside a fixed batch-mate as the searched audit does (a layer that shares its draw across a batch shows).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from privtext.encoding.word_dropout import apply_word_dropout
from privtext.privacy.accounting import epsilon_accounting, word_dropout_epsilon
from privtext.privacy.audit import audit_release, epsilon_ceiling
from privtext.privacy.search import batch_release

ADJACENCIES = ("one word", "any")  # DPNR Theorem 2's word-level adjacency; local DP's (every pair of texts)
COLUMNS = ["dataset", "method", "run", "layer", "D", "epsilon_nominal", "mu", "adjacency", "test", "epsilon_lower",
           "epsilon_effective", "epsilon_prime", "epsilon_prime_nominal", "masked_share", "epsilon_prime_audited",
           "pair_epsilon", "pair", "alpha", "beta", "alpha_upper", "beta_upper", "samples", "masks", "epsilon_ceiling",
           "confidence", "seed"]
_WORD = re.compile(r"\S+")
_PLAIN_WORD = re.compile(r"[A-Za-z]+")

Encode = Callable[[list[str]], np.ndarray]  # texts -> the frozen encoder's features [n, d]


@dataclass(frozen=True)
class ReleaseAuditSettings:
    """How many candidate texts, swaps, masks and outputs the audit of one release path uses."""

    mus: tuple[float, ...] = (0.0, 0.5)
    masks: int = 64  # word dropout draws per text at μ > 0
    samples: int = 20_000  # outputs per text and half (calibration, measurement)
    candidates: int = 200  # test texts the "any" pair is chosen from
    swaps: int = 8  # one-word swaps tried per text; candidates // swaps texts get them
    min_words: int = 5
    max_words: int = 60  # short enough that the encoder's 128 tokens see the whole text
    confidence: float = 0.95
    logistic_samples: int = 2000
    seed: int = 10

    def __post_init__(self) -> None:
        if self.samples < 4 or self.masks < 1 or self.swaps < 1 or self.candidates < 2 or self.min_words < 1:
            raise ValueError(f"release audit settings out of range: {self}")
        if any(not 0 <= mu < 1 for mu in self.mus):
            raise ValueError(f"release audit μ must lie in [0, 1), got {self.mus}")


@dataclass(frozen=True)
class TextPair:
    adjacency: str
    first: str
    second: str
    label: str  # which texts, and which word was swapped


def _stream(seed: int, *names: object) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, *(zlib.crc32(str(n).encode()) for n in names)]))


def swap_word(text: str, position: int, word: str) -> str:
    """``text`` with its ``position``-th whitespace-separated word replaced by ``word`` (whitespace kept)."""
    start, stop = list(_WORD.finditer(text))[position].span()
    return text[:start] + word + text[stop:]


class ReleasePathAudit:
    """The audit of release paths on one dataset's texts: candidate pairs are drawn once (seeded), texts are
    encoded once and shared by every method audited."""

    def __init__(self, dataset: str, texts: Sequence[str], ids: Sequence[object], encode: Encode,
                 settings: ReleaseAuditSettings) -> None:
        self.dataset, self.encode, self.settings = dataset, encode, settings
        counts = np.array([len(_WORD.findall(t)) for t in texts])
        eligible = np.flatnonzero((counts >= settings.min_words) & (counts <= settings.max_words))
        if len(eligible) < 2:
            raise ValueError(f"{dataset}: fewer than 2 test texts have {settings.min_words}–{settings.max_words} "
                             f"words; the release audit needs pairs")
        rng = _stream(settings.seed, dataset, "candidates")
        chosen = rng.choice(eligible, size=min(settings.candidates, len(eligible)), replace=False)
        self.texts = [str(texts[i]) for i in chosen]
        self.ids = [str(ids[i]) for i in chosen]
        self.swapped = self._one_word_swaps(rng)
        self._features: dict[str, np.ndarray] = {}

    def _one_word_swaps(self, rng: np.random.Generator) -> list[TextPair]:
        """``swaps`` one-word changes of each of the first candidates: a random position takes a plain word drawn
        from the other candidates' words."""
        vocabulary = sorted({w for t in self.texts for w in _WORD.findall(t) if _PLAIN_WORD.fullmatch(w)})
        pairs = []
        for text, text_id in list(zip(self.texts, self.ids))[:max(1, len(self.texts) // self.settings.swaps)]:
            words = _WORD.findall(text)
            for position in rng.choice(len(words), size=min(self.settings.swaps, len(words)), replace=False):
                word = words[position]
                replacement = str(rng.choice([w for w in vocabulary if w.casefold() != word.casefold()]))
                pairs.append(TextPair(ADJACENCIES[0], text, swap_word(text, int(position), replacement),
                                      f"{text_id}, word {position}: {word!r} → {replacement!r}"))
        return pairs

    def features(self, texts: Sequence[str]) -> np.ndarray:
        """The frozen encoder's features of ``texts``, each text encoded once per audit."""
        new = list(dict.fromkeys(t for t in texts if t not in self._features))
        if new:
            self._features.update(zip(new, self.encode(new)))
        return np.stack([self._features[t] for t in texts])

    def noise_free(self, method: Any, layer: nn.Module, texts: Sequence[str]) -> torch.Tensor:
        """The layer's noise-free outputs of ``texts`` (at μ = 0) through ``method``'s encoder."""
        with torch.no_grad():
            return layer.normalise(torch.from_numpy(method.representation_before_noise(self.features(texts))))

    def worst_pairs(self, method: Any, layer: nn.Module) -> list[tuple[TextPair, float]]:
        """Per adjacency, the candidate pair whose noise-free outputs lie farthest apart in L1, with that distance."""
        swapped = self.swapped
        gaps = (self.noise_free(method, layer, [p.first for p in swapped])
                - self.noise_free(method, layer, [p.second for p in swapped])).abs().sum(dim=1)
        outputs = self.noise_free(method, layer, self.texts)
        distance = torch.cdist(outputs, outputs, p=1)
        i, j = np.unravel_index(int(torch.argmax(distance)), distance.shape)
        return [(swapped[int(torch.argmax(gaps))], float(gaps.max())),
                (TextPair(ADJACENCIES[1], self.texts[i], self.texts[j], f"{self.ids[i]} vs {self.ids[j]}"),
                 float(distance[i, j]))]

    def masked(self, pair: TextPair, mu: float) -> tuple[list[str], list[str]]:
        """The pair's texts under word dropout at ``mu``: ``masks`` draws each (one at μ = 0), with the pipeline's
        masks; draw j of both texts uses one mask id, so a one-word pair's texts lose the same positions."""
        draws = 1 if mu == 0 else self.settings.masks
        ids = [f"{self.dataset}/{pair.label}/{j}" for j in range(draws)]
        return tuple(apply_word_dropout([text] * draws, ids, mu, self.settings.seed)[0]
                     for text in (pair.first, pair.second))

    def audit(self, method: Any, run: str, layer: nn.Module | None = None) -> list[dict[str, Any]]:
        """Rows (one per adjacency × μ × test) of ``method``'s release path. ``layer`` replaces the method's own
        privacy layer (a planted fault); its generator is reseeded for the audit either way."""
        layer = method.privacy_module if layer is None else layer
        if layer is None:
            raise ValueError(f"{run}: method {method.name!r} has no privacy layer to audit")
        settings, kind, epsilon = self.settings, *method.privacy_layer
        dim = method.representation_dim
        effective = epsilon_accounting(kind, epsilon, dim)["epsilon_effective"]
        batch_mate = method.representation_before_noise(self.features(self.texts[:1]))[0]
        rows = []
        for pair, gap in self.worst_pairs(method, layer):
            for mu in settings.mus:
                name = (run, pair.adjacency, mu)
                masked = self.masked(pair, mu)
                # the share of the drawn masks under which the two texts coincide: for a one-word pair, those that
                # hide the swapped word (⌊d·μ⌋ of d words are masked, so at most μ; and 32 draws vary around it)
                share = float(np.mean([a == b for a, b in zip(*masked)]))
                raw = [method.representation_before_noise(self.features(texts)) for texts in masked]
                with torch.no_grad():
                    centres = tuple(layer.normalise(torch.from_numpy(r)).numpy() for r in raw)
                layer.generator = _stream(settings.seed, *name, "noise")
                results, _ = audit_release(
                    batch_release(layer, batch_mate, picks=_stream(settings.seed, *name, "masks")), tuple(raw),
                    centres=centres, scale=float(layer.scale), statistic="laplace", samples=settings.samples,
                    confidence=settings.confidence, logistic_samples=settings.logistic_samples,
                    tie_break=lambda test: _stream(settings.seed, *name, test))
                rows += [{"dataset": self.dataset, "method": method.name, "run": run, "layer": kind, "D": dim,
                          "epsilon_nominal": float(epsilon), "mu": float(mu), "adjacency": pair.adjacency, **result,
                          "epsilon_effective": effective, "epsilon_prime": word_dropout_epsilon(effective, mu),
                          "epsilon_prime_nominal": word_dropout_epsilon(float(epsilon), mu),
                          "masked_share": share, "epsilon_prime_audited": word_dropout_epsilon(effective, share),
                          "pair_epsilon": gap / float(layer.scale), "pair": pair.label, "samples": settings.samples,
                          "masks": len(raw[0]), "epsilon_ceiling": epsilon_ceiling(settings.samples, settings.confidence),
                          "confidence": settings.confidence, "seed": settings.seed} for result in results]
        return rows


def release_audit_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def exceeds(table: pd.DataFrame) -> pd.Series:
    """Rows whose bound is above what the audited path guarantees: for a one-word pair, Theorem 2's argument with
    the share of the drawn masks that hide the swapped word (``epsilon_prime_audited``: the audited release mixes
    exactly those masks); the effective ε for any other pair (Theorem 2 says nothing of them)."""
    bound = table["epsilon_prime_audited"].where(table["adjacency"] == ADJACENCIES[0], table["epsilon_effective"])
    return table["epsilon_lower"] > bound


def settings_from_config(block: dict[str, Any], seed: int, confidence: float) -> ReleaseAuditSettings:
    """The settings of ``audit.release`` in the config (the schema has checked the values)."""
    keys = ("masks", "samples", "candidates", "swaps", "min_words", "max_words", "logistic_samples")
    return ReleaseAuditSettings(mus=tuple(float(m) for m in block["mus"]), seed=int(seed), confidence=float(confidence),
                                **{k: int(block[k]) for k in keys})
