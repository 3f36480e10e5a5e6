"""The ``blog`` builder on a tiny synthetic corpus in the Blog Authorship Corpus's exact raw format."""

from __future__ import annotations

import random
import shutil
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_snakemake
from privtext.data.blog import (
    balance_cells, build, cell_sizes, min_topic_examples, parse_file_name, post_lines, topic_distributions,
)
from privtext.data import read_meta
from privtext.data.common import Quarantine, manifest_sha256, write_dataset

SEED = 10
OPTIONS = {
    "n_topics": 2, "passes": 5, "min_topic_probability": 0.6, "no_below": 2, "no_above": 0.5,
    "lda_max_docs": 100, "max_lines_per_cell": 40, "split": {"train": 0.8, "dev": 0.1, "test": 0.1},
}
TOPIC_WORDS = [
    ["football", "goal", "match", "team", "score", "league", "coach", "season", "stadium", "referee"],
    ["recipe", "bread", "cheese", "soup", "bake", "dinner", "kitchen", "salad", "oven", "butter"],
]
# (file name, number of topical lines); ages 13–17 and 33–48 are kept, 25 is excluded. young_female is the
# largest cell, so balancing has something to do.
AUTHORS = [
    ("1001.male.15.Student.Aries.xml", 16), ("1002.male.17.indUnk.Leo.xml", 16),
    ("1003.female.13.Student.Libra.xml", 20), ("1004.female.16.Arts.Virgo.xml", 20),
    ("1005.male.35.Engineering.Pisces.xml", 16), ("1006.male.48.indUnk.Cancer.xml", 16),
    ("1007.female.33.Education.Gemini.xml", 17), ("1008.female.41.Law.Taurus.xml", 17),
    ("1009.male.25.Technology.Aquarius.xml", 6),
]
NOT_UTF8_FILE = "1004.female.16.Arts.Virgo.xml"
BAD_FILE_NAME = "1010.female.Student.Leo.xml"
AGE_EXCLUDED_LINES = 6 + 2  # the 25-year-old's post lines: topical, `&` and `!!! ...`
CELL_LINES = {"young_male": 34, "young_female": 42, "old_male": 34, "old_female": 36}  # with the `&` lines


def _post_line(rng: random.Random, topic: int) -> str:
    return " ".join(rng.choice(TOPIC_WORDS[topic]) for _ in range(8))


def _blog_file(name: str, n_lines: int, rng: random.Random) -> bytes:
    """One pseudo-XML blog as the corpus writes it: CRLF, indented lines, blank lines, unescaped `&`."""
    lines = ["<Blog>", ""]
    for index in range(n_lines):
        post = f"      {_post_line(rng, index % 2)}  "
        lines += [f"<date>{index + 1},May,2004</date>", "<post>", "", "\t ", post, "</post>", ""]
    lines += ["<date>1,June,2004</date>", "<post>", "      football & goal & match & team", "      !!! ...", "</post>"]
    lines += ["<post>", "<img src=x> cheese", "</post>", "", "</Blog>", ""]
    data = "\r\n".join(lines).encode("utf-8")
    if name == NOT_UTF8_FILE:  # a latin-1 é, invalid as UTF-8, as in 260 of the real files
        data = data.replace(b"      football & goal", b"      caf\xe9 football & goal")
    return data


@pytest.fixture(scope="module")
def blog_files() -> dict[str, bytes]:
    rng = random.Random(0)
    files = {name: _blog_file(name, n_lines, rng) for name, n_lines in AUTHORS}
    files[BAD_FILE_NAME] = _blog_file(BAD_FILE_NAME, 2, rng)
    return files


def _write_tar_xz(files: dict[str, bytes], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / "staging"
    with tarfile.open(path, "w:xz") as archive:
        for name, data in sorted(files.items()):
            member = staging / "blogs" / name
            member.parent.mkdir(parents=True, exist_ok=True)
            member.write_bytes(data)
            archive.add(member, arcname=f"blogs/{name}")
    shutil.rmtree(staging)
    return path


@pytest.fixture(scope="module")
def sources(blog_files, tmp_path_factory) -> dict[str, Path]:
    """The same corpus as the mirror's tar.xz, the original blogs.zip and an extracted folder."""
    root = tmp_path_factory.mktemp("blog_raw")
    folder = root / "blogs"
    folder.mkdir()
    for name, data in blog_files.items():
        (folder / name).write_bytes(data)
    with zipfile.ZipFile(root / "blogs.zip", "w") as archive:
        for name, data in sorted(blog_files.items()):
            archive.writestr(f"blogs/{name}", data)
    tar_xz = _write_tar_xz(blog_files, root / "blogs_age13-17_33-48.tar.xz")
    return {"tar_xz": tar_xz, "zip": root / "blogs.zip", "folder": folder}


def _build(source: Path) -> tuple:
    quarantine = Quarantine()
    return build({"blogs": source}, OPTIONS, SEED, quarantine), quarantine


@pytest.fixture(scope="module")
def built(sources):
    return _build(sources["tar_xz"])


def _all_examples(dataset) -> pd.DataFrame:
    return pd.concat(dataset.splits.values(), ignore_index=True)


def test_tar_zip_and_folder_give_identical_splits(sources, built):
    for form in ("zip", "folder"):
        other, _ = _build(sources[form])
        for split, frame in built[0].splits.items():
            pd.testing.assert_frame_equal(frame, other.splits[split])


def test_age_and_gender_codes_follow_the_file_name(built):
    examples = _all_examples(built[0])
    for row in examples.itertuples():
        parsed = parse_file_name(row.id.split(":")[1] + ".xml")
        assert row.z_age == int(13 <= parsed.age <= 17)
        assert row.z_gender == int(parsed.gender == "female")
    assert built[0].private_attributes == {"age": ["old", "young"], "gender": ["male", "female"]}


def test_every_line_read_is_an_example_or_counted(built):
    dataset, quarantine = built
    assert quarantine.as_dict() == {"bad_file_name": 1}
    assert dataset.filtered["age_group_excluded"] == AGE_EXCLUDED_LINES
    assert dataset.filtered["no_tokens"] == 8  # the `!!! ...` line of each kept file
    assert dataset.filtered["line_starts_with_angle_bracket"] == 8  # pnet: lines starting with `<` are not text
    reading = {"age_group_excluded", "no_tokens", "line_starts_with_angle_bracket"}
    line_drops = sum(n for reason, n in dataset.filtered.items() if reason not in reading)
    assert len(_all_examples(dataset)) + line_drops == sum(CELL_LINES.values())
    assert dataset.extra["cells_read"] == CELL_LINES


def test_cells_are_balanced_by_downsampling(built):
    dataset = built[0]
    cells = Counter(zip(_all_examples(dataset)["z_age"], _all_examples(dataset)["z_gender"]))
    assert len(cells) == 4 and len(set(cells.values())) == 1
    smallest = min(dataset.extra["cells_before_balancing"].values())
    assert set(dataset.extra["cells_after_balancing"].values()) == {smallest}
    assert dataset.filtered["balancing_downsample"] > 0


def test_latin1_bytes_are_decoded_not_dropped(blog_files, built):
    lines, _, fallback = post_lines(blog_files[NOT_UTF8_FILE])
    assert fallback and any(text.startswith("café football & goal") for _, text in lines)
    assert built[0].extra["files"]["files_not_utf8"] == 1


def test_ids_name_file_and_line(built):
    ids = _all_examples(built[0])["id"]
    assert ids.is_unique
    assert ids.str.fullmatch(r"blog:\d+\.(male|female)\.\d+\.\w+\.\w+:\d+").all()


def test_dataset_writes_with_every_topic_in_every_split(built, tmp_path, sources):
    dataset, quarantine = built
    meta = write_dataset(
        dataset, tmp_path, dataset="blog", inputs={"blogs": sources["tar_xz"]}, seed=SEED,
        quarantine=quarantine, options=OPTIONS,
    )  # raises if a split lacks a class
    assert meta["label_names"] == ["topic0", "topic1"]
    assert [topic["class"] for topic in meta["topics"]] == [0, 1]
    assert [len(topic["top_words"]) for topic in meta["topics"]] == [10, 10]
    assert meta["lda"]["trained_on_docs"] == OPTIONS["lda_max_docs"]


def test_topics_too_rare_for_every_split_are_not_classes():
    labelled = pd.DataFrame({
        "cell": [cell for cell in CELL_LINES for _ in range(20)],
        "y": [0] * 40 + [1] * 38 + [2] * 2,  # topic 2: two lines, fewer than a 0.1 split needs
    })
    balanced, pool = balance_cells(labelled, SEED, min_topic_examples(OPTIONS["split"]))
    assert sorted(balanced["y"].unique()) == [0, 1] and len(pool) == 78
    assert set(cell_sizes(balanced).values()) == {18}  # old_female lost its two topic-2 lines


def test_build_is_deterministic(sources, built):
    again, _ = _build(sources["tar_xz"])
    assert manifest_sha256(again.splits) == manifest_sha256(built[0].splits)
    for split, frame in built[0].splits.items():
        pd.testing.assert_frame_equal(frame, again.splits[split])


def test_batched_inference_equals_get_document_topics():
    from gensim.corpora import Dictionary
    from gensim.models import LdaModel

    rng = random.Random(1)
    docs = [_post_line(rng, i % 2).split() for i in range(40)]
    dictionary = Dictionary(docs)
    bows = [dictionary.doc2bow(doc) for doc in docs]
    model = LdaModel(bows, num_topics=2, id2word=dictionary, passes=2, random_state=0)
    model.random_state = np.random.RandomState(7)
    batched = topic_distributions(model, bows)
    model.random_state = np.random.RandomState(7)
    one_by_one = [[p for _, p in model.get_document_topics(bow, minimum_probability=0)] for bow in bows]
    np.testing.assert_allclose(batched, np.array(one_by_one), rtol=1e-5)


@pytest.mark.slow
def test_snakemake_builds_blog_from_the_mirror_tarball(blog_files, tmp_path):
    raw = tmp_path / "raw"
    _write_tar_xz(blog_files, raw / "blog_authorship" / "blogs_age13-17_33-48.tar.xz")
    # run_studies: [] keeps this test independent of the study grids; only the data stage is planned.
    config = {
        "datasets": ["blog"], "raw_dir": str(raw), "allow_download": False, "blog": OPTIONS, "run_studies": [],
    }
    run_snakemake(tmp_path, config, ["results/data/blog/meta.json"], cores=1)
    meta = read_meta(tmp_path / "results" / "data" / "blog")
    assert meta["quarantined"] == {"bad_file_name": 1}
    assert set(meta["cells_after_balancing"].values()) == {sum(meta["splits"].values()) // 4}
