"""``device: auto | cpu | cuda``: resolved once with a clear error, used by extraction, methods and attackers,
and recorded in every result file. This machine has no GPU, so ``cuda`` must fail and ``auto`` must mean CPU."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conftest import run_snakemake
from privtext.attack.attackers import run_attacks
from privtext.plan.config import ConfigError, load_config
from privtext.runtime.devices import DeviceError, autocast_dtype, device_record, resolve_device
from privtext.encoding.encoders import extract_embeddings, load_encoder
from privtext.methods import build_method

no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the behaviour of a machine without a GPU")
CUDA_MESSAGE = r"device: cuda was requested but torch\.cuda\.is_available\(\) is False .*use device: auto or cpu"


@no_gpu
def test_auto_resolves_to_the_cpu_without_a_gpu():
    assert resolve_device("auto") == torch.device("cpu")
    assert device_record("auto", resolve_device("auto")) == {"device": "cpu", "device_requested": "auto"}


@no_gpu
def test_cuda_without_a_gpu_fails_with_a_message_that_says_what_to_use():
    with pytest.raises(DeviceError, match=CUDA_MESSAGE):
        resolve_device("cuda")


def test_unknown_device_names_the_value_and_the_choices():
    with pytest.raises(DeviceError, match=r"'gpu' is not one of auto, cpu, cuda"):
        resolve_device("gpu")


def test_cpu_runs_in_fp32_without_autocast():
    assert autocast_dtype(torch.device("cpu")) is None


@pytest.mark.parametrize("block", ["encoder", "train", "attack"])
def test_schema_defaults_to_auto_and_rejects_an_unknown_device(block):
    assert load_config()[block]["device"] == "auto"
    with pytest.raises(ConfigError, match=rf"'{block}\.device': 'gpu' is not one of \['auto', 'cpu', 'cuda'\]"):
        load_config(overrides={block: {"device": "gpu"}})


@no_gpu
def test_extraction_with_cuda_fails_before_reading_any_model_file():
    # A model that does not exist: the device error must come first, before minutes of loading weights.
    with pytest.raises(DeviceError, match=CUDA_MESSAGE):
        load_encoder("/no/such/model", device="cuda")


@no_gpu
def test_methods_and_attackers_with_cuda_fail_with_the_same_message():
    with pytest.raises(DeviceError, match=CUDA_MESSAGE):
        build_method("federate", {}, input_dim=4, n_classes=2, attribute_sizes={"a": 2}, seed=1, device="cuda")
    rng = np.random.default_rng(0)
    released = {s: rng.normal(size=(40, 3)) for s in ("train", "dev", "test")}
    Z = {s: {"a": rng.integers(0, 2, 40)} for s in ("train", "dev", "test")}
    with pytest.raises(DeviceError, match=CUDA_MESSAGE):
        run_attacks(released, Z, {"a": "demographic"}, ["mlp"], seed=1, device="cuda")


@no_gpu
def test_auto_is_recorded_as_cpu_in_extraction_stats_methods_and_attacks():
    _, stats = extract_embeddings(["a short text"], "minilm", device="auto", progress=False)
    assert stats["device"] == "cpu" and stats["autocast"] == "none"
    assert build_method("nonpriv", {}, input_dim=4, n_classes=2, attribute_sizes={}, seed=1,
                        device="auto").device == torch.device("cpu")
    rng = np.random.default_rng(0)
    released = {s: rng.normal(size=(40, 3)) for s in ("train", "dev", "test")}
    Z = {s: {"a": rng.integers(0, 2, 40)} for s in ("train", "dev", "test")}
    result = run_attacks(released, Z, {"a": "demographic"}, ["mlp"], seed=1, device="auto")
    assert result["settings"]["device"] == "cpu"


@no_gpu
def test_through_snakemake_cuda_fails_the_training_job_and_auto_records_cpu(tmp_path):
    """The grid's rules on 40 demo texts (MiniLM features): ``train.device: cuda`` stops the train job with the
    message in its log; ``auto`` writes ``cpu`` into the embeddings' meta.json, metrics.json and attack.json."""
    config = {"datasets": ["demo"], "demo": {"n_examples": 40}, "attack": {"attackers": ["mlp"]},
              "methods": {"nonpriv": {"epochs": 2}},
              "studies": {"one": {"datasets": ["demo"], "seeds": [10], "methods": {"nonpriv": {}}}},
              "run_studies": ["one"]}
    run = "results/runs/demo/minilm/nonpriv/mu~0/seed~10"
    failed = run_snakemake(tmp_path, {**config, "train": {"device": "cuda"}}, [f"{run}/metrics.json"], check=False)
    assert failed.returncode != 0
    log = (tmp_path / f"results/logs/{run}/train.log").read_text()
    assert "device: cuda was requested but torch.cuda.is_available() is False" in log
    run_snakemake(tmp_path, config, [f"{run}/attack.json"])
    metrics = json.loads((tmp_path / run / "metrics.json").read_text())
    attack = json.loads((tmp_path / run / "attack.json").read_text())
    embed_meta = json.loads((tmp_path / "results/embeddings/demo/minilm/mu~0/seed~0/meta.json").read_text())
    for record in (metrics, attack, embed_meta):
        assert (record["device"], record["device_requested"]) == ("cpu", "auto")
