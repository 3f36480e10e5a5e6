"""Raw-file lookup and downloading (src/privtext/data/sources.py), offline: ``fetch`` reads local files."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import run_snakemake

from privtext.data import sources
from privtext.data.sources import Download, DownloadError, download, download_targets, resolve_layout

CONTENT = b"39, State-gov, 77516\n"


def touch(root: Path, relpath: str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    return path


def read_local(url: str) -> bytes:
    """A ``fetch`` whose urls are local paths."""
    return Path(url).read_bytes()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def source(tmp_path, monkeypatch):
    """Register ``demo/file.txt`` with a Download built by the test; returns the registering function."""

    def register(payload: bytes, **spec) -> Path:
        url = tmp_path / "served" / "payload"
        url.parent.mkdir(exist_ok=True)
        url.write_bytes(payload)
        monkeypatch.setitem(sources.DOWNLOADS, "demo/file.txt", Download(str(url), **spec))
        return tmp_path / "raw" / "demo/file.txt"

    return register


# ------------------------------------------------------------------------------------------ layouts


def test_raw_dir_is_searched_before_the_mirror(tmp_path):
    raw, mirror = tmp_path / "raw", tmp_path / "mirror"
    for root in (raw, mirror):
        touch(root, "adult/adult.data")
        touch(root, "adult/adult.test")
    assert resolve_layout("adult", [raw, mirror]) == (
        "uci", {"data": raw / "adult/adult.data", "test": raw / "adult/adult.test"}
    )


def test_required_files_may_come_from_different_search_dirs(tmp_path):
    raw, mirror = tmp_path / "raw", tmp_path / "mirror"
    data, test = touch(raw, "adult/adult.data"), touch(mirror, "adult/adult.test")
    assert resolve_layout("adult", [raw, mirror]) == ("uci", {"data": data, "test": test})


def test_earlier_layout_wins_when_several_are_present(tmp_path):
    txt = touch(tmp_path, "celeba/list_attr_celeba.txt")
    touch(tmp_path, "celeba/list_attr_celeba.txt.gz")
    assert resolve_layout("celeba", [tmp_path]) == ("txt", {"attributes": txt})


def test_optional_files_are_added_only_when_present(tmp_path):
    test_csv = touch(tmp_path, "ag/ag_news_csv/test.csv")
    assert resolve_layout("ag", [tmp_path]) == ("ag_news_csv", {"csv_test": test_csv})
    train_csv = touch(tmp_path, "ag/ag_news_csv/train.csv")
    assert resolve_layout("ag", [tmp_path]) == ("ag_news_csv", {"csv_test": test_csv, "csv_train": train_csv})


def test_prefer_restricts_the_search_to_one_layout(tmp_path):
    touch(tmp_path, "ag/newsspace200.xml")
    touch(tmp_path, "ag/ag_news_csv/test.csv")
    assert resolve_layout("ag", [tmp_path])[0] == "newsspace"
    assert resolve_layout("ag", [tmp_path], prefer="ag_news_csv")[0] == "ag_news_csv"


def test_missing_inputs_resolve_to_none_and_download_targets_lie_under_raw_dir(tmp_path):
    assert resolve_layout("adult", [tmp_path / "raw", None]) is None
    assert download_targets("adult", tmp_path / "raw") == {
        "data": tmp_path / "raw/adult/adult.data", "test": tmp_path / "raw/adult/adult.test"
    }


# --------------------------------------------------------------------------------------------- download


def test_download_with_matching_pin_writes_the_file_and_its_source_record(source):
    target = source(CONTENT, sha256=sha256(CONTENT))
    download("demo/file.txt", target, allowed=True, fetch=read_local)
    assert target.read_bytes() == CONTENT
    record = json.loads(Path(f"{target}.source.json").read_text())
    assert (record["sha256"], record["pinned"]) == (sha256(CONTENT), True)


def test_download_with_mismatching_pin_raises_and_writes_nothing(source):
    target = source(CONTENT, sha256="0" * 64)
    with pytest.raises(DownloadError, match="expected 0000"):
        download("demo/file.txt", target, allowed=True, fetch=read_local)
    assert not target.exists()


def test_unpinned_download_records_the_hash_of_what_was_fetched(source):
    target = source(CONTENT)
    record = download("demo/file.txt", target, allowed=True, allow_unpinned=True, fetch=read_local)
    assert (record["sha256"], record["pinned"]) == (sha256(CONTENT), False)


def test_download_extracts_a_member_of_a_tar_gz(source):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("pack/file.txt")
        info.size = len(CONTENT)
        archive.addfile(info, io.BytesIO(CONTENT))
    # The pin is on the bytes fetched (the archive), checked before it is unpacked.
    target = source(buffer.getvalue(), member="pack/file.txt", sha256=sha256(buffer.getvalue()))
    download("demo/file.txt", target, allowed=True, fetch=read_local)
    assert target.read_bytes() == CONTENT


def test_download_extracts_a_member_of_a_zip(source):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("pack/file.txt", CONTENT)
    target = source(buffer.getvalue(), member="pack/file.txt", sha256=sha256(buffer.getvalue()))
    download("demo/file.txt", target, allowed=True, fetch=read_local)
    assert target.read_bytes() == CONTENT


def test_download_not_allowed_names_the_file_and_where_to_put_it(tmp_path):
    target = tmp_path / "raw/adult/adult.data"
    with pytest.raises(DownloadError) as error:
        download("adult/adult.data", target, allowed=False, fetch=read_local)
    assert "allow_download is false" in str(error.value) and f"place 'adult.data' at '{target}'" in str(error.value)


def test_failed_fetch_says_how_to_work_offline(tmp_path):
    target = tmp_path / "raw/adult/adult.data"
    with pytest.raises(DownloadError, match="to work offline, place 'adult.data'"):
        download("adult/adult.data", target, allowed=True, fetch=lambda url: read_local("/nonexistent/adult"))


def test_celeba_has_no_download_url_and_asks_for_the_file_by_hand(tmp_path):
    target = tmp_path / "raw/celeba/list_attr_celeba.txt"
    with pytest.raises(DownloadError, match="download it by hand") as error:
        download("celeba/list_attr_celeba.txt", target, allowed=True, fetch=read_local)
    assert f"place 'list_attr_celeba.txt' at '{target}'" in str(error.value)


@pytest.mark.slow
def test_pinned_adult_download_accepts_the_mirror_copy(data_mirror, tmp_path):
    mirror_copy = data_mirror / "adult/adult.data"
    target = tmp_path / "raw/adult/adult.data"
    record = download("adult/adult.data", target, allowed=True, fetch=lambda url: mirror_copy.read_bytes())
    assert record["pinned"] and target.read_bytes() == mirror_copy.read_bytes()


@pytest.mark.slow
def test_workflow_without_inputs_or_downloads_fails_saying_where_to_place_files(tmp_path):
    raw_dir = tmp_path / "raw"
    result = run_snakemake(
        tmp_path / "work", {"datasets": ["adult"], "raw_dir": str(raw_dir), "allow_download": False}, check=False
    )
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert f"place 'adult.data' at '{raw_dir / 'adult/adult.data'}'" in output
