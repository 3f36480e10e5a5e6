"""Where each dataset's raw files live, how to recognise them, and how to download them.

Raw files are looked up by relative path in ``raw_dir``, then in ``data_mirror`` (same layout as
``../shared/data``). A dataset may accept several layouts (e.g. a folder, the mirror's tarball or the original
zip); the first layout whose required files are all present wins. When none is, the download layout's files
are expected under ``raw_dir``, where the download rule writes them.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
import stat
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterable, Mapping

from privtext.data import BUILDERS

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


MiB, GiB = 1 << 20, 1 << 30
# Bounds for a source of unknown size: what may be fetched, and what its archive may decompress to.
DEFAULT_MAX_BYTES = 2 * GiB
# Local archives (CelebA's gzip, Blog's tar, zip or folder) are held to the same output cap: the whole Blog
# corpus is 0.8 GB unpacked, CelebA's attribute file 27 MB.
DEFAULT_MAX_OUTPUT_BYTES = 4 * GiB
CHUNK_BYTES = MiB


@dataclass(frozen=True)
class Download:
    """Public location of one raw file (``https`` only).

    ``sha256`` pins the bytes fetched from ``url`` and is checked before anything is decompressed; ``size``
    is their length when known, and then caps the transfer. ``sha256`` None means no hash of the source could
    be established: it is fetched only with ``allow_unpinned_downloads`` and the hash of what was fetched is
    recorded beside the file. ``member`` names the file inside an archive at ``url``; ``decompress`` handles
    single-file ``bz2``/``gz`` streams. ``max_bytes`` caps a transfer of unknown size and ``max_output_bytes``
    what decompression may produce (a bz2 or zip bomb stops there), for a stored zip too."""

    url: str | None
    sha256: str | None = None
    member: str | None = None
    decompress: str | None = None
    manual: str = ""
    size: int | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES


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
}
# What a dataset generated by its builder (``demo``, or any dataset with no entry above) reads: nothing.
SYNTHETIC_LAYOUT = Layout("synthetic", {})

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

# Zhang et al.'s ag_news_csv, as torchtext fetches it, at a fixed commit: test.csv's md5 is torchtext's and its
# sha256 that of ../shared/data (PROVENANCE.md); train.csv's sha256 and size are recorded by several
# independent projects that fetched this file (docs/data.md, "Downloads"), not checked here against the bytes.
AG_NEWS_CSV = "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/555590db4219b1243abb1918effd6a7425a2d75f/data/ag_news_csv"
UCI_ADULT = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult"

# Unpinned (no sha256 could be established offline): the Trustpilot zips, newsspace200 and blogs.zip. Their
# caps are bounds, not known sizes.
DOWNLOADS: dict[str, Download] = {
    f"{TP_US}.zip": Download(f"{LOWLANDS}/united_states.auto-adjusted_gender.geocoded.jsonl.zip"),
    f"{TP_UK}.zip": Download(f"{LOWLANDS}/united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.zip"),
    # https assumed: other projects fetch Gulli's files over https; not checked from here (offline).
    "ag/newsspace200.xml": Download(
        "https://groups.di.unipi.it/~gulli/newsspace200.xml.bz", decompress="bz2", max_output_bytes=8 * GiB
    ),
    "ag/ag_news_csv/test.csv": Download(
        f"{AG_NEWS_CSV}/test.csv",
        sha256="521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699",
        size=1_857_427,
    ),
    "ag/ag_news_csv/train.csv": Download(
        f"{AG_NEWS_CSV}/train.csv",
        sha256="76a0a2d2f92b286371fe4d4044640910a04a803fdd2538e0f3f29a5c6f6b672e",
        size=29_470_338,
    ),
    "ag/dpnlp_ag_data.txt": Download(
        "https://raw.githubusercontent.com/xlhex/dpnlp/5b6b97ad9df449327466d0051ff8d2be94d5924d/data/ag_data.txt",
        sha256="3c8d8591fac833fd556ad0536e0cee79fcaaad73bf4c09c0dec39a1afdc06259",
        size=3_766_934,
    ),
    "blog_authorship/blogs.zip": Download("https://u.cs.biu.ac.il/~koppel/blogs/blogs.zip", max_bytes=1 * GiB),
    "adult/adult.data": Download(
        f"{UCI_ADULT}/adult.data",
        sha256="5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
        size=3_974_305,
    ),
    "adult/adult.test": Download(
        f"{UCI_ADULT}/adult.test",
        sha256="a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
        size=2_003_153,
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
        size=354,
    ),
    BIOS_INDEX["genders"]: Download(
        f"{NULLSPACE}/data/biasbios/gender2index.txt",
        sha256="841805ec7efddd187562a3b7ac421f3ddd696159e6a6270c9ed5bbb1d4381525",
        size=8,
    ),
}


def resolve_layout(
    dataset: str, search_dirs: Iterable[str | Path], prefer: str | None = None
) -> tuple[str, dict[str, Path]] | None:
    """The first layout whose required files all exist in some search dir, with role -> path; else None.
    A registered dataset without an entry in :data:`LAYOUTS` reads no raw files (its builder generates it):
    its layout is ``synthetic``, with no files."""
    search_dirs = [Path(d) for d in search_dirs if d]
    layouts = _layouts(dataset)
    if not layouts:
        return SYNTHETIC_LAYOUT.name, {}
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
    """role -> path under ``raw_dir`` of the files the download rule fetches for ``dataset``: those of its
    :data:`DOWNLOAD_LAYOUT`, or, for a dataset with no download, of its first layout, where they must be placed
    by hand (:func:`why_not_downloadable` says so); none for a synthetic dataset."""
    layouts = _layouts(dataset)
    if not layouts:
        return {}
    wanted = DOWNLOAD_LAYOUT.get(dataset, layouts[0].name)
    layout = next((lay for lay in layouts if lay.name == wanted), None)
    if layout is None:
        raise ValueError(f"DOWNLOAD_LAYOUT[{dataset!r}] is {wanted!r}, which is none of its layouts "
                         f"{[lay.name for lay in layouts]} in privtext.data.sources.LAYOUTS")
    return {role: Path(raw_dir) / rel for role, rel in {**layout.required, **layout.optional}.items()}


def _layouts(dataset: str) -> list[Layout]:
    """The accepted layouts of ``dataset``; [] for a registered dataset that has none (a synthetic one)."""
    if dataset not in LAYOUTS and dataset not in BUILDERS:
        raise ValueError(f"unknown dataset {dataset!r}; known: {sorted(BUILDERS)}")
    return [layout for layout in LAYOUTS.get(dataset, []) if layout.required or layout.optional]


class DownloadError(RuntimeError):
    pass


class _CappedReader(io.RawIOBase):
    """Reads ``source`` and raises a DownloadError once more than ``limit`` bytes have come out of it."""

    def __init__(self, source: IO[bytes], limit: int, what: str) -> None:
        super().__init__()
        self.source, self.limit, self.what, self.count = source, limit, what, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.source.read(min(len(buffer), self.limit + 1 - self.count) or 1)
        self.count += len(data)
        if self.count > self.limit:
            raise DownloadError(f"{self.what} exceeds the cap of {self.limit:,} bytes; refusing it")
        buffer[: len(data)] = data
        return len(data)


def _copy(source: IO[bytes], destination: IO[bytes] | None, limit: int, what: str) -> tuple[str, int]:
    """Stream ``source`` into ``destination`` (None: discard), at most ``limit`` bytes; (sha256, size)."""
    digest, size = hashlib.sha256(), 0
    reader = _CappedReader(source, limit, what)
    while chunk := reader.read(CHUNK_BYTES):
        digest.update(chunk)
        size += len(chunk)
        if destination is not None:
            destination.write(chunk)
    return digest.hexdigest(), size


_COMPRESSED_TAR = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))
_UNPACK_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, tarfile.TarError, ValueError)


def _extract(fetched: Path, spec: Download, destination: IO[bytes]) -> tuple[str, int]:
    """Decompress ``fetched`` (or take its ``member``) into ``destination``, streamed and capped at
    ``spec.max_output_bytes``; (sha256, size) of what was written."""
    what = f"{spec.url} decompressed"
    cap = spec.max_output_bytes
    try:
        if spec.decompress in ("bz2", "gz"):
            with (bz2.open if spec.decompress == "bz2" else gzip.open)(fetched, "rb") as stream:
                return _copy(stream, destination, cap, what)
        if zipfile.is_zipfile(fetched):
            with zipfile.ZipFile(fetched) as archive, archive.open(spec.member) as stream:
                return _copy(stream, destination, cap, what)  # reading to the end checks the member's CRC
        with fetched.open("rb") as raw:
            magic = raw.read(6)
            raw.seek(0)
            opener = next((open_ for prefix, open_ in _COMPRESSED_TAR if magic.startswith(prefix)), None)
            stream = opener(raw, "rb") if opener else raw
            # Stream mode over a capped reader: skipping the members before ours counts against the cap too.
            with tarfile.open(fileobj=_CappedReader(stream, cap, what), mode="r|") as archive:
                for member in archive:
                    if member.name == spec.member and member.isfile():
                        return _copy(archive.extractfile(member), destination, cap, what)
        raise KeyError(spec.member)
    except DownloadError:
        raise
    except KeyError as error:
        raise DownloadError(f"{spec.url} is not an archive holding {spec.member}") from error
    except _UNPACK_ERRORS as error:
        raise DownloadError(f"{spec.url}: cannot unpack the fetched file ({type(error).__name__}: {error})") from error


def _check_stored_zip(path: Path, spec: Download) -> None:
    """A zip kept as downloaded (its builder reads it later): every member must read back whole, with its
    CRC, and all of them together within ``spec.max_output_bytes``."""
    what = f"{spec.url} decompressed"
    try:
        with zipfile.ZipFile(path) as archive:
            total = 0
            for info in archive.infolist():
                with archive.open(info) as stream:
                    total += _copy(stream, None, spec.max_output_bytes - total, what)[1]
    except DownloadError:
        raise
    except _UNPACK_ERRORS as error:
        raise DownloadError(f"{spec.url}: not a readable zip ({type(error).__name__}: {error})") from error


def _place(relpath: str, target: Path) -> str:
    return f"place '{Path(relpath).name}' at '{target}' (or under data_mirror as '{relpath}')"


def why_not_downloadable(relpath: str, target: str | Path, *, allowed: bool) -> str | None:
    """Why the download rule cannot fetch ``relpath`` into ``target`` (no public source, or ``allowed`` is
    false), saying where to place the file by hand; None when it can try."""
    spec = DOWNLOADS.get(relpath)
    if spec is None or spec.url is None:
        reason = spec.manual if spec else f"no public download is known for {relpath}"
        return f"{reason}: {_place(relpath, Path(target))}"
    if not allowed:
        return f"'{relpath}' is missing and allow_download is false: {_place(relpath, Path(target))}"
    return None


def unobtainable_raw_files(dataset: str, raw_dir: str | Path, *, allow_download: bool) -> list[str]:
    """For a dataset none of whose layouts is present: why each raw file the download rule would have to
    fetch into ``raw_dir`` cannot be fetched (files already under ``raw_dir`` need nothing). Empty: the
    download jobs can run. The Snakefile refuses a selected dataset with a non-empty list before any job."""
    reasons = []
    for target in download_targets(dataset, raw_dir).values():
        relpath = Path(target).relative_to(raw_dir).as_posix()
        if not Path(target).exists() and (reason := why_not_downloadable(relpath, target, allowed=allow_download)):
            reasons.append(reason)
    return reasons


def download(
    relpath: str,
    target: str | Path,
    *,
    allowed: bool,
    allow_unpinned: bool = False,
    fetch: Callable[[str], bytes | IO[bytes]] | None = None,
) -> dict:
    """Fetch ``relpath`` from its public location into ``target``.

    The bytes are streamed to a temporary file beside ``target`` under the size cap and hashed as they come;
    a pinned sha256 is checked on them before anything is decompressed; decompression is streamed under its
    own cap; ``target`` appears only when everything passed (temporary files never outlive a failure). A
    source without a pinned sha256 is refused unless ``allow_unpinned``. Writes ``<target>.source.json``
    (url, sha256 of the bytes fetched and of the file written, whether pinned). Raises a
    :class:`DownloadError` that says which file to place where when downloading is off or impossible.
    ``fetch(url)`` (bytes or a binary stream) is injectable so tests exercise this against local files;
    the default fetches over https only.
    """
    target = Path(target)
    refusal = why_not_downloadable(relpath, target, allowed=allowed)
    if refusal is not None:
        raise DownloadError(refusal)
    spec = DOWNLOADS[relpath]
    place = _place(relpath, target)
    if spec.sha256 is None and not allow_unpinned:
        raise DownloadError(
            f"'{relpath}' has no pinned sha256 (no hash of {spec.url} could be established), so it is fetched "
            f"only with allow_unpinned_downloads: true, which records the sha256 of what was fetched in "
            f"'{target}.source.json'; or {place}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary: list[Path] = []
    try:
        fetched = _new_temporary(target, ".fetched", temporary)
        try:
            with fetched.open("wb") as handle:
                cap = spec.size if spec.size is not None else spec.max_bytes
                fetched_sha, fetched_size = fetch_capped(spec.url, handle, cap, fetch)
        except OSError as error:  # URLError is an OSError: offline, DNS, HTTP errors (also a full disk)
            raise DownloadError(
                f"could not download {spec.url} into {target.parent} ({error}); to work offline, {place}"
            ) from error
        if spec.size is not None and fetched_size != spec.size:
            raise DownloadError(f"{spec.url}: fetched {fetched_size:,} bytes, expected {spec.size:,}; refusing it")
        if spec.sha256 is not None and fetched_sha != spec.sha256:
            raise DownloadError(
                f"{spec.url}: sha256 of the fetched bytes is {fetched_sha}, expected {spec.sha256}; refusing them "
                "before anything is decompressed"
            )
        if spec.decompress or spec.member:
            content = _new_temporary(target, ".content", temporary)
            with content.open("wb") as handle:
                content_sha, _ = _extract(fetched, spec, handle)
        else:
            content, content_sha = fetched, fetched_sha
            if target.suffix == ".zip":
                _check_stored_zip(fetched, spec)
        record = {
            "url": spec.url,
            "member": spec.member,
            "sha256_fetched": fetched_sha,
            "sha256": content_sha,
            "pinned": spec.sha256 is not None,
        }
        source_json = _new_temporary(target, ".source", temporary)
        source_json.write_text(json.dumps(record, indent=2) + "\n")
        os.replace(content, target)
        os.replace(source_json, f"{target}.source.json")
        return record
    finally:
        for path in temporary:
            path.unlink(missing_ok=True)


def fetch_capped(
    url: str, destination: IO[bytes], cap: int, fetch: Callable[[str], bytes | IO[bytes]] | None = None
) -> tuple[str, int]:
    """Stream ``url`` into ``destination``, refusing a transfer that announces or delivers more than ``cap`` bytes;
    (sha256, size) of what came. ``fetch(url)`` (bytes or a binary stream) defaults to https only. Network
    failures surface as ``OSError``, a transfer over the cap as :class:`DownloadError`."""
    source = (fetch or _fetch_url)(url)
    with (io.BytesIO(source) if isinstance(source, bytes) else source) as stream:
        declared = getattr(stream, "length", None)  # an HTTP response's Content-Length
        if declared is not None and declared > cap:
            raise DownloadError(f"{url} announces {declared:,} bytes, over the cap of {cap:,}; refusing it")
        return _copy(stream, destination, cap, url)


def extract_zip(archive: Path, folder: Path, *, top: str, max_output_bytes: int) -> list[Path]:
    """Unpack the zip ``archive`` into ``folder``, never over an existing file, every member under the one top-level
    folder ``top``: a member outside it (an absolute path, ``..``, another folder), a link or more than
    ``max_output_bytes`` in all is refused with a :class:`DownloadError`, and each member's CRC is checked as it
    is read. The files written, relative to ``folder``."""
    written, total = [], 0
    try:
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                parts = Path(info.filename).parts
                if Path(info.filename).is_absolute() or parts[:1] != (top,) or ".." in parts or "\\" in info.filename:
                    raise DownloadError(f"{archive.name}: member '{info.filename}' is not under '{top}/'; refusing it")
                if stat.S_ISLNK(info.external_attr >> 16):
                    raise DownloadError(f"{archive.name}: member '{info.filename}' is a link; refusing it")
                if info.is_dir():
                    continue
                target = folder / Path(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(info) as stream, target.open("xb") as handle:
                    total += _copy(stream, handle, max_output_bytes - total, f"{archive.name} unpacked")[1]
                written.append(Path(*parts))
    except DownloadError:
        raise
    except _UNPACK_ERRORS as error:
        raise DownloadError(f"{archive.name}: not a readable zip ({type(error).__name__}: {error})") from error
    return written


def _new_temporary(target: Path, suffix: str, registry: list[Path]) -> Path:
    """A new empty file beside ``target`` (same file system, so the final rename is atomic), registered for
    removal."""
    handle, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=suffix)
    os.close(handle)
    registry.append(Path(name))
    return Path(name)


class _HttpsOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to https only: a pinned hash would still catch a swap, an unpinned file would not."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not newurl.startswith("https://"):
            raise urllib.error.HTTPError(newurl, code, f"refused redirect to non-https {newurl}", headers, fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpsOnlyRedirects)


def _fetch_url(url: str) -> IO[bytes]:
    if not url.startswith("https://"):
        raise DownloadError(f"{url}: only https downloads are made")
    return _OPENER.open(url, timeout=60)
