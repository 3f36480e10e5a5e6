"""The synthetic demo corpus: seeded, balanced-ish, attributes planted with the configured strength."""

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from conftest import run_snakemake
from privtext.plan.config import load_config
from privtext.data import Quarantine, get_builder
from privtext.data.common import manifest_sha256


def _build(**overrides):
    options = {**load_config()["demo"], **overrides}
    return get_builder("demo")({}, options, 10, Quarantine())


def _attacker_accuracy(built, column):
    vectorizer = CountVectorizer()
    train, test = built.splits["train"], built.splits["test"]
    model = LogisticRegression(max_iter=1000).fit(vectorizer.fit_transform(train["text"]), train[column])
    return model.score(vectorizer.transform(test["text"]), test[column])


def test_demo_is_deterministic_for_a_seed():
    assert manifest_sha256(_build().splits) == manifest_sha256(_build().splits)
    assert _build().splits["train"]["text"].equals(_build().splits["train"]["text"])


def test_demo_strong_attribute_is_recoverable_and_weak_one_less_so():
    built = _build(n_examples=1500)
    strong = _attacker_accuracy(built, "z_strong")
    weak = _attacker_accuracy(built, "z_weak")
    assert strong > 0.95
    assert 0.55 < weak < strong


def test_demo_attribute_strength_zero_plants_nothing():
    built = _build(n_examples=1500, strong_strength=0.0, weak_strength=0.0)
    assert _attacker_accuracy(built, "z_strong") < 0.6


def test_demo_label_is_learnable():
    built = _build(n_examples=1500)
    assert _attacker_accuracy(built, "y") > 0.9


def test_demo_builds_through_snakemake_with_meta_schema(tmp_path):
    run_snakemake(tmp_path, {"datasets": ["demo"], "demo": {"n_examples": 200}})
    import json

    meta = json.loads((tmp_path / "results/data/demo/meta.json").read_text())
    for key in ("splits", "label_names", "private_attributes", "inputs", "quarantined", "split_manifest_sha256", "seed"):
        assert key in meta
    assert sum(meta["splits"].values()) == 200
    assert np.isclose(meta["splits"]["train"] / 200, 0.6, atol=0.01)
