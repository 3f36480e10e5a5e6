"""docs/extending.md's recipes, followed as a new user would: a method, a dataset and an attacker are each added
to a copy of the project with exactly the steps the page gives, then the project's own checks run on the copy
(its tests, a Snakemake dry run, a real build). Nothing else of the copy is touched, so a check that needs
another hand-kept list fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import PROJECT_ROOT, SNAKEMAKE, copy_project

pytestmark = pytest.mark.slow

COPIED = ("Snakefile", "config.yaml", "pyproject.toml", "README.md", "src", "rules", "workflow", "schemas",
          "profiles", "envs", "tests")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's sources and tests; its ``src`` is imported instead of the installed one."""
    return copy_project(tmp_path / "project", COPIED)


def _environment(project: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(project / "src")}


def _run(command: list[str], project: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=_environment(project), capture_output=True, text=True)


def _pytest(project: Path, *selection: str) -> None:
    result = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection], project, project)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]


def _snakemake(project: Path, workdir: Path, config: dict, *extra: str) -> subprocess.CompletedProcess:
    """The copy's Snakefile in ``workdir``, its config.yaml overridden by ``config``."""
    workdir.mkdir(parents=True, exist_ok=True)
    configfile = workdir / "test-config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    command = [str(SNAKEMAKE), "--snakefile", str(project / "Snakefile"), "--directory", str(workdir),
               "--configfile", str(configfile), "--cores", "1", "--workflow-profile", "none", *extra]
    return _run(command, project, workdir)


def _study(datasets: str, methods: dict) -> dict:
    """Config keys that run one study, seed 10, of ``methods`` on ``datasets`` (a name, or ``auto``)."""
    study = {"datasets": datasets if datasets == "auto" else [datasets], "seeds": [10], "artefacts": False,
             "methods": methods}
    return {"run_studies": ["recipe"], "studies": {"recipe": study}}


def _succeeded(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    return result.stdout


def _add_entry(path: Path, opening: str, line: str) -> None:
    """Add ``line`` as the last entry of the literal that starts with ``opening`` (a registry)."""
    text = path.read_text()
    start = text.index(opening)
    closing = re.compile(r"^[)\]}]", flags=re.M).search(text, start)
    path.write_text(text[:closing.start()] + f"    {line}\n" + text[closing.start():])


# --- a method -----------------------------------------------------------------------------------------------

def _extending_example(marker: str) -> str:
    """The python block of docs/extending.md whose first line is the comment ``marker`` (a file's path)."""
    page = (PROJECT_ROOT / "docs/extending.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S) if b.startswith(marker + "\n")]
    assert len(blocks) == 1, f"docs/extending.md has no single python block starting with {marker!r}"
    return blocks[0][len(marker) + 1:]


def test_a_new_method_is_one_spec_module_and_one_registry_line(project, tmp_path):
    # "A method is a spec module plus one line in METHODS": no label, colour or marker, no other list.
    # docs/extending.md's worked example, as written: the module, then its line in the registry.
    assert not (project / "src/privtext/methods/dpnr_l1.py").exists()
    (project / "src/privtext/methods/dpnr_l1.py").write_text(_extending_example("# src/privtext/methods/dpnr_l1.py"))
    assert 'Then add `"dpnr_l1",` to the `_specs(...)` call' in (PROJECT_ROOT / "docs/extending.md").read_text()
    _add_entry(project / "src/privtext/methods/__init__.py", "METHODS: dict[str, MethodSpec] = _specs(", '"dpnr_l1",')

    # The registry's checks: the method trains and releases, its spec is well-formed, and every table and
    # figure has a label, colour and marker for it that no other method has.
    _pytest(project, "tests/test_methods.py", "-k", "dpnr_l1 or grid_params")
    _pytest(project, "tests/test_artefacts.py::test_every_registered_method_has_a_label_a_colour_a_marker_and_a_place")
    styles = _run([sys.executable, "-c", "import json; from privtext.report.artefacts.common import METHOD_STYLES as s; "
                   "print(json.dumps([s['dpnr_l1'].label, list(s)[-1]]))"], project, project)
    assert json.loads(_succeeded(styles)) == ["dpnr_l1", "dpnr_l1"]  # its name, and its place in the registry

    # A study can sweep it and the config can override its defaults.
    planned = _succeeded(_snakemake(project, tmp_path / "work", {
        "datasets": ["demo"], "methods": {"dpnr_l1": {"lr": 1e-4}}, **_study("demo", {"dpnr_l1": {"epsilon": [1, 8]}})},
        "-n"))
    for epsilon in (1, 8):
        assert f"results/runs/demo/minilm/dpnr_l1/mu~0/epsilon~{epsilon}/seed~10/metrics.json" in planned


# --- a dataset ----------------------------------------------------------------------------------------------

SYNTHETIC_BUILDER = '''"""``coins``: each text names a coin's side (the label) and the writer's hand (the private attribute)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from privtext.data.common import BuiltDataset, Quarantine, split_frame

SIDES = {"heads": ["crown", "portrait", "face"], "tails": ["eagle", "shield", "value"]}
HANDS = {"left": ["southpaw", "leftward"], "right": ["dexter", "rightward"]}
FILLER = ["the", "coin", "landed", "on", "a", "table", "again", "today"]


def build(inputs: Mapping, options: Mapping[str, Any], seed: int, quarantine: Quarantine) -> BuiltDataset:
    rng = np.random.default_rng(seed)
    n = int(options.get("n_examples", 300))
    y, hand = rng.integers(2, size=n), rng.integers(2, size=n)
    texts = [" ".join(rng.permutation([*rng.choice(list(SIDES.values())[label], 3),
                                       *rng.choice(list(HANDS.values())[h], 2), *rng.choice(FILLER, 5)]))
             for label, h in zip(y, hand)]
    frame = pd.DataFrame({"id": [f"coins-{i:05d}" for i in range(n)], "text": texts,
                          "y": y.astype("int64"), "z_hand": hand.astype("int64")})
    return BuiltDataset(splits=split_frame(frame, {"train": 0.6, "dev": 0.2, "test": 0.2}, seed),
                        label_names=list(SIDES), private_attributes={"hand": list(HANDS)},
                        attribute_kinds={"hand": "demographic"})
'''

FILE_BUILDER = '''"""``survey``: free-text answers (``answer``), whether the respondent would recommend us (the label) and
their region (the private attribute), from one CSV file."""

from __future__ import annotations

import csv
from typing import Any, Mapping

import pandas as pd

from privtext.data.common import BuiltDataset, Quarantine, split_frame

LABELS = ["no", "yes"]
REGIONS = ["north", "south"]


def build(inputs: Mapping, options: Mapping[str, Any], seed: int, quarantine: Quarantine) -> BuiltDataset:
    rows = []
    with open(inputs["answers"], newline="", encoding="utf-8") as handle:
        for line, record in enumerate(csv.DictReader(handle), start=2):
            if record["recommend"] not in LABELS or record["region"] not in REGIONS:
                quarantine.add("unknown_value", inputs["answers"], line, f"{record['recommend']!r}, {record['region']!r}")
                continue
            rows.append({"id": f"survey-{line:05d}", "text": record["answer"],
                         "y": LABELS.index(record["recommend"]), "z_region": REGIONS.index(record["region"])})
    frame = pd.DataFrame(rows).astype({"y": "int64", "z_region": "int64"})
    return BuiltDataset(splits=split_frame(frame, {"train": 0.6, "dev": 0.2, "test": 0.2}, seed),
                        label_names=LABELS, private_attributes={"region": REGIONS},
                        attribute_kinds={"region": "demographic"})
'''


def _add_attribute_names(project: Path, line: str) -> None:
    """Step 4: the dataset's private attribute names."""
    _add_entry(project / "src/privtext/data/attributes.py", "FIXED_NAMES: dict[str, tuple[str, ...]] = {", line)


# The project's own checks over every dataset of the registry, run on the extended copy.
DATASET_CHECKS = ("tests/test_baselines.py", "tests/test_claims_attackers.py",
                  "tests/test_hardening_config.py::test_registry_names_match_the_name_pattern_that_wildcards_and_schema_use")


def test_a_new_synthetic_dataset_is_one_builder_and_one_registry_line(project, tmp_path):
    # Steps 1, 2 and 4; a synthetic dataset has no raw-file layout (step 3), and its options block is optional
    # (step 5).
    (project / "src/privtext/data/coins.py").write_text(SYNTHETIC_BUILDER)
    _add_entry(project / "src/privtext/data/__init__.py", "BUILDERS: dict[str, str] = {", '"coins": "privtext.data.coins:build",')
    _add_attribute_names(project, '"coins": ("hand",),')
    _pytest(project, *DATASET_CHECKS)

    # Every dataset is available (datasets: auto), so a plain dry run builds it and a study on `auto` trains on it...
    assert "results/data/coins/meta.json" in _succeeded(_snakemake(project, tmp_path / "work", {}, "-n"))
    every_dataset = _study("auto", {"nonpriv": {}})
    planned = _succeeded(_snakemake(project, tmp_path / "work", every_dataset, "-n"))
    assert "results/runs/coins/minilm/nonpriv/mu~0/seed~10/metrics.json" in planned
    # ...and its build job writes a dataset that passes the contract's checks.
    _succeeded(_snakemake(project, tmp_path / "work", every_dataset, "results/data/coins/meta.json"))
    meta = json.loads((tmp_path / "work/results/data/coins/meta.json").read_text())
    assert meta["private_attributes"] == {"hand": ["left", "right"]} and sum(meta["splits"].values()) == 300


def test_a_new_dataset_with_raw_files_says_which_file_is_missing_and_builds_once_it_is_there(project, tmp_path):
    (project / "src/privtext/data/survey.py").write_text(FILE_BUILDER)
    _add_entry(project / "src/privtext/data/__init__.py", "BUILDERS: dict[str, str] = {", '"survey": "privtext.data.survey:build",')
    # Step 3: its raw-file layout (role -> path under raw_dir or data_mirror); it has no download.
    _add_entry(project / "src/privtext/data/sources.py", "LAYOUTS: dict[str, list[Layout]] = {",
               '"survey": [Layout("csv", {"answers": "survey/answers.csv"})],')
    _add_attribute_names(project, '"survey": ("region",),')
    _pytest(project, *DATASET_CHECKS)
    raw_dir = tmp_path / "raw"
    config = {"datasets": ["survey"], "raw_dir": str(raw_dir), **_study("survey", {"nonpriv": {}})}

    refused = _snakemake(project, tmp_path / "work", config, "-n")
    assert refused.returncode != 0
    assert "survey/answers.csv" in refused.stdout + refused.stderr
    assert "KeyError" not in refused.stdout + refused.stderr

    (raw_dir / "survey").mkdir(parents=True)
    lines = ["answer,recommend,region"] + [
        f"{'great service' if i % 2 else 'slow and rude'} {'up the hill' if i % 3 else 'by the sea'},"
        f"{'yes' if i % 2 else 'no'},{'north' if i % 3 else 'south'}" for i in range(120)] + ["fine,maybe,north"]
    (raw_dir / "survey/answers.csv").write_text("\n".join(lines) + "\n")
    assert "results/data/survey/meta.json" in _succeeded(_snakemake(project, tmp_path / "work", config, "-n"))
    _succeeded(_snakemake(project, tmp_path / "work", config, "results/data/survey/meta.json"))
    meta = json.loads((tmp_path / "work/results/data/survey/meta.json").read_text())
    assert sum(meta["splits"].values()) == 120 and meta["quarantined"] == {"unknown_value": 1}


# --- an attacker --------------------------------------------------------------------------------------------

ATTACKER_CLASS = '''
@dataclass
class CentroidAttacker:
    """Nearest class mean on standardised coordinates, used only where it beats the majority class on dev."""

    fit_split: str = field(default="train", init=False)
    select_split: str | None = field(default="dev", init=False)

    def fit_predict(self, data: AttackData, seed: int) -> tuple[np.ndarray, dict[str, Any]]:
        scaler = Standardiser().fit(data.X_fit)
        classes = np.unique(data.y_fit)
        X_fit = scaler.transform(data.X_fit)
        centroids = np.stack([X_fit[data.y_fit == c].mean(axis=0) for c in classes])

        def nearest(X: np.ndarray) -> np.ndarray:
            return classes[((scaler.transform(X)[:, None, :] - centroids[None]) ** 2).sum(axis=2).argmin(axis=1)]

        majority = classes[np.argmax([(data.y_fit == c).sum() for c in classes])]
        centroid_dev = float(np.mean(nearest(data.X_select) == data.y_select))
        majority_dev = float(np.mean(data.y_select == majority))
        if centroid_dev > majority_dev:
            return nearest(data.X_test), {"chosen": "centroids", "selection_accuracy": centroid_dev}
        return np.full(len(data.X_test), majority), {"chosen": "majority class", "selection_accuracy": majority_dev}

    def config(self) -> dict[str, Any]:
        return {"kind": "nearest class mean, standardised", "selection": "centroids or the majority class, on dev"}

'''


def test_a_new_attacker_is_a_class_a_registry_entry_and_a_schema_value(project, tmp_path):
    attackers = project / "src/privtext/attack/attackers.py"
    text = attackers.read_text()
    registry = re.search(r"^ATTACKERS = \{", text, flags=re.M)
    attackers.write_text(text[:registry.start()] + ATTACKER_CLASS.lstrip("\n") + "\n" + text[registry.start():])
    attackers.write_text(attackers.read_text().replace("ATTACKERS = {", 'ATTACKERS = {"centroid": CentroidAttacker, ', 1))
    schema_path = project / "schemas/config.schema.yaml"
    schema = yaml.safe_load(schema_path.read_text())
    schema["properties"]["attack"]["properties"]["attackers"]["items"]["enum"].append("centroid")
    schema_path.write_text(yaml.safe_dump(schema, allow_unicode=True, sort_keys=False))

    # The attacker tests hold every registered attacker to their bounds (docs/extending.md, "An attacker").
    _pytest(project, "tests/test_attackers.py")
    config = {"datasets": ["demo"], "demo": {"n_examples": 400}, "attack": {"attackers": ["centroid", "linear"]},
              **_study("demo", {"nonpriv": {}})}
    planned = _succeeded(_snakemake(project, tmp_path / "work", config, "-n"))
    assert "results/runs/demo/minilm/nonpriv/mu~0/seed~10/attack.json" in planned
    # run, the new attacker is in runs.csv and in the study's attack ladder
    _succeeded(_snakemake(project, tmp_path / "work", config))
    runs = pd.read_csv(tmp_path / "work/results/tables/studies/recipe/runs.csv")
    assert set(runs["attacker"]) == {"centroid", "linear"}
    ladder = pd.read_csv(tmp_path / "work/results/tables/studies/recipe/ladder/demo.csv")
    defended = ladder[ladder["method"] != "frozen"]  # the frozen-feature rung has word recovery only
    assert len(defended) == 1 and defended[["centroid_accuracy", "linear_accuracy"]].notna().all().all()


# --- a privacy layer ----------------------------------------------------------------------------------------

LAYER_FUNCTION = '''

def l2_normalise(v: torch.Tensor) -> torch.Tensor:
    norm = v.norm(dim=-1, keepdim=True)
    return v / torch.where(norm <= 0, torch.ones_like(norm), norm)

'''


def test_a_new_privacy_layer_is_one_function_and_one_registry_line_and_its_audit_checks_it(project):
    layers = project / "src/privtext/privacy/layers.py"
    text = layers.read_text()
    marker = "\n\nINDEPENDENT, PER_EXAMPLE_SCALAR, PER_MODEL_VECTOR"
    layers.write_text(text.replace(marker, LAYER_FUNCTION.rstrip("\n") + marker, 1))
    right = '"l2": LayerKind(l2_normalise, lambda dim: 2 * math.sqrt(dim), lambda dim: 2 * math.sqrt(dim)),'
    _add_entry(layers, "LAYER_KINDS: dict[str, LayerKind] = {", right)
    options = project / "src/privtext/methods/options.py"
    options.write_text(options.read_text().replace('LAYER_NAMES = ("minmax",', 'LAYER_NAMES = ("l2", "minmax",', 1))

    checks = ("tests/test_privacy.py",
              "tests/test_audit.py::test_every_registered_layer_holds_its_epsilon_on_its_searched_pair",
              "tests/test_hardening_config.py::test_setting_names_agree_with_what_the_job_accepts")
    _pytest(project, *checks)  # the checks cover the new layer (their parameters name it)
    collected = _run([sys.executable, "-m", "pytest", "--collect-only", "-q", *checks[:2]], project, project).stdout
    assert "[l2]" in collected

    # stated as FEDERATE's code does (sensitivity 2 for unit-L2 vectors): both checks must fail on it
    wrong = right.replace("lambda dim: 2 * math.sqrt(dim)", "lambda dim: 2.0")
    layers.write_text(layers.read_text().replace(right, wrong))
    for check in checks[:2]:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", check, "-k", "l2"]
        result = _run(command, project, project)
        assert result.returncode == 1 and "failed" in result.stdout, result.stdout[-3000:]
