"""Project wiring: the conda env mirrors pyproject, the workflow lints clean, the default dry run plans jobs."""

import re
import subprocess
import tomllib

import yaml

from conftest import DATA_MIRROR, PROJECT_ROOT, SNAKEMAKE, run_snakemake


def _names(requirements):
    return {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_conda_env_lists_the_same_packages_as_pyproject():
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((PROJECT_ROOT / "envs" / "privtext.yaml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    pinned = [r for r in pip_section if not r.startswith("-")]
    # the SLURM executor plugin too: a conda user submits from this environment
    assert _names(pinned) == _names(project["dependencies"] + project["optional-dependencies"]["slurm"])


def test_every_rule_uses_the_project_conda_env_and_has_a_log():
    for smk in (PROJECT_ROOT / "rules").glob("*.smk"):
        text = smk.read_text()
        rules = re.findall(r"^rule (\w+):", text, flags=re.M)
        for rule in rules:
            body = text.split(f"rule {rule}:", 1)[1].split("\nrule ", 1)[0]
            for directive in ("log:", "threads:", "resources:", 'conda:\n        "../envs/privtext.yaml"'):
                assert directive in body, f"rule {rule} in {smk.name} lacks {directive!r}"


def test_workflow_lints_clean():
    result = subprocess.run([str(SNAKEMAKE), "--lint"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert "Congratulations, your workflow is in a good condition" in result.stdout + result.stderr, result.stdout


def test_default_dry_run_lists_data_jobs(tmp_path):
    config = {"data_mirror": str(DATA_MIRROR)} if DATA_MIRROR else {}
    result = run_snakemake(tmp_path, config, None, "-n")
    assert "build_dataset" in result.stdout
    if DATA_MIRROR:
        for dataset in ("demo", "ag_dpnr", "adult", "celeba", "blog", "ag"):
            assert f"results/data/{dataset}/meta.json" in result.stdout


def _private_names_by_module() -> dict[str, set[str]]:
    """Per module of src/privtext: the private names it defines (module level, and in its classes)."""
    import ast

    defined: dict[str, set[str]] = {}
    for path in sorted((PROJECT_ROOT / "src" / "privtext").rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
        defined[str(path.relative_to(PROJECT_ROOT))] = {n for n in names if n.startswith("_") and not n.startswith("__")}
    return defined


def test_no_module_uses_another_modules_private_names():
    """A private name (one leading underscore) defined in one module of src/privtext is not imported, nor read
    as an attribute of anything but self/cls, in another: what modules share is their public API."""
    import ast

    defined = _private_names_by_module()
    offences = []
    for module, own in defined.items():
        others = set().union(*(names for other, names in defined.items() if other != module)) - own
        tree = ast.parse((PROJECT_ROOT / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("privtext"):
                offences += [f"{module}:{node.lineno} imports {a.name}" for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
            elif (isinstance(node, ast.Attribute) and node.attr in others
                  and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                offences.append(f"{module}:{node.lineno} uses .{node.attr}")
    assert not offences, offences


def test_the_licence_is_mit_and_the_package_metadata_declares_it():
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    licence = (PROJECT_ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 privtext contributors\n")
    assert "Permission is hereby granted, free of charge" in licence
