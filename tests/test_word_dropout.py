"""Word dropout (DPNR Theorem 2, docs/methods.md, "Word dropout"): exact count, seeded per example, uniform positions."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import chisquare

from privtext.encoding.word_dropout import apply_word_dropout

TEN_WORDS = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9"


def masked_positions(text: str, mask: str = "[MASK]") -> list[int]:
    return [i for i, word in enumerate(text.split()) if word == mask]


@pytest.mark.parametrize("mu", [0.1, 0.29, 0.3, 0.5, 0.8, 1.0])
def test_exactly_floor_d_mu_words_are_masked(mu):
    texts = [" ".join(f"w{i}" for i in range(d)) for d in (1, 3, 7, 10, 33, 100)]
    dropped, counts = apply_word_dropout(texts, list(range(len(texts))), mu=mu, seed=10)
    # μ as the decimal written in the config: ⌊100 · 0.29⌋ = 29, although 100 * 0.29 < 29 in binary floats.
    expected = [math.floor(Fraction(str(mu)) * d) for d in (1, 3, 7, 10, 33, 100)]
    assert [len(masked_positions(text)) for text in dropped] == expected
    assert counts["words_masked"] == sum(expected)
    assert counts["words_seen"] == 1 + 3 + 7 + 10 + 33 + 100


def test_same_seed_and_id_give_the_same_mask():
    first, _ = apply_word_dropout([TEN_WORDS] * 2, ["doc-7", "doc-7"], mu=0.3, seed=10)
    again, _ = apply_word_dropout([TEN_WORDS], ["doc-7"], mu=0.3, seed=10)
    assert first[0] == first[1] == again[0]


def test_different_ids_give_different_positions():
    dropped, _ = apply_word_dropout([TEN_WORDS] * 50, [f"doc-{i}" for i in range(50)], mu=0.3, seed=10)
    # 120 possible 3-subsets of 10 positions: 50 draws give many distinct masks.
    assert len(set(dropped)) > 30


def test_different_seeds_give_different_masks():
    masks = {apply_word_dropout([TEN_WORDS], ["doc-1"], mu=0.3, seed=seed)[0][0] for seed in range(20)}
    assert len(masks) > 10


def test_mu_zero_without_sensitive_words_is_the_identity():
    texts = ["  odd   spacing\tkept ", "", "one"]
    dropped, counts = apply_word_dropout(texts, [1, 2, 3], mu=0.0, seed=10)
    assert dropped == texts
    assert counts["words_masked"] == 0 and counts["texts_changed"] == 0


def test_sensitive_words_are_always_masked_ignoring_case_and_punctuation():
    texts = ["BUSH, said George W. Bush to Kerry.", "Bushes grow; kerry-blue dogs bark"]
    sensitive = ["bush", "George W. Bush", "Kerry"]
    dropped, counts = apply_word_dropout(texts, [1, 2], mu=0.0, seed=10, sensitive_words=sensitive)
    assert dropped == ["[MASK] said [MASK] [MASK] [MASK] to [MASK]", texts[1]]
    assert counts["words_masked_sensitive"] == 5


def test_sensitive_words_are_masked_in_addition_to_random_ones():
    text = "Kerry " + TEN_WORDS
    dropped, counts = apply_word_dropout([text], [1], mu=0.1, seed=3, sensitive_words=["kerry"])
    assert dropped[0].split()[0] == "[MASK]"
    assert counts["words_masked_random"] == 1 and counts["words_masked_sensitive"] == 1


def test_masked_positions_are_uniform_over_the_text():
    ids = [f"doc-{i}" for i in range(3000)]
    dropped, _ = apply_word_dropout([TEN_WORDS] * len(ids), ids, mu=0.3, seed=10)
    frequency = Counter(position for text in dropped for position in masked_positions(text))
    observed = [frequency[position] for position in range(10)]
    assert sum(observed) == 9000
    assert chisquare(observed).pvalue > 0.001


def test_masks_are_nested_across_mu_for_one_seed():
    ids = [f"doc-{i}" for i in range(20)]
    low, _ = apply_word_dropout([TEN_WORDS] * 20, ids, mu=0.3, seed=10)
    high, _ = apply_word_dropout([TEN_WORDS] * 20, ids, mu=0.5, seed=10)
    assert all(set(masked_positions(a)) <= set(masked_positions(b)) for a, b in zip(low, high))


def test_masking_keeps_whitespace_and_empty_mask_token_deletes():
    dropped, _ = apply_word_dropout(["a  b\tc"], [1], mu=1.0, seed=10, mask_token="<mask>")
    assert dropped == ["<mask>  <mask>\t<mask>"]
    removed, _ = apply_word_dropout(["keep Kerry here"], [1], mu=0.0, seed=10, sensitive_words=["kerry"], mask_token="")
    assert removed == ["keep  here"]


def test_masks_do_not_depend_on_python_hash_seed():
    code = (
        "from privtext.encoding.word_dropout import apply_word_dropout;"
        f"print(apply_word_dropout([{TEN_WORDS!r}] * 3, ['a', 'b', 'c'], 0.5, 10)[0])"
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed}).stdout
        for hash_seed in ("1", "2")
    }
    assert len(outputs) == 1


@pytest.mark.parametrize("mu", [-0.1, 1.5, np.nan])
def test_mu_outside_unit_interval_is_rejected(mu):
    with pytest.raises(ValueError, match="mu"):
        apply_word_dropout(["a b"], [1], mu=mu, seed=10)


def test_texts_and_ids_must_align():
    with pytest.raises(ValueError, match="length"):
        apply_word_dropout(["a", "b"], [1], mu=0.5, seed=10)
