"""twitter and bios from files in their published formats; the data-only unpickler; end to end through Snakemake."""

import json
import os
import pickle

import numpy as np
import pytest

from conftest import run_snakemake
from privtext.plan.config import load_config
from privtext.data import DatasetError, Quarantine, get_builder
from privtext.data.common import manifest_sha256
from privtext.data.encoded import read_label_index
from privtext.data.safe_pickle import UnsafePickleError, load_data_pickle
from privtext.data.sources import DownloadError, download, resolve_layout
from synthetic_encoded import write_bios_files, write_twitter_files

SEED = 10
SPLIT_ROWS = {"train": 50, "dev": 10, "test": 10}
BIOS_ROWS = {"train": 60, "dev": 20, "test": 20}


def _build(dataset, raw_dir, **overrides):
    _, inputs = resolve_layout(dataset, [raw_dir])
    quarantine = Quarantine(max_examples=100)
    options = {**load_config()[dataset], **overrides}
    return get_builder(dataset)(inputs, options, SEED, quarantine), quarantine


class _RunsShell:
    """Unpickling this calls os.system: the classic malicious pickle."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def _malicious_pickle(marker):
    return pickle.dumps([{"g": "f", "p": "nurse", "hard_text": "x"}, _RunsShell(f"touch {marker}")], protocol=4)


# -------------------------------------------------------------------------------------------- safe pickle


def test_plain_data_pickles_load_unchanged_under_protocols_3_to_5(tmp_path):
    records = [{"g": "f", "p": "nurse", "hard_text": "she is a nurse", "start": 3, "w": 0.5, "t": (1, None), "b": b"x"}]
    for protocol in (3, 4, 5):
        path = tmp_path / f"p{protocol}.pickle"
        path.write_bytes(pickle.dumps(records, protocol=protocol))
        assert load_data_pickle(path) == records


def test_pickle_that_would_run_a_command_is_refused_naming_the_file_and_the_global(tmp_path):
    payload = _malicious_pickle(tmp_path / "ran-anyway")
    control = tmp_path / "control"
    pickle.loads(_malicious_pickle(control))  # the plain unpickler does run it: the payload is live
    assert control.exists()
    path = tmp_path / "train.pickle"
    path.write_bytes(payload)
    with pytest.raises(UnsafePickleError, match=r"train\.pickle: refused to load global '(posix|os|nt)\.system'"):
        load_data_pickle(path)
    assert not (tmp_path / "ran-anyway").exists()


def test_bios_build_with_a_malicious_pickle_stops_before_anything_runs(tmp_path):
    write_bios_files(tmp_path / "raw", BIOS_ROWS, seed=1)
    marker = tmp_path / "ran-anyway"
    (tmp_path / "raw/biasbios/dev.pickle").write_bytes(_malicious_pickle(marker))
    with pytest.raises(UnsafePickleError, match="biasbios/dev.pickle: refused to load global"):
        _build("bios", tmp_path / "raw")
    assert not marker.exists()


def test_truncated_pickle_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "test.pickle"
    path.write_bytes(pickle.dumps([{"g": "m"}] * 5, protocol=4)[:-7])
    with pytest.raises(pickle.UnpicklingError, match="test.pickle: not a readable pickle"):
        load_data_pickle(path)


# ------------------------------------------------------------------------------------------------ twitter


def test_twitter_first_cell_part_is_sentiment_label_second_is_aae_attribute(tmp_path):
    write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=1)
    built, quarantine = _build("twitter", tmp_path / "raw", train_ratio=None)
    rows = {frame_id: (y, z) for split in built.splits.values() for frame_id, y, z in split[["id", "y", "z_race"]].itertuples(index=False)}
    assert rows["twitter:dev/pos_neg:0"] == (1, 0)
    assert rows["twitter:dev/neg_pos:0"] == (0, 1)
    assert built.label_names == ["negative", "positive"] and built.private_attributes == {"race": ["sae", "aae"]}
    assert {name: len(frame) for name, frame in built.splits.items()} == {"train": 200, "dev": 40, "test": 40}
    assert built.extra["n_features"] == 16 and quarantine.as_dict() == {} and built.filtered == {}


def test_twitter_features_are_the_npy_vectors_in_file_order(tmp_path):
    synthetic = write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=2)
    built, _ = _build("twitter", tmp_path / "raw")
    test = built.splits["test"].set_index("id")
    expected = np.load(synthetic.files["deepmoji/test/neg_neg.npy"])
    got = test.loc[[f"twitter:test/neg_neg:{i}" for i in range(10)]].filter(like="x_").to_numpy()
    np.testing.assert_array_equal(got, expected)


def test_twitter_non_finite_vectors_are_quarantined_with_file_and_index(tmp_path):
    synthetic = write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=3, non_finite={"deepmoji/dev/pos_pos.npy": 3})
    built, quarantine = _build("twitter", tmp_path / "raw")
    assert quarantine.as_dict() == synthetic.expected_quarantine == {"non_finite_vector": 3}
    bad = np.flatnonzero(~np.isfinite(np.load(synthetic.files["deepmoji/dev/pos_pos.npy"])).all(axis=1))
    assert sorted((e["file"], e["index"]) for e in quarantine.examples) == [("pos_pos.npy", int(i)) for i in bad]
    assert len(built.splits["dev"]) == 37


def test_twitter_train_sample_is_stereotyped_80_20_and_the_rest_is_counted(tmp_path):
    write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=4)
    built, _ = _build("twitter", tmp_path / "raw", train_ratio=0.8, train_size=100)
    cells = built.splits["train"].groupby(["y", "z_race"]).size().to_dict()
    assert cells == {(1, 1): 40, (0, 0): 40, (1, 0): 10, (0, 1): 10}
    assert built.filtered == {"train_ratio_subsample": 200 - 100}
    assert len(built.splits["dev"]) == len(built.splits["test"]) == 40  # evaluation is never subsampled


def test_twitter_short_cell_gives_what_it_has_and_records_the_shortfall(tmp_path):
    write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=5)
    built, _ = _build("twitter", tmp_path / "raw", train_ratio=0.8, train_size=200)
    assert built.extra["train_cells"]["pos_pos"] == {"requested": 80, "kept": 50}
    assert built.extra["train_cells"]["pos_neg"] == {"requested": 20, "kept": 20}


def test_twitter_unsplit_cells_are_split_with_the_seed_and_rows_beyond_the_sizes_counted(tmp_path):
    write_twitter_files(tmp_path / "raw", 40, seed=6, presplit=False)
    sizes = {"train": 25, "dev": 5, "test": 5}
    first, _ = _build("twitter", tmp_path / "raw", cell_split=sizes, train_ratio=None)
    again, _ = _build("twitter", tmp_path / "raw", cell_split=sizes, train_ratio=None)
    assert {name: len(frame) for name, frame in first.splits.items()} == {"train": 100, "dev": 20, "test": 20}
    assert first.filtered == {"beyond_cell_split_sizes": 4 * 5}
    assert manifest_sha256(first.splits) == manifest_sha256(again.splits)
    other_seed = get_builder("twitter")(
        resolve_layout("twitter", [tmp_path / "raw"])[1],
        {**load_config()["twitter"], "cell_split": sizes, "train_ratio": None}, SEED + 1, Quarantine(),
    )
    assert manifest_sha256(other_seed.splits) != manifest_sha256(first.splits)
    assert first.extra["layout"] == "cells"


def test_twitter_cell_too_small_for_dev_and_test_is_an_error_naming_it(tmp_path):
    write_twitter_files(tmp_path / "raw", 8, seed=7, presplit=False)
    with pytest.raises(DatasetError, match=r"pos_pos\.npy: 8 usable rows cannot fill dev"):
        _build("twitter", tmp_path / "raw", cell_split={"train": 10, "dev": 4, "test": 4})


def test_object_npy_is_refused_without_unpickling(tmp_path):
    write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=8)
    np.save(tmp_path / "raw/deepmoji/test/pos_pos.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DatasetError, match=r"test/pos_pos\.npy: not a plain numeric \.npy array"):
        _build("twitter", tmp_path / "raw")


def test_twitter_files_of_different_dimensions_are_an_error(tmp_path):
    write_twitter_files(tmp_path / "raw", SPLIT_ROWS, seed=9)
    np.save(tmp_path / "raw/deepmoji/dev/neg_pos.npy", np.zeros((10, 8), dtype=np.float32))
    with pytest.raises(DatasetError, match="disagree on the dimension"):
        _build("twitter", tmp_path / "raw")


# --------------------------------------------------------------------------------------------------- bios


def test_bios_planted_defects_give_exact_quarantine_and_example_counts(tmp_path):
    defects = {"not_a_dict": 1, "missing_gender": 2, "unknown_gender": 1, "missing_profession": 1,
               "unknown_profession": 2, "missing_text": 1, "non_finite_vector": 2}
    synthetic = write_bios_files(tmp_path / "raw", BIOS_ROWS, seed=1, defects=defects,
                                 extra_records={"test": 2}, extra_vectors={"dev": 3})
    built, quarantine = _build("bios", tmp_path / "raw")
    assert quarantine.as_dict() == synthetic.expected_quarantine
    assert quarantine.as_dict() == {**defects, "record_without_vector": 2, "vector_without_record": 3}
    assert {name: len(frame) for name, frame in built.splits.items()} == synthetic.expected_examples
    assert built.extra["raw_counts"]["dev"] == {"records": 20, "vectors": 23}


def test_bios_quarantine_examples_name_the_file_and_index(tmp_path):
    write_bios_files(tmp_path / "raw", BIOS_ROWS, seed=2, defects={"unknown_profession": 1, "non_finite_vector": 1},
                     extra_vectors={"test": 1})
    _, quarantine = _build("bios", tmp_path / "raw")
    where = {(e["reason"], e["file"], e["index"]) for e in quarantine.examples}
    assert where == {
        ("non_finite_vector", "train.pickle_bert_cls.npy", 59),
        ("unknown_profession", "train.pickle", 58),
        ("vector_without_record", "test.pickle_bert_cls.npy", 20),
    }


def test_bios_label_is_the_profession_index_and_female_is_one(tmp_path):
    write_bios_files(tmp_path / "raw", BIOS_ROWS, seed=3)
    built, _ = _build("bios", tmp_path / "raw")
    dev = built.splits["dev"].set_index("id")
    records = pickle.loads((tmp_path / "raw/biasbios/dev.pickle").read_bytes())
    assert built.label_names == ["accountant", "nurse", "software_engineer", "surgeon", "yoga_teacher"]
    assert built.private_attributes == {"gender": ["male", "female"]}
    for index in (0, 1, 7):
        assert built.label_names[dev.loc[f"bios:dev:{index}", "y"]] == records[index]["p"]
        assert dev.loc[f"bios:dev:{index}", "z_gender"] == int(records[index]["g"] == "f")
        assert dev.loc[f"bios:dev:{index}", "text"] == records[index]["hard_text"]
    vectors = np.load(tmp_path / "raw/biasbios/dev.pickle_bert_cls.npy")
    np.testing.assert_array_equal(dev.filter(like="x_").to_numpy(), vectors)


def test_bios_text_key_chooses_the_record_field_kept_as_text(tmp_path):
    write_bios_files(tmp_path / "raw", BIOS_ROWS, seed=4)
    built, _ = _build("bios", tmp_path / "raw", text_key="hard_text_untokenized")
    first = pickle.loads((tmp_path / "raw/biasbios/train.pickle").read_bytes())[0]
    assert built.splits["train"].loc[0, "text"] == first["hard_text_untokenized"] != first["hard_text"]


def test_bios_inlp_layout_builds_the_same_dataset_as_the_federate_layout(tmp_path):
    write_bios_files(tmp_path / "a", BIOS_ROWS, seed=5)
    write_bios_files(tmp_path / "b", BIOS_ROWS, seed=5, layout="inlp")
    assert resolve_layout("bios", [tmp_path / "b"])[0] == "inlp"
    first, _ = _build("bios", tmp_path / "a")
    second, _ = _build("bios", tmp_path / "b")
    for split in first.splits:
        assert first.splits[split].equals(second.splits[split])


def test_bios_pickle_that_is_not_a_list_is_an_error_naming_it(tmp_path):
    write_bios_files(tmp_path / "raw", BIOS_ROWS, seed=6)
    (tmp_path / "raw/biasbios/test.pickle").write_bytes(pickle.dumps({"g": "f"}))
    with pytest.raises(DatasetError, match=r"test\.pickle: expected a pickled list of dicts, got dict"):
        _build("bios", tmp_path / "raw")


def test_label_index_with_a_gap_or_bad_line_is_an_error_naming_file_and_line(tmp_path):
    path = tmp_path / "profession2index.txt"
    path.write_text("nurse\t0\nsurgeon 1\n")
    with pytest.raises(DatasetError, match="profession2index.txt: line 2"):
        read_label_index(path)
    path.write_text("nurse\t0\nsurgeon\t2\n")
    with pytest.raises(DatasetError, match="indices must be 0..K-1"):
        read_label_index(path)


def test_real_label_index_files_from_the_mirror_resolve_with_records_from_raw_dir(tmp_path, data_mirror):
    write_bios_files(tmp_path / "raw", {"train": 84, "dev": 28, "test": 28}, seed=7, write_index=False,
                     professions=tuple(read_label_index(data_mirror / "biasbios/profession2index.txt")))
    layout, inputs = resolve_layout("bios", [tmp_path / "raw", data_mirror])
    assert inputs["professions"] == data_mirror / "biasbios/profession2index.txt"
    built = get_builder("bios")(inputs, load_config()["bios"], SEED, Quarantine())
    assert layout == "federate"
    assert len(built.label_names) == 28 and built.label_names[0] == "accountant" and built.label_names[27] == "yoga_teacher"


def test_missing_twitter_and_bios_files_ask_to_be_placed_by_hand(tmp_path):
    for relpath, says in (("deepmoji/pos_pos.npy", "DeepMoji-encoded Twitter"), ("biasbios/train.pickle", "Bias-in-Bios")):
        target = tmp_path / "raw" / relpath
        with pytest.raises(DownloadError, match=f"{says}.*not fetched by the pipeline") as error:
            download(relpath, target, allowed=True, fetch=lambda url: pytest.fail("nothing may be fetched"))
        assert f"place '{target.name}' at '{target}'" in str(error.value)


def test_pinned_label_index_download_accepts_the_mirror_copy(tmp_path, data_mirror):
    relpath = "biasbios/profession2index.txt"
    record = download(relpath, tmp_path / relpath, allowed=True, fetch=lambda url: (data_mirror / relpath).read_bytes())
    assert record["pinned"] and "shauli-ravfogel/nullspace_projection" in record["url"]


# ------------------------------------------------------------------------------------------ end to end


@pytest.mark.slow
def test_twitter_and_bios_build_and_run_a_federate_point_through_snakemake(tmp_path):
    raw = tmp_path / "raw"
    twitter = write_twitter_files(raw, {"train": 60, "dev": 30, "test": 30}, seed=11,
                                  non_finite={"deepmoji/train/neg_neg.npy": 2})
    bios = write_bios_files(raw, {"train": 150, "dev": 50, "test": 50}, seed=12,
                            defects={"unknown_gender": 2, "unknown_profession": 1}, extra_vectors={"test": 1})
    config = {
        "datasets": ["twitter", "bios"], "raw_dir": str(raw), "data_mirror": None, "allow_download": False,
        "twitter": {"train_size": 100},
        "attack": {"attackers": ["linear"]},
        "methods": {"federate": {"epochs": 2}},
        "studies": {"tiny": {"datasets": ["twitter", "bios"], "seeds": [10],
                             "methods": {"federate": {"epsilon": [8], "lambda": [1.0]}}}},
        "run_studies": ["tiny"],
    }
    run_snakemake(tmp_path / "work", config)
    results = tmp_path / "work/results"
    for dataset, synthetic, attribute in (("twitter", twitter, "race"), ("bios", bios, "gender")):
        meta = json.loads((results / f"data/{dataset}/meta.json").read_text())
        assert meta["quarantined"] == synthetic.expected_quarantine
        run_dir = results / f"runs/{dataset}/features/federate/mu~0/epsilon~8/lambda~1/seed~10"
        metrics = json.loads((run_dir / "metrics.json").read_text())
        attack = json.loads((run_dir / "attack.json").read_text())
        assert metrics["epsilon_nominal"] == 8 and metrics["epsilon_effective"] == 8
        assert 0.0 <= metrics["test"]["accuracy"] <= 1.0 and np.isfinite(metrics["test"]["macro_f1"])
        attacked = attack["attackers"]["linear"]["attributes"]
        assert set(attacked) == {attribute} and 0.0 <= attacked[attribute]["accuracy"] <= 1.0
    twitter_meta = json.loads((results / "data/twitter/meta.json").read_text())
    assert twitter_meta["splits"] == {"train": 100, "dev": 120, "test": 120}
    assert sorted(twitter_meta["inputs"])[:2] == ["dev/neg_neg.npy", "dev/neg_pos.npy"]
    assert len(twitter_meta["inputs"]) == 12  # every cell file of every split is hashed, none overwritten
    bios_meta = json.loads((results / "data/bios/meta.json").read_text())
    assert set(bios_meta["inputs"]) == {path.name for path in bios.files.values()}
    embed_meta = json.loads((results / "embeddings/bios/features/mu~0/seed~0/meta.json").read_text())
    assert embed_meta["splits"]["train"]["dim"] == 12
