"""One grid point end to end, on files: train a method on frozen features, release, attack.

The workflow scripts are one call each into this module, so the whole job is testable without Snakemake.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

# torch is imported inside the functions that train (not here): a fairness job then starts ~1.5 s sooner,
# which is a third of its run time (benchmarks/orchestration.py).
from privtext.attack.inversion import NO_TEXT
from privtext.attack.joint import JOINT_ADVERSARY, joint_adversary, prediction_columns
from privtext.data import SPLITS, read_meta
from privtext.methods.spec import WORD_DROPOUT
from privtext.plan.grid import GridPoint
from privtext.measures.metrics import main_task_metrics
from privtext.runtime.arrays import check_finite, save_finite
from privtext.standins.parquet import read_columns, write_columns
from privtext.runtime.provenance import versions
from privtext.data.sampling import seeded_rows

log = logging.getLogger(__name__)


def load_split(data_dir: str | Path, split: str, features: str | Path, attributes: Sequence[str]):
    """Features from ``features`` (.npy) with labels ``y`` and ``z_*`` from the dataset's parquet."""
    from privtext.methods.base import Split

    named, Z = _label_columns(data_dir, split, attributes, "id", "y")
    X = np.load(features, allow_pickle=False)
    check_finite(X, features, hint="rebuild the embeddings")
    if len(X) != len(named["y"]):
        raise ValueError(f"{features}: {len(X)} rows but {data_dir}/{split}.parquet has {len(named['y'])}; "
                         "rebuild the embeddings")
    return Split(X=X.astype(np.float32, copy=False), y=named["y"].astype(np.int64, copy=False), Z=Z), named["id"]


def _label_columns(data_dir: str | Path, split: str, attributes: Sequence[str],
                   *names: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The columns ``names`` of a split's parquet, and each private attribute's labels (int64), in one read."""
    columns = read_columns(Path(data_dir) / f"{split}.parquet", [*names, *[f"z_{a}" for a in attributes]])
    return {n: columns[n] for n in names}, {a: columns[f"z_{a}"].astype(np.int64, copy=False) for a in attributes}


def _capped(split, cap: int | None, seed: int):
    """A seeded sample of at most ``cap`` training examples (dev/test are never capped)."""
    from privtext.methods.base import Split

    if cap is None or len(split.y) <= cap:
        return split
    keep = seeded_rows(len(split.y), cap, seed)
    return Split(X=split.X[keep], y=split.y[keep], Z={a: z[keep] for a, z in split.Z.items()})


@dataclass(frozen=True)
class TrainJob:
    """How one grid point's train job runs: its files, and what the config sets that the point's folder does
    not carry (the point itself, a :class:`~privtext.plan.grid.GridPoint`, says method, parameters, μ and seed).

    ``settings`` are the config's overrides of the method's paper defaults (for a fine-tuned point also, under
    ``finetune``, the encoder and its training). ``features`` are the frozen features per split (None for a
    fine-tuned point, which reads text). ``device`` (``auto``, ``cpu``, ``cuda``) is where it trains, with
    ``deterministic`` kernels on CUDA. With ``attack`` (the config's ``attack`` block) the fresh attribute
    attackers run in the train job too, on the files just written, and their result is left for the attack
    job to publish (:mod:`privtext.jobs.attack_cache`)."""

    data_dir: str | Path
    out_dir: str | Path
    settings: Mapping[str, Any] = field(default_factory=dict)
    features: Mapping[str, str | Path] | None = None
    max_train: int | None = None
    threads: int = 1
    device: str = "auto"
    attack: Mapping[str, Any] | None = None
    deterministic: bool = True


def train_grid_point(point: GridPoint, job: TrainJob) -> dict[str, Any]:
    """Fit the point's method on frozen features; the point's grid values win over ``job.settings``, and
    ``metrics.json`` records every resolved hyper-parameter."""
    from safetensors.torch import save_file

    from privtext.runtime.devices import resolve_device
    from privtext.methods import build_method, get_spec

    if job.features is None:
        raise ValueError(f"{point.run_dir} trains on frozen features, but its job names none")
    hyperparameters = get_spec(point.method).resolve(job.settings, point.grid_values)

    started = time.perf_counter()
    meta = read_meta(job.data_dir)
    attributes = list(meta["private_attributes"])
    loaded = {split: load_split(job.data_dir, split, job.features[split], attributes) for split in SPLITS}
    splits = {split: pair[0] for split, pair in loaded.items()}
    train = _capped(splits["train"], job.max_train, point.seed)
    model = build_method(
        point.method,
        hyperparameters,
        input_dim=train.X.shape[1],
        n_classes=len(meta["label_names"]),
        attribute_sizes={a: len(v) for a, v in meta["private_attributes"].items()},
        seed=point.seed,
        threads=job.threads,
        device=resolve_device(job.device, job.deterministic),
    )
    history = model.fit(train, splits["dev"])
    out_dir = Path(job.out_dir)
    metrics = write_release(model, {s: splits[s].X for s in SPLITS}, {s: splits[s].y for s in SPLITS},
                            {s: loaded[s][1] for s in SPLITS}, out_dir)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out_dir / "model.safetensors"))
    result = point_record(point, job, meta=meta, model=model, hyperparameters=hyperparameters, metrics=metrics,
                          n_train=len(train.y), n_train_available=len(splits["train"].y), history=history,
                          started=started)
    write_point_record(point, job, meta, result)
    return result


FIRST_LAYER = "encoder.0.0.weight"  # the encoder MLP's first linear map: [hidden, input_dim]


def load_trained_method(run_dir: str | Path, data_dir: str | Path, *, threads: int = 1) -> Any:
    """The method a finished frozen-feature run trained, rebuilt from its ``metrics.json`` (method, resolved
    hyper-parameters, seed, sizes) and ``model.safetensors``; the dataset's ``meta.json`` gives the label and
    attribute sizes, as the run had them."""
    from safetensors.torch import load_file

    from privtext.methods import build_method

    run_dir = Path(run_dir)
    record = json.loads((run_dir / "metrics.json").read_text())
    if record.get("finetune"):
        raise ValueError(f"{run_dir} fine-tuned its encoder: its path from text is not a frozen encoder's")
    meta = read_meta(data_dir)
    state = load_file(str(run_dir / "model.safetensors"))
    if FIRST_LAYER not in state:
        raise ValueError(f"{run_dir / 'model.safetensors'} has no {FIRST_LAYER!r}: not a model of the shared "
                         f"architecture (docs/methods.md, \"Methods\")")
    method = build_method(record["method"], record["hyperparameters"], input_dim=int(state[FIRST_LAYER].shape[1]),
                          n_classes=len(meta["label_names"]),
                          attribute_sizes={a: len(v) for a, v in meta["private_attributes"].items()},
                          seed=int(record["seed"]), threads=threads, device="cpu")
    method.load_state(state)
    return method


def point_record(point: GridPoint, job: TrainJob, *, meta: Mapping[str, Any], model: Any,
                 hyperparameters: Mapping[str, Any], metrics: Mapping[str, Any], n_train: int,
                 n_train_available: int, history: Mapping[str, Any], started: float,
                 **extra: Any) -> dict[str, Any]:
    """What ``metrics.json`` records of a trained grid point, frozen or fine-tuned (``extra`` adds what only
    one kind has, after the training history)."""
    from privtext.runtime.devices import device_record

    layer = model.privacy_layer
    return {
        "dataset": meta["dataset"],
        "method": point.method,
        "finetune": point.finetune,
        "params": {"mu": point.mu, **point.grid_values},
        "settings": dict(job.settings),
        "hyperparameters": dict(hyperparameters),
        "seed": point.seed,
        "privacy_layer": layer[0] if layer else None,
        "representation_dim": model.representation_dim,
        **privacy_record(model, point.mu),
        "dev": metrics["dev"],
        "test": metrics["test"],
        "n_train": int(n_train),
        "n_train_available": int(n_train_available),
        "max_train": job.max_train,
        "history": dict(history),
        **extra,
        "seconds": round(time.perf_counter() - started, 3),
        "threads": job.threads,
        **device_record(job.device, model.device),
        "data_split_manifest_sha256": meta["split_manifest_sha256"],
        "versions": versions(),
        "encoder": point.encoder,
        "run_dir": str(job.out_dir),
    }


def write_point_record(point: GridPoint, job: TrainJob, meta: Mapping[str, Any], record: Mapping[str, Any]) -> None:
    """Write ``metrics.json`` (the file that marks a point trained) and the stored attacks: the attribute
    attackers' result if the job says to attack here, else none (the file is an output of every train job)."""
    from privtext.jobs.attack_cache import store

    out_dir = Path(job.out_dir)
    (out_dir / "metrics.json").write_text(json_text(record))
    log.info("%s: dev acc %.4f, test acc %.4f, %.1f s", point.run_dir, record["dev"]["accuracy"],
             record["test"]["accuracy"], record["seconds"])
    if job.attack and job.attack.get("attackers"):
        attack_in_train_job(meta, Path(job.data_dir), out_dir, job.attack, point.seed, job.threads, job.deterministic)
    else:
        store(out_dir, {})


def write_release(model: Any, X: Mapping[str, np.ndarray], y: Mapping[str, np.ndarray], ids: Mapping[str, np.ndarray],
                  out_dir: Path) -> dict[str, dict[str, Any]]:
    """What every trained point writes from its fitted model and its features per split: the released
    representations of every split (fresh noise), the server's predictions on dev and test
    (``predictions.parquet``, with what the method's own adversaries predict from those releases:
    :mod:`privtext.attack.joint`); returns the main-task metrics of dev and test. Attacks stored for earlier
    releases go first; a release holding NaN or inf fails the job, naming its file."""
    from privtext.jobs.attack_cache import discard

    out_dir.mkdir(parents=True, exist_ok=True)
    discard(out_dir)
    scored = ("dev", "test")
    y_pred = {split: model.predict(X[split]) for split in scored}
    metrics = {split: main_task_metrics(y[split], y_pred[split]) for split in scored}
    adversaries = {}
    for split in SPLITS:
        released = model.release(X[split]).astype(np.float32)
        save_finite(out_dir / f"released_{split}.npy", released)
        if split in scored:  # no noise drawn: the releases' noise stream is the same with or without adversaries
            adversaries[split] = prediction_columns(model.adversary_predictions(released))
    write_columns(out_dir / "predictions.parquet", {
        "id": np.concatenate([ids[split] for split in scored]),
        "split": np.concatenate([np.full(len(y_pred[split]), split, dtype=object) for split in scored]),
        "y_true": np.concatenate([y[split] for split in scored]),
        "y_pred": np.concatenate([y_pred[split] for split in scored]),
        **{name: np.concatenate([adversaries[split][name] for split in scored]) for name in adversaries["test"]},
    })
    return metrics


def privacy_record(model: Any, mu: float) -> dict[str, Any]:
    """``epsilon_nominal``/``epsilon_effective`` of a fitted model (word dropout μ included)."""
    from privtext.privacy.accounting import epsilon_accounting

    layer = model.privacy_layer
    privacy = epsilon_accounting(layer[0] if layer else None, layer[1] if layer else None, model.representation_dim, mu)
    # Strict JSON has no Infinity: a method without a privacy layer gives no guarantee, written as null.
    return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in privacy.items()}


def attack_grid_point(
    *,
    data_dir: str | Path,
    run_dir: str | Path,
    out_path: str | Path,
    attackers: Sequence[str],
    seed: int,
    max_train: int | None,
    threads: int = 1,
    device: str = "auto",
    deterministic: bool = True,
    word_attacker: str | None = None,
    words: str | Path | None = None,
    identification: Mapping[str, Any] | None = None,
    clean_features: Mapping[str, str | Path] | None = None,
    words_record: str | Path | None = None,
) -> dict[str, Any]:
    """Write attack.json of a finished grid point: fresh attribute attackers on its released representations,
    each with the ceilings of the run's nominal and effective ε, and word recovery (``word_attacker`` on the
    dataset's word sets ``words``; None: the dataset has no text). The attribute attackers' result the train
    job stored for exactly these settings, releases and labels is published, else computed
    (:mod:`privtext.jobs.attack_cache`); word recovery is always computed here.

    ``device`` is where the torch attacker (``mlp``) trains, with ``deterministic`` kernels on CUDA;
    attack.json records the device used. With ``identification`` (config ``attack.identification``) and the
    dataset's clean frozen features ``clean_features`` (a text dataset's frozen-encoder point), it also writes
    sentence identification and retrieval reconstruction (:func:`identify_point`)."""
    from privtext.jobs.attack_cache import attack_keys, stored

    data_dir, run_dir = Path(data_dir), Path(run_dir)
    meta = read_meta(data_dir)
    labels = {split: _private_labels(data_dir, split, list(meta["private_attributes"])) for split in SPLITS}
    keys = attack_keys(run_dir, attackers=attackers, seed=seed, max_train=max_train, threads=threads, device=device,
                       labels=labels, meta=meta)
    parts = stored(run_dir, keys)
    measure_words = word_attacker is not None and words is not None
    # The releases are loaded only when something is computed.
    released = _released(run_dir) if "attributes" not in parts or measure_words else {}
    if "attributes" not in parts:
        parts["attributes"] = _attribute_attacks(meta, labels, released, attackers, seed, max_train, threads, device,
                                                 deterministic)
    if word_attacker is None:
        inversion: dict[str, Any] = {"status": "not measured: attack.inversion.attacker is null"}
    elif words is None:
        inversion = {"status": NO_TEXT}
    else:
        inversion = _word_recovery(released, Path(words), word_attacker, seed, max_train, threads)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    # the method's own adversaries, scored beside the fresh attackers (None: it trained none)
    joint = joint_adversary(run_dir / "predictions.parquet", data_dir / "test.parquet", labels,
                            meta["attribute_kinds"], metrics["n_train"])
    if joint is not None:
        _name_values(joint, meta)
        parts["attributes"]["attackers"][JOINT_ADVERSARY] = joint
    result = _with_ceilings(parts["attributes"], meta, labels["test"], metrics)
    result["inversion"] = inversion
    if identification is None:
        result["identification"] = {"status": "not measured: attack.identification is null"}
    elif clean_features is None or words is None or words_record is None:
        result["identification"] = {"status": "not measured: the encoder was fine-tuned (no frozen candidates)"
                                    if metrics.get("finetune") else NO_TEXT}
    else:
        result["identification"] = identify_point(
            data_dir, run_dir, released or _released(run_dir),
            {s: np.load(path, allow_pickle=False) for s, path in clean_features.items()},
            Path(words), Path(words_record), identification, seed=seed, metrics=metrics,
            max_words=encoder_window(clean_features["train"]))
    Path(out_path).write_text(json_text(result))
    return result


def identify_point(data_dir: Path, run_dir: Path, released: Mapping[str, np.ndarray],
                   clean: Mapping[str, np.ndarray], words: Path, words_record: Path, settings: Mapping[str, Any], *,
                   seed: int, metrics: Mapping[str, Any], max_words: int | None = None) -> dict[str, Any]:
    """Identification and reconstruction of a frozen-encoder point (privtext.attack.identification): the receiving
    party rebuilds the run's model, computes its noise-free outputs of the clean test texts (candidates) and of a
    seeded pool of training texts, and reads the noise law from the model's privacy layer. ``max_words``: the
    words of a text the encoder reads (:func:`encoder_window`), to which reconstructions are scored."""
    import torch
    from safetensors import safe_open

    started = time.perf_counter()
    pool = seeded_rows(len(clean["train"]), settings["max_pool"], seed)
    layer = None
    if metrics.get("privacy_layer") is None and float(metrics["params"].get(WORD_DROPOUT, 0)) == 0:
        # a deterministic release of the clean text: the releases are the noise-free outputs (INLP and MAJORITY too)
        noise_free = {"train": released["train"][pool], "test": released["test"]}
    else:
        with safe_open(str(run_dir / "model.safetensors"), framework="pt") as stored:
            if FIRST_LAYER not in stored.keys():
                return {"status": f"not measured: {metrics['method']} has no encoder of the shared architecture to "
                                  "compute its candidates' noise-free outputs"}
        method = load_trained_method(run_dir, data_dir)
        layer = method.privacy_module if method.privacy_layer else None
        noise_free = {}
        for split, rows in (("train", pool), ("test", slice(None))):
            raw = method.representation_before_noise(clean[split][rows])
            with torch.no_grad():
                noise_free[split] = raw if layer is None else layer.normalise(torch.from_numpy(raw)).numpy()
    epsilons = {name: float(metrics[f"epsilon_{name}"]) for name in ("nominal", "effective")
                if metrics.get(f"epsilon_{name}") is not None}
    record = _identification(data_dir, released, noise_free, clean, pool, words, words_record, settings, seed=seed,
                             scale=None if layer is None else float(layer.scale), epsilons=epsilons,
                             max_words=max_words)
    return {"status": "measured", **record, "seconds": round(time.perf_counter() - started, 3)}


def identify_frozen(data_dir: str | Path, features: Mapping[str, np.ndarray], words: str | Path,
                    words_record: str | Path, settings: Mapping[str, Any], *, seed: int,
                    max_words: int | None = None) -> dict[str, Any]:
    """Identification and reconstruction of the frozen encoder features themselves, the attack ladder's "no
    defence" rung: a deterministic release, so the white-box attacker's candidates are the features (no ε)."""
    started = time.perf_counter()
    pool = seeded_rows(len(features["train"]), settings["max_pool"], seed)
    noise_free = {"train": features["train"][pool], "test": features["test"]}
    record = _identification(Path(data_dir), features, noise_free, features, pool, Path(words), Path(words_record),
                             settings, seed=seed, scale=None, epsilons={}, max_words=max_words)
    return {"status": "measured", **record, "seconds": round(time.perf_counter() - started, 3)}


def _identification(data_dir: Path, released: Mapping[str, np.ndarray], noise_free: Mapping[str, np.ndarray],
                    clean: Mapping[str, np.ndarray], pool: np.ndarray, words: Path, words_record: Path,
                    settings: Mapping[str, Any], *, seed: int, scale: float | None,
                    epsilons: Mapping[str, float], max_words: int | None) -> dict[str, Any]:
    from privtext.attack.identification import identification_record
    from privtext.attack.inversion import frequent_words, read_word_sets

    texts = {split: read_columns(data_dir / f"{split}.parquet", ["text"])["text"] for split in ("train", "test")}
    texts["train"] = [texts["train"][i] for i in pool]
    return identification_record(
        {"train": released["train"][pool], "dev": released["dev"], "test": released["test"]}, noise_free,
        {"train": clean["train"][pool], "dev": clean["dev"], "test": clean["test"]}, texts,
        scale=scale, epsilons=epsilons, seed=seed,
        frequent_words=frequent_words(read_word_sets(words), json.loads(words_record.read_text())["vocabulary"]),
        counts=settings["candidates"], max_words=max_words, max_reconstructed=settings.get("max_reconstructed"))


def encoder_window(features: str | Path) -> int | None:
    """The most words of a text its frozen features can depend on: the encoder's ``max_length`` in word pieces
    (from the features' meta.json), since every word is at least one piece; None where no cap is recorded."""
    meta = json.loads((Path(features).parent / "meta.json").read_text())
    return None if meta.get("max_length") is None else int(meta["max_length"])


def _released(run_dir: Path) -> dict[str, np.ndarray]:
    return {s: np.load(run_dir / f"released_{s}.npy", allow_pickle=False) for s in SPLITS}


def _attribute_attacks(meta: Mapping[str, Any], Z: Mapping[str, Mapping[str, np.ndarray]],
                       released: Mapping[str, np.ndarray], attackers: Sequence[str], seed: int, max_train: int | None,
                       threads: int, device: str, deterministic: bool | None) -> dict[str, Any]:
    from privtext.attack.attackers import run_attacks
    from privtext.runtime.devices import device_record, resolve_device

    started = time.perf_counter()
    used = resolve_device(device, deterministic)
    result = run_attacks(released, Z, meta["attribute_kinds"], attackers, seed=seed, max_train=max_train,
                         threads=threads, device=used)
    for attacker in result["attackers"].values():
        _name_values(attacker, meta)
    return {**result, "seed": seed, **device_record(device, used), "seconds": round(time.perf_counter() - started, 3),
            "versions": versions()}


def attack_features(data_dir: str | Path, features: Mapping[str, np.ndarray], attackers: Sequence[str], *, seed: int,
                    max_train: int | None, threads: int = 1, device: str = "auto",
                    deterministic: bool | None = True) -> dict[str, Any]:
    """The attribute attackers on any representation of a dataset's splits (``features``: split -> rows in the
    splits' order), as on a grid point's releases: the attack ladder's "no defence" rung reads the frozen
    encoder features themselves this way."""
    data_dir = Path(data_dir)
    meta = read_meta(data_dir)
    labels = {split: _private_labels(data_dir, split, list(meta["private_attributes"])) for split in SPLITS}
    return _attribute_attacks(meta, labels, features, attackers, seed, max_train, threads, device, deterministic)


def _name_values(attacker: dict[str, Any], meta: Mapping[str, Any]) -> None:
    """An attacker's accuracy per value, indexed by value, keyed by the dataset's value names instead."""
    for attribute, scores in attacker["attributes"].items():
        names = meta["private_attributes"][attribute]
        scores["accuracy_per_value"] = {
            names[v] if v < len(names) else str(v): acc for v, acc in enumerate(scores["accuracy_per_value"])}


def _word_recovery(released: Mapping[str, np.ndarray], words: Path, attacker: str, seed: int,
                   max_train: int | None, threads: int) -> dict[str, Any]:
    from privtext.attack.inversion import read_word_sets, recover_words
    from privtext.runtime.threads import limited_threads

    with limited_threads(threads):
        return recover_words(released, read_word_sets(words), attacker=attacker, seed=seed, max_train=max_train)


def _with_ceilings(attributes: Mapping[str, Any], meta: Mapping[str, Any], y_test: Mapping[str, np.ndarray],
                   metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The attribute attackers' results with, beside each accuracy, the ceilings of the run's nominal and
    effective ε on that attribute's test prior (:mod:`privtext.privacy.ceiling`; ``y_test``: attribute → test
    labels). Computed on publishing, not stored: an ε accounting fix reaches them without attacking again."""
    from privtext.privacy.ceiling import ceiling_record

    result = json.loads(json_text(attributes))  # a copy, JSON-ready
    for attacker in result["attackers"].values():
        for attribute, scores in attacker["attributes"].items():
            scores.update(ceiling_record(metrics.get("epsilon_nominal"), metrics.get("epsilon_effective"),
                                         y_test[attribute], np.asarray(attacker["predictions"][attribute]),
                                         n_classes=len(meta["private_attributes"][attribute])))
    return result


def attack_in_train_job(meta: Mapping[str, Any], data_dir: Path, run_dir: Path, attack: Mapping[str, Any],
                        seed: int, threads: int, deterministic: bool | None = None) -> None:
    """Attack the releases just written with the attribute attackers and store the result for the attack job.
    Word recovery is left to the attack job: the train job reads no word sets, which are not its input."""
    from privtext.jobs.attack_cache import attack_keys, store

    max_train, device = attack.get("max_train"), attack.get("device", "auto")
    labels = {split: _private_labels(data_dir, split, list(meta["private_attributes"])) for split in SPLITS}
    keys = attack_keys(run_dir, attackers=attack["attackers"], seed=seed, max_train=max_train, threads=threads,
                       device=device, labels=labels, meta=meta)
    result = {**_attribute_attacks(meta, labels, _released(run_dir), attack["attackers"], seed, max_train, threads,
                                   device, deterministic), "computed_in": "train job"}
    store(run_dir, {"attributes": (keys["attributes"], json.loads(json_text(result)))})


def json_text(record: Mapping[str, Any]) -> str:
    """A job's JSON record as written to its file (numpy scalars and arrays as plain numbers and lists)."""
    return json.dumps(record, indent=2, default=json_default) + "\n"


def json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _private_labels(data_dir: Path, split: str, attributes: Sequence[str]) -> dict[str, np.ndarray]:
    return _label_columns(data_dir, split, attributes)[1]


def fairness_grid_point(*, data_dir: str | Path, run_dir: str | Path, out_path: str | Path) -> dict[str, Any]:
    """Main-task fairness per private attribute on dev (for selection) and test (for reporting)."""
    from privtext.measures.fairness import fairness_report

    started = time.perf_counter()
    data_dir = Path(data_dir)
    meta = read_meta(data_dir)
    predictions = read_columns(Path(run_dir) / "predictions.parquet", ["id", "split", "y_true", "y_pred"])
    result: dict[str, Any] = {}
    for split in ("dev", "test"):
        rows = predictions["split"] == split
        named, Z = _label_columns(data_dir, split, list(meta["private_attributes"]), "id")
        if not np.array_equal(predictions["id"][rows], named["id"]):
            raise ValueError(f"{run_dir}/predictions.parquet does not follow {data_dir}/{split}.parquet; retrain")
        result[split] = fairness_report(
            predictions["y_true"][rows],
            predictions["y_pred"][rows],
            Z,
            meta["attribute_kinds"],
            label_names=meta["label_names"],
            value_names=meta["private_attributes"],
        )
    result["seconds"] = round(time.perf_counter() - started, 3)
    Path(out_path).write_text(json_text(result))
    return result


def mdl_grid_point(
    *,
    data_dir: str | Path,
    run_dir: str | Path,
    out_path: str | Path,
    split: str,
    max_examples: int | None,
    probe: str,
    seed: int,
) -> dict[str, Any]:
    """MDL online code length of every private attribute given the released representations (docs/methods.md, "Measures")."""
    from privtext.measures.mdl import online_code_length

    started = time.perf_counter()
    data_dir = Path(data_dir)
    meta = read_meta(data_dir)
    X = np.load(Path(run_dir) / f"released_{split}.npy", allow_pickle=False)
    Z = _private_labels(data_dir, split, list(meta["private_attributes"]))
    rows = seeded_rows(len(X), max_examples, seed)
    attributes = {}
    for attribute, values in meta["private_attributes"].items():
        code = online_code_length(X[rows], Z[attribute][rows], n_classes=len(values), seed=seed, probe=probe)
        attributes[attribute] = {k: v for k, v in code.items() if k != "blocks"} | {"blocks": code["blocks"]}
    result = {
        "split": split,
        "n": int(len(rows)),
        "max_examples": max_examples,
        "probe": probe,
        "seed": seed,
        "attributes": attributes,
        "seconds": round(time.perf_counter() - started, 3),
    }
    Path(out_path).write_text(json_text(result))
    return result
