"""End-to-end fine-tuning (DPNR Algorithm 1): grid, library with the real MiniLM, and the real Snakefile."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors import safe_open

from conftest import run_snakemake
from privtext.plan.config import ConfigError, load_config
from privtext.jobs.finetune import (
    FinetunedModel, FinetuneSettings, Tokens, encode, epoch_seed, fit_end_to_end, parameter_checksum,
)
from privtext.jobs.finetune_runs import finetune_hyperparameters
from privtext.plan.grid import GridPoint, study_points
from privtext.methods import METHODS, build_method
from privtext.encoding.word_dropout import apply_word_dropout
from privtext.training.loop import linear_schedule

TEXTS = [f"the {w} team won the {v} match in the city today" for w, v in
         zip(("home", "away", "young", "old", "local", "rival", "best", "new"), ("final", "cup", "league", "derby", "first", "last", "big", "home"))]


# --- Grid and config -------------------------------------------------------------------------------------------

def _points(methods: dict, overrides: dict | None = None) -> list[GridPoint]:
    return study_points({"seeds": [10], "methods": methods}, datasets=["demo", "adult"], specs=METHODS,
                        encoder_for=lambda d: "features" if d == "adult" else "minilm", overrides=overrides)


def test_a_finetuned_point_has_its_own_encoder_segment_and_the_frozen_folder_is_unchanged():
    frozen, tuned, adult = _points({"dpnr": {"epsilon": [1], "finetune": [False, True]}})
    assert frozen.run_dir == "results/runs/demo/minilm/dpnr/mu~0/epsilon~1/seed~10" and not frozen.finetune
    assert tuned.run_dir == "results/runs/demo/minilm+finetune/dpnr/mu~0/epsilon~1/seed~10" and tuned.finetune
    assert adult.run_dir == "results/runs/adult/features/dpnr/mu~0/epsilon~1/seed~10"  # no encoder to fine-tune
    with pytest.raises(ValueError, match="reads text, not frozen features"):
        tuned.embedding_dir


def test_methods_finetune_override_makes_fine_tuning_the_default_of_every_study():
    points = _points({"nonpriv": {}, "inlp": {}}, overrides={"nonpriv": {"finetune": True}})
    assert [p.encoder for p in points if p.dataset == "demo"] == ["minilm+finetune", "minilm"]


def test_config_refuses_finetune_for_methods_with_their_own_algorithm():
    with pytest.raises(ConfigError, match="methods.inlp"):
        load_config(overrides={"methods": {"inlp": {"finetune": True}}})
    with pytest.raises(ConfigError, match="studies.s.methods.majority"):
        load_config(overrides={"studies": {"s": {"methods": {"majority": {"finetune": [True]}}}}})
    with pytest.raises(ValueError, match="cannot be fine-tuned"):
        finetune_hyperparameters("inlp", {}, {}, FinetuneSettings().as_dict())


def test_finetuning_trains_with_dpnrs_settings_and_keeps_the_methods_head():
    resolved = finetune_hyperparameters("dpnr", {"dropout": 0.2}, {"epsilon": 1}, FinetuneSettings().as_dict())
    assert {k: resolved[k] for k in ("lr", "epochs", "batch_size", "optimizer", "patience", "finetune")} == {
        "lr": 5e-5, "epochs": 4, "batch_size": 64, "optimizer": "adamw", "patience": None, "finetune": True}
    assert (resolved["layer"], resolved["epsilon"], resolved["dropout"]) == ("minmax", 1, 0.2)


def test_linear_schedule_decays_to_zero_without_warmup():
    assert [linear_schedule(s, 4) for s in range(5)] == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert [linear_schedule(s, 4, warmup_steps=2) for s in range(5)] == [0.0, 0.5, 1.0, 0.5, 0.0]


def test_training_word_dropout_is_drawn_afresh_each_epoch():
    ids = list(range(len(TEXTS)))
    first, _ = apply_word_dropout(TEXTS, ids, 0.3, epoch_seed(7, 0), mask_token="[MASK]")
    second, counts = apply_word_dropout(TEXTS, ids, 0.3, epoch_seed(7, 1), mask_token="[MASK]")
    assert first != second and counts["words_masked"] == len(TEXTS) * 3  # ⌊10·0.3⌋ of 10 words each time
    assert epoch_seed(7, 0) == epoch_seed(7, 0)


# --- The library with the real MiniLM ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_finetune():
    """MiniLM with DPNR's head (ε = 1) on 8 texts: the model before and after one epoch of batch 4."""
    from privtext.encoding.encoders import load_encoder

    loaded = load_encoder("minilm", "cpu")
    method = build_method("dpnr", {"epsilon": 1, "lr": 5e-5, "epochs": 1, "batch_size": 4, "patience": None},
                          input_dim=384, n_classes=2, attribute_sizes={"a": 2}, seed=3)
    torch.manual_seed(0)
    method.model = method.build_model(noise_seed=5)
    model = FinetunedModel(loaded.model, method.model, "mean", "minilm")
    tokens = Tokens(loaded, TEXTS, 128)
    y, z = np.array([0, 1] * 4), {"a": np.array([1, 0] * 4)}
    before = parameter_checksum(loaded.model)
    history = fit_end_to_end(method, model, lambda epoch: tokens, y, z, tokens, y,
                             FinetuneSettings(epochs=1, batch_size=4), generator=torch.Generator().manual_seed(1))
    return method, model, tokens, before, history


def test_one_epoch_moves_the_encoder_weights(tiny_finetune):
    method, model, _, before, history = tiny_finetune
    assert parameter_checksum(model.transformer) != before
    assert history["optimizer_steps"] == 2 and history["epochs"][0]["lr_end"] == pytest.approx(2.5e-5)


def test_release_draws_fresh_laplace_noise_on_every_pass(tiny_finetune):
    method, model, tokens, _, _ = tiny_finetune
    features = encode(model, tokens, torch.device("cpu"), batch_size=3)
    np.testing.assert_array_equal(features, encode(model, tokens, torch.device("cpu"), batch_size=8))
    first, second = method.release(features), method.release(features)
    assert not np.allclose(first, second)
    with torch.inference_mode():
        normalised = method.model.privacy.normalise(method.model.encoder(torch.from_numpy(features))).numpy()
    noise = np.concatenate([first - normalised, second - normalised]).ravel()  # 2 × 8 × 384 draws of Lap(1/ε)
    assert np.mean(np.abs(noise)) == pytest.approx(1.0, rel=0.06)


# --- A fine-tuned point through the real Snakefile --------------------------------------------------------------

TUNED = "results/runs/demo/minilm+finetune/dpnr/mu~0.3/epsilon~1/seed~10"
FROZEN = "results/runs/demo/minilm/dpnr/mu~0.3/epsilon~1/seed~10"


@pytest.fixture(scope="module")
def snakemake_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("finetune")
    config = {
        "datasets": ["demo"], "demo": {"n_examples": 120}, "run_studies": ["ft"],
        "studies": {"ft": {"datasets": ["demo"], "seeds": [10], "artefacts": False,
                           "methods": {"dpnr": {"epsilon": [1], "mu": [0.3], "finetune": [False, True]}}}},
        "finetune": {"epochs": 1, "batch_size": 16},
        "attack": {"attackers": ["linear", "mlp"]},
    }
    run_snakemake(workdir, config, [f"{TUNED}/attack.json", f"{FROZEN}/attack.json"])
    return workdir


def test_a_finetuned_point_writes_the_usual_run_folder_and_attack_json(snakemake_run):
    tuned = snakemake_run / TUNED
    metrics = json.loads((tuned / "metrics.json").read_text())
    assert metrics["finetune"] is True and metrics["device"] == "cpu" and metrics["history"]["epochs_run"] == 1
    assert metrics["hyperparameters"]["lr"] == 5e-5 and metrics["finetune_settings"]["batch_size"] == 16
    assert (metrics["epsilon_nominal"], metrics["epsilon_effective"]) == (1.0, pytest.approx(np.log(0.7 * np.exp(384) + 0.3)))
    for split in ("train", "dev", "test"):
        rows = len(pd.read_parquet(snakemake_run / f"results/data/demo/{split}.parquet"))
        assert np.load(tuned / f"released_{split}.npy").shape == (rows, 384)
    attack = json.loads((tuned / "attack.json").read_text())
    assert set(attack["attackers"]) == {"linear", "mlp"}
    # The fine-tuned job read text only: the one extraction is the frozen point's.
    assert sorted(p.name for p in (snakemake_run / "results/embeddings/demo").iterdir()) == ["minilm"]


def test_the_saved_encoder_weights_are_not_minilms(snakemake_run):
    from privtext.encoding.encoders import minilm_folder

    metrics = json.loads((snakemake_run / TUNED / "metrics.json").read_text())
    assert metrics["encoder_checksum_before"] != metrics["encoder_checksum_after"]
    original = {}
    with safe_open(str(minilm_folder() / "model.safetensors"), "pt") as f:
        original = {k: f.get_tensor(k) for k in f.keys()}
    with safe_open(str(snakemake_run / TUNED / "model.safetensors"), "pt") as f:
        keys = list(f.keys())
        assert any(k.startswith("head.") for k in keys)
        weight = "encoder.encoder.layer.0.attention.self.query.weight"
        name = next(k for k in original if k.endswith("encoder.layer.0.attention.self.query.weight"))
        assert not torch.equal(f.get_tensor(weight), original[name])
        assert f.metadata()["encoder_saved"] == "true"


def test_the_frozen_point_of_the_same_study_stays_a_frozen_feature_run(snakemake_run):
    frozen = json.loads((snakemake_run / FROZEN / "metrics.json").read_text())
    assert frozen["finetune"] is False and frozen["hyperparameters"]["lr"] == 1e-3  # the head's own settings
    assert "finetune" not in frozen["settings"]
