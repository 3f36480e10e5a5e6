"""Word dropout before encoding (DPNR Theorem 2; docs/methods.md, "Word dropout").

Mechanism: of the ``d`` whitespace-separated words of a text, exactly ``⌊d·μ⌋`` positions, a uniformly random
subset, are replaced by ``mask_token``; words matching ``sensitive_words`` are masked as well, always.
Guarantee (random part only): an ε-DP release of the encoded text becomes ε' = ln((1-μ)·e^ε + μ)-DP under
word-level adjacency; the accounting lives with the privacy layers, not here.

The subset is the first ``⌊d·μ⌋`` entries of a random permutation drawn from a generator seeded by
``(seed, sha256(example id))``: stable across processes and machines, independent per example, and nested
across μ for one seed (the words masked at μ=0.3 are among those masked at μ=0.5), so μ sweeps compare the
same draws.
"""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction
import re
import string
from typing import Iterable, Sequence

import numpy as np

# BERT-family tokenizers (MiniLM, bert-base-*) keep "[MASK]" as one special token; other families differ
# (RoBERTa: "<mask>"), so pass the encoder tokenizer's ``mask_token`` when it is not a BERT.
DEFAULT_MASK_TOKEN = "[MASK]"
_WORD = re.compile(r"\S+")
_PUNCTUATION = string.punctuation + "“”‘’«»…–—"


def normalise_word(word: str) -> str:
    """Case-folded word without leading or trailing punctuation: how sensitive words are matched."""
    return word.strip(_PUNCTUATION).casefold()


def example_generator(seed: int, example_id: object) -> np.random.Generator:
    """Generator for one example: seeded by ``seed`` and the sha256 of ``str(example_id)`` (never ``hash()``)."""
    id_hash = int.from_bytes(hashlib.sha256(str(example_id).encode("utf-8")).digest()[:16], "big")
    return np.random.default_rng(np.random.SeedSequence([int(seed), id_hash]))


def random_mask_positions(d: int, mu: float, rng: np.random.Generator) -> np.ndarray:
    """``⌊d·μ⌋`` distinct positions out of ``d``, a uniformly random subset."""
    # μ read as the decimal it was written as: in binary floats 100 * 0.29 = 28.999999999999996.
    k = math.floor(Fraction(str(mu)) * d)
    return rng.permutation(d)[:k]


def _sensitive_phrases(sensitive_words: Iterable[str]) -> list[tuple[str, ...]]:
    phrases = []
    for entry in sensitive_words:
        phrase = tuple(normalise_word(word) for word in str(entry).split())
        if not phrase or not all(phrase):
            raise ValueError(f"sensitive word {entry!r} is empty once punctuation is stripped")
        phrases.append(phrase)
    return phrases


def sensitive_positions(words: Sequence[str], phrases: list[tuple[str, ...]]) -> set[int]:
    """Positions of ``words`` covered by an occurrence of any phrase (a phrase is one or more words)."""
    normalised = [normalise_word(word) for word in words]
    covered: set[int] = set()
    for phrase in phrases:
        for start in range(len(normalised) - len(phrase) + 1):
            if tuple(normalised[start:start + len(phrase)]) == phrase:
                covered.update(range(start, start + len(phrase)))
    return covered


def apply_word_dropout(
    texts: Sequence[str],
    ids: Sequence[object],
    mu: float,
    seed: int,
    sensitive_words: Iterable[str] = (),
    mask_token: str = DEFAULT_MASK_TOKEN,
) -> tuple[list[str], dict[str, int]]:
    """Mask ``⌊d·μ⌋`` uniformly random words per text plus every sensitive word; return texts and counts.

    Words are maximal runs of non-whitespace; a masked word is replaced whole by ``mask_token`` (``""``
    deletes it) and the text's whitespace is kept. A text with nothing masked is returned unchanged, so
    μ=0 without sensitive words is the identity. ``sensitive_words`` entries match case-insensitively,
    ignoring surrounding punctuation; an entry of several words ("George W. Bush") matches that sequence.
    """
    if len(texts) != len(ids):
        raise ValueError(f"texts and ids differ in length: {len(texts)} vs {len(ids)}")
    if not 0.0 <= mu <= 1.0:
        raise ValueError(f"word dropout rate mu must be in [0, 1], got {mu!r}")
    phrases = _sensitive_phrases(sensitive_words)
    counts = {"words_seen": 0, "words_masked": 0, "words_masked_random": 0,
              "words_masked_sensitive": 0, "texts_changed": 0}
    dropped = []
    for text, example_id in zip(texts, ids):
        spans = [match.span() for match in _WORD.finditer(text)]
        counts["words_seen"] += len(spans)
        random_part = set(random_mask_positions(len(spans), mu, example_generator(seed, example_id)).tolist())
        sensitive_part = sensitive_positions([text[a:b] for a, b in spans], phrases) if phrases else set()
        masked = random_part | sensitive_part
        counts["words_masked"] += len(masked)
        counts["words_masked_random"] += len(random_part)
        counts["words_masked_sensitive"] += len(sensitive_part)
        if not masked:
            dropped.append(text)
            continue
        counts["texts_changed"] += 1
        pieces, end = [], 0
        for position in sorted(masked):
            start, stop = spans[position]
            pieces += [text[end:start], mask_token]
            end = stop
        dropped.append("".join(pieces) + text[end:])
    return dropped, counts
