"""``tp_us`` and ``tp_uk``: the Trustpilot corpus of Hovy et al. (2015), built as DPNR and CAPE built it.

The raw file holds one user per line, written as a Python literal dict (``ast.literal_eval``; JSON lines are
accepted too; nothing is ever ``eval``-ed). docs/data.md, "Trustpilot" gives the keys.

What is dropped, and where it is recorded (each user is counted once, under the first problem found in the
order gender, birth year, [geocodes], reviews):

- ``quarantine`` (bad input, with file and 1-based line): ``undecodable_bytes``, ``unparseable_line``,
  ``not_a_dict`` (a line or a review that is not a dict), ``missing_gender``, ``missing_birth_year`` (key absent
  or None), ``missing_geocodes`` (tp_uk), ``no_reviews``, ``bad_gender`` (not 'F'/'M'), ``bad_birth_year`` (not an
  integer of ASCII digits in 1900..2020, or after the review), ``bad_rating`` (missing or not 1..5),
  ``empty_text``, ``bad_date`` (tp_us: no review year), ``bad_geocode`` (tp_uk: first geocode without a valid
  lat/lng), ``wrong_type`` (a field of the wrong type, e.g. a list for ``gender`` or ``user_id``),
  ``unencodable_text`` (text or user_id holding a lone surrogate, e.g. from a ``\\ud800`` escape, which no UTF-8
  writer accepts), and, as a last resort, ``unexpected_value`` (any other ``ValueError`` a record raises).
  Examples carry the ``field`` at fault. A missing or null required field is bad input by the project's rule
  (issue #2), even though both papers silently skip such users; counting it keeps the skip visible.
  ``missing_gender``, ``missing_birth_year`` and ``missing_geocodes`` are optional profile fields that much of the
  corpus leaves out, so they are marked incomplete and not held against ``max_quarantine_fraction``.
- ``filtered`` (the papers' documented selection, counted per user):
  ``age_between_<young_below>_and_<old_above>`` (tp_us).

tp_us (Coavoux et al. 2018, DPNR): one example per user from the *first* review in list order, as pnet's
``o['reviews'][0]``; an unusable first review drops the user rather than falling back to a later one.
tp_uk (CAPE): one example per review; the split is by review like CAPE (the same author can appear in
several splits; recorded in meta), and the birth-year bins are fitted on the training split only.
"""

from __future__ import annotations

import ast
import json
import re
import zipfile
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Iterator, Mapping

import numpy as np
import pandas as pd
import pygeohash

from privtext.data.common import (BuiltDataset, DatasetError, Quarantine, decimal_integer, has_lone_surrogate,
                                  short_repr, split_frame)

RATING_NAMES = ["1", "2", "3", "4", "5"]  # y = rating - 1
GENDER_CODES = {"M": 0, "F": 1}
GENDER_NAMES = ["male", "female"]  # index = z_gender code
AGE_NAMES = ["old", "young"]  # index = z_age code (tp_us)
BIRTH_YEAR_RANGE = (1900, 2020)
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


class _Drop(Exception):
    """A user or review that does not become an example: quarantined (bad input) or filtered (by design)."""

    def __init__(
        self, reason: str, detail: str = "", *, filtered: bool = False, field: str | None = None,
        incomplete: bool = False,
    ) -> None:
        super().__init__(reason)
        self.reason, self.detail, self.filtered = reason, detail, filtered
        self.field, self.incomplete = field, incomplete

    def record(self, quarantine: Quarantine, filtered: Counter, source: str, line: int) -> None:
        if self.filtered:
            filtered[self.reason] += 1
        else:
            quarantine.add(self.reason, source, line, self.detail, field=self.field, incomplete=self.incomplete)


def _wrong_type(field: str, value: Any) -> _Drop:
    return _Drop("wrong_type", f"{field} is a {type(value).__name__}: {short_repr(value)}", field=field)


# ---------------------------------------------------------------------------------------------- reading


@contextmanager
def _open_users(path: Path) -> Iterator[tuple[str, BinaryIO]]:
    """(name of the raw .jsonl file, binary handle); a zip must hold exactly one ``.jsonl(.tmp)`` member."""
    if path.suffix != ".zip":
        with path.open("rb") as handle:
            yield path.name, handle
        return
    with zipfile.ZipFile(path) as archive:
        # macOS zips carry "__MACOSX/._<name>" shadow files that are not data.
        members = [
            m for m in archive.namelist() if m.endswith((".jsonl.tmp", ".jsonl")) and not m.startswith("__MACOSX/")
        ]
        if len(members) != 1:
            raise DatasetError(
                f"{path}: expected exactly one member ending in .jsonl.tmp or .jsonl, found {members or 'none'}"
            )
        with archive.open(members[0]) as handle:
            # The member's own name, so quarantine records read the same for the zip and the unzipped file.
            yield Path(members[0]).name, handle


def _parse(text: str) -> Any:
    """A Python literal (the corpus's format), else JSON; raises ValueError when neither parses."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise ValueError(str(error)) from None


def read_users(path: str | Path, quarantine: Quarantine) -> Iterator[tuple[str, int, dict]]:
    """Yield (raw file name, 1-based line number, user dict) for every parseable user line of ``path``.

    Blank lines are skipped; undecodable, unparseable and non-dict lines are quarantined."""
    with _open_users(Path(path)) as (source, handle):
        for line_number, raw in enumerate(handle, start=1):
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                quarantine.add("undecodable_bytes", source, line_number, str(error))
                continue
            try:
                user = _parse(text)
            except ValueError as error:
                quarantine.add("unparseable_line", source, line_number, f"{error}: {text[:80]}")
                continue
            if not isinstance(user, dict):
                quarantine.add("not_a_dict", source, line_number, f"a {type(user).__name__}")
                continue
            yield source, line_number, user


# --------------------------------------------------------------------------------------- field checks


def _gender_code(user: Mapping) -> int:
    gender = user.get("gender")
    if gender is None:  # an optional profile field, which many of the corpus's users leave out
        raise _Drop("missing_gender", field="gender", incomplete=True)
    if not isinstance(gender, str):  # checked before the lookup: a list is unhashable
        raise _wrong_type("gender", gender)
    if gender not in GENDER_CODES:
        raise _Drop("bad_gender", f"gender {short_repr(gender)}", field="gender")
    return GENDER_CODES[gender]


def _birth_year(user: Mapping) -> int:
    value = user.get("birth_year")
    if value is None:  # an optional profile field, like gender
        raise _Drop("missing_birth_year", field="birth_year", incomplete=True)
    year = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str):
        year = decimal_integer(value)
    if year is None or not BIRTH_YEAR_RANGE[0] <= year <= BIRTH_YEAR_RANGE[1]:
        raise _Drop("bad_birth_year", f"birth_year {short_repr(value)}", field="birth_year")
    return year


def _reviews(user: Mapping) -> list:
    reviews = user.get("reviews")
    if not isinstance(reviews, list) or not reviews:
        raise _Drop("no_reviews", f"reviews {short_repr(reviews)}", field="reviews")
    return reviews


def _check_review(review: Any, index: int) -> Mapping:
    if not isinstance(review, dict):
        raise _Drop("not_a_dict", f"review {index} is a {type(review).__name__}")
    return review


def _label(review: Mapping, index: int) -> int:
    """y = rating - 1; the corpus writes ratings as strings '1'..'5'."""
    rating = review.get("rating")
    text = str(rating).strip() if isinstance(rating, (str, int)) and not isinstance(rating, bool) else ""
    if text not in RATING_NAMES:
        raise _Drop("bad_rating", f"review {index} rating {short_repr(rating)}", field="rating")
    return int(text) - 1


def _paragraphs(review: Mapping) -> list[str]:
    text = review.get("text")
    if isinstance(text, str):
        return [text]
    if isinstance(text, list):
        return [p for p in text if isinstance(p, str)]
    return []


def _review_year(review: Mapping, index: int) -> int:
    date = review.get("date")
    match = _DATE.match(date) if isinstance(date, str) else None
    if match is None or not 1 <= int(match.group(2)) <= 12 or not 1 <= int(match.group(3)) <= 31:
        raise _Drop("bad_date", f"review {index} date {short_repr(date)}", field="date")
    return int(match.group(1))


def _first_geohash(user: Mapping, precision: int) -> str:
    """Geohash of the first geocode (CAPE); a user without geocodes is filtered, a broken one quarantined."""
    geocodes = user.get("geocodes")
    if not geocodes:  # optional: only users who gave a location have them
        raise _Drop("missing_geocodes", field="geocodes", incomplete=True)
    first = geocodes[0] if isinstance(geocodes, list) else None
    try:
        lat, lng = float(first["lat"]), float(first["lng"])
    except (TypeError, KeyError, ValueError):
        raise _Drop("bad_geocode", f"first geocode {short_repr(first)}", field="geocodes") from None
    if not (-90 <= lat <= 90 and -180 <= lng <= 180):
        raise _Drop("bad_geocode", f"first geocode lat={lat} lng={lng}", field="geocodes")
    return pygeohash.encode(lat, lng, precision=precision)


def _check_user_id(user: Mapping) -> None:
    """A user_id that is present must be a str or int that UTF-8 can encode (it becomes the example id)."""
    user_id = user.get("user_id")
    if user_id is None:
        return
    if not isinstance(user_id, (str, int)) or isinstance(user_id, bool):
        raise _wrong_type("user_id", user_id)
    if isinstance(user_id, str) and has_lone_surrogate(user_id):
        raise _Drop("unencodable_text", f"user_id {short_repr(user_id)}", field="user_id")


class _UniqueIds:
    """``<dataset>:<user_id>``, or the line number when user_id is missing; repeats get ``@<line>``, and a
    repeat of that too (a user_id that is itself ``dup@63``) ``@<line>#<k>``: unique by construction."""

    def __init__(self, dataset: str) -> None:
        self.dataset, self.seen = dataset, set()

    def __call__(self, user: Mapping, line: int) -> str:
        user_id = user.get("user_id")
        base = f"{self.dataset}:{user_id}" if user_id not in (None, "") else f"{self.dataset}:line{line}"
        uid, repeat = base, 0
        while uid in self.seen:
            repeat += 1
            uid = f"{base}@{line}" if repeat == 1 else f"{base}@{line}#{repeat}"
        self.seen.add(uid)
        return uid


def _require_rows(rows: list[dict], path: Path, quarantine: Quarantine, filtered: Counter) -> pd.DataFrame:
    if len(rows) < 3:
        raise DatasetError(
            f"{path}: only {len(rows)} usable example(s) after filtering, too few for train/dev/test "
            f"(quarantined {quarantine.as_dict()}, filtered {dict(filtered)})"
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------ tp_us


def _us_example(user: Mapping, young_below: int, old_above: int) -> dict[str, Any]:
    """The DPNR example of one user, from the first review (pnet: ``o['reviews'][0]``)."""
    z_gender = _gender_code(user)
    birth_year = _birth_year(user)
    review = _check_review(_reviews(user)[0], 0)
    y = _label(review, 0)
    # pnet joins paragraphs with " STOP START " (its sentence markers); our encoders need no such tokens.
    title = review.get("title") if isinstance(review.get("title"), str) else ""
    text = " ".join([title, *_paragraphs(review)]).strip()
    if not text:
        raise _Drop("empty_text", "review 0 has no title or text", field="text")
    if has_lone_surrogate(text):  # e.g. a `\ud800` escape: a str no UTF-8 writer accepts
        raise _Drop("unencodable_text", "review 0 title or text holds a lone surrogate", field="text")
    age = _review_year(review, 0) - birth_year
    if age < 0:
        raise _Drop("bad_birth_year", f"birth_year {birth_year} is after the review", field="birth_year")
    if age < young_below:
        z_age = 1
    elif age > old_above:
        z_age = 0
    else:  # DPNR leaves the middle ages out so the two groups are well separated
        raise _Drop(f"age_between_{young_below}_and_{old_above}", filtered=True)
    return {"text": text, "y": y, "z_gender": z_gender, "z_age": z_age}


def build_tp_us(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """DPNR's Trustpilot-US: first review per user, rating -> y, gender (F=1) and age (young=1) -> z."""
    young_below, old_above = options["young_below"], options["old_above"]
    if old_above < young_below - 1:
        raise ValueError(f"tp_us.old_above ({old_above}) must be >= tp_us.young_below - 1 ({young_below - 1})")
    path = Path(inputs["users"])
    rows, filtered, make_id = [], Counter(), _UniqueIds("tp_us")
    for source, line, user in read_users(path, quarantine):
        try:
            row = _us_example(user, young_below, old_above)
            _check_user_id(user)
        except _Drop as drop:
            drop.record(quarantine, filtered, source, line)
            continue
        except ValueError as error:  # the last resort: a value no check foresaw costs its record, not the build
            quarantine.add("unexpected_value", source, line, str(error))
            continue
        rows.append({"id": make_id(user, line), **row})
    frame = _require_rows(rows, path, quarantine, filtered)
    return BuiltDataset(
        splits=split_frame(frame, options["split"], seed),
        label_names=RATING_NAMES,
        private_attributes={"gender": GENDER_NAMES, "age": AGE_NAMES},
        attribute_kinds={"gender": "demographic", "age": "demographic"},
        filtered=dict(filtered),
        extra={
            "age_rule": {
                "age": "year of the first review - birth_year",
                "young": f"age < {young_below}",
                "old": f"age > {old_above}",
                "dropped": f"{young_below} <= age <= {old_above}",
            },
            "review_used": "first review of each user, in file order",
            "text": "title + ' ' + paragraphs joined with ' ' (pnet's ' STOP START ' markers omitted)",
        },
    )


# ------------------------------------------------------------------------------------------------ tp_uk


def _uk_examples(user: Mapping, precision: int) -> tuple[list[dict[str, Any]], list[_Drop]]:
    """CAPE's examples of one user (every review with a valid rating and a non-empty first paragraph), and
    the reviews that failed."""
    z_gender = _gender_code(user)
    birth_year = _birth_year(user)
    geohash = _first_geohash(user, precision)
    examples, bad_reviews = [], []
    for index, review in enumerate(_reviews(user)):
        try:
            review = _check_review(review, index)
            y = _label(review, index)
            paragraphs = _paragraphs(review)
            text = paragraphs[0].strip() if paragraphs else ""  # CAPE: review['text'][0]
            if not text:
                raise _Drop("empty_text", f"review {index} has an empty first paragraph", field="text")
            if has_lone_surrogate(text):
                raise _Drop("unencodable_text", f"review {index} first paragraph holds a lone surrogate", field="text")
        except _Drop as drop:
            bad_reviews.append(drop)
            continue
        examples.append(
            {"review": index, "text": text, "y": y, "z_gender": z_gender, "birth_year": birth_year, "geohash": geohash}
        )
    return examples, bad_reviews


def fit_birth_year_bins(birth_years: np.ndarray, n_bins: int) -> np.ndarray:
    """Edges of up to ``n_bins`` equal-frequency bins (pandas.qcut's quantiles, right-closed intervals).

    Birth years are integers, so flooring the quantiles leaves every assignment unchanged and gives integer
    edges; edges that coincide merge bins (qcut's ``duplicates='drop'``, plus bins holding no whole year)."""
    quantiles = np.quantile(np.asarray(birth_years, dtype=float), np.linspace(0, 1, n_bins + 1))
    return np.unique(np.floor(quantiles)).astype(int)


def assign_birth_year_bins(birth_years: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of each year: (e_i, e_i+1], the first bin closed; years outside the fitted range are clipped
    into the first or last bin (dev/test years the training split never saw)."""
    return np.searchsorted(edges[1:-1], np.asarray(birth_years), side="left").astype("int64")


def birth_year_bin_names(edges: np.ndarray) -> list[str]:
    """'first-last' birth year of each bin, e.g. '1941-1960' (whole years, so (1940, 1960] is 1941-1960)."""
    if len(edges) == 1:
        return [f"{edges[0]}-{edges[0]}"]
    return [f"{edges[0] if i == 0 else edges[i] + 1}-{edges[i + 1]}" for i in range(len(edges) - 1)]


def build_tp_uk(
    inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine
) -> BuiltDataset:
    """CAPE's Trustpilot-UK: every usable review; gender, birth-year bin and location geohash -> z."""
    path = Path(inputs["users"])
    precision, n_bins = options["geohash_precision"], options["birth_year_bins"]
    rows, filtered, make_id = [], Counter(), _UniqueIds("tp_uk")
    for source, line, user in read_users(path, quarantine):
        try:
            examples, bad_reviews = _uk_examples(user, precision)
            if examples:
                _check_user_id(user)
        except _Drop as drop:
            drop.record(quarantine, filtered, source, line)
            continue
        except ValueError as error:  # the last resort, as in tp_us
            quarantine.add("unexpected_value", source, line, str(error))
            continue
        for drop in bad_reviews:
            drop.record(quarantine, filtered, source, line)
        if examples:
            user_key = make_id(user, line)
            for example in examples:
                review_index = example.pop("review")
                rows.append({"id": f"{user_key}:{review_index}", **example})
    frame = _require_rows(rows, path, quarantine, filtered)

    # Location codes are category ids with no statistic learned, so they come from all rows (as in CAPE).
    geohashes = sorted(frame["geohash"].unique())
    frame["z_location"] = frame["geohash"].map({g: i for i, g in enumerate(geohashes)}).astype("int64")
    splits = split_frame(frame, options["split"], seed)
    edges = fit_birth_year_bins(splits["train"]["birth_year"].to_numpy(), n_bins)
    for name, part in splits.items():
        part["z_age"] = assign_birth_year_bins(part["birth_year"].to_numpy(), edges)
        splits[name] = part[["id", "text", "y", "z_gender", "z_age", "z_location"]]
    return BuiltDataset(
        splits=splits,
        label_names=RATING_NAMES,
        private_attributes={"gender": GENDER_NAMES, "age": birth_year_bin_names(edges), "location": geohashes},
        attribute_kinds={"gender": "demographic", "age": "demographic", "location": "demographic"},
        filtered=dict(filtered),
        extra={
            "birth_year_bin_edges": edges.tolist(),
            "birth_year_bins_fitted_on": "train",
            "birth_year_bins_note": (
                f"{len(edges) - 1} of {n_bins} requested equal-frequency bins (ties merge bins); "
                "right-closed like pandas.qcut, out-of-range years clipped; CAPE fitted them on all data"
            ),
            "location_codes_fitted_on": "all",
            "geohash_precision": precision,
            "split_unit": "review (as CAPE; one author's reviews can fall in different splits)",
            "text": "first paragraph of each review (CAPE: review['text'][0])",
            "filtered_unit": "user",
        },
    )
