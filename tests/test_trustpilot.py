"""tp_us (DPNR) and tp_uk (CAPE) from Trustpilot files in the raw format: parsing, drops, labels, bins, splits."""

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_snakemake
from privtext.plan.config import load_config
from privtext.data import DatasetError, Quarantine, get_builder
from privtext.data.common import manifest_sha256
from privtext.data.sources import TP_UK, TP_US
from synthetic_trustpilot import write_trustpilot_file
from privtext.data.trustpilot import assign_birth_year_bins, birth_year_bin_names, fit_birth_year_bins

SEED = 10
US_DEFECTS = {
    "unparseable_line": 2, "undecodable_bytes": 2, "not_a_dict": 1, "no_reviews": 2, "missing_gender": 3,
    "bad_gender": 3, "missing_birth_year": 2, "bad_birth_year": 3, "bad_rating": 3, "empty_text": 2,
    "bad_date": 3, "missing_user_id": 2,
}
UK_DEFECTS = {**{k: v for k, v in US_DEFECTS.items() if k != "bad_date"}, "missing_geocodes": 3, "bad_geocode": 3}


def _build(dataset, path, **overrides):
    quarantine = Quarantine(max_examples=100)
    options = {**load_config()[dataset], **overrides}
    return get_builder(dataset)({"users": path}, options, SEED, quarantine), quarantine


def _rows(built):
    return pd.concat(built.splits.values()).set_index("id")


def _review(rating="5", date="2014-05-01T10:00:00.000", text=("Great service.",), title="Happy"):
    return {"company_id": "www.shop.com", "date": date, "rating": rating, "text": list(text), "title": title}


def _user(user_id, gender="F", birth_year="1980", reviews=None, geocodes=((51.5074, -0.1278),)):
    return {
        "country": "united_kingdom", "gender": gender, "item_type": "user", "location": "London",
        "profile_text": "", "reviews": reviews or [_review()], "user_id": user_id, "birth_year": birth_year,
        "geocodes": [{"lat": lat, "lng": lng} for lat, lng in geocodes],
    }


def _write_users(path, users, as_json=()):
    lines = [json.dumps(u) if i in as_json else repr(u) for i, u in enumerate(users)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _filler(n, start=900):
    """Sound users whose examples let a small hand-made file be split three ways."""
    return [
        _user(str(start + i), "FM"[i % 2], 1950 + i, [_review(str(i % 5 + 1), text=(f"filler {i}",))])
        for i in range(n)
    ]


# ------------------------------------------------------------------------------- drops are all recorded


def test_tp_us_planted_defects_give_exact_quarantine_filter_and_example_counts(tmp_path):
    synthetic = write_trustpilot_file(tmp_path / "us.jsonl.tmp", 400, seed=1, country="us", defects=US_DEFECTS)
    built, quarantine = _build("tp_us", synthetic.path)
    assert quarantine.as_dict() == synthetic.expected_quarantine
    assert set(quarantine.as_dict()) == {reason for reason in US_DEFECTS if reason != "missing_user_id"}
    assert built.filtered == synthetic.expected_filtered
    assert sum(len(part) for part in built.splits.values()) == synthetic.expected_examples


def test_tp_uk_planted_defects_give_exact_quarantine_filter_and_example_counts(tmp_path):
    synthetic = write_trustpilot_file(tmp_path / "uk.jsonl.tmp", 300, seed=2, country="uk", defects=UK_DEFECTS)
    built, quarantine = _build("tp_uk", synthetic.path)
    assert quarantine.as_dict() == synthetic.expected_quarantine
    assert built.filtered == synthetic.expected_filtered
    assert quarantine.as_dict()["missing_gender"] == 3 and quarantine.as_dict()["missing_geocodes"] == 3
    assert built.filtered == {}
    assert sum(len(part) for part in built.splits.values()) == synthetic.expected_examples


def test_quarantine_examples_carry_the_file_name_and_line_number(tmp_path):
    synthetic = write_trustpilot_file(tmp_path / "us.jsonl.tmp", 200, seed=3, country="us", defects=US_DEFECTS)
    _, quarantine = _build("tp_us", synthetic.path)
    assert len(quarantine.examples) == sum(quarantine.as_dict().values())
    for example in quarantine.examples:
        assert example["file"] == "us.jsonl.tmp"
        assert example["line"] in synthetic.defect_lines[example["reason"]]


def test_missing_or_null_gender_and_birth_year_are_quarantined(tmp_path):
    users = [_user("1", gender=None), _user("2", birth_year=None), _user("3", gender="X"), _user("4"), *_filler(10)]
    del users[3]["gender"]
    built, quarantine = _build("tp_us", _write_users(tmp_path / "u.jsonl.tmp", users))
    assert quarantine.as_dict() == {"bad_gender": 1, "missing_birth_year": 1, "missing_gender": 2}
    assert "missing_gender" not in built.filtered


# ------------------------------------------------------------------------------------ formats agree


def test_json_line_with_null_parses_like_a_python_literal_with_none(tmp_path):
    users = [_user("1", reviews=[_review(title=None)]), _user("2", reviews=[_review(title=None)]), *_filler(10)]
    built, quarantine = _build("tp_us", _write_users(tmp_path / "u.jsonl.tmp", users, as_json={1}))
    rows = _rows(built)
    assert quarantine.as_dict() == {}
    assert rows.loc["tp_us:1", "text"] == rows.loc["tp_us:2", "text"] == "Great service."


def test_json_and_python_literal_files_build_identical_datasets(tmp_path):
    literal = write_trustpilot_file(tmp_path / "a.jsonl.tmp", 200, seed=4, defects={"missing_gender": 4})
    as_json = write_trustpilot_file(tmp_path / "b.jsonl.tmp", 200, seed=4, defects={"missing_gender": 4}, json_every=1)
    assert b"null" in as_json.path.read_bytes() and b"None" in literal.path.read_bytes()
    first, _ = _build("tp_us", literal.path)
    second, _ = _build("tp_us", as_json.path)
    for split in first.splits:
        pd.testing.assert_frame_equal(first.splits[split], second.splits[split])
    assert first.filtered == second.filtered


def test_zip_builds_the_same_dataset_as_the_unzipped_file(tmp_path):
    plain = write_trustpilot_file(tmp_path / "x.jsonl.tmp", 250, seed=5, country="uk", defects=UK_DEFECTS)
    zipped = write_trustpilot_file(tmp_path / "x.jsonl.zip", 250, seed=5, country="uk", defects=UK_DEFECTS, as_zip=True)
    first, first_quarantine = _build("tp_uk", plain.path)
    second, second_quarantine = _build("tp_uk", zipped.path)
    assert manifest_sha256(first.splits) == manifest_sha256(second.splits)
    for split in first.splits:
        pd.testing.assert_frame_equal(first.splits[split], second.splits[split])
    assert first_quarantine.examples == second_quarantine.examples


def test_zip_without_a_single_jsonl_member_is_rejected(tmp_path):
    import zipfile

    path = tmp_path / "x.jsonl.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "nothing here")
    with pytest.raises(DatasetError, match="x.jsonl.zip.*exactly one member"):
        _build("tp_us", path)


# ------------------------------------------------------------------------------------------------- tp_us


def test_tp_us_age_rule_young_below_35_old_above_45_middle_dropped(tmp_path):
    ages = {"a34": 34, "a35": 35, "a40": 40, "a45": 45, "a46": 46}
    users = [_user(uid, birth_year=str(2014 - age)) for uid, age in ages.items()] + _filler(10)
    built, quarantine = _build("tp_us", _write_users(tmp_path / "u.jsonl.tmp", users))
    rows = _rows(built)
    assert rows.loc["tp_us:a34", "z_age"] == 1  # young
    assert rows.loc["tp_us:a46", "z_age"] == 0  # old
    assert not {"tp_us:a35", "tp_us:a40", "tp_us:a45"} & set(rows.index)
    assert built.filtered == {"age_between_35_and_45": 3}
    assert built.private_attributes["age"][1] == "young" and built.private_attributes["gender"][1] == "female"
    assert quarantine.as_dict() == {}


def test_tp_us_label_is_rating_minus_one_and_text_is_title_then_paragraphs_of_first_review(tmp_path):
    first = _review("2", text=("Slow delivery.", "Box was damaged."), title="Not great")
    later = _review("5", text=("Second order fine.",), title="Better")
    users = [_user("u1", gender="M", reviews=[first, later]), *_filler(10)]
    rows = _rows(_build("tp_us", _write_users(tmp_path / "u.jsonl.tmp", users))[0])
    assert rows.loc["tp_us:u1", "y"] == 1
    assert rows.loc["tp_us:u1", "text"] == "Not great Slow delivery. Box was damaged."
    assert rows.loc["tp_us:u1", "z_gender"] == 0


def test_tp_us_user_without_id_gets_a_line_based_unique_id(tmp_path):
    users = [_user("7"), _user("7"), _user(None), *_filler(10)]
    rows = _rows(_build("tp_us", _write_users(tmp_path / "u.jsonl.tmp", users))[0])
    assert {"tp_us:7", "tp_us:7@2", "tp_us:line3"} <= set(rows.index)


# ------------------------------------------------------------------------------------------------- tp_uk


def test_tp_uk_birth_year_bins_are_fitted_on_the_training_split_only(tmp_path):
    synthetic = write_trustpilot_file(tmp_path / "uk.jsonl.tmp", 300, seed=6, country="uk")
    built, _ = _build("tp_uk", synthetic.path)
    birth_year = {f"tp_uk:{u['user_id']}": int(u["birth_year"]) for u in synthetic.users}

    def years(frame):
        return np.array([birth_year[i.rsplit(":", 1)[0]] for i in frame["id"]])

    train_years = years(built.splits["train"])
    all_years = np.concatenate([years(part) for part in built.splits.values()])
    quantiles = np.linspace(0, 1, 7)
    train_edges = np.unique(np.floor(np.quantile(train_years, quantiles))).tolist()
    all_edges = np.unique(np.floor(np.quantile(all_years, quantiles))).tolist()
    assert train_edges != all_edges  # the data tells the two fits apart
    assert built.extra["birth_year_bin_edges"] == train_edges
    assert built.extra["birth_year_bins_fitted_on"] == "train"
    # On the training split the codes are CAPE's equal-frequency pandas.qcut bins.
    expected = pd.qcut(train_years, 6, labels=False, duplicates="drop")
    assert built.splits["train"]["z_age"].tolist() == list(expected)
    assert len(built.private_attributes["age"]) == 6


def test_birth_year_bins_merge_tied_edges_and_clip_years_outside_the_training_range():
    edges = fit_birth_year_bins(np.array([1980] * 10 + [1990] * 2), 6)
    assert edges.tolist() == [1980, 1981, 1990]
    assert birth_year_bin_names(edges) == ["1980-1981", "1982-1990"]
    assert assign_birth_year_bins(np.array([1950, 1980, 1981, 1982, 1990, 2001]), edges).tolist() == [0, 0, 0, 1, 1, 1]


def test_tp_uk_location_is_the_precision_2_geohash_of_the_first_geocode(tmp_path):
    london_then_aberdeen = ((51.5074, -0.1278), (57.15, -2.09))
    users = [_user("u1", geocodes=london_then_aberdeen), _user("u2", geocodes=((57.15, -2.09),)), *_filler(10)]
    built, _ = _build("tp_uk", _write_users(tmp_path / "u.jsonl.tmp", users))
    rows, names = _rows(built), built.private_attributes["location"]
    assert names[rows.loc["tp_uk:u1:0", "z_location"]] == "gc"
    assert names[rows.loc["tp_uk:u2:0", "z_location"]] == "gf"
    assert names == sorted(names)


def test_tp_uk_keeps_every_valid_review_with_its_first_paragraph(tmp_path):
    reviews = [
        _review("4", text=("First paragraph.", "Second paragraph.")),
        _review("9"),  # bad rating: quarantined, the user's other reviews stay
        _review("1", text=("Awful.",)),
    ]
    users = [_user("u1", reviews=reviews), _user("u2", geocodes=()), *_filler(10)]
    built, quarantine = _build("tp_uk", _write_users(tmp_path / "u.jsonl.tmp", users))
    rows = _rows(built)
    assert rows.loc["tp_uk:u1:0", "text"] == "First paragraph." and rows.loc["tp_uk:u1:0", "y"] == 3
    assert rows.loc["tp_uk:u1:2", "y"] == 0 and "tp_uk:u1:1" not in rows.index
    assert quarantine.as_dict() == {"bad_rating": 1, "missing_geocodes": 1}
    assert built.filtered == {}


# ------------------------------------------------------------------------------------- failure, e2e


def test_a_file_left_empty_after_filtering_raises_a_dataset_error_naming_it(tmp_path):
    path = _write_users(tmp_path / "nobody.jsonl.tmp", [_user(str(i), gender=None) for i in range(5)])
    with pytest.raises(DatasetError, match="nobody.jsonl.tmp.*usable example"):
        _build("tp_us", path)


def test_same_file_and_seed_give_identical_splits(tmp_path):
    synthetic = write_trustpilot_file(tmp_path / "uk.jsonl.tmp", 120, seed=7, country="uk")
    assert manifest_sha256(_build("tp_uk", synthetic.path)[0].splits) == manifest_sha256(
        _build("tp_uk", synthetic.path)[0].splits
    )


@pytest.mark.slow
def test_trustpilot_builds_through_snakemake_with_recorded_drops_and_stable_splits(tmp_path):
    raw = tmp_path / "raw"
    us = write_trustpilot_file(raw / f"{TP_US}.tmp", 400, seed=8, country="us", defects=US_DEFECTS)
    uk = write_trustpilot_file(raw / f"{TP_UK}.zip", 300, seed=9, country="uk", defects=UK_DEFECTS, as_zip=True)
    config = {"datasets": ["tp_us", "tp_uk"], "raw_dir": str(raw), "allow_download": False}
    manifests = []
    for run in ("first", "second"):
        # Explicit targets: this test is about the data stage, not whatever `all` grows to.
        run_snakemake(tmp_path / run, config, [f"results/data/{d}/meta.json" for d in config["datasets"]])
        for dataset, synthetic in (("tp_us", us), ("tp_uk", uk)):
            meta = json.loads((tmp_path / run / f"results/data/{dataset}/meta.json").read_text())
            assert meta["quarantined"] == synthetic.expected_quarantine
            assert meta["filtered"] == synthetic.expected_filtered
            assert sum(meta["splits"].values()) == synthetic.expected_examples
            assert list(meta["inputs"]) == [synthetic.path.name]
            manifests.append(meta["split_manifest_sha256"])
    us_meta = json.loads((tmp_path / "first/results/data/tp_us/meta.json").read_text())
    for split in ("dev", "test"):
        assert abs(us_meta["splits"][split] - 0.1 * us.expected_examples) <= 1
    assert manifests[:2] == manifests[2:]
