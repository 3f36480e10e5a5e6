"""``blog``: the Blog Authorship Corpus labelled with LDA topics, private age and gender (docs/data.md, "Blog").

Follows Coavoux et al. 2018 (``mcoavoux/pnet`` ``datasets/preprocess_blogs.py``), which DPNR reuses: authors aged
13–17 (young) and 33–48 (old); every non-empty line of a post not starting with ``<`` is one example; gensim LDA
(10 topics, 20 passes, lower-cased ``\\w+`` tokens, ``filter_extremes(no_below=2, no_above=0.5)``) labels a line
with its dominant topic when that topic's probability is > 0.8, else it is dropped; the four (age, gender) cells
are balanced by downsampling to the smallest; then split. Departures, each recorded in ``meta.json``:

- files that are not valid UTF-8 are decoded line by line with a latin-1 fallback (pnet silently keeps only the
  lines before the first bad byte);
- candidate lines are capped per cell (``max_lines_per_cell``) and the dictionary and LDA are fitted on a seeded,
  shuffled sample of at most ``lda_max_docs`` of them, so the build takes minutes rather than an hour;
- lines whose tokens are all outside the filtered vocabulary are dropped before labelling (pnet gave them a
  near-uniform topic distribution, which never passes the 0.8 threshold anyway);
- a topic left with too few lines for every split to see it is not a class (``meta.topics`` says which; long
  lines rarely put > 0.8 on a minor topic), so ``label_names`` keep the LDA topic ids;
- the split is stratified on the topic (``split_frame``) rather than pnet's plain shuffle.
"""

from __future__ import annotations

import logging
import math
import re
import tarfile
import zipfile
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Mapping, NamedTuple

import numpy as np
import pandas as pd

from privtext.data.common import BuiltDataset, DatasetError, Quarantine, has_lone_surrogate, split_frame
from privtext.data.sources import DEFAULT_MAX_OUTPUT_BYTES

log = logging.getLogger(__name__)

FILE_NAME = re.compile(r"^(?P<blogger>\d+)\.(?P<gender>male|female)\.(?P<age>\d+)\.[^.]+\.[^.]+\.xml$")
YOUNG_AGES = range(13, 18)  # pnet's age group 1 (`*.male.1*`)
OLD_AGES = range(33, 49)  # pnet's age group 3 (`*.male.[3-9]*`); the 23–27 group is not used
AGE_NAMES = ["old", "young"]  # z_age = 1: 13–17
GENDER_NAMES = ["male", "female"]  # z_gender = 1: female (pnet's meta 1)
CELLS = [f"{age}_{gender}" for age in AGE_NAMES for gender in GENDER_NAMES]
TOKEN = re.compile(r"\w+")  # nltk RegexpTokenizer(r"\w+") on the lower-cased line, as pnet (see tokenize)
INFERENCE_CHUNK = 2000
# Independent random streams per stage (see seeded_indices).
STAGE_CELL_CAP, STAGE_LDA_SAMPLE, STAGE_LDA_ORDER, STAGE_BALANCE = 1, 2, 3, 4
TAR_SUFFIXES = (".tar", ".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2")


class BlogFile(NamedTuple):
    stem: str
    gender: str
    age: int


def parse_file_name(name: str) -> BlogFile | None:
    """``<id>.<gender>.<age>.<industry>.<sign>.xml`` -> its stem, gender and age; None if it does not parse."""
    match = FILE_NAME.match(name)
    if match is None:
        return None
    return BlogFile(name[: -len(".xml")], match["gender"], int(match["age"]))


def iter_raw_files(path: Path, max_bytes: int = DEFAULT_MAX_OUTPUT_BYTES) -> Iterator[tuple[str, bytes]]:
    """(base name, bytes) of every file in a folder, a tar archive or a zip, streamed without extracting. The
    files together may hold at most ``max_bytes`` (the downloads' cap): each member's size is checked against
    what is left before it is read, so a bomb is refused before it fills memory."""
    name = path.name.lower()
    left = max_bytes

    def counted(member: str, size: int) -> None:
        nonlocal left
        left -= size
        if left < 0:
            raise DatasetError(f"{path}: its files hold more than the cap of {max_bytes:,} bytes (at {member!r}); "
                               "refusing it")

    if path.is_dir():
        for child in sorted(p for p in path.iterdir() if p.is_file()):
            counted(child.name, child.stat().st_size)
            yield child.name, child.read_bytes()
    elif name.endswith(TAR_SUFFIXES):
        with tarfile.open(path, "r|*") as archive:  # stream mode: one sequential pass over the xz data
            for member in archive:
                if member.isfile():
                    counted(member.name, member.size)  # the header's size: extractfile reads no more
                    handle = archive.extractfile(member)
                    yield PurePosixPath(member.name).name, handle.read() if handle else b""
    elif name.endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            for info in sorted(archive.infolist(), key=lambda i: i.filename):
                if not info.is_dir():
                    counted(info.filename, info.file_size)  # zipfile reads no more than the declared size
                    yield PurePosixPath(info.filename).name, archive.read(info)
    else:
        raise DatasetError(
            f"blog input {path} is neither a folder, a tar archive ({', '.join(TAR_SUFFIXES)}) nor a zip"
        )


def post_lines(data: bytes) -> tuple[list[tuple[int, str]], Counter, bool]:
    """Non-empty stripped lines inside ``<post>`` elements as (1-based line number, text), the lines skipped
    by reason, and whether any line needed the latin-1 fallback. Lines starting with ``<`` are not text (pnet)."""
    lines: list[tuple[int, str]] = []
    filtered: Counter = Counter()
    fallback = False
    in_post = False
    # bytes.splitlines splits on \n, \r\n and \r only: Python's universal newlines, as pnet's text-mode read.
    for number, raw in enumerate(data.splitlines(), start=1):
        raw = raw.strip()
        if not raw:
            continue
        if raw.startswith(b"<"):
            if raw.startswith(b"<post"):
                in_post = True
            elif raw.startswith(b"</post"):
                in_post = False
            elif in_post:
                filtered["line_starts_with_angle_bracket"] += 1
            continue
        if not in_post:
            filtered["outside_post"] += 1
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text, fallback = raw.decode("latin-1"), True
        lines.append((number, text.strip()))
    return lines, filtered, fallback


def read_candidates(path: Path, quarantine: Quarantine) -> tuple[pd.DataFrame, Counter, dict[str, Any]]:
    """Every tokenised candidate line of the kept age groups, sorted by (file, line), with its cell."""
    filtered: Counter = Counter()
    files: Counter = Counter()
    seen: set[str] = set()
    rows: list[tuple[str, str, int, int, int]] = []
    for name, data in iter_raw_files(path):
        if has_lone_surrogate(name):  # a name byte that is not UTF-8, kept by tarfile and os as a surrogate escape,
            # which no UTF-8 writer accepts: shown escaped, the archive as its file
            quarantine.add("undecodable_file_name", path, None, ascii(name))
            continue
        parsed = parse_file_name(name)
        if parsed is None:
            quarantine.add("bad_file_name", name, None, "expected <id>.<gender>.<age>.<industry>.<sign>.xml")
            continue
        if parsed.stem in seen:
            quarantine.add("duplicate_file", name, None, "same file name twice in the input")
            continue
        seen.add(parsed.stem)
        lines, skipped, fallback = post_lines(data)
        if parsed.age not in YOUNG_AGES and parsed.age not in OLD_AGES:
            files["files_age_group_excluded"] += 1
            filtered["age_group_excluded"] += len(lines)
            continue
        filtered.update(skipped)
        files["files_not_utf8"] += fallback
        z_age = int(parsed.age in YOUNG_AGES)
        z_gender = GENDER_NAMES.index(parsed.gender)
        files[f"files_{AGE_NAMES[z_age]}_{parsed.gender}"] += 1
        for number, text in lines:
            if TOKEN.search(text.lower()) is None:
                filtered["no_tokens"] += 1
                continue
            rows.append((parsed.stem, text, number, z_age, z_gender))
    if not rows:
        raise DatasetError(f"{path}: no post line of an author aged 13–17 or 33–48 was found")
    frame = pd.DataFrame(rows, columns=["stem", "text", "line", "z_age", "z_gender"])
    frame = frame.sort_values(["stem", "line"], kind="stable").reset_index(drop=True)
    frame.insert(0, "id", "blog:" + frame["stem"] + ":" + frame["line"].astype(str))
    frame["cell"] = [CELLS[2 * a + g] for a, g in zip(frame["z_age"], frame["z_gender"])]
    return frame.drop(columns=["stem", "line"]), filtered, dict(sorted(files.items()))


def seeded_indices(n: int, size: int | None, seed: int, *stream: int) -> np.ndarray:
    """Sorted positions of a seeded sample of ``size`` out of ``n`` (all if ``size`` is None or not smaller).
    Each stage draws from its own ``stream``, so changing one cap does not reshuffle another stage."""
    if size is None or n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng([seed, *stream]).choice(n, size=size, replace=False))


def per_cell(frame: pd.DataFrame, size: int | None, seed: int, stage: int) -> pd.DataFrame:
    """Each (age, gender) cell downsampled to at most ``size`` rows, in the frame's order."""
    parts = []
    for index, cell in enumerate(CELLS):
        rows = frame[frame["cell"] == cell]
        parts.append(rows.iloc[seeded_indices(len(rows), size, seed, stage, index)])
    return pd.concat(parts).sort_index()


def cell_sizes(frame: pd.DataFrame) -> dict[str, int]:
    counts = frame["cell"].value_counts()
    return {cell: int(counts.get(cell, 0)) for cell in CELLS}


def train_lda(corpus: list, dictionary, options: Mapping[str, Any], seed: int):
    """pnet's ``LdaModel(corpus, num_topics=10, id2word=dictionary, passes=20)``, seeded.

    Single-process ``LdaModel`` (not ``LdaMulticore``) with ``random_state`` is deterministic; ``eval_every``
    is off because perplexity logging only costs time (and draws from the model's random stream)."""
    from gensim.models import LdaModel

    return LdaModel(
        corpus, num_topics=options["n_topics"], id2word=dictionary, passes=options["passes"],
        random_state=seed, eval_every=None,
    )


def topic_distributions(model, bows: list) -> np.ndarray:
    """Row-normalised variational gamma per document: what ``get_document_topics`` computes (before its
    display cut-off), in one ``inference`` call rather than one call per document."""
    if not bows:
        return np.zeros((0, model.num_topics))
    gamma, _ = model.inference(bows)
    return gamma / gamma.sum(axis=1, keepdims=True)


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def label_topics(
    frame: pd.DataFrame, options: Mapping[str, Any], seed: int, filtered: Counter
) -> tuple[pd.DataFrame, dict[str, Any], Any]:
    """Fit dictionary and LDA on a seeded sample of at most ``lda_max_docs`` lines, then label every line whose
    dominant topic has probability > ``min_topic_probability`` (pnet: ``max(values) > 0.8``); y = topic id."""
    from gensim.corpora import Dictionary

    texts = frame["text"].tolist()
    sample = seeded_indices(len(texts), options["lda_max_docs"], seed, STAGE_LDA_SAMPLE)
    # Online LDA updates per chunk of 2000 documents: a shuffled order keeps each chunk representative, where
    # the (file, line) order would feed one blogger after another.
    sample = np.random.default_rng([seed, STAGE_LDA_ORDER]).permutation(sample)
    training_tokens = [tokenize(texts[i]) for i in sample]
    # pnet builds the dictionary on the documents LDA is trained on; so do we, on the sample.
    dictionary = Dictionary(training_tokens)
    dictionary.filter_extremes(no_below=options["no_below"], no_above=options["no_above"])
    if len(dictionary) == 0:
        raise DatasetError("blog: the vocabulary is empty after filter_extremes; too few candidate lines")
    corpus = [dictionary.doc2bow(tokens) for tokens in training_tokens]
    del training_tokens
    log.info("blog: training LDA on %d lines, dictionary of %d words", len(corpus), len(dictionary))
    model = train_lda(corpus, dictionary, options, seed)
    del corpus
    log.info("blog: labelling %d lines", len(texts))
    # Tokenised chunk by chunk: holding every line's tokens at once would take gigabytes.
    topic = np.full(len(texts), -1, dtype=np.int64)
    probability = np.zeros(len(texts))
    for start in range(0, len(texts), INFERENCE_CHUNK):
        bows = [dictionary.doc2bow(tokenize(text)) for text in texts[start : start + INFERENCE_CHUNK]]
        rows = np.array([start + i for i, bow in enumerate(bows) if bow], dtype=np.int64)
        distributions = topic_distributions(model, [bow for bow in bows if bow])
        topic[rows], probability[rows] = distributions.argmax(axis=1), distributions.max(axis=1)
    in_vocabulary = topic >= 0
    confident = in_vocabulary & (probability > options["min_topic_probability"])  # strict, as pnet's `> 0.8`
    filtered["no_token_in_vocabulary"] += int((~in_vocabulary).sum())
    filtered["topic_probability_below_threshold"] += int((in_vocabulary & ~confident).sum())
    labelled = frame[confident].assign(y=topic[confident])
    lda_meta = {
        "n_topics": options["n_topics"], "passes": options["passes"], "lda_max_docs": options["lda_max_docs"],
        "trained_on_docs": len(sample), "labelled_docs": int(in_vocabulary.sum()),
        "dictionary_size": len(dictionary), "no_below": options["no_below"], "no_above": options["no_above"],
        "min_topic_probability": options["min_topic_probability"],
    }
    return labelled, lda_meta, model


def min_topic_examples(split: Mapping[str, float]) -> int:
    """Fewest examples a topic needs for the stratified split to give each split one of them (and at least the
    3 ``split_frame`` needs to stratify at all)."""
    return max(3, math.ceil(1 / min(split.values()) - 1e-9))


def balance_cells(labelled: pd.DataFrame, seed: int, min_examples: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Downsample the 4 (age, gender) cells to the smallest (pnet), leaving out topics that would end with fewer
    than ``min_examples`` lines. Returns (balanced, pool it was drawn from); the pool lacks only those topics."""
    kept = sorted(labelled["y"].unique())
    while True:
        if not kept:
            raise DatasetError(f"blog: no topic keeps {min_examples} lines after balancing the cells")
        pool = labelled[labelled["y"].isin(kept)]
        sizes = cell_sizes(pool)
        if min(sizes.values()) == 0:
            raise DatasetError(f"blog: an (age, gender) cell has no topic-labelled line: {sizes}")
        balanced = per_cell(pool, min(sizes.values()), seed, STAGE_BALANCE)
        counts = balanced["y"].value_counts()
        rare = [topic for topic in kept if counts.get(topic, 0) < min_examples]
        if not rare:
            return balanced, pool
        kept = [topic for topic in kept if topic not in rare]


def describe_topics(model, labelled: pd.DataFrame, balanced: pd.DataFrame, kept: list[int]) -> list[dict[str, Any]]:
    """Per LDA topic: its class index (None if too rare), lines labelled with it, examples kept, top 10 words."""
    labelled_counts, final_counts = labelled["y"].value_counts(), balanced["y"].value_counts()
    return [
        {"topic": k, "class": kept.index(k) if k in kept else None, "labelled": int(labelled_counts.get(k, 0)),
         "examples": int(final_counts.get(k, 0)), "top_words": [word for word, _ in model.show_topic(k, topn=10)]}
        for k in range(model.num_topics)
    ]


def build(inputs: Mapping[str, Path], options: Mapping[str, Any], seed: int, quarantine: Quarantine) -> BuiltDataset:
    """Blog posts -> topic-labelled lines with private age and gender, balanced over the 4 cells, split."""
    source = Path(inputs["blogs"])
    candidates, filtered, files = read_candidates(source, quarantine)
    log.info("blog: %d candidate lines from %s", len(candidates), files)
    capped = per_cell(candidates, options["max_lines_per_cell"], seed, STAGE_CELL_CAP)
    filtered["cell_cap"] += len(candidates) - len(capped)
    labelled, lda_meta, model = label_topics(capped, options, seed, filtered)
    log.info("blog: %d lines labelled, cells %s", len(labelled), cell_sizes(labelled))
    balanced, pool = balance_cells(labelled, seed, min_topic_examples(options["split"]))
    filtered["topic_too_rare"] += len(labelled) - len(pool)
    filtered["balancing_downsample"] += len(pool) - len(balanced)
    # Topics left without enough lines are not classes; y indexes the kept topics (recorded in meta.topics).
    kept = [int(topic) for topic in sorted(balanced["y"].unique())]
    if len(kept) < 2:
        raise DatasetError(f"blog: only topics {kept} have enough lines; a task needs two classes")
    if len(kept) < options["n_topics"]:
        dropped = sorted(set(range(options["n_topics"])) - set(kept))
        log.warning("blog: topics %s have too few lines and are not classes", dropped)
    frame = balanced.assign(y=balanced["y"].map({topic: index for index, topic in enumerate(kept)}))
    frame = frame[["id", "text", "y", "z_age", "z_gender"]].reset_index(drop=True)
    return BuiltDataset(
        splits=split_frame(frame, options["split"], seed),
        label_names=[f"topic{k}" for k in kept],
        private_attributes={"age": AGE_NAMES, "gender": GENDER_NAMES},
        attribute_kinds={"age": "demographic", "gender": "demographic"},
        filtered={reason: count for reason, count in filtered.items() if count},
        extra={
            "files": files,
            "max_lines_per_cell": options["max_lines_per_cell"],
            "cells_read": cell_sizes(candidates),
            "cells_after_cap": cell_sizes(capped),
            "cells_labelled": cell_sizes(labelled),
            "cells_before_balancing": cell_sizes(pool),
            "cells_after_balancing": cell_sizes(balanced),
            "lda": lda_meta,
            "topics": describe_topics(model, labelled, balanced, kept),
        },
    )
