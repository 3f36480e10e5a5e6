"""``demo``: a synthetic corpus generated from the seed, so the whole pipeline runs without external data.

Each text is a sequence of word slots. A slot carries the strong private attribute's cue with probability
``strong_strength``, the weak attribute's cue with ``weak_strength``, a topic word (the label ``y``) with
probability ``LABEL_STRENGTH``, and a neutral word otherwise. Label and attributes are drawn independently, so a
perfect representation keeps ``y`` and loses both ``z``.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.data.common import BuiltDataset, Quarantine, split_frame

LABEL_STRENGTH = 0.35
TOPIC_WORDS = {
    "sports": ["match", "goal", "coach", "league", "stadium", "season", "team", "score"],
    "finance": ["market", "shares", "profit", "bank", "investor", "price", "budget", "loan"],
    "weather": ["rain", "storm", "forecast", "sunny", "wind", "snow", "cloud", "temperature"],
    "food": ["recipe", "dinner", "bread", "cheese", "soup", "bake", "salad", "kitchen"],
}
# z_strong: a life-stage cue (teen vs adult vocabulary); z_weak: a household cue.
STRONG_WORDS = {
    "teen": ["homework", "exam", "classmates", "teacher", "skateboard", "locker", "prom", "allowance"],
    "adult": ["mortgage", "pension", "colleagues", "invoice", "commute", "retirement", "taxes", "salary"],
}
WEAK_WORDS = {
    "husband": ["husband", "he", "him", "his"],
    "wife": ["wife", "she", "her", "hers"],
}
NEUTRAL_WORDS = [
    "the", "a", "today", "really", "about", "very", "then", "also", "we", "it", "was", "good",
    "new", "after", "before", "some", "many", "time", "day", "people", "thing", "said", "just", "more",
]


def _text(rng: np.random.Generator, y: int, strong: int, weak: int, options: Mapping[str, Any]) -> str:
    topic = list(TOPIC_WORDS.values())[y]
    strong_words = list(STRONG_WORDS.values())[strong]
    weak_words = list(WEAK_WORDS.values())[weak]
    cut_strong = options["strong_strength"]
    cut_weak = cut_strong + options["weak_strength"]
    cut_label = min(1.0, cut_weak + LABEL_STRENGTH)
    words = []
    for draw in rng.random(options["words_per_text"]):
        pool = (
            strong_words if draw < cut_strong
            else weak_words if draw < cut_weak
            else topic if draw < cut_label
            else NEUTRAL_WORDS
        )
        words.append(pool[rng.integers(len(pool))])
    return " ".join(words)


def build(inputs: Mapping, options: Mapping[str, Any], seed: int, quarantine: Quarantine) -> BuiltDataset:
    if options["strong_strength"] + options["weak_strength"] > 1:
        raise ValueError("demo.strong_strength + demo.weak_strength must not exceed 1")
    rng = np.random.default_rng(seed)
    n = options["n_examples"]
    y = rng.integers(len(TOPIC_WORDS), size=n)
    z_strong = rng.integers(2, size=n)
    z_weak = rng.integers(2, size=n)
    frame = pd.DataFrame(
        {
            "id": [f"demo-{i:06d}" for i in range(n)],
            "text": [_text(rng, y[i], z_strong[i], z_weak[i], options) for i in range(n)],
            "y": y.astype("int64"),
            "z_strong": z_strong.astype("int64"),
            "z_weak": z_weak.astype("int64"),
        }
    )
    return BuiltDataset(
        splits=split_frame(frame, options["split"], seed),
        label_names=list(TOPIC_WORDS),
        private_attributes={"strong": list(STRONG_WORDS), "weak": list(WEAK_WORDS)},
        attribute_kinds={"strong": "demographic", "weak": "demographic"},
        extra={"generator": {"label_strength": LABEL_STRENGTH, **{k: options[k] for k in options if k != "split"}}},
    )
