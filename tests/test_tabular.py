"""The adult and celeba builders (docs/data.md "Adult and CelebA") on hand-made files and, when present, the mirror."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privtext.data.common import DatasetError, Quarantine
from privtext.data.tabular import build_adult, build_celeba

SPLIT = {"train": 0.6, "dev": 0.2, "test": 0.2}
SEED = 10

# ------------------------------------------------------------------------------------------------- adult

WORKCLASSES = ["Private", "State-gov", "Self-emp-not-inc"]
COUNTRIES = ["United-States", "Outlying-US(Guam-USVI-etc)"]


def adult_line(i: int, *, rich: bool, female: bool, suffix: str = "") -> str:
    """One UCI record; ``age`` = 20 + i so tests can recover the raw value of each row."""
    fields = [
        20 + i, WORKCLASSES[i % 3], 100000 + 1000 * i, "Bachelors", 13, "Never-married", "Adm-clerical",
        "Not-in-family", "White", "Female" if female else "Male", 0, 0, 40, COUNTRIES[i % 2],
        (">50K" if rich else "<=50K") + suffix,
    ]
    return ", ".join(str(f) for f in fields)


def with_field(line: str, column: int, value: str) -> str:
    fields = line.split(", ")
    fields[column] = value
    return ", ".join(fields)


@pytest.fixture
def adult_inputs(tmp_path: Path) -> dict[str, Path]:
    """12 good rows in adult.data, 8 in adult.test, plus `?` rows and bad rows at known lines."""
    data = [adult_line(i, rich=i % 2 == 0, female=i % 3 == 0) for i in range(12)]
    data.insert(3, with_field(adult_line(50, rich=True, female=False), 1, "?"))  # line 4: filtered
    data.insert(5, "39, State-gov, 77516, Bachelors")  # line 6: bad_field_count
    test = ["|1x3 Cross validator"]
    test += [adult_line(i, rich=i % 2 == 1, female=i % 2 == 0, suffix=".") for i in range(12, 20)]
    test.append(with_field(adult_line(60, rich=False, female=True), 14, "maybe."))  # line 10: bad_label
    test.append(with_field(adult_line(61, rich=False, female=True, suffix="."), 2, "x"))  # line 11: bad_number
    test.append(with_field(adult_line(62, rich=False, female=True, suffix="."), 13, "?"))  # line 12: filtered
    paths = {"data": tmp_path / "adult.data", "test": tmp_path / "adult.test"}
    paths["data"].write_text("\n".join(data) + "\n\n")
    paths["test"].write_text("\n".join(test) + "\n\n")
    return paths


def build_small_adult(inputs: dict[str, Path]) -> tuple[dict[str, pd.DataFrame], Quarantine, object]:
    quarantine = Quarantine()
    built = build_adult(inputs, {"split": SPLIT}, SEED, quarantine)
    return built.splits, quarantine, built


def test_adult_keeps_complete_rows_counts_missing_and_quarantines_bad_ones(adult_inputs):
    splits, quarantine, built = build_small_adult(adult_inputs)
    assert sum(len(s) for s in splits.values()) == 20
    assert built.filtered == {"missing_value": 2}
    assert quarantine.as_dict() == {"bad_field_count": 1, "bad_label": 1, "bad_number": 1}


def test_adult_quarantine_names_file_and_line(adult_inputs):
    _, quarantine, _ = build_small_adult(adult_inputs)
    where = {(e["reason"], e["file"], e["line"]) for e in quarantine.examples}
    assert where == {
        ("bad_field_count", "adult.data", 6), ("bad_label", "adult.test", 10), ("bad_number", "adult.test", 11)
    }


def test_adult_ids_name_the_file_role_and_line(adult_inputs):
    splits, _, _ = build_small_adult(adult_inputs)
    ids = set(pd.concat(s["id"] for s in splits.values()))
    assert {"adult:data:1", "adult:data:13", "adult:test:2", "adult:test:9"} <= ids
    assert "adult:test:1" not in ids  # the |1x3 banner is not a record


def test_adult_label_is_income_above_50k_with_test_dot_stripped_and_female_is_one(adult_inputs):
    splits, _, built = build_small_adult(adult_inputs)
    rows = pd.concat(splits.values()).set_index("id")
    assert built.label_names == ["<=50K", ">50K"]
    assert built.private_attributes == {"sex": ["male", "female"]}
    # adult.test line 2 is record i=12: "<=50K." and female; line 3 is i=13: ">50K." and male.
    assert (rows.loc["adult:test:2", "y"], rows.loc["adult:test:2", "z_sex"]) == (0, 1)
    assert (rows.loc["adult:test:3", "y"], rows.loc["adult:test:3", "z_sex"]) == (1, 0)


def test_adult_features_exclude_race_and_the_private_attribute(adult_inputs):
    splits, _, built = build_small_adult(adult_inputs)
    features = [c for c in splits["train"].columns if c.startswith("x_")]
    assert not [c for c in features if "race" in c or "sex" in c or "White" in c or "Male" in c]
    assert built.extra["feature_columns"] == features


def test_adult_one_hot_columns_are_the_same_in_every_split_with_safe_names(adult_inputs):
    splits, _, _ = build_small_adult(adult_inputs)
    assert splits["train"].columns.tolist() == splits["dev"].columns.tolist() == splits["test"].columns.tolist()
    train = splits["train"]
    assert "x_native_country__Outlying_US_Guam_USVI_etc" in train.columns
    workclass = train[[c for c in train.columns if c.startswith("x_workclass__")]]
    assert workclass.shape[1] == 3 and (workclass.sum(axis=1) == 1).all()
    assert set(train.filter(like="x_").dtypes) == {np.dtype("float32")}


def test_adult_numeric_columns_are_standardised_with_train_statistics_only(adult_inputs):
    splits, _, built = build_small_adult(adult_inputs)
    raw_age = {f"adult:data:{line}": 20 + i for i, line in enumerate([1, 2, 3, 5, 7, 8, 9, 10, 11, 12, 13, 14])}
    raw_age.update({f"adult:test:{i - 10}": 20 + i for i in range(12, 20)})
    train_ages = np.array([raw_age[i] for i in splits["train"]["id"]], dtype=float)
    mean, std = built.extra["numeric_standardisation"]["age"]
    assert (mean, std) == pytest.approx((train_ages.mean(), train_ages.std()))
    assert splits["train"]["x_age"].mean() == pytest.approx(0, abs=1e-6)
    assert splits["train"]["x_age"].std(ddof=0) == pytest.approx(1, abs=1e-6)
    dev_ages = np.array([raw_age[i] for i in splits["dev"]["id"]], dtype=float)
    np.testing.assert_allclose(splits["dev"]["x_age"], (dev_ages - mean) / std, rtol=1e-6)


@pytest.mark.slow
def test_real_adult_has_45222_complete_rows_split_60_20_20(data_mirror):
    inputs = {"data": data_mirror / "adult/adult.data", "test": data_mirror / "adult/adult.test"}
    quarantine = Quarantine()
    built = build_adult(inputs, {"split": SPLIT}, SEED, quarantine)
    sizes = {name: len(frame) for name, frame in built.splits.items()}
    assert sizes == {"train": 27133, "dev": 9044, "test": 9045}
    assert built.filtered == {"missing_value": 48842 - 45222}
    assert quarantine.as_dict() == {}
    assert built.extra["n_features"] == 97  # 6 numeric + 91 one-hot columns


# ------------------------------------------------------------------------------------------------ celeba

# 40 names with Male and Smiling where the real file has them (positions 21 and 32).
CELEBA_NAMES = [f"Attr_{i}" for i in range(40)]
CELEBA_NAMES[20], CELEBA_NAMES[31] = "Male", "Smiling"


def celeba_row(i: int) -> str:
    """Image i: smiling for even i, male when i % 3 == 0, attribute k set when (i + k) % 4 == 0."""
    values = [1 if (i + k) % 4 == 0 else -1 for k in range(40)]
    values[31] = 1 if i % 2 == 0 else -1
    values[20] = 1 if i % 3 == 0 else -1
    return f"{i:06d}.jpg " + " ".join(f"{v:2d}" for v in values)


def celeba_text(rows: list[str], count: int | None = None) -> bytes:
    lines = [str(len(rows) if count is None else count), " ".join(CELEBA_NAMES), *rows]
    return ("\r\n".join(lines) + "\r\n").encode()


def build_small_celeba(path: Path) -> tuple[object, Quarantine]:
    quarantine = Quarantine()
    return build_celeba({"attributes": path}, {"split": SPLIT}, SEED, quarantine), quarantine


@pytest.fixture
def celeba_file(tmp_path: Path) -> Path:
    path = tmp_path / "list_attr_celeba.txt"
    path.write_bytes(celeba_text([celeba_row(i) for i in range(1, 21)]))
    return path


def test_celeba_gzip_and_plain_files_give_the_same_dataset(celeba_file, tmp_path):
    gz = tmp_path / "list_attr_celeba.txt.gz"
    gz.write_bytes(gzip.compress(celeba_file.read_bytes(), mtime=0))
    plain, _ = build_small_celeba(celeba_file)
    zipped, _ = build_small_celeba(gz)
    for name in plain.splits:
        pd.testing.assert_frame_equal(plain.splits[name], zipped.splits[name])


def test_celeba_label_is_smiling_private_attribute_is_male_and_38_binary_features(celeba_file):
    built, _ = build_small_celeba(celeba_file)
    rows = pd.concat(built.splits.values()).set_index("id")
    assert built.label_names == ["not_smiling", "smiling"]
    assert built.private_attributes == {"male": ["female", "male"]}
    assert (rows.loc["celeba:000006.jpg", "y"], rows.loc["celeba:000006.jpg", "z_male"]) == (1, 1)
    assert (rows.loc["celeba:000007.jpg", "y"], rows.loc["celeba:000007.jpg", "z_male"]) == (0, 0)
    features = rows.filter(like="x_")
    assert features.shape[1] == 38 and "x_Smiling" not in features and "x_Male" not in features
    assert set(np.unique(features.to_numpy())) == {0.0, 1.0}
    assert rows.loc["celeba:000001.jpg", "x_Attr_3"] == 1.0 and rows.loc["celeba:000001.jpg", "x_Attr_2"] == 0.0


def test_celeba_bad_rows_are_quarantined_with_their_line_number(tmp_path):
    rows = [celeba_row(i) for i in range(1, 21)]
    rows.insert(2, celeba_row(90).rsplit(" ", 1)[0])  # line 5: 39 values
    rows.insert(4, celeba_row(91).replace(" 1", " 0", 1))  # line 7: a 0
    path = tmp_path / "list_attr_celeba.txt"
    path.write_bytes(celeba_text(rows))
    built, quarantine = build_small_celeba(path)
    assert sum(len(s) for s in built.splits.values()) == 20
    where = {(e["reason"], e["file"], e["line"]) for e in quarantine.examples}
    assert where == {("bad_field_count", "list_attr_celeba.txt", 5), ("bad_value", "list_attr_celeba.txt", 7)}


def test_celeba_count_line_mismatch_is_recorded_not_fatal(tmp_path):
    path = tmp_path / "list_attr_celeba.txt"
    path.write_bytes(celeba_text([celeba_row(i) for i in range(1, 21)], count=25))
    built, _ = build_small_celeba(path)
    assert (built.extra["declared_count"], built.extra["rows_read"], built.extra["count_matches"]) == (25, 20, False)


@pytest.mark.slow
def test_real_celeba_has_202599_images_and_38_features(data_mirror):
    built, quarantine = build_small_celeba(data_mirror / "celeba/list_attr_celeba.txt.gz")
    sizes = {name: len(frame) for name, frame in built.splits.items()}
    assert sizes == {"train": 121559, "dev": 40520, "test": 40520}
    assert built.extra["n_features"] == 38 and built.extra["count_matches"] is True
    assert quarantine.as_dict() == {}


def test_celeba_header_without_smiling_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "list_attr_celeba.txt"
    path.write_bytes(celeba_text([celeba_row(i) for i in range(1, 21)]).replace(b"Smiling", b"Grinning"))
    with pytest.raises(DatasetError, match="list_attr_celeba.txt: line 2"):
        build_small_celeba(path)
