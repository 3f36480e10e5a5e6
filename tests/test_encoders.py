"""Frozen-encoder extraction (docs/methods.md, "The reference code's departures"): offline MiniLM, a tiny BERT through the real rule, pooling without
CAPE's padding bug, provenance."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import run_snakemake
from privtext.plan.config import load_config
from privtext.data import Quarantine, get_builder
from privtext.encoding.encoders import (
    POOLINGS,
    EncoderError,
    extract_embeddings,
    load_encoder,
    minilm_folder,
    resolve_encoder,
    tabular_features,
)
from privtext.plan.grid import encoder_slug

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
    code = ("from privtext.encoding.encoders import resolve_encoder, extract_embeddings;"
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


# --- A BERT-architecture model (the papers' family) through the real `embed` rule ----------------------------

def save_wordpiece_bert(folder: Path, texts: list[str]) -> Path:
    """A random 2-layer, 32-dim BERT (with pooler) and a WordPiece vocabulary trained on ``texts``, saved as a
    Hugging Face model folder (safetensors weights, BertTokenizerFast files)."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    # A small vocabulary splits rarer words into pieces, so texts of equal word count differ in tokens (padding).
    wordpiece.train_from_iterator(texts, vocab_size=90, min_frequency=2, show_progress=False)
    wordpiece.save(str(folder.parent / "wordpiece.json"))
    tokenizer = BertTokenizerFast(tokenizer_file=str(folder.parent / "wordpiece.json"))
    tokenizer.save_pretrained(folder)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        BertModel(config, add_pooling_layer=True).save_pretrained(folder, safe_serialization=True)
    return folder


@pytest.fixture(scope="module")
def tiny_bert_runs(tmp_path_factory):
    """The embed rule run by real Snakemake on 60 demo texts, once per pooling, in one working folder."""
    root = tmp_path_factory.mktemp("tiny_bert")
    corpus = get_builder("demo")({}, {**load_config()["demo"], "n_examples": 300}, 7, Quarantine()).splits
    folder = save_wordpiece_bert(root / "tiny-bert", [t for frame in corpus.values() for t in frame["text"]])
    workdir = root / "work"
    embed_dir = workdir / f"results/embeddings/demo/{encoder_slug(str(folder))}/mu~0/seed~0"
    runs = {}
    for pooling in POOLINGS:  # pooling is a param of the rule: each change reruns the extraction
        config = {"datasets": ["demo"], "demo": {"n_examples": 60}, "encoder": {"name": str(folder), "pooling": pooling}}
        run_snakemake(workdir, config, [str(embed_dir.relative_to(workdir) / "meta.json")], cores=1)
        runs[pooling] = {
            "meta": json.loads((embed_dir / "meta.json").read_text()),
            **{split: np.load(embed_dir / f"{split}.npy") for split in ("train", "dev", "test")},
        }
    return folder, workdir, runs


def test_tiny_bert_through_the_rule_gives_one_hidden_size_vector_per_text_for_every_pooling(tiny_bert_runs):
    _, workdir, runs = tiny_bert_runs
    for pooling, run in runs.items():
        assert run["meta"]["pooling"] == pooling and run["meta"]["dim"] == 32
        for split in ("train", "dev", "test"):
            texts = pd.read_parquet(workdir / f"results/data/demo/{split}.parquet")
            assert run[split].shape == (len(texts), 32) and run[split].dtype == np.float32
            assert np.isfinite(run[split]).all()


def test_tiny_bert_poolings_give_different_vectors(tiny_bert_runs):
    _, _, runs = tiny_bert_runs
    for first, second in (("cls", "mean"), ("cls", "pooler"), ("mean", "pooler")):
        assert not np.allclose(runs[first]["train"], runs[second]["train"], atol=1e-3), (first, second)


def _by_hand(folder: Path, texts: list[str]):
    """The model's outputs for ``texts`` padded together, straight from transformers."""
    from transformers import AutoTokenizer, BertModel

    tokenizer, model = AutoTokenizer.from_pretrained(folder), BertModel.from_pretrained(folder).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")
    with torch.inference_mode():
        return model(**batch), batch["attention_mask"]


def test_rule_mean_pooling_masks_padding_and_cls_pooler_are_the_models_outputs(tiny_bert_runs):
    folder, workdir, runs = tiny_bert_runs
    texts = pd.read_parquet(workdir / "results/data/demo/train.parquet")["text"].tolist()
    assert runs["mean"]["meta"]["splits"]["train"]["padded_tokens"] > 0  # the rule really padded some texts
    lengths = [sum(mask) for mask in _by_hand(folder, texts)[1].tolist()]
    short, long = int(np.argmin(lengths)), int(np.argmax(lengths))
    assert lengths[short] < lengths[long]
    output, mask = _by_hand(folder, [texts[short], texts[long]])  # the short text padded to the long one
    hidden = output.last_hidden_state[0]
    masked_mean = hidden[: lengths[short]].mean(dim=0).numpy()  # its real tokens only
    padded_mean = hidden.mean(dim=0).numpy()  # CAPE's code: padding positions averaged in
    np.testing.assert_allclose(runs["mean"]["train"][short], masked_mean, atol=1e-5)
    assert not np.allclose(runs["mean"]["train"][short], padded_mean, atol=1e-3)
    np.testing.assert_allclose(runs["cls"]["train"][short], hidden[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(runs["pooler"]["train"][short], output.pooler_output[0].numpy(), atol=1e-5)


def test_tiny_bert_meta_records_the_encoder_pooling_and_device(tiny_bert_runs):
    folder, workdir, runs = tiny_bert_runs
    meta = runs["pooler"]["meta"]
    assert meta["encoder"] == encoder_slug(str(folder)) and meta["encoder_name"] == str(folder)
    assert meta["encoder_local"] and meta["encoder_hidden_size"] == 32
    assert meta["encoder_weights_sha256"] == hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    assert (meta["pooling"], meta["device"], meta["device_requested"]) == ("pooler", "cpu", "auto")
    assert meta["splits"]["train"]["autocast"] == "none"  # fp32 on the CPU
    assert [p.name for p in (workdir / "results/embeddings/demo").iterdir()] == [meta["encoder"]]


def test_a_local_folder_gets_a_short_unique_slug_and_hub_ids_keep_theirs(tmp_path):
    first, second = tmp_path / "a" / "model", tmp_path / "b" / "model"
    first.mkdir(parents=True), second.mkdir(parents=True)
    slug = encoder_slug(str(first))
    assert slug.startswith("local-model-") and "/" not in slug and str(tmp_path.name) not in slug
    assert encoder_slug(str(first) + "/") == slug  # one folder, one name
    assert encoder_slug(str(second)) != slug  # same folder name, different checkpoints
    assert encoder_slug("./model").startswith("local-model-")  # not a hidden ".--model" folder
    assert encoder_slug("bert-base-uncased") == "bert-base-uncased"
    assert encoder_slug("google/bert_uncased_L-2_H-128_A-2") == "google--bert_uncased_L-2_H-128_A-2"
    assert encoder_slug("minilm") == "minilm"
