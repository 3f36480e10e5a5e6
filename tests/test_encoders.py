"""Frozen-encoder extraction (SPEC §1.3): offline MiniLM, pooling without CAPE's padding bug, provenance."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from privtext.encoders import (
    EncoderError,
    extract_embeddings,
    load_encoder,
    minilm_folder,
    resolve_encoder,
    tabular_features,
)

SHORT = "The match ended in a draw."
LONG = " ".join(["Stocks rallied on Wall Street after the central bank kept interest rates unchanged."] * 6)
TEXTS = [SHORT, LONG, "Bush met Kerry.", "", "A medium length sentence about the weather in Paris today."]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def minilm():
    return load_encoder("minilm", device="cpu")


def embed(texts, encoder, **options):
    return extract_embeddings(texts, encoder, threads=1, progress=False, **options)


def test_minilm_loads_offline_and_gives_384_dim_float32_embeddings():
    embeddings, stats = extract_embeddings(TEXTS[:2], "minilm", device="cpu", progress=False)
    assert embeddings.shape == (2, 384) and embeddings.dtype == np.float32
    assert stats["encoder_local"] and stats["device"] == "cpu"


def test_mean_pooling_ignores_padding(minilm):
    alone, _ = embed([SHORT], minilm, pooling="mean")
    padded, stats = embed([SHORT, LONG], minilm, pooling="mean", batch_size=2)
    assert stats["padded_tokens"] > 50  # the short text really was padded up to the long one
    np.testing.assert_allclose(padded[0], alone[0], atol=1e-5)


def test_cls_pooling_differs_from_mean(minilm):
    cls, _ = embed([SHORT], minilm, pooling="cls")
    mean, _ = embed([SHORT], minilm, pooling="mean")
    assert not np.allclose(cls, mean, atol=1e-3)


def test_sort_by_length_keeps_the_input_order(minilm):
    sorted_run, _ = embed(TEXTS, minilm, batch_size=2, sort_by_length=True)
    unsorted_run, _ = embed(TEXTS, minilm, batch_size=2, sort_by_length=False)
    one_by_one = np.concatenate([embed([text], minilm)[0] for text in TEXTS])
    np.testing.assert_allclose(sorted_run, unsorted_run, atol=1e-5)
    np.testing.assert_allclose(sorted_run, one_by_one, atol=1e-5)


def test_extraction_is_deterministic_on_cpu(minilm):
    first, _ = embed(TEXTS, minilm, batch_size=2)
    second, _ = embed(TEXTS, minilm, batch_size=2)
    np.testing.assert_array_equal(first, second)


def test_stats_count_non_padding_tokens(minilm):
    _, stats = embed(TEXTS, minilm, batch_size=2, max_length=16)
    masks = minilm.tokenizer(TEXTS, truncation=True, max_length=16)["attention_mask"]
    assert stats["tokens_seen"] == sum(map(sum, masks))
    assert stats["n_at_max_length"] == 1  # only LONG is truncated at 16 tokens
    expected = {"n", "tokens_seen", "padded_tokens", "seconds", "examples_per_second", "tokens_per_second",
                "device", "dim", "pooling", "max_length", "encoder_name", "encoder_source", "encoder_weights_sha256"}
    assert expected <= stats.keys() and stats["n"] == len(TEXTS) and stats["dim"] == 384


def test_local_folder_encoder_resolves_and_records_weights_sha256():
    folder = minilm_folder()
    spec = resolve_encoder(str(folder))
    assert spec.local and spec.source == str(folder) and spec.hidden_size == 384
    assert spec.weights_sha256 == hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def test_hub_id_records_the_snapshot_commit(tmp_path):
    # A Hub cache laid out as huggingface_hub writes it, read offline in a fresh process (its env is read at import).
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny-bert"
    save_tiny_bert(repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    code = ("from privtext.encoders import resolve_encoder, extract_embeddings;"
            "spec = resolve_encoder('someone/tiny-bert');"
            "shape = extract_embeddings(['hi'], 'someone/tiny-bert', progress=False)[0].shape;"
            "print(spec.commit_hash, spec.local, shape)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [commit, "False", "(1,", "8)"]


def test_missing_local_folder_errors_naming_it(tmp_path):
    with pytest.raises(EncoderError, match="not a folder"):
        resolve_encoder(str(tmp_path / "no-such-model"))


def test_minilm_pooler_output_comes_from_its_checkpoint(minilm):
    # all-MiniLM-L6-v2's safetensors carries pooler.dense weights, so DPNR's pooler representation is defined.
    assert minilm.pooler_trained
    pooled, _ = embed([SHORT], minilm, pooling="pooler")
    cls, _ = embed([SHORT], minilm, pooling="cls")
    assert pooled.shape == (1, 384) and np.abs(pooled).max() < 1.0  # tanh output
    assert not np.allclose(pooled, cls, atol=1e-3)


def save_tiny_bert(folder: Path, pooler: bool = True) -> Path:
    """A 1-layer, 8-dim BERT with MiniLM's tokenizer: a real model folder in milliseconds."""
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=30522, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=128)
    BertModel(config, add_pooling_layer=pooler).save_pretrained(folder)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(minilm_folder() / name, folder / name)
    return folder


def test_pooler_pooling_errors_when_the_pooler_would_be_random(tmp_path):
    encoder = load_encoder(str(save_tiny_bert(tmp_path, pooler=False)), device="cpu")
    assert embed([SHORT], encoder, pooling="mean")[0].shape == (1, 8)
    with pytest.raises(EncoderError, match="no trained pooler"):
        embed([SHORT], encoder, pooling="pooler")


def test_unknown_pooling_is_rejected(minilm):
    with pytest.raises(EncoderError, match="pooling 'max'"):
        embed([SHORT], minilm, pooling="max")


def test_tabular_features_take_x_columns_in_column_order():
    frame = pd.DataFrame({"id": ["a", "b"], "x_b": [1, 2], "y": [0, 1], "x_a": [3.5, 4.5], "z_sex": [1, 0]})
    features = tabular_features(frame)
    assert features.dtype == np.float32
    np.testing.assert_array_equal(features, [[1, 3.5], [2, 4.5]])
