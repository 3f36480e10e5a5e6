# Two commands matter: `make run` (the main job) and `make test` (the whole suite).
# Both create .venv with the machine's python3 when missing and install into it every Python dependency from
# requirements.lock, each pinned with its sha256 (pip's hash-checking mode), then torch==2.13.0, which the lock
# leaves out (the CPU wheel where pip finds one; elsewhere pip's choice for the machine).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.privtext-installed
LOCK := requirements.lock
SLURM_LOCK := requirements-slurm.lock
# make's path functions split their argument at spaces, so a project whose path has one ("~/my work/privtext")
# takes care: abspath sees each space as SPACE_MARK, wildcard as an escaped space, and a recipe gets each path
# as one quoted shell word.
EMPTY :=
SPACE := $(EMPTY) $(EMPTY)
SPACE_MARK := <space>
SHARED := $(subst $(SPACE_MARK),$(SPACE),$(abspath $(subst $(SPACE),$(SPACE_MARK),$(CURDIR))/../shared))
# $(call is_folder,PATH): non-empty when the folder PATH exists. $(call shell_word,TEXT): TEXT single-quoted.
is_folder = $(wildcard $(subst $(SPACE),\ ,$(1))/.)
shell_word = '$(subst ','\'',$(1))'

# Offline copies of the raw corpora and NLTK models, when they sit beside the project.
CONFIG_OVERRIDES :=
ifneq ($(call is_folder,$(SHARED)/data),)
CONFIG_OVERRIDES += $(call shell_word,data_mirror=$(SHARED)/data)
export PRIVTEXT_DATA_MIRROR := $(SHARED)/data
endif
ifneq ($(call is_folder,$(SHARED)/nltk_data),)
CONFIG_OVERRIDES += $(call shell_word,nltk_data=$(SHARED)/nltk_data)
export PRIVTEXT_NLTK_DATA := $(SHARED)/nltk_data
endif
ifneq ($(call is_folder,$(SHARED)/paper_results),)
CONFIG_OVERRIDES += $(call shell_word,published_results=$(SHARED)/paper_results/published.csv)
endif
SNAKEMAKE_CONFIG := $(if $(strip $(CONFIG_OVERRIDES)),--config $(CONFIG_OVERRIDES),)

.PHONY: run audit claims claims-finetune claims-full test test-slurm install lock dryrun lint licences format-check clean

# --no-deps everywhere: the lock is the whole list (pip check proves it), and privtext is built with the lock's
# setuptools (--no-build-isolation) rather than one fetched unpinned; torch comes last, so that its dependencies are
# the lock's and it adds only itself (plus, for a CUDA build, the CUDA packages the lock cannot know).
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --no-compile --no-deps --require-hashes -r $(LOCK)
	$(BIN)/pip install --quiet --no-compile torch==2.13.0
	$(BIN)/pip install --quiet --no-compile --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	@# pip byte-compiles one file at a time (a minute here); compileall uses every core. Jobs need the .pyc
	@# files when PYTHONDONTWRITEBYTECODE is set (as on CI). A few vendored py2 test files never compile.
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null 2>&1 || true
	touch $(STAMP)

install: $(STAMP)

# requirements.lock: pyproject.toml's dependencies and `dev` extra, resolved for CPython 3.11 as PyPI stood on
# LOCK_DATE, every file of each pinned release hashed, torch left out but resolved from its 2.13.0 CPU wheel so that
# its own dependencies are locked and no CUDA package is; requirements-slurm.lock: the `slurm` extra, held to the
# first. Regenerate both after changing a dependency, or move LOCK_DATE forward to take newer releases: make lock
# (docs/security.md, "Pinned: the packages and the NLP data"). uv comes from the lock itself (the `dev` extra).
LOCK_DATE := 2026-12-07
TORCH_WHEELS ?= $(if $(wildcard /opt/wheels/torch-2.13.0+cpu-*),/opt/wheels,https://download.pytorch.org/whl/cpu/torch/)
UV_COMPILE = $(BIN)/uv pip compile --quiet --generate-hashes --python-version 3.11 \
	--exclude-newer $(LOCK_DATE)T00:00:00Z --custom-compile-command 'make lock'
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/pip install --quiet --no-compile --no-deps --require-hashes -r $(LOCK)
	echo 'torch==2.13.0+cpu' | $(UV_COMPILE) pyproject.toml --extra dev --no-emit-package torch \
		--find-links $(TORCH_WHEELS) --constraint /dev/stdin --output-file $(LOCK)
	$(BIN)/python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['slurm'], sep='\n')" \
		| $(UV_COMPILE) - --constraint $(LOCK) --output-file $(SLURM_LOCK)

# Local runs go through a warm interpreter (privtext.runtime.warm): torch and privtext are imported once, and each
# train, attack and MDL job runs in a process forked from it, not a fresh one; and through Snakemake's command line
# without its job-rate limiter, whose timers cost a local run 0.4 of a core (workflow/local_snakemake.py;
# docs/performance.md).
WARM := $(BIN)/python -m privtext.runtime.warm --
LOCAL_SNAKEMAKE := $(BIN)/python workflow/local_snakemake.py

run: $(STAMP)
	$(WARM) $(LOCAL_SNAKEMAKE) --cores all $(SNAKEMAKE_CONFIG)

# The empirical ε audit alone (docs/audit.md, "How the audit works"; about 4 minutes on one core). run_audit=true would add it to `make run`.
audit: $(STAMP)
	$(BIN)/snakemake --cores all audit $(SNAKEMAKE_CONFIG)

# The check of each method family's seeds (docs/claims.md, "Seeds that are not normal")
SEED_SHAPE := seed_shape,seed_shape_dpnr,seed_shape_cape

# Every claim of the papers with intervals and verdicts (docs/claims.md), plus the ε audit: the claims studies (5 seeds)
# on the available datasets -> results/tables/claims.{csv,md}, results/figures/claims/verdicts.{png,pdf}.
# --config takes every word after it, so every setting follows it; CLAIMS_CONFIG adds more, e.g.
# make claims CLAIMS_CONFIG='datasets=[demo,adult]'; a setting with spaces is quoted once more, e.g. the verdicts at
# full training size: make claims CLAIMS_CONFIG="'train={max_train: null}'" (docs/claims.md, "At full size").
# The claims runs train, per dataset, only the attackers a claim reads there (privtext.claims.attackers): DPNR's
# and CAPE's `mlp`, FEDERATE's Leakage (`sklearn_mlp`). The others and word recovery, which no claim reads, were
# a quarter of make claims' job-time (docs/performance.md); `make run` and the ladder keep them.
CLAIMS_ATTACK := 'attack={attackers: claims, inversion: {attacker: null}, identification: null}'
CLAIMS_CONFIG ?=
claims: $(STAMP)
	$(WARM) $(LOCAL_SNAKEMAKE) --cores all --config $(CONFIG_OVERRIDES) 'run_studies=[claims,claims_cape,claims_federate,claims_federate_eps,claims_mu,$(SEED_SHAPE)]' run_audit=true $(CLAIMS_ATTACK) $(CLAIMS_CONFIG)

# make claims and the arm that trains the encoder through the noise, as DPNR did (study claims_finetune: D1 and D8 on
# fine-tuned runs, each on 2,000 training rows). After make claims it adds only that arm: about 7.4 CPU-hours, 3.7 h
# on 2 cores with AVX-512 and no GPU (docs/claims.md, "The fine-tuned arm"; benchmarks/paper_scale.py --studies
# claims_finetune --set 'finetune={max_train: 2000}'), minutes on one GPU (CLAIMS_CONFIG='train={device: cuda}').
CLAIMS_STUDIES := claims,claims_cape,claims_federate,claims_federate_eps,claims_mu
claims-finetune: $(STAMP)
	$(WARM) $(LOCAL_SNAKEMAKE) --cores all --config $(CONFIG_OVERRIDES) 'run_studies=[$(CLAIMS_STUDIES),$(SEED_SHAPE),claims_finetune]' \
		'claims_studies=[$(CLAIMS_STUDIES),claims_finetune]' 'finetune={max_train: 2000}' run_audit=true $(CLAIMS_ATTACK) $(CLAIMS_CONFIG)

# The claims at full size (studies claims_full and claims_full_mu: the papers' grids, 10 seeds, no training cap;
# their points' released representations are removed once measured, keep_releases: false in config.yaml):
# a cluster's job (add --profile profiles/slurm via CLAIMS_CONFIG's neighbour SNAKEMAKE_ARGS); its cost:
# .venv/bin/python benchmarks/paper_scale.py --studies claims_full claims_full_mu --set 'train={max_train: null}'
SNAKEMAKE_ARGS ?=
claims-full: $(STAMP)
	$(LOCAL_SNAKEMAKE) --cores all $(SNAKEMAKE_ARGS) --config $(CONFIG_OVERRIDES) 'run_studies=[claims_full,claims_full_mu,$(SEED_SHAPE)]' \
		'claims_studies=[claims_full,claims_full_mu]' 'train={max_train: null}' run_audit=true $(CLAIMS_ATTACK) $(CLAIMS_CONFIG)

# One paper table or figure and only what it needs (docs/reproducing.md, "One table or figure"), e.g.
# make results/figures/dpnr/figure3.png: the registry (python -m privtext.report.artefacts studies FILE) gives the
# artefact's studies, run as `make run` runs, with the file as Snakemake's only target, so no other study or
# dataset is built. Naming the studies matters: an artefact whose studies are not in run_studies gets no inputs.
# extra/* read the studies you name: make results/tables/extra/effective_epsilon.csv STUDIES=cape_main.
# ARTEFACT_CONFIG adds settings: make FILE ARTEFACT_CONFIG="'grid_shrink={seeds: 1, values: 2}' 'datasets=[demo]'".
# FORCE: an existing file is Snakemake's to judge, not make's.
STUDIES ?=
ARTEFACT_CONFIG ?=
ARTEFACT_RECIPE = studies=$$($(BIN)/python -m privtext.report.artefacts studies $(call shell_word,$@) $(call shell_word,$(STUDIES))) && \
	$(WARM) $(LOCAL_SNAKEMAKE) --cores all --config $(CONFIG_OVERRIDES) "run_studies=[$$studies]" $(ARTEFACT_CONFIG) -- $(call shell_word,$@)
.PHONY: FORCE
results/tables/%: $(STAMP) FORCE
	$(ARTEFACT_RECIPE)
results/figures/%: $(STAMP) FORCE
	$(ARTEFACT_RECIPE)

dryrun: $(STAMP)
	$(BIN)/snakemake -n $(SNAKEMAKE_CONFIG)

lint: $(STAMP)
	$(BIN)/snakemake --lint

# .ci/run's checks beyond the tests: every installed package's licence against MIT (.ci/licences.py, with its
# reviewed weak-copyleft list), and the workflow files formatted as snakefmt writes them (fix: snakefmt Snakefile rules/)
licences: $(STAMP)
	$(BIN)/python .ci/licences.py

format-check: $(STAMP)
	$(BIN)/snakefmt --check Snakefile rules/

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The grid on a real single-node SLURM cluster (root, Debian; ../shared/tools/start_local_slurm.sh installs
# and starts it): same numbers as a local run, grouping, scancel + rerun. docs/reproducing.md, "Running on a SLURM cluster".
test-slurm: $(STAMP)
	$(BIN)/pip install --quiet --no-compile --no-deps --require-hashes -r $(SLURM_LOCK)
	$(BIN)/python tests/slurm/run_slurm_check.py

clean:
	rm -rf results .snakemake report.html
