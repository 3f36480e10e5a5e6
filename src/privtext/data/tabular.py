"""``adult`` and ``celeba``: the tabular datasets of FEDERATE's appendix (docs/data.md, "Adult" and "CelebA").

Both read their raw text line by line, so every malformed record is quarantined with its file and 1-based line
number. Features are ``x_*`` float32 columns; the private attribute is never among them, as in FairGrad's
``get_adult_data``/``get_celeb_data``, where the sensitive attribute ``s`` is kept apart from ``X``.
"""

from __future__ import annotations

import gzip
import io
import logging
import math
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.data.common import BuiltDataset, DatasetError, Quarantine, decimal_integer, split_frame
from privtext.data.sources import DEFAULT_MAX_OUTPUT_BYTES

log = logging.getLogger(__name__)

# UCI adult.names column order; `income` is the label.
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
)
ADULT_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
ADULT_CATEGORICAL = ("workclass", "education", "marital-status", "occupation", "relationship", "native-country")
ADULT_LABELS = ("<=50K", ">50K")
# Female is 1, as in the project's gender coding elsewhere (FairGrad codes Male=1/Female=-1; only the sign differs).
ADULT_SEX = {"Male": 0, "Female": 1}
ADULT_MISSING = "?"

CELEBA_LABEL = "Smiling"
CELEBA_PRIVATE = "Male"
CELEBA_VALUES = frozenset({"1", "-1"})
CELEBA_N_ATTRIBUTES = 40
GZIP_MAGIC = b"\x1f\x8b"


def feature_name(*parts: str) -> str:
    """Column name ``x_<part>__<part>`` with every run of characters outside [A-Za-z0-9] made one ``_``."""
    return "x_" + "__".join(re.sub(r"[^0-9A-Za-z]+", "_", part).strip("_") for part in parts)


# ---------------------------------------------------------------------------------------------------- adult


def _adult_record(fields: list[str], label_index: int) -> str | None:
    """The quarantine reason for one split line, or None when it is well formed."""
    if len(fields) != len(ADULT_COLUMNS):
        return "bad_field_count"
    if "" in fields:
        return "empty_field"
    if fields[label_index] not in ADULT_LABELS:
        return "bad_label"
    if ADULT_MISSING in fields:
        return None  # well formed; the SPEC's missing-value filter counts it
    for column in ADULT_NUMERIC:
        try:
            if not math.isfinite(float(fields[ADULT_COLUMNS.index(column)])):
                return "bad_number"
        except ValueError:
            return "bad_number"
    if fields[ADULT_COLUMNS.index("sex")] not in ADULT_SEX:
        return "bad_value"
    return None


def read_adult(
    path: Path, role: str, quarantine: Quarantine, filtered: dict[str, int]
) -> list[dict[str, Any]]:
    """Well-formed, complete records of one UCI file, each with its ``id``; counts ``?`` rows in ``filtered``."""
    label_index = ADULT_COLUMNS.index("income")
    records = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.strip()
            if not line or line.startswith("|"):
                continue  # blank, or the test file's "|1x3 Cross validator" banner: not records
            fields = [field.strip() for field in line.split(",")]
            if len(fields) == len(ADULT_COLUMNS):
                fields[label_index] = fields[label_index].removesuffix(".")  # adult.test labels end in "."
            reason = _adult_record(fields, label_index)
            if reason:
                quarantine.add(reason, path, line_no, line)
            elif ADULT_MISSING in fields:
                filtered["missing_value"] = filtered.get("missing_value", 0) + 1
            else:
                records.append({"id": f"adult:{role}:{line_no}", **dict(zip(ADULT_COLUMNS, fields))})
    return records


def adult_features(
    split: pd.DataFrame, categories: Mapping[str, list[str]], standardisation: Mapping[str, tuple[float, float]]
) -> pd.DataFrame:
    """``id``, standardised numeric and one-hot categorical ``x_*`` columns (float32), ``y`` and ``z_sex``."""
    blocks, names = [], []
    for column in ADULT_NUMERIC:
        mean, std = standardisation[column]
        blocks.append(((split[column].astype(np.float64) - mean) / std).to_numpy()[:, None])
        names.append(feature_name(column))
    for column in ADULT_CATEGORICAL:
        codes = pd.Categorical(split[column], categories=categories[column]).codes
        blocks.append(np.eye(len(categories[column]))[codes])
        names.extend(feature_name(column, value) for value in categories[column])
    features = pd.DataFrame(np.hstack(blocks).astype(np.float32), columns=names)
    return pd.concat([split[["id"]], features, split[["y", "z_sex"]]], axis=1)


def build_adult(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """UCI Adult: adult.data + adult.test, rows with ``?`` dropped, ``race`` dropped, ``y`` = income >50K,
    private attribute ``sex``; numeric columns standardised with train statistics only."""
    filtered: dict[str, int] = {"missing_value": 0}
    records = []
    for role in ("data", "test"):
        records += read_adult(Path(inputs[role]), role, quarantine, filtered)
    raw = pd.DataFrame(records, columns=["id", *ADULT_COLUMNS])
    raw["y"] = (raw["income"] == ">50K").astype("int64")
    raw["z_sex"] = raw["sex"].map(ADULT_SEX).astype("int64")
    raw[list(ADULT_NUMERIC)] = raw[list(ADULT_NUMERIC)].astype(np.float64)

    # Category lists come from all rows so every split has the same columns; this uses no labels.
    categories = {column: sorted(raw[column].unique()) for column in ADULT_CATEGORICAL}
    raw_splits = split_frame(raw, options["split"], seed)
    train = raw_splits["train"]
    # Population std (ddof=0) as StandardScaler; a constant train column is left unscaled rather than divided by 0.
    standardisation = {
        column: (float(train[column].mean()), float(train[column].std(ddof=0)) or 1.0) for column in ADULT_NUMERIC
    }
    splits = {name: adult_features(part, categories, standardisation) for name, part in raw_splits.items()}
    feature_columns = [c for c in splits["train"].columns if c.startswith("x_")]
    if len(set(feature_columns)) != len(feature_columns):
        raise DatasetError(f"adult: two categories give the same feature name in {feature_columns}")
    return BuiltDataset(
        splits=splits,
        label_names=list(ADULT_LABELS),
        private_attributes={"sex": ["male", "female"]},
        attribute_kinds={"sex": "demographic"},
        filtered=filtered,
        extra={
            "feature_columns": feature_columns,
            "n_features": len(feature_columns),
            "numeric_standardisation": {c: list(v) for c, v in standardisation.items()},
            "excluded_from_features": {"race": "dropped (docs/data.md)", "sex": "private attribute"},
        },
    )


# --------------------------------------------------------------------------------------------------- celeba


def read_text(path: Path) -> str:
    """Text of a plain or gzip file (recognised by its magic bytes, whatever the suffix)."""
    payload = path.read_bytes()
    if payload[:2] == GZIP_MAGIC:
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(payload)) as stream:
                payload = stream.read(DEFAULT_MAX_OUTPUT_BYTES + 1)  # a bomb stops at the downloads' cap
        except (OSError, EOFError) as error:
            raise DatasetError(f"{path}: not a readable gzip file ({error})") from error
        if len(payload) > DEFAULT_MAX_OUTPUT_BYTES:
            raise DatasetError(
                f"{path}: decompresses to more than the cap of {DEFAULT_MAX_OUTPUT_BYTES:,} bytes; refusing it")
    return payload.decode("utf-8", errors="replace")  # a bad byte then fails value checks, with its line


def _celeba_header(lines: list[str], path: Path) -> tuple[int | None, list[str], int]:
    """(declared image count or None, attribute names, index of the first data line)."""
    first = lines[0].split() if lines else []
    declared = decimal_integer(first[0]) if len(first) == 1 else None
    start = 1 if declared is not None else 0  # some copies lack the count line
    names = lines[start].split() if len(lines) > start else []
    missing = {CELEBA_LABEL, CELEBA_PRIVATE} - set(names)
    if missing or len(set(names)) != len(names) or len(names) != CELEBA_N_ATTRIBUTES:
        raise DatasetError(
            f"{path}: line {start + 1} should name the 40 CelebA attributes once each, including "
            f"{CELEBA_LABEL} and {CELEBA_PRIVATE}; got {names[:5]}..."
        )
    return declared, names, start + 1


def read_celeba(path: Path, quarantine: Quarantine) -> tuple[list[str], np.ndarray, list[str], dict[str, Any]]:
    """(image names, 0/1 matrix images × attributes, attribute names, count check) of list_attr_celeba."""
    lines = read_text(path).split("\n")
    declared, names, start = _celeba_header(lines, path)
    images: list[str] = []
    values: list[str] = []
    seen: set[str] = set()
    rows_read = 0
    for line_no, line in enumerate(lines[start:], start=start + 1):
        parts = line.split()  # runs of spaces and the CR of CRLF
        if not parts:
            continue
        rows_read += 1
        if len(parts) != len(names) + 1:
            quarantine.add("bad_field_count", path, line_no, line)
        elif not CELEBA_VALUES.issuperset(parts[1:]):
            quarantine.add("bad_value", path, line_no, line)
        elif parts[0] in seen:
            quarantine.add("duplicate_image", path, line_no, line)
        else:
            seen.add(parts[0])
            images.append(parts[0])
            values.extend(parts[1:])
    # Every value is "1" or "-1" here, so "-1" -> "0" leaves one character per value: a fast vectorised parse.
    digits = "".join(values).replace("-1", "0").encode("ascii")
    matrix = (np.frombuffer(digits, dtype=np.uint8) == ord("1")).reshape(-1, len(names))
    matches = None if declared is None else declared == rows_read
    count = {"declared_count": declared, "rows_read": rows_read, "count_matches": matches}
    if matches is False:  # recorded in meta.json, not fatal: the rows themselves were checked one by one
        log.warning("%s: line 1 declares %d images but %d rows were read", path, declared, rows_read)
    return images, matrix, names, count


def build_celeba(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """CelebA attributes: ``y`` = Smiling, private attribute ``male`` = Male, the other 38 attributes as
    0/1 features (-1 -> 0)."""
    images, matrix, names, count = read_celeba(Path(inputs["attributes"]), quarantine)
    feature_names = [n for n in names if n not in (CELEBA_LABEL, CELEBA_PRIVATE)]
    index = {name: i for i, name in enumerate(names)}
    features = pd.DataFrame(
        matrix[:, [index[n] for n in feature_names]].astype(np.float32),
        columns=[feature_name(n) for n in feature_names],
    )
    frame = pd.concat(
        [
            pd.DataFrame({"id": [f"celeba:{image}" for image in images]}),
            features,
            pd.DataFrame({
                "y": matrix[:, index[CELEBA_LABEL]].astype("int64"),
                # Male=1 because the attribute is "Male"; FairGrad uses s = -Male, the same split of the data.
                "z_male": matrix[:, index[CELEBA_PRIVATE]].astype("int64"),
            }),
        ],
        axis=1,
    )
    return BuiltDataset(
        splits=split_frame(frame, options["split"], seed),
        label_names=["not_smiling", "smiling"],
        private_attributes={"male": ["female", "male"]},
        attribute_kinds={"male": "demographic"},
        extra={"feature_columns": list(features.columns), "n_features": features.shape[1], **count},
    )
