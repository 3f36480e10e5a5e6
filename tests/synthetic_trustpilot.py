"""Synthetic Trustpilot files in the exact raw format (docs/data.md), for the tests: the real files are not offline.

:func:`write_trustpilot_file` writes one user per line as a Python literal dict (``repr``), optionally some
lines as JSON, plain or zipped like the lowlands release. It can plant named defects in chosen users and
returns what the builders must report for them, so tests compare counts exactly. Review words lean towards
the rating (and, faintly, towards gender and age), so the text is not pure noise.
"""

from __future__ import annotations

import json
import random
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

# defect -> (where the builder records it, reason). "kept": the user still gives examples.
DEFECTS: dict[str, tuple[str, str]] = {
    "unparseable_line": ("quarantine", "unparseable_line"),
    "undecodable_bytes": ("quarantine", "undecodable_bytes"),
    "not_a_dict": ("quarantine", "not_a_dict"),
    "no_reviews": ("quarantine", "no_reviews"),
    "missing_gender": ("quarantine", "missing_gender"),
    "bad_gender": ("quarantine", "bad_gender"),
    "missing_birth_year": ("quarantine", "missing_birth_year"),
    "bad_birth_year": ("quarantine", "bad_birth_year"),
    "bad_rating": ("quarantine", "bad_rating"),
    "empty_text": ("quarantine", "empty_text"),
    "bad_date": ("quarantine", "bad_date"),
    "missing_geocodes": ("quarantine", "missing_geocodes"),
    "bad_geocode": ("quarantine", "bad_geocode"),
    "missing_user_id": ("kept", ""),
}
COUNTRY_ONLY = {"bad_date": "us", "missing_geocodes": "uk", "bad_geocode": "uk"}

RATING_WORDS = [
    ["terrible", "awful", "worst", "scam", "rude", "refund", "never", "broken"],
    ["poor", "late", "disappointing", "slow", "unhelpful", "problem", "damaged", "waiting"],
    ["okay", "average", "fine", "decent", "mixed", "acceptable", "alright", "so-so"],
    ["good", "quick", "helpful", "pleased", "nice", "reliable", "smooth", "happy"],
    ["excellent", "brilliant", "perfect", "fantastic", "recommend", "amazing", "superb", "love"],
]
GENDER_CUES = {"F": ["husband", "boyfriend"], "M": ["wife", "girlfriend"]}
AGE_CUES = {"young": ["uni", "gaming", "festival"], "old": ["grandchildren", "pension", "retired"]}
NEUTRAL_WORDS = [
    "the", "order", "delivery", "service", "website", "product", "price", "arrived", "days", "company",
    "customer", "item", "ordered", "was", "and", "it", "we", "my", "a", "with", "after", "café",
]
# (lat, lng) of a few places, jittered; UK ones fall in several geohash-2 cells (gc, gf, u1, gb).
PLACES = {
    "us": [(40.71, -74.01), (34.05, -118.24), (41.88, -87.63), (29.76, -95.37), (47.61, -122.33)],
    "uk": [(51.51, -0.13), (53.48, -2.24), (57.15, -2.09), (52.63, 1.30), (50.37, -4.14), (55.95, -3.19)],
}
COUNTRY_NAMES = {"us": "united_states", "uk": "united_kingdom"}
RATING_WEIGHTS = [0.16, 0.12, 0.16, 0.24, 0.32]  # skewed to 5 stars like the corpus, every class present


@dataclass
class SyntheticTrustpilot:
    """A written file and what a builder must make of it (tp_us for country 'us', tp_uk for 'uk')."""

    path: Path
    users: list[dict[str, Any]]  # the records in line order (line = index + 1), defects applied
    defect_lines: dict[str, list[int]]
    expected_quarantine: dict[str, int]
    expected_filtered: dict[str, int]
    expected_examples: int
    notes: dict[str, Any] = field(default_factory=dict)


def _words(rng: random.Random, n: int, rating: int, gender: str, age_group: str, country: str) -> str:
    # Mostly neutral words; some from the rating's list or a neighbouring one, so ratings are learnable but
    # confusable like real reviews; rare gender and age cues give the private attributes a faint trace.
    words = []
    for _ in range(n):
        draw = rng.random()
        neighbour = min(5, max(1, rating + rng.choice((-1, 1))))
        pool = (
            RATING_WORDS[rating - 1] if draw < 0.12
            else RATING_WORDS[neighbour - 1] if draw < 0.18
            else GENDER_CUES[gender] if draw < 0.2
            else AGE_CUES[age_group] if draw < 0.22
            else NEUTRAL_WORDS
        )
        words.append(rng.choice(pool))
    if country == "uk" and rng.random() < 0.2:
        words.append(f"£{rng.randint(5, 200)}")
    return " ".join(words)


def _review(rng: random.Random, year: int, gender: str, age_group: str, country: str) -> dict[str, Any]:
    rating = rng.choices(range(1, 6), weights=RATING_WEIGHTS)[0]
    paragraphs = [_words(rng, rng.randint(5, 14), rating, gender, age_group, country) for _ in range(rng.randint(1, 3))]
    date = (
        f"{year:04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        f"T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.000"
    )
    return {
        "company_id": f"www.shop{rng.randint(1, 60)}.com",
        "date": date,
        "rating": str(rating),
        "text": paragraphs,
        "title": _words(rng, rng.randint(2, 4), rating, gender, age_group, country),
    }


def _age(rng: random.Random, young_below: int, old_above: int) -> tuple[str, int]:
    group = rng.choices(["young", "old", "between"], weights=[0.45, 0.40, 0.15])[0]
    if group == "young":
        return group, rng.randint(18, young_below - 1)
    if group == "old":
        return group, rng.randint(old_above + 1, 78)
    return group, rng.randint(young_below, old_above)


def _user(rng: random.Random, index: int, country: str, young_below: int, old_above: int) -> tuple[dict, str]:
    """A well-formed user and its tp_us age group ('young', 'old' or 'between')."""
    gender = rng.choice("FM")
    age_group, age = _age(rng, young_below, old_above)
    first_year = rng.randint(2007, 2015)
    birth_year = first_year - age
    cue_group = "young" if age_group == "young" else "old"
    n_reviews = rng.randint(1, 3) if country == "us" else rng.randint(2, 4)  # tp_uk planting needs 2
    years = [first_year] + [rng.randint(first_year, 2015) for _ in range(n_reviews - 1)]
    reviews = [_review(rng, year, gender, cue_group, country) for year in years]
    lat, lng = rng.choice(PLACES[country])
    user = {
        "country": COUNTRY_NAMES[country],
        "gender": gender,
        "item_type": "user",
        "location": f"Town {rng.randint(1, 40)}",
        "profile_text": "",
        "reviews": reviews,
        "user_id": str(1000000 + index * 7 + rng.randint(0, 6)),
        "birth_year": str(birth_year) if rng.random() < 0.5 else birth_year,
        "geocodes": [{"lat": round(lat + rng.uniform(-0.3, 0.3), 4), "lng": round(lng + rng.uniform(-0.3, 0.3), 4)}
                     for _ in range(rng.randint(1, 2))],
    }
    return user, age_group


def _drop_or_set(record: dict, key: str, value: Any, variant: int) -> None:
    """Odd variants set ``key`` to ``value`` (e.g. None), even ones remove the key: both forms occur."""
    if variant % 2:
        record[key] = value
    else:
        record.pop(key)


def _plant(user: dict, defect: str, variant: int, country: str) -> None:
    """Apply one defect to a user record in place (line-level defects are applied when writing)."""
    review = user["reviews"][0] if country == "us" else user["reviews"][-1]
    if defect == "no_reviews":
        _drop_or_set(user, "reviews", [], variant)
    elif defect == "missing_gender":
        _drop_or_set(user, "gender", None, variant)
    elif defect == "bad_gender":
        user["gender"] = ["X", "female", "m"][variant % 3]
    elif defect == "missing_birth_year":
        _drop_or_set(user, "birth_year", None, variant)
    elif defect == "bad_birth_year":
        user["birth_year"] = ["abc", 3012, "1890"][variant % 3]
    elif defect == "bad_rating":
        _drop_or_set(review, "rating", ["7", "0", None][variant % 3], variant)
    elif defect == "empty_text":
        if country == "us":
            review.update(title="", text=[])
        else:
            review["text"] = [[], ["  ", "a later paragraph"], [""]][variant % 3]
    elif defect == "bad_date":
        review["date"] = ["yesterday", "2014-13-01T00:00:00.000", None][variant % 3]
    elif defect == "missing_geocodes":
        _drop_or_set(user, "geocodes", [], variant)
    elif defect == "bad_geocode":
        user["geocodes"] = [[{"lat": "north", "lng": 0.1}], [{"lng": 0.1}], [{"lat": 95.0, "lng": 0.1}]][variant % 3]
    elif defect == "missing_user_id":
        user.pop("user_id")


def _line(user: dict, defect: str | None, as_json: bool) -> bytes:
    if defect == "unparseable_line":
        text = repr(user)
        return text[: len(text) // 2].encode("utf-8")
    if defect == "undecodable_bytes":
        marked = {**user, "profile_text": "@@PROFILE@@"}
        return repr(marked).encode("utf-8").replace(b"@@PROFILE@@", "Caf\u00e9 owner".encode("latin-1"))
    if defect == "not_a_dict":
        return repr([user]).encode("utf-8")
    return (json.dumps(user, ensure_ascii=False) if as_json else repr(user)).encode("utf-8")


def _expected(users, defects_by_line, age_groups, country, young_below, old_above) -> tuple[Counter, Counter, int]:
    quarantine, filtered, examples = Counter(), Counter(), 0
    for line, user in enumerate(users, start=1):
        defect = defects_by_line.get(line)
        where, reason = DEFECTS[defect] if defect else ("kept", "")
        if where == "quarantine":
            quarantine[reason] += 1
        elif where == "filtered":
            filtered[reason] += 1
        if country == "uk" and where != "kept" and defect in ("bad_rating", "empty_text"):
            examples += len(user["reviews"]) - 1  # only the one planted review is lost
        elif where == "kept" and country == "uk":
            examples += len(user["reviews"])
        elif where == "kept" and age_groups[line - 1] == "between":
            filtered[f"age_between_{young_below}_and_{old_above}"] += 1
        elif where == "kept":
            examples += 1
    return quarantine, filtered, examples


def write_trustpilot_file(
    path: str | Path,
    n_users: int,
    seed: int,
    *,
    country: str = "us",
    defects: Mapping[str, int] | None = None,
    json_every: int = 0,
    as_zip: bool = False,
    young_below: int = 35,
    old_above: int = 45,
) -> SyntheticTrustpilot:
    """Write ``n_users`` users to ``path`` and return the counts the matching builder must report.

    ``defects`` maps a name of :data:`DEFECTS` to how many (distinct, seeded) users get it; variants alternate
    (e.g. a missing gender is an absent key or None). ``json_every=k`` writes every k-th sound line as JSON.
    ``as_zip`` writes a zip whose single member is ``<name without .zip>.tmp``, like the release's zips.
    Expected counts are for tp_us (country 'us', with the given age rule) or tp_uk (country 'uk')."""
    if country not in COUNTRY_NAMES:
        raise ValueError(f"country must be 'us' or 'uk', got {country!r}")
    defects = dict(defects or {})
    for name in defects:
        if name not in DEFECTS or COUNTRY_ONLY.get(name, country) != country:
            raise ValueError(f"defect {name!r} is not available for country {country!r}; known: {sorted(DEFECTS)}")
    if sum(defects.values()) > n_users:
        raise ValueError(f"{sum(defects.values())} defects need at least as many users, got n_users={n_users}")
    rng = random.Random(seed)
    made = [_user(rng, i, country, young_below, old_above) for i in range(n_users)]
    users, age_groups = [u for u, _ in made], [g for _, g in made]
    chosen = rng.sample(range(n_users), sum(defects.values()))
    defects_by_line, defect_lines = {}, {}
    for name in sorted(defects):
        picked, chosen = chosen[: defects[name]], chosen[defects[name]:]
        defect_lines[name] = sorted(i + 1 for i in picked)
        for variant, index in enumerate(sorted(picked)):
            defects_by_line[index + 1] = name
            if name == "missing_user_id" and age_groups[index] == "between":
                age_groups[index] = "old"  # keep this user so the id fallback is visible
                users[index]["birth_year"] = int(users[index]["reviews"][0]["date"][:4]) - (old_above + 5)
            _plant(users[index], name, variant, country)
    lines = [
        _line(user, defects_by_line.get(i + 1), json_every > 0 and (i + 1) % json_every == 0)
        for i, user in enumerate(users)
    ]
    payload = b"\n".join(lines) + b"\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if as_zip:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            # A fixed timestamp keeps the zip's bytes, hence its recorded sha256, a function of the seed.
            member = zipfile.ZipInfo(Path(path.name).with_suffix(".tmp").name, (2015, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(member, payload)
    else:
        path.write_bytes(payload)
    quarantine, filtered, examples = _expected(users, defects_by_line, age_groups, country, young_below, old_above)
    return SyntheticTrustpilot(
        path=path,
        users=users,
        defect_lines=defect_lines,
        expected_quarantine=dict(sorted(quarantine.items())),
        expected_filtered=dict(sorted(filtered.items())),
        expected_examples=examples,
        notes={"seed": seed, "country": country, "json_every": json_every},
    )
