"""Issue 30, data hardening: downloads with integrity and caps, unencodable text and wrongly typed fields
quarantined in bounded time, a ceiling on quarantine, and clear errors for an empty .npy, a published.csv
without its columns and a spacy_model that is not a spaCy package."""

from __future__ import annotations

import bz2
import hashlib
import io
import json
import pickle
import subprocess
import sys
import textwrap
import time
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_snakemake
from privtext.data import DatasetError, Quarantine, get_builder
from privtext.data.ag import read_ag_documents
from privtext.data.common import BuiltDataset, write_dataset
from privtext.data.encoded import load_vectors
from privtext.data import sources
from privtext.data.sources import TP_US, Download, DownloadError, download, resolve_layout
from privtext.plan.config import load_config
from synthetic_encoded import write_bios_files
from synthetic_trustpilot import write_trustpilot_file

SEED = 10
BIOS_ROWS = {"train": 60, "dev": 20, "test": 20}
MiB = 1 << 20


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_local(url: str) -> bytes:
    return Path(url).read_bytes()


@pytest.fixture
def source(tmp_path, monkeypatch):
    """Register ``demo/<name>`` served from a local file; returns (target under raw/) for a payload and spec."""

    def register(payload: bytes, name: str = "file.txt", **spec) -> Path:
        served = tmp_path / "served" / name
        served.parent.mkdir(exist_ok=True)
        served.write_bytes(payload)
        monkeypatch.setitem(sources.DOWNLOADS, f"demo/{name}", Download(str(served), **spec))
        return tmp_path / "raw" / "demo" / name

    return register


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# ---------------------------------------------------------------------------------------- 3. downloads


def test_tampered_download_is_refused_before_anything_is_decompressed(source, monkeypatch):
    genuine = bz2.compress(b"<source>AP</source>\n")
    bomb = bz2.compress(b"\0" * (64 * MiB))  # what an attacker serves instead: 64 MiB from a few KB

    def no_decompression(*args, **kwargs):
        raise AssertionError("decompression ran before the hash check")

    monkeypatch.setattr(bz2, "decompress", no_decompression)
    monkeypatch.setattr(bz2, "open", no_decompression)
    monkeypatch.setattr(bz2, "BZ2File", no_decompression)
    target = source(bomb, decompress="bz2", sha256=sha256(genuine))
    with pytest.raises(DownloadError, match="before anything is decompressed"):
        download("demo/file.txt", target, allowed=True, fetch=read_local)
    assert leftovers(target.parent) == []


def test_unpinned_download_is_refused_unless_opted_in_and_then_records_its_hash(source):
    target = source(b"payload\n")
    with pytest.raises(DownloadError, match="no pinned sha256.*allow_unpinned_downloads") as error:
        download("demo/file.txt", target, allowed=True, fetch=lambda url: pytest.fail("fetched anyway"))
    assert f"place 'file.txt' at '{target}'" in str(error.value)
    record = download("demo/file.txt", target, allowed=True, allow_unpinned=True, fetch=read_local)
    assert (record["pinned"], record["sha256_fetched"]) == (False, sha256(b"payload\n"))
    assert json.loads(Path(f"{target}.source.json").read_text()) == record


def test_bz2_bomb_from_an_unpinned_source_stops_at_the_output_cap(source):
    bomb = bz2.compress(b"\0" * (64 * MiB))
    assert len(bomb) < 64 * 1024
    target = source(bomb, decompress="bz2", max_output_bytes=MiB)
    with pytest.raises(DownloadError, match="exceeds the cap of 1,048,576 bytes"):
        download("demo/file.txt", target, allowed=True, allow_unpinned=True, fetch=read_local)
    assert leftovers(target.parent) == []


def test_stored_zip_whose_members_inflate_past_the_cap_is_refused(source):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.jsonl", b"\0" * (8 * MiB))
    target = source(buffer.getvalue(), name="users.zip", max_output_bytes=MiB)
    with pytest.raises(DownloadError, match="exceeds the cap"):
        download("demo/users.zip", target, allowed=True, allow_unpinned=True, fetch=read_local)
    assert leftovers(target.parent) == []


def test_transfer_longer_than_its_cap_or_known_size_is_refused(source):
    target = source(b"x" * 5000, max_bytes=1000)
    with pytest.raises(DownloadError, match="exceeds the cap of 1,000 bytes"):
        download("demo/file.txt", target, allowed=True, allow_unpinned=True, fetch=read_local)
    sized = source(b"x" * 5000, name="sized.txt", sha256=sha256(b"x" * 4000), size=4000)
    with pytest.raises(DownloadError, match="exceeds the cap of 4,000 bytes"):
        download("demo/sized.txt", sized, allowed=True, fetch=read_local)
    assert leftovers(target.parent) == []


def test_every_download_is_https_and_the_stable_ones_are_pinned_with_their_size():
    fetched = {relpath: spec for relpath, spec in sources.DOWNLOADS.items() if spec.url}
    assert all(spec.url.startswith("https://") for spec in fetched.values()), [s.url for s in fetched.values()]
    unpinned = {relpath for relpath, spec in fetched.items() if spec.sha256 is None}
    assert unpinned == {f"{TP_US}.zip", f"{sources.TP_UK}.zip", "ag/newsspace200.xml", "blog_authorship/blogs.zip"}
    for relpath, spec in fetched.items():
        if spec.sha256:
            assert len(spec.sha256) == 64 and spec.size, relpath


def test_a_redirect_to_plain_http_is_refused():
    handler = sources._HttpsOnlyRedirects()
    with pytest.raises(urllib.error.HTTPError, match="non-https"):
        handler.redirect_request(None, None, 302, "Found", {}, "http://example.org/file")


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    """Disk full, simulated with RLIMIT_FSIZE: the write fails part-way and nothing is left beside the target."""
    script = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        from privtext.data import sources
        payload = b"x" * 65536
        sources.DOWNLOADS["demo/file.txt"] = sources.Download(
            "local", sha256="{sha256(b"x" * 65536)}")
        target = Path({str(tmp_path / "raw" / "file.txt")!r})
        target.parent.mkdir(parents=True)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            sources.download("demo/file.txt", target, allowed=True, fetch=lambda url: payload)
        except (OSError, sources.DownloadError) as error:
            print("failed:", type(error).__name__)
        print(sorted(p.name for p in target.parent.iterdir()))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    failure, files = result.stdout.splitlines()
    assert failure.startswith("failed:") and files == "[]", result.stdout


# ------------------------------------------------------------------------------ 4. unencodable text


NEWSSPACE = (
    b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<all_news>\n'
    b"<source>AP</source><title>Bush wins</title><category>World</category><description>Vote</description>\n"
    b"<source>AP</source><title>Bad &#xD800; char</title><category>World</category><description>x</description>\n"
    b"<source>AP</source><title>Chips</title><category>Business</category><description>Sales</description>\n"
    b"</all_news>\n"
)


def test_ag_xml_surrogate_reference_is_quarantined_with_its_line_and_field(tmp_path):
    path = tmp_path / "newsspace200.xml"
    path.write_bytes(NEWSSPACE)
    quarantine = Quarantine()
    documents = read_ag_documents({"newsspace": path}, quarantine)
    assert quarantine.as_dict() == {"unencodable_text": 1}
    example = quarantine.examples[0]
    assert (example["file"], example["line"], example["field"]) == ("newsspace200.xml", 4, "title")
    assert list(documents["text"]) == ["Bush wins  Vote", "Chips  Sales"]
    documents.to_parquet(tmp_path / "documents.parquet")  # what failed after NER had run


def _review(text, rating="5"):
    return {"company_id": "shop", "date": "2014-05-01T10:00:00", "rating": rating, "text": [text], "title": ""}


def _user(user_id, text="Great service.", gender="F", birth_year=1980, rating="5"):
    return {"user_id": user_id, "gender": gender, "birth_year": birth_year, "reviews": [_review(text, rating)],
            "geocodes": [{"lat": 51.5, "lng": -0.1}]}


def _trustpilot_file(path, bad_users):
    """60 sound users (every rating, old and young) followed by ``bad_users``, as Python literal lines."""
    sound = [_user(f"u{i}", f"text {i}", "FM"[i % 2], (1950, 1990)[i % 2], str(i % 5 + 1)) for i in range(60)]
    path.write_text("".join(repr(user) + "\n" for user in [*sound, *bad_users]), encoding="utf-8")
    return path


@pytest.mark.parametrize("dataset", ["tp_us", "tp_uk"])
def test_trustpilot_surrogate_escape_and_wrong_types_are_quarantined_with_line_and_field(tmp_path, dataset):
    bad = [_user("s1", "bad \ud800 text"), _user("s2", gender=["F"]), _user(["a", "list"]), _user("s4", gender=("F",))]
    path = _trustpilot_file(tmp_path / "users.jsonl.tmp", bad)
    assert "\\ud800" in path.read_text()  # written as an escape, as the corpus would hold it
    quarantine = Quarantine(max_examples=100)
    built = get_builder(dataset)({"users": path}, load_config()[dataset], SEED, quarantine)
    assert quarantine.as_dict() == {"unencodable_text": 1, "wrong_type": 3}
    where = {(e["reason"], e["line"], e["field"]) for e in quarantine.examples}
    assert where == {("unencodable_text", 61, "text"), ("wrong_type", 62, "gender"), ("wrong_type", 63, "user_id"),
                     ("wrong_type", 64, "gender")}
    write_dataset(built, tmp_path / "out", dataset=dataset, inputs={"users": path}, seed=SEED, quarantine=quarantine)


def _patch_bios_train(raw: Path, **records_by_position) -> None:
    path = raw / "biasbios/train.pickle"
    records = pickle.loads(path.read_bytes())
    for position, record in records_by_position.items():
        records[int(position.lstrip("r"))].update(record)
    path.write_bytes(pickle.dumps(records, protocol=4))


def _build_bios(raw: Path):
    _, inputs = resolve_layout("bios", [raw])
    quarantine = Quarantine(max_examples=100)
    return get_builder("bios")(inputs, load_config()["bios"], SEED, quarantine), quarantine, inputs


def test_bios_lone_surrogates_and_wrongly_typed_fields_are_quarantined_with_index_and_field(tmp_path):
    raw = tmp_path / "raw"
    write_bios_files(raw, BIOS_ROWS, seed=1)
    _patch_bios_train(raw, r59={"hard_text": "she is \udc80 a nurse"}, r58={"g": ["f"]}, r57={"p": ["nurse"]},
                      r56={"hard_text": ["not", "a", "string"]})
    built, quarantine, inputs = _build_bios(raw)
    assert quarantine.as_dict() == {"unencodable_text": 1, "wrong_type": 3}
    where = {(e["reason"], e["index"], e["field"]) for e in quarantine.examples}
    assert where == {("unencodable_text", 59, "hard_text"), ("wrong_type", 58, "g"), ("wrong_type", 57, "p"),
                     ("wrong_type", 56, "hard_text")}
    write_dataset(built, tmp_path / "out", dataset="bios", inputs=inputs, seed=SEED, quarantine=quarantine)


SELF_SHARING_BUILD = """
import json, pickle, sys, time
from pathlib import Path
from privtext.data import Quarantine, get_builder
from privtext.data.sources import resolve_layout
from privtext.plan.config import load_config

_, inputs = resolve_layout("bios", [Path(sys.argv[1])])
quarantine = Quarantine()
start = time.perf_counter()
built = get_builder("bios")(inputs, load_config()["bios"], 10, quarantine)
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "quarantined": quarantine.as_dict(), "examples": quarantine.examples}))
"""


def test_self_sharing_pickled_tuple_is_quarantined_in_under_a_second(tmp_path):
    """A tuple holding the same sub-tuple twice, 40 levels deep: a few hundred bytes of pickle whose hash()
    (and full repr) is exponential in the depth. Run in a subprocess: hash() cannot be interrupted."""
    nested: tuple = ()
    for _ in range(40):
        nested = (nested, nested)
    assert len(pickle.dumps(nested, protocol=4)) < 300
    raw = tmp_path / "raw"
    write_bios_files(raw, BIOS_ROWS, seed=2)
    _patch_bios_train(raw, r59={"g": nested}, r58={"p": nested})
    try:
        result = subprocess.run([sys.executable, "-c", SELF_SHARING_BUILD, str(raw)], capture_output=True,
                                text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the Bios build did not finish within 60 s on a 40-deep self-sharing tuple")
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["seconds"] < 1.0
    assert report["quarantined"] == {"wrong_type": 2}
    assert {(e["index"], e["field"]) for e in report["examples"]} == {(59, "g"), (58, "p")}
    assert all(len(e["detail"]) <= 300 for e in report["examples"])


SELF_SHARING_KEY_LOAD = """
import sys, time
from privtext.data.safe_pickle import UnsafePickleError, load_data_pickle
start = time.perf_counter()
try:
    load_data_pickle(sys.argv[1])
    print("loaded")
except UnsafePickleError as error:
    print(f"refused {time.perf_counter() - start:.3f} {error}")
"""


@pytest.mark.parametrize("container", ["dict key", "set member"])
def test_pickle_hashing_a_self_sharing_tuple_while_loading_is_refused_first(tmp_path, container):
    """Loading a dict or set hashes its keys: a self-sharing tuple there must be refused before it is hashed.
    The pickle is written opcode by opcode (building such a dict here would hash the key)."""
    nested: tuple = ()
    for _ in range(40):
        nested = (nested, nested)
    tuple_opcodes = pickle.dumps(nested, protocol=2)[2:-1]  # without PROTO and STOP; memo indices from 0
    if container == "dict key":
        payload = b"\x80\x04]}" + tuple_opcodes + b"K\x01sa."  # [ {nested: 1} ]
    else:
        payload = b"\x80\x04]\x8f(" + tuple_opcodes + b"\x90a."  # [ {nested} ]
    path = tmp_path / "train.pickle"
    path.write_bytes(payload)
    try:
        result = subprocess.run([sys.executable, "-c", SELF_SHARING_KEY_LOAD, str(path)], capture_output=True,
                                text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading a pickle with a self-sharing tuple as a {container} did not finish within 60 s")
    assert result.returncode == 0, result.stderr[-3000:]
    verdict, seconds, message = result.stdout.split(" ", 2)
    assert verdict == "refused" and float(seconds) < 1.0
    assert "train.pickle" in message and "refused a tuple as a " + container in message


def test_short_repr_is_bounded_for_self_sharing_huge_and_long_values():
    from privtext.data.common import short_repr

    nested: tuple = ()
    for _ in range(60):
        nested = (nested, nested)
    shared: list = []
    for _ in range(60):
        shared = [shared, shared]
    start = time.perf_counter()
    shown = [short_repr(value) for value in (nested, shared, 10 ** 5000, b"\0" * (8 * MiB), {"k": nested})]
    assert time.perf_counter() - start < 0.5
    assert all(len(text) <= 300 for text in shown)
    assert shown[2] == "<int of 16610 bits>"


# ---------------------------------------------------------------------------------- 8. ceiling


def _built(n=40):
    frame = pd.DataFrame({"id": [f"x{i}" for i in range(n)], "y": [i % 2 for i in range(n)],
                          "z_a": [i % 3 % 2 for i in range(n)]})
    splits = {"train": frame.iloc[:20], "dev": frame.iloc[20:30], "test": frame.iloc[30:]}
    return BuiltDataset(splits={k: v.reset_index(drop=True) for k, v in splits.items()}, label_names=["a", "b"],
                        private_attributes={"a": ["no", "yes"]}, attribute_kinds={"a": "demographic"},
                        filtered={"by_design": 10})


def test_build_over_the_quarantine_ceiling_fails_naming_the_counts_and_writes_nothing(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("x")
    quarantine = Quarantine()
    for line in range(50):
        quarantine.add("unparseable_line", raw, line + 1)
    with pytest.raises(DatasetError) as error:  # the library's default ceiling is the config's, 0.1
        write_dataset(_built(), tmp_path / "out", dataset="demo", inputs={"raw": raw}, seed=1, quarantine=quarantine)
    message = str(error.value)
    assert "50 of 100 records" in message and "'unparseable_line': 50" in message and "kept 40" in message
    assert "max_quarantine_fraction 0.1" in message
    assert not (tmp_path / "out").exists()
    meta = write_dataset(_built(), tmp_path / "out", dataset="demo", inputs={"raw": raw}, seed=1,
                         quarantine=quarantine, max_quarantine_fraction=0.5)
    assert meta["quarantine_fraction"] == 0.5


def test_incomplete_reasons_are_counted_but_not_held_against_the_ceiling(tmp_path):
    raw = tmp_path / "raw.txt"
    raw.write_text("x")
    quarantine = Quarantine()
    for line in range(50):
        quarantine.add("missing_birth_year", raw, line + 1, incomplete=True)
    quarantine.add("bad_rating", raw, 99)
    meta = write_dataset(_built(), tmp_path / "out", dataset="demo", inputs={"raw": raw}, seed=1,
                         quarantine=quarantine, max_quarantine_fraction=0.1)
    assert meta["quarantined"] == {"bad_rating": 1, "missing_birth_year": 50}
    assert meta["quarantine_fraction"] == pytest.approx(1 / 101)


def test_the_default_ceiling_is_in_the_config_schema():
    assert load_config()["max_quarantine_fraction"] == 0.1
    assert load_config()["allow_unpinned_downloads"] is False


@pytest.mark.slow
def test_snakemake_build_of_a_mostly_malformed_file_fails_naming_the_counts(tmp_path):
    raw = tmp_path / "raw"
    write_trustpilot_file(raw / f"{TP_US}.tmp", 200, seed=3, country="us", defects={"unparseable_line": 120})
    config = {"datasets": ["tp_us"], "raw_dir": str(raw), "allow_download": False, "run_studies": []}
    result = run_snakemake(tmp_path / "work", config, ["results/data/tp_us/meta.json"], check=False)
    assert result.returncode != 0
    log = (tmp_path / "work/results/logs/data/tp_us.log").read_text()
    assert "max_quarantine_fraction 0.1" in log and "'unparseable_line': 120" in log
    assert not (tmp_path / "work/results/data/tp_us/meta.json").exists()


# -------------------------------------------------------------------------- 11. the data parts


def test_empty_npy_is_a_dataset_error_naming_the_file(tmp_path):
    path = tmp_path / "pos_pos.npy"
    path.write_bytes(b"")
    with pytest.raises(DatasetError, match="pos_pos.npy: empty or truncated"):
        load_vectors(path)
    np.save(path, np.ones((3, 4), dtype=np.float32))
    assert load_vectors(path).shape == (3, 4)


def test_published_csv_without_its_columns_is_an_error_naming_them():
    from privtext.report.artefacts.common import normalise_published

    published = pd.DataFrame({"paper": ["dpnr"], "table": ["table1"], "dataset": ["ag"], "metric": ["acc"],
                              "value": [90.0]})
    with pytest.raises(ValueError, match=r"lack column\(s\) \['method', 'setting', 'std'\]"):
        normalise_published(published)
    complete = published.assign(method="nonpriv", setting="", std=np.nan)
    assert normalise_published(complete)["value"].tolist() == [90.0]


def test_spacy_model_that_is_not_a_spacy_package_is_refused_without_importing_it(tmp_path, monkeypatch):
    from privtext.data.nlp_resources import ResourceError, load_spacy

    marker = tmp_path / "imported"
    (tmp_path / "not_a_model.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ResourceError, match="not a spaCy pipeline package"):
        load_spacy("not_a_model")
    for name in ("os.path", "../evil", "json"):
        with pytest.raises(ResourceError):
            load_spacy(name)
    assert not marker.exists()
    from privtext.data.nlp_resources import spacy_model_dir

    assert (spacy_model_dir(load_config()["spacy_model"]) / "config.cfg").is_file()


# --- Issue 43, item 1: no raw record stops or stalls a build ------------------------------------------------------

def _cpu_seconds(call):
    started = time.process_time()
    result = call()
    return result, time.process_time() - started


@pytest.mark.parametrize("dataset", ["tp_us", "tp_uk"])
def test_a_birth_year_of_other_digits_or_5000_digits_is_quarantined_with_its_line(tmp_path, dataset):
    bad = [_user("b1", birth_year="19²"), _user("b2", birth_year="1" * 5000), _user("b3", birth_year="١٩٨٠")]
    path = _trustpilot_file(tmp_path / "users.jsonl.tmp", bad)
    quarantine = Quarantine(max_examples=100)
    built, seconds = _cpu_seconds(lambda: get_builder(dataset)({"users": path}, load_config()[dataset], SEED,
                                                                quarantine))
    assert seconds < 1.0
    assert quarantine.as_dict() == {"bad_birth_year": 3}
    assert {(e["line"], e["field"]) for e in quarantine.examples} == {(61, "birth_year"), (62, "birth_year"),
                                                                       (63, "birth_year")}


def test_user_ids_that_collide_after_the_repeat_suffix_stay_unique(tmp_path):
    # line 61 is "dup@63"; line 63's second "dup" would be named dup@63 too
    path = _trustpilot_file(tmp_path / "users.jsonl.tmp", [_user("dup@63"), _user("dup"), _user("dup")])
    quarantine = Quarantine()
    built = get_builder("tp_us")({"users": path}, load_config()["tp_us"], SEED, quarantine)
    ids = pd.concat(built.splits.values())["id"]
    assert {"tp_us:dup@63", "tp_us:dup", "tp_us:dup@63#2"} <= set(ids) and ids.is_unique
    write_dataset(built, tmp_path / "out", dataset="tp_us", inputs={"users": path}, seed=SEED, quarantine=quarantine)


def test_a_value_error_no_check_foresaw_costs_its_record_with_its_line(tmp_path, monkeypatch):
    import pygeohash

    encode = pygeohash.encode

    def encode_or_fail(lat, lng, precision=12):
        if lat == 12.5:
            raise ValueError("a geocode the library refuses")
        return encode(lat, lng, precision=precision)

    monkeypatch.setattr(pygeohash, "encode", encode_or_fail)
    odd = {**_user("odd"), "geocodes": [{"lat": 12.5, "lng": 1.0}]}
    path = _trustpilot_file(tmp_path / "users.jsonl.tmp", [odd])
    quarantine = Quarantine()
    get_builder("tp_uk")({"users": path}, load_config()["tp_uk"], SEED, quarantine)
    assert quarantine.as_dict() == {"unexpected_value": 1}
    assert quarantine.examples[0]["line"] == 61 and "refuses" in quarantine.examples[0]["detail"]


@pytest.mark.parametrize("count_line", ["19²", "1" * 5000])
def test_a_celeba_count_line_that_is_not_ascii_digits_fails_naming_file_and_line(tmp_path, count_line):
    from privtext.data.tabular import read_celeba

    names = [f"Attr_{i}" for i in range(40)]
    names[20], names[31] = "Male", "Smiling"
    path = tmp_path / "list_attr_celeba.txt"
    path.write_text("\n".join([count_line, " ".join(names), "000001.jpg " + " ".join(["1"] * 40)]) + "\n")
    with pytest.raises(DatasetError, match=r"list_attr_celeba\.txt: line 1 "):
        read_celeba(path, Quarantine())


def _newsspace(*records: bytes) -> bytes:
    return b'<?xml version="1.0"?>\n<all_news>\n' + b"\n".join(records) + b"\n</all_news>\n"


GOOD_NEWS = [b"<source>AP</source><title>Chips %d</title><category>Business</category><description>Sales"
             b"</description>" % i for i in range(3)]


def test_an_ag_text_past_the_length_cap_is_quarantined_before_ner(tmp_path):
    from privtext.data.ag import MAX_TEXT_CHARS

    huge = b"<source>AP</source><title>Long</title><category>World</category><description>" + b"word " * 200_000 \
        + b"</description>"
    path = tmp_path / "newsspace200.xml"
    path.write_bytes(_newsspace(GOOD_NEWS[0], huge, GOOD_NEWS[1]))
    quarantine = Quarantine()
    documents = read_ag_documents({"newsspace": path}, quarantine)
    assert 1_000_000 <= len(b"word " * 200_000) and MAX_TEXT_CHARS < 1_000_000  # spaCy's E088 limit
    assert quarantine.as_dict() == {"text_too_long": 1} and quarantine.examples[0]["line"] == 4
    assert documents["text"].str.len().max() <= MAX_TEXT_CHARS and len(documents) == 2


@pytest.mark.parametrize("tags", [8_000, 16_000])
def test_unclosed_ag_tags_are_found_in_linear_time(tmp_path, tags):
    bomb = b"<source>AP</source><title>t</title>" + b"<category>" * tags + b"<description>d</description>"
    path = tmp_path / "newsspace200.xml"
    path.write_bytes(_newsspace(GOOD_NEWS[0], bomb, GOOD_NEWS[1], GOOD_NEWS[2]))
    quarantine = Quarantine()
    documents, seconds = _cpu_seconds(lambda: read_ag_documents({"newsspace": path}, quarantine))
    assert seconds < 1.0  # 2.8 s for 8,000 tags, x4 per doubling, with the lazy regex
    assert quarantine.as_dict() == {"newsspace_unclosed_field": 1} and len(documents) == 3


def test_a_blog_member_name_that_is_not_utf8_is_quarantined(tmp_path):
    import tarfile

    from privtext.data.blog import read_candidates

    post = b"<Blog>\n<post>\nfootball goal match team score league\n</post>\n</Blog>\n"
    path = tmp_path / "blogs.tar"
    with tarfile.open(path, "w", encoding="utf-8", errors="surrogateescape") as archive:
        for name in ("1001.male.15.Student.Aries.xml", "1002.male.16.Arts\udcff.Leo.xml"):  # byte 0xFF
            info = tarfile.TarInfo(f"blogs/{name}")
            info.size = len(post)
            archive.addfile(info, io.BytesIO(post))
    assert b"Arts\xff.Leo" in path.read_bytes()
    quarantine = Quarantine()
    candidates, _, _ = read_candidates(path, quarantine)
    assert quarantine.as_dict() == {"undecodable_file_name": 1}
    assert "\\udcff" in quarantine.examples[0]["detail"] and quarantine.examples[0]["file"] == "blogs.tar"
    assert len(candidates) == 1
    json.dumps(quarantine.examples, ensure_ascii=False).encode("utf-8")  # writable as the build writes it


# --- Issue 43, item 4: local archives are decompressed under the downloads' cap ------------------------------------

def test_a_local_celeba_gzip_that_inflates_past_the_cap_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    import gzip

    from privtext.data import tabular
    from privtext.data.sources import DEFAULT_MAX_OUTPUT_BYTES

    assert tabular.DEFAULT_MAX_OUTPUT_BYTES is DEFAULT_MAX_OUTPUT_BYTES  # one cap for downloads and local files
    path = tmp_path / "list_attr_celeba.txt.gz"
    path.write_bytes(gzip.compress(b"0" * (4 * MiB)))  # 4 KiB that inflate a thousandfold
    monkeypatch.setattr(tabular, "DEFAULT_MAX_OUTPUT_BYTES", MiB)
    with pytest.raises(DatasetError, match=r"list_attr_celeba\.txt\.gz: decompresses to more than the cap"):
        tabular.read_text(path)
    monkeypatch.setattr(tabular, "DEFAULT_MAX_OUTPUT_BYTES", 8 * MiB)
    assert len(tabular.read_text(path)) == 4 * MiB


@pytest.mark.parametrize("form", ["tar.xz", "zip", "folder"])
def test_local_blog_files_past_the_cap_are_refused_before_they_are_read(tmp_path, form):
    import tarfile

    from privtext.data.blog import iter_raw_files

    files = {f"100{i}.male.15.Student.Aries.xml": b"<Blog>\n" + b"x" * 300_000 for i in range(4)}
    if form == "folder":
        source = tmp_path / "blogs"
        source.mkdir()
        for name, data in files.items():
            (source / name).write_bytes(data)
    elif form == "zip":
        source = tmp_path / "blogs.zip"
        with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                archive.writestr(f"blogs/{name}", data)
    else:
        source = tmp_path / "blogs.tar.xz"
        with tarfile.open(source, "w:xz") as archive:
            for name, data in files.items():
                info = tarfile.TarInfo(f"blogs/{name}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    assert len(list(iter_raw_files(source, max_bytes=2 * MiB))) == 4
    read = []
    with pytest.raises(DatasetError, match=r"hold more than the cap of 1,000,000 bytes \(at '.*1003\.male"):
        for name, _ in iter_raw_files(source, max_bytes=1_000_000):
            read.append(name)
    assert len(read) == 3  # the fourth was refused before it was read
