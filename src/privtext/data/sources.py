"""Where each dataset's raw files live, how to recognise them, and how to download them.

Raw files are looked up by relative path in ``raw_dir``, then in ``data_mirror`` (same layout as
``../shared/data``). A dataset may accept several layouts (e.g. a folder, the mirror's tarball or the original
zip); the first layout whose required files are all present wins. When none is, the download layout's files
are expected under ``raw_dir``, where the download rule writes them.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from privtext.runtime.provenance import sha256_bytes

TP_US = "trustpilot/united_states.auto-adjusted_gender.geocoded.jsonl"
TP_UK = "trustpilot/united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl"
LOWLANDS = "https://bitbucket.org/lowlands/release/raw/fd60e8b4fbb12f0175e0f26153e289bbe2bfd71c/WWW2015/data"
NULLSPACE = "https://raw.githubusercontent.com/shauli-ravfogel/nullspace_projection/e1edcc19d808108ab71cbb3afb0389db0206a7eb"
SPLIT_NAMES = ("train", "dev", "test")
# DeepMoji cells of Elazar & Goldberg 2018: <sentiment>_<race>; sentiment pos = happy, race pos = AAE.
DEEPMOJI_CELLS = ("pos_pos", "pos_neg", "neg_pos", "neg_neg")
BIOS_INDEX = {"professions": "biasbios/profession2index.txt", "genders": "biasbios/gender2index.txt"}


@dataclass(frozen=True)
class Layout:
    """One accepted arrangement of a dataset's raw files: role -> relative path."""

    name: str
    required: Mapping[str, str]
    optional: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Download:
    """Canonical public location of one raw file. ``sha256`` pins the file written (None: the source is not
    stable, so the hash of what was fetched is recorded beside it). ``member`` names the file inside an
    archive at ``url``; ``decompress`` handles single-file ``bz2``/``gz`` streams."""

    url: str | None
    sha256: str | None = None
    member: str | None = None
    decompress: str | None = None
    manual: str = ""


LAYOUTS: dict[str, list[Layout]] = {
    "tp_us": [
        Layout("jsonl", {"users": f"{TP_US}.tmp"}),
        Layout("zip", {"users": f"{TP_US}.zip"}),
    ],
    "tp_uk": [
        Layout("jsonl", {"users": f"{TP_UK}.tmp"}),
        Layout("zip", {"users": f"{TP_UK}.zip"}),
    ],
    "ag": [
        Layout("newsspace", {"newsspace": "ag/newsspace200.xml"}),
        Layout("ag_news_csv", {"csv_test": "ag/ag_news_csv/test.csv"}, {"csv_train": "ag/ag_news_csv/train.csv"}),
    ],
    "ag_dpnr": [Layout("dpnlp", {"ag_data": "ag/dpnlp_ag_data.txt"})],
    "blog": [
        Layout("folder", {"blogs": "blog_authorship/blogs"}),
        Layout("tar_xz", {"blogs": "blog_authorship/blogs_age13-17_33-48.tar.xz"}),
        Layout("zip", {"blogs": "blog_authorship/blogs.zip"}),
    ],
    "adult": [Layout("uci", {"data": "adult/adult.data", "test": "adult/adult.test"})],
    "celeba": [
        Layout("txt", {"attributes": "celeba/list_attr_celeba.txt"}),
        Layout("gz", {"attributes": "celeba/list_attr_celeba.txt.gz"}),
    ],
    # Ravfogel et al. 2020's deepmoji_split.py output (published splits), or the four unsplit cell files of
    # their download_data.sh, which FEDERATE reads and splits itself.
    "twitter": [
        Layout("split", {f"{s}_{c}": f"deepmoji/{s}/{c}.npy" for s in SPLIT_NAMES for c in DEEPMOJI_CELLS}),
        Layout("cells", {c: f"deepmoji/{c}.npy" for c in DEEPMOJI_CELLS}),
    ],
    # Records as Ravfogel et al. 2020 distribute them; [CLS] vectors named as FEDERATE's bundle names them
    # (`train.pickle_bert_cls.npy`) or as Ravfogel's run_bias_bios.sh writes them (`train_cls.npy`).
    "bios": [
        Layout("federate", {
            **{f"{s}_records": f"biasbios/{s}.pickle" for s in SPLIT_NAMES},
            **{f"{s}_vectors": f"biasbios/{s}.pickle_bert_cls.npy" for s in SPLIT_NAMES},
            **BIOS_INDEX,
        }),
        Layout("inlp", {
            **{f"{s}_records": f"biasbios/{s}.pickle" for s in SPLIT_NAMES},
            **{f"{s}_vectors": f"bert_encode_biasbios/{s}_cls.npy" for s in SPLIT_NAMES},
            **BIOS_INDEX,
        }),
    ],
    "demo": [Layout("synthetic", {})],
}

# The layout fetched when no layout is present locally, per dataset.
DOWNLOAD_LAYOUT = {
    "tp_us": "zip",
    "tp_uk": "zip",
    "ag": "ag_news_csv",
    "ag_dpnr": "dpnlp",
    "blog": "zip",
    "adult": "uci",
    "celeba": "txt",
    "twitter": "cells",
    "bios": "federate",
}

AG_NEWS_TGZ = "https://s3.amazonaws.com/fast-ai-nlp/ag_news_csv.tgz"
UCI_ADULT = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"

DOWNLOADS: dict[str, Download] = {
    f"{TP_US}.zip": Download(f"{LOWLANDS}/united_states.auto-adjusted_gender.geocoded.jsonl.zip"),
    f"{TP_UK}.zip": Download(f"{LOWLANDS}/united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.zip"),
    "ag/newsspace200.xml": Download(
        "http://groups.di.unipi.it/~gulli/newsspace200.xml.bz", decompress="bz2"
    ),
    "ag/ag_news_csv/test.csv": Download(
        AG_NEWS_TGZ,
        sha256="521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699",
        member="ag_news_csv/test.csv",
    ),
    "ag/ag_news_csv/train.csv": Download(AG_NEWS_TGZ, member="ag_news_csv/train.csv"),
    "ag/dpnlp_ag_data.txt": Download(
        "https://raw.githubusercontent.com/xlhex/dpnlp/master/data/ag_data.txt",
        sha256="3c8d8591fac833fd556ad0536e0cee79fcaaad73bf4c09c0dec39a1afdc06259",
    ),
    "blog_authorship/blogs.zip": Download("https://u.cs.biu.ac.il/~koppel/blogs/blogs.zip"),
    "adult/adult.data": Download(
        f"{UCI_ADULT}/adult.data",
        sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    ),
    "adult/adult.test": Download(
        f"{UCI_ADULT}/adult.test",
        sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    ),
    "celeba/list_attr_celeba.txt": Download(
        None,
        manual="CelebA is distributed through Google Drive (mmlab.ie.cuhk.edu.hk/projects/CelebA.html, "
        "Anno/list_attr_celeba.txt); download it by hand",
    ),
    **{
        f"deepmoji/{cell}.npy": Download(
            None,
            manual="the DeepMoji-encoded Twitter files are not fetched by the pipeline (about 1 GB, no pinned "
            "hash); get them from Ravfogel et al.'s nullspace_projection download_data.sh "
            "(storage.googleapis.com/ai2i/nullspace/deepmoji/) or FEDERATE's data bundle",
        )
        for cell in DEEPMOJI_CELLS
    },
    **{
        relpath: Download(
            None,
            manual="the Bias-in-Bios records and BERT [CLS] vectors are not fetched by the pipeline; get "
            "train/dev/test.pickle from Ravfogel et al.'s nullspace_projection download_data.sh and the "
            "*.pickle_bert_cls.npy encodings from FEDERATE's data bundle (or encode them with that repo's "
            "encode_bert_states.py)",
        )
        for s in SPLIT_NAMES
        for relpath in (f"biasbios/{s}.pickle", f"biasbios/{s}.pickle_bert_cls.npy")
    },
    BIOS_INDEX["professions"]: Download(
        f"{NULLSPACE}/data/biasbios/profession2index.txt",
        sha256="54b293ed4ea97832d7be362036cd6361ba3e7613eff1c5eb17ca5a39845bb20d",
    ),
    BIOS_INDEX["genders"]: Download(
        f"{NULLSPACE}/data/biasbios/gender2index.txt",
        sha256="841805ec7efddd187562a3b7ac421f3ddd696159e6a6270c9ed5bbb1d4381525",
    ),
}


def resolve_layout(
    dataset: str, search_dirs: Iterable[str | Path], prefer: str | None = None
) -> tuple[str, dict[str, Path]] | None:
    """The first layout whose required files all exist in some search dir, with role -> path; else None."""
    search_dirs = [Path(d) for d in search_dirs if d]
    layouts = LAYOUTS[dataset]
    if prefer:
        layouts = [layout for layout in layouts if layout.name == prefer]

    def find(relpath: str) -> Path | None:
        return next((d / relpath for d in search_dirs if (d / relpath).exists()), None)

    for layout in layouts:
        found = {role: find(rel) for role, rel in layout.required.items()}
        if all(found.values()):
            found.update({role: p for role, rel in layout.optional.items() if (p := find(rel))})
            return layout.name, found
    return None


def download_targets(dataset: str, raw_dir: str | Path) -> dict[str, Path]:
    """role -> path under ``raw_dir`` of the files the download rule fetches for ``dataset``."""
    layout = next(lay for lay in LAYOUTS[dataset] if lay.name == DOWNLOAD_LAYOUT[dataset])
    return {role: Path(raw_dir) / rel for role, rel in {**layout.required, **layout.optional}.items()}


class DownloadError(RuntimeError):
    pass


def _extract(payload: bytes, spec: Download) -> bytes:
    if spec.decompress == "bz2":
        return bz2.decompress(payload)
    if spec.decompress == "gz":
        return gzip.decompress(payload)
    if spec.member is None:
        return payload
    try:
        if zipfile.is_zipfile(io.BytesIO(payload)):
            with zipfile.ZipFile(io.BytesIO(payload)) as archive:
                return archive.read(spec.member)
        with tarfile.open(fileobj=io.BytesIO(payload)) as archive:
            member = archive.extractfile(spec.member)
            if member is None:
                raise KeyError(spec.member)
            return member.read()
    except (KeyError, tarfile.ReadError) as error:
        raise DownloadError(f"{spec.url} is not an archive holding {spec.member}") from error


def download(relpath: str, target: str | Path, *, allowed: bool, fetch=None) -> dict:
    """Fetch ``relpath`` from its canonical location into ``target``, checking the pinned sha256.

    Writes ``<target>.source.json`` (url, sha256 of the bytes fetched and written). Raises a
    :class:`DownloadError` that says which file to place where when downloading is off or impossible.
    ``fetch(url) -> bytes`` is injectable so tests exercise this against local files.
    """
    target = Path(target)
    spec = DOWNLOADS.get(relpath)
    place = f"place '{Path(relpath).name}' at '{target}' (or under data_mirror as '{relpath}')"
    if spec is None or spec.url is None:
        reason = spec.manual if spec else f"no public download is known for {relpath}"
        raise DownloadError(f"{reason}: {place}")
    if not allowed:
        raise DownloadError(f"'{relpath}' is missing and allow_download is false: {place}")
    fetch = fetch or _fetch_url
    try:
        payload = fetch(spec.url)
    except OSError as error:  # URLError is an OSError: offline, DNS, HTTP errors
        raise DownloadError(f"could not download {spec.url} ({error}); to work offline, {place}") from error
    content = _extract(payload, spec)
    content_sha = sha256_bytes(content)
    if spec.sha256 and content_sha != spec.sha256:
        raise DownloadError(
            f"{spec.url}: sha256 of {relpath} is {content_sha}, expected {spec.sha256}; refusing to use it"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as handle:
        handle.write(content)
    shutil.move(handle.name, target)
    record = {
        "url": spec.url,
        "member": spec.member,
        "sha256_fetched": sha256_bytes(payload),
        "sha256": content_sha,
        "pinned": spec.sha256 is not None,
    }
    Path(f"{target}.source.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _fetch_url(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed public URLs
        return response.read()
