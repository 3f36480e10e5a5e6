"""The dataset contract shared by every builder: splits, manifest hash, quarantine, checks."""

import json

import pandas as pd
import pytest

from privtext.data.common import (
    BuiltDataset,
    DatasetError,
    Quarantine,
    manifest_sha256,
    split_frame,
    write_dataset,
)
from privtext.runtime.provenance import sha256_file


def _frame(n=100, n_classes=2):
    return pd.DataFrame({"id": [f"x{i:03d}" for i in range(n)], "y": [i % n_classes for i in range(n)], "z_a": [i % 3 % 2 for i in range(n)]})


def test_split_frame_respects_ratios_and_covers_classes():
    splits = split_frame(_frame(100), {"train": 0.6, "dev": 0.2, "test": 0.2}, seed=1)
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [60, 20, 20]
    for part in splits.values():
        assert set(part["y"]) == {0, 1}


def test_split_frame_is_deterministic_and_independent_of_input_order():
    frame = _frame(50)
    first = split_frame(frame, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=3)
    second = split_frame(frame.sample(frac=1, random_state=0), {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=3)
    assert manifest_sha256(first) == manifest_sha256(second)


def test_manifest_hash_changes_with_the_seed():
    frame = _frame(50)
    ratios = {"train": 0.8, "dev": 0.1, "test": 0.1}
    assert manifest_sha256(split_frame(frame, ratios, 1)) != manifest_sha256(split_frame(frame, ratios, 2))


def test_quarantine_counts_every_record_but_keeps_only_the_first_examples():
    quarantine = Quarantine(max_examples=2)
    for line in range(5):
        quarantine.add("bad_rating", "/raw/file.jsonl", line + 1, "rating '9'")
    assert quarantine.as_dict() == {"bad_rating": 5}
    assert [e["line"] for e in quarantine.examples] == [1, 2]
    assert quarantine.examples[0]["file"] == "file.jsonl"


def _built(splits, label_names=("a", "b")):
    return BuiltDataset(splits=splits, label_names=list(label_names), private_attributes={"a": ["no", "yes"]}, attribute_kinds={"a": "demographic"})


def test_write_dataset_writes_parquet_meta_and_quarantine(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("hello")
    quarantine = Quarantine()
    quarantine.add("empty_text", raw, 7)
    splits = split_frame(_frame(40), {"train": 0.5, "dev": 0.25, "test": 0.25}, seed=0)
    meta = write_dataset(_built(splits), tmp_path / "out", dataset="toy", inputs={"raw": raw}, seed=0, quarantine=quarantine)
    assert meta["splits"] == {"train": 20, "dev": 10, "test": 10}
    assert meta["inputs"] == {"raw.txt": sha256_file(raw)}
    assert meta["quarantined"] == {"empty_text": 1}
    assert json.loads((tmp_path / "out" / "meta.json").read_text()) == meta
    assert json.loads((tmp_path / "out" / "quarantine.jsonl").read_text())["line"] == 7
    assert pd.read_parquet(tmp_path / "out" / "dev.parquet").shape == (10, 3)


def test_split_without_a_class_stops_with_a_clear_error(tmp_path):
    splits = {"train": _frame(10), "dev": _frame(4), "test": _frame(4).assign(y=0)}
    splits["dev"]["id"] += "d"
    splits["test"]["id"] += "t"
    with pytest.raises(DatasetError, match="split 'test' has no example of class.*'b'"):
        write_dataset(_built(splits), tmp_path, dataset="toy", inputs={}, seed=0, quarantine=Quarantine())


def test_empty_split_stops_with_a_clear_error(tmp_path):
    splits = {"train": _frame(10), "dev": _frame(0), "test": _frame(4)}
    with pytest.raises(DatasetError, match="split 'dev' is empty"):
        write_dataset(_built(splits), tmp_path, dataset="toy", inputs={}, seed=0, quarantine=Quarantine())


def test_duplicate_ids_across_splits_are_rejected(tmp_path):
    splits = {"train": _frame(10), "dev": _frame(4), "test": _frame(4)}
    with pytest.raises(DatasetError, match="duplicate example ids"):
        write_dataset(_built(splits), tmp_path, dataset="toy", inputs={}, seed=0, quarantine=Quarantine())


def test_folder_hash_depends_on_contents_and_names(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("1")
    first = sha256_file(tmp_path / "a")
    (tmp_path / "a" / "f.txt").write_text("2")
    assert sha256_file(tmp_path / "a") != first


def test_split_frame_places_a_rare_class_in_every_split():
    frame = _frame(200).assign(y=0)
    frame.loc[[3, 50, 120, 170], "y"] = 1  # 4 examples of class 1: too few to stratify two ways
    splits = split_frame(frame, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=0)
    assert all((part["y"] == 1).any() for part in splits.values())
    assert sum(len(part) for part in splits.values()) == 200
