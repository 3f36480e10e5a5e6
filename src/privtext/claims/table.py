"""The papers' claims checked one by one (docs/claims.md): per (claim, dataset, setting) a row with the paper's
sentence, how it is read, two separate answers (does it hold on our runs? do our runs match the paper's printed
numbers?), the paper's own numbers scored by the same reading, and the conditions the row was measured under.

The claims themselves are declared one file per paper (:mod:`privtext.claims.dpnr`, :mod:`~privtext.claims.cape`,
:mod:`~privtext.claims.federate`); their parts and intervals come from :mod:`privtext.claims.parts`, the verdict
from :func:`privtext.claims.verdicts.judge`.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from privtext.claims import cape, dpnr, federate
from privtext.claims.claim import HEDGES, Alternative, Claim, Variant
from privtext.claims.context import CODE_METHODS, FINE_TUNED, SETTINGS, ClaimContext
from privtext.claims.departures import Departures, derive, run_settings
from privtext.claims.inference import missing_estimate
from privtext.claims.margins import OWN_USAGE
from privtext.claims.parts import HIGHER, Part
from privtext.claims.seed_shape import LEVEL as SEED_SHAPE_LEVEL, SEEDS_NEEDED
from privtext.claims.verdicts import (ACCURACY_MARGIN, ACCURACY_MARGIN_REASON, ALPHA, MIN_SEEDS, Judgement,
                                      PartJudgement, judge, paper_reading)
from privtext.methods.spec import TRAINING_RULE
from privtext.report.artefacts.common import ArtefactInputs
from privtext.training.loop import CONVERGENCE_EPOCHS, CONVERGENCE_RULE

CLAIMS: dict[str, Claim] = {c.id: c for c in (*dpnr.CLAIMS, *cape.CLAIMS, *federate.CLAIMS)}
PAPER_QUOTE_FILES = {"DPNR": ("dpnr.md", "dpnr.pdf-text.txt", "dpnr.tex-text.txt"), "CAPE": ("cape.txt",),
                     "FEDERATE": ("federate.md",)}
# A paper's claims are judged where its methods ran (the method or an ablation of it)
PAPER_METHODS = {"DPNR": ("dpnr",), "CAPE": ("cape",), "FEDERATE": ("federate", "noise")}
# What each paper did, as its text states it: a row's departures are read against it (claims/departures.py)
PROCEDURES = {"DPNR": dpnr.PROCEDURE, "CAPE": cape.PROCEDURE, "FEDERATE": federate.PROCEDURE}
COLUMNS = ("claim", "reading_label", "paper", "claim_text", "quote", "source", "dataset", "dataset_kind", "setting",
           "reading", "hedge", "margin_reason", "measurement", "estimate", "ci_low", "ci_high", "df", "n_seeds", "p_value",
           "holds", "paper_value", "matches_paper", "paper_reading", "paper_reading_at_0.02", "epsilon_effective",
           "encoder", "train_rows", "attacker", "seeds", "converged", "departures", "departures_detail", "seed_check",
           "seed_stability", "reason", "parts", "per_seed", "grid_points")
PAPER_COLUMNS = ("claim", "reading_label", "dataset", "source", "reading", "paper_values", "paper_reading",
                 "paper_reading_at_0.02")


def _number(value: float) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3g}"


def _matches(part: Part) -> str:
    """Do our runs match the paper's printed difference: inside our interval, or within the margin of our
    estimate? '' where the paper printed no such difference or we have no interval."""
    est, paper = part.estimate, part.paper_value
    if not (math.isfinite(paper) and math.isfinite(est.low)):
        return ""
    near = part.reading.margin > 0 and abs(paper - est.mean) <= part.reading.margin
    return "matches" if est.low <= paper <= est.high or near else "differs"


def _known_runs(ctx: ClaimContext, runs: Sequence[str]) -> pd.DataFrame:
    """One measures row per run folder of ``runs`` (method, encoder, ε…), from an index built once per table."""
    index = ctx.inputs.cache.get("run_index")
    if index is None:
        index = ctx.inputs.measures.drop_duplicates("run_dir").set_index("run_dir")
        ctx.inputs.cache["run_index"] = index
    return index.loc[[r for r in dict.fromkeys(runs) if r in index.index]]


def _conditions(ctx: ClaimContext, parts: Sequence[Part]) -> dict[str, str]:
    runs = list(dict.fromkeys(r for p in parts for r in p.runs))
    known = _known_runs(ctx, runs)
    dp = known[known["epsilon_effective"].notna()]
    epsilon = [f"{m}: {', '.join(f'{e:.3g}' for e in sorted(g['epsilon_effective'].unique()))}"
               for m, g in dp.groupby("method")]
    epsilon += [f"{m}: not DP (the reference code's mechanism)" for m in sorted(set(known["method"]) & CODE_METHODS)]
    epsilon = "; ".join(epsilon) if epsilon else ("no DP method" if len(known) else "")
    info = [ctx.evidence.run_info(r) for r in runs] if ctx.evidence is not None else []
    rows = sorted({(i["n_train"], i.get("n_train_available")) for i in info if i.get("n_train") is not None},
                  key=lambda pair: pair[0])
    converged = [i.get("converged") for i in info]
    seeds = sorted({s for p in parts for s in p.estimate.per_seed})
    return {
        "epsilon_effective": epsilon,
        "encoder": ", ".join(sorted(known["encoder"].dropna().unique())) if len(known) else "",
        "train_rows": ", ".join(_train_rows(*r) for r in rows) if rows else ("not recorded" if info else ""),
        "attacker": ", ".join(sorted({p.attacker for p in parts if p.attacker})) or "none",
        "seeds": ", ".join(map(str, seeds)),
        "converged": ("" if not info else "not recorded" if any(c is None for c in converged)
                      else "yes" if all(converged) else "no"),
    }


def row_departures(claim: Claim, ctx: ClaimContext, parts: Sequence[Part]) -> Departures:
    """The row's departures from the paper's procedure (:mod:`privtext.claims.departures`), derived from what
    its runs recorded: metrics.json through the evidence (without it, as in unit tests on hand-made measures,
    only what the measures table holds) and the measures index."""
    runs = list(dict.fromkeys(r for p in parts for r in p.runs))
    known = _known_runs(ctx, runs)
    settings = [run_settings(str(r), str(row["method"]), str(row.get("encoder") or ""),
                             ctx.evidence.run_info(r) if ctx.evidence is not None else None)
                for r, row in known.iterrows()]
    attackers = [p.attacker for p in parts if p.attacker and p.runs]
    return derive(PROCEDURES.get(claim.paper), ctx.dataset, claim.kind(ctx.dataset) or "the paper's", settings,
                  attackers, ctx.reads)


def _train_rows(used: int, available: int | None) -> str:
    """'10000 of 32561 (capped)' where the training cap left rows out, else '32561'."""
    return f"{used} of {available} (capped)" if available is not None and used < available else str(used)


def _per_seed(parts: Sequence[Part]) -> str:
    """Per part: the per-seed values and the interval's two variance parts, so anyone can recompute it."""
    return json.dumps([{"part": p.label, "values": {str(s): round(v, 6) for s, v in p.estimate.per_seed.items()},
                        "seed_variance": p.estimate.seed_variance, "test_variance": p.estimate.test_variance,
                        "df": p.estimate.df} for p in parts], allow_nan=True, ensure_ascii=False)


def _unconverged(ctx: ClaimContext, part: Part) -> Part:
    """A part resting on a run that did not converge, ran too few epochs for the convergence rule to tell, or
    took fewer optimiser steps than the training rule asks
    (:meth:`privtext.training.loop.TrainingSettings.required_steps`), cannot be judged: it says which."""
    if part.blocker or ctx.evidence is None:
        return part
    info = {r: ctx.evidence.run_info(r) for r in part.runs}
    short = [r for r, i in info.items()
             if i.get("required_steps") is not None and (i.get("optimizer_steps") or 0) < i["required_steps"]]
    if short:
        return dataclasses.replace(part, blocker=f"{len(short)} of its {len(part.runs)} runs took fewer optimiser "
                                                 f"steps than the training rule asks ({TRAINING_RULE['min_epochs']} "
                                                 f"epochs of at least {TRAINING_RULE['min_steps_per_epoch']} steps); "
                                                 "train them longer")
    stale = [r for r, i in info.items() if i.get("converged") is False]
    # Fewer epochs than the rule's two windows (and no early stop): the rule cannot tell a plateau at all, which
    # is not the same as having seen the runs still climb (DPNR's own fine-tuning schedule is 4 epochs).
    too_short = [r for r in stale
                 if info[r].get("epochs_run") is not None and info[r]["epochs_run"] < CONVERGENCE_EPOCHS]
    climbing = [r for r in stale if r not in too_short]
    reasons = []
    if too_short:
        epochs = sorted({int(info[r]["epochs_run"]) for r in too_short})
        ran = f"{epochs[0]}" if len(epochs) == 1 else f"{epochs[0]} to {epochs[-1]}"
        reasons.append(f"{len(too_short)} of its {len(part.runs)} runs ran {ran} epochs, too few for the convergence "
                       f"rule to tell ({CONVERGENCE_RULE}: it needs {CONVERGENCE_EPOCHS}); train them for at least "
                       f"{CONVERGENCE_EPOCHS} epochs")
    if climbing:
        reasons.append(f"{len(climbing)} of its {len(part.runs)} runs did not converge ({CONVERGENCE_RULE}); "
                       "train them longer")
    return dataclasses.replace(part, blocker="; ".join(reasons)) if reasons else part


SeedFamilies = Mapping[tuple[str, str], str]  # {(dataset, method): blocker, '' if clear}: family_reasons


def _families_of(ctx: ClaimContext, runs: Sequence[str]) -> list[tuple[str, str]]:
    known = _known_runs(ctx, runs)
    return sorted(set(zip(known["dataset"].astype(str), known["method"].astype(str))))


def _seed_family(ctx: ClaimContext, part: Part, families: SeedFamilies | None) -> Part:
    """A part comparing a method whose seeds the ``seed_shape`` studies found in two optima on the part's
    dataset, or could not check with enough power (``families``: :func:`privtext.claims.seed_shape.family_reasons`),
    cannot be judged on fewer seeds than that needs."""
    if part.blocker or not families or part.estimate.n_seeds >= SEEDS_NEEDED:
        return part
    blockers = [families[key] for key in _families_of(ctx, part.runs) if families.get(key)]
    return dataclasses.replace(part, blocker="; ".join(blockers)) if blockers else part


def _seed_check(ctx: ClaimContext, parts: Sequence[Part], families: SeedFamilies | None) -> str:
    """What the seed_shape studies say of the families a row compares: blocked, not checked on this dataset, or
    checked with one optimum found."""
    if families is None:
        return "not run (studies seed_shape*): the intervals assume seeds around one optimum"
    compared = _families_of(ctx, [r for p in parts for r in p.runs])
    blocked = [m for d, m in compared if families.get((d, m))]
    unchecked = [m for d, m in compared if (d, m) not in families]
    found = []
    if blocked:
        found.append(f"second optimum or too little power: {', '.join(blocked)}")
    if unchecked:
        found.append(f"not checked on {ctx.dataset}: {', '.join(unchecked)}")
    return "; ".join(found) or "no second optimum found in seed_shape"


def judge_parts(parts: Sequence[Part], hedge: str, min_seeds: int = MIN_SEEDS,
                shape_level: float = SEED_SHAPE_LEVEL) -> Judgement:
    """The verdict on a claim's parts: the hedged ones need ``HEDGES[hedge]`` of them to hold, every other part
    must hold. Two families are judged at ``ALPHA / 2`` each (Bonferroni), so a contradiction in either keeps
    the claim's family-wise error; "holds" needs both (an intersection–union test)."""
    families = [[i for i, p in enumerate(parts) if p.hedged == flag] for flag in (False, True)]
    families = [f for f in families if f]
    alpha = ALPHA / len(families)
    judged: dict[int, PartJudgement] = {}
    verdicts, reasons = [], []
    for family in families:
        members = [parts[i] for i in family]
        need = HEDGES[hedge](len(members)) if members[0].hedged else None
        result = judge([(p.label, p.reading, p.estimate, p.blocker) for p in members], alpha, min_seeds, need,
                       shape_level)
        judged.update(zip(family, result.parts))
        verdicts.append(result.outcome)
        reasons.append(result.reason)
    if "contradicted" in verdicts:
        overall = "contradicted"
    elif all(v == "holds" for v in verdicts):
        overall = "holds"
    elif "untestable" in verdicts:
        overall = "untestable"
    else:
        overall = "not shown"
    reason = "; ".join(r for r, v in zip(reasons, verdicts) if v == overall)
    return Judgement(overall, reason, tuple(judged[i] for i in range(len(parts))))


def seed_stability(parts: Sequence[Part], hedge: str, outcome: str) -> str:
    """Leave-one-seed-out: does the verdict ``outcome`` stay when any one seed is left out of every part? Each
    such judgement uses the seeds left, by the same rule but for the 5-seed minimum (lowered by one) and the
    seed-shape check (at 4 seeds it tests nothing the row's own check did not, and a Spearman ρ's few discrete
    values split into two "groups" by chance). '' for an untestable row; else 'stable (…)' or, per seed that
    moves it, the verdict without it."""
    seeds = sorted({s for p in parts if p.on_seeds is not None and not p.blocker for s in p.estimate.per_seed})
    if outcome == "untestable" or len(seeds) < 3:
        return ""
    moved = []
    for left_out in seeds:
        kept = [s for s in seeds if s != left_out]
        reduced = [dataclasses.replace(p, estimate=p.on_seeds(kept)) if p.on_seeds is not None and not p.blocker
                   else p for p in parts]
        without = judge_parts(reduced, hedge, min_seeds=min(MIN_SEEDS, len(kept)), shape_level=0.0).outcome
        if without != outcome:
            moved.append(f"without seed {left_out}: {without}")
    return "; ".join(moved) if moved else f"stable (each of {len(seeds)} seeds left out in turn)"


def _paper_reading(parts: Sequence[Part], hedge: str, at_conventional: bool = False) -> str:
    """The paper's printed differences scored by the parts' readings (hedges as in :func:`judge_parts`);
    ``at_conventional``: with every margin the paper's own usage set replaced by the conventional 0.02."""
    if at_conventional:
        if not any(p.reading.margin_reason.startswith(OWN_USAGE) for p in parts):
            return ""
        parts = [dataclasses.replace(p, reading=dataclasses.replace(
            p.reading, margin=ACCURACY_MARGIN, margin_reason=ACCURACY_MARGIN_REASON))
            if p.reading.margin_reason.startswith(OWN_USAGE) else p for p in parts]
    texts = []
    for flag in (False, True):
        members = [p for p in parts if p.hedged == flag]
        if members:
            need = HEDGES[hedge](len(members)) if flag else None
            texts.append(paper_reading([(p.label, p.reading, p.paper_value) for p in members], need))
    failing = [t for t in texts if t.startswith("does not meet")]
    if failing:
        return "; ".join(failing)
    if all(t == "not printed" for t in texts):
        return "not printed"
    return "; ".join(t for t in texts if t != "not printed")


def _row(claim: Claim, sentence: Claim | Variant, ctx: ClaimContext, parts: list[Part], note: str = "",
         families: SeedFamilies | None = None, label: str = "",
         how: Claim | Variant | Alternative | None = None) -> dict[str, Any]:
    """One row: ``sentence`` gives the quote and source, ``how`` (default: the sentence) the hedge; ``label``
    names the reading where the sentence has several (:class:`~privtext.claims.claim.Alternative`)."""
    how = how or sentence
    if label:
        note = f"Reading '{label}' (one of {len(claim.alternatives)}, each its own row)." + (f" {note}" if note else "")
    if not parts:
        parts = [Part("no measurement", HIGHER, missing_estimate(),
                      blocker="the dataset has none of the attributes this claim is about")]
    parts = [_seed_family(ctx, _unconverged(ctx, p), families) for p in parts]
    judgement = judge_parts(parts, how.hedge)
    index = next((i for i, j in enumerate(judgement.parts) if j.outcome == judgement.outcome), 0)
    deciding, decided = parts[index], judgement.parts[index]
    p_value = decided.p_opposite if judgement.outcome == "contradicted" else decided.p_holds
    matches = [(p.label, _matches(p)) for p in parts]
    differing = [label for label, m in matches if m == "differs"]
    summary = "; ".join(f"{p.label}: {_number(p.estimate.mean) or 'n/a'} [{_number(p.estimate.low)}, "
                        f"{_number(p.estimate.high)}] → {j.outcome}" for p, j in zip(parts, judgement.parts))
    kind = claim.kind(ctx.dataset) or "the paper's"
    departures = row_departures(claim, ctx, parts)
    return {
        "claim": claim.id, "reading_label": label, "paper": claim.paper, "claim_text": claim.text,
        "quote": " … ".join(f"“{q}”" for q in sentence.quote), "source": sentence.source,
        "dataset": ctx.dataset, "dataset_kind": kind, "setting": ctx.setting,
        "reading": "; ".join(f"{p.label}: {p.reading.describe()}" for p in parts),
        "hedge": how.hedge if any(p.hedged for p in parts) else "all",
        "margin_reason": "; ".join(dict.fromkeys(p.reading.margin_reason for p in parts if p.reading.margin_reason)),
        "measurement": deciding.label, "estimate": deciding.estimate.mean, "ci_low": deciding.estimate.low,
        "ci_high": deciding.estimate.high, "df": deciding.estimate.df, "n_seeds": deciding.estimate.n_seeds,
        "p_value": p_value, "holds": judgement.outcome, "paper_value": deciding.paper_value,
        "matches_paper": ("differs: " + "; ".join(differing) if differing
                          else "matches" if any(m == "matches" for _, m in matches) else ""),
        "paper_reading": _paper_reading(parts, how.hedge),
        "paper_reading_at_0.02": _paper_reading(parts, how.hedge, at_conventional=True),
        **_conditions(ctx, parts),
        "departures": departures.text(), "departures_detail": departures.detail_text(),
        "seed_check": _seed_check(ctx, parts, families) if any(p.runs for p in parts) else "",
        "seed_stability": seed_stability(parts, how.hedge, judgement.outcome),
        "reason": (note + " " if note else "") + judgement.reason, "parts": summary, "per_seed": _per_seed(parts),
        "grid_points": ";".join(dict.fromkeys(r for p in parts for r in p.runs)),
    }


def _unavailable_rows(claim: Claim, ctx: ClaimContext) -> list[dict[str, Any]]:
    """A paper dataset this run does not have: untestable, with the paper's own numbers still scored."""
    sentence = claim.on(ctx.dataset)
    rows = []
    for label, how in claim.readings(ctx.dataset):
        row = _row(claim, sentence, ctx, how.build(ctx), label=label, how=how)
        row.update(holds="untestable", matches_paper="", departures="", departures_detail="", seed_stability="",
                   reason=(
            (f"Reading '{label}'. " if label else "")
            + f"not in this run: {ctx.dataset} is not available offline or was not selected (Trustpilot, Twitter "
            "and Bias in Bios need their files in raw_dir; CelebA, Blog and AG are offline). To settle it, run the "
            "claims study with it in `datasets`"))
        rows.append(row)
    return rows


def formal_rows(claim: Claim, audit: pd.DataFrame | None) -> list[dict[str, Any]]:
    """A claim about a mechanism or a proof (:mod:`privtext.claims.formal`): its rows from the ε ``audit`` table
    and the accounting, with the claim's own columns."""
    rows = []
    for checked in claim.formal(audit):
        row = {c: "" for c in COLUMNS}
        row.update(claim=claim.id, paper=claim.paper, claim_text=claim.text,
                   quote=" … ".join(f"“{q}”" for q in claim.quote), source=claim.source, reading=claim.reading,
                   hedge="all", **checked)
        rows.append(row)
    return rows


def _ran(inputs: ArtefactInputs, prefixes: tuple[str, ...]) -> list[str]:
    """The measured datasets with runs of a method whose name starts with one of ``prefixes``."""
    pairs = inputs.measures[["dataset", "method"]].drop_duplicates()
    hits = set(pairs.loc[pairs["method"].str.startswith(prefixes), "dataset"])
    return [d for d in inputs.datasets() if d in hits]


FINE_TUNED_NOTE = ("No run here has its encoder fine-tuned through the noise: that arm is the study claims_finetune's "
                   "(`make claims-finetune`).")


def claims_table(inputs: ArtefactInputs, claims: Iterable[str] | None = None, evidence: Any = None,
                 audit: pd.DataFrame | None = None, seed_families: SeedFamilies | None = None) -> pd.DataFrame:
    """One row per (claim, dataset it applies to, setting), plus one row per paper dataset not measured (its
    published numbers scored), and F12 from the ε ``audit`` table. Reads saved measures (and, with
    ``evidence``, the runs' per-example test records). ``seed_families``: what the ``seed_shape`` studies found
    per (dataset, method) (:func:`privtext.claims.seed_shape.family_reasons`; None: they did not run, which
    each row's ``seed_check`` says)."""
    rows = []
    ran_by_paper = {paper: _ran(inputs, prefixes) for paper, prefixes in PAPER_METHODS.items()}
    for claim in (CLAIMS[c] for c in (claims or CLAIMS)):
        if claim.formal is not None:
            rows += formal_rows(claim, audit)
            continue
        datasets = [d for d in ran_by_paper[claim.paper] if claim.kind(d)]
        for dataset in datasets:
            sentence = claim.on(dataset)
            for setting in claim.settings:
                for label, how in claim.readings(dataset):
                    ctx = ClaimContext(inputs, dataset, setting, evidence)  # one per reading: its own grid reads
                    parts = how.build(ctx)
                    note = FINE_TUNED_NOTE if setting == FINE_TUNED and not any(p.runs for p in parts) else ""
                    rows.append(_row(claim, sentence, ctx, parts, note, families=seed_families, label=label,
                                     how=how))
        missing = [d for d in claim.all_datasets if d not in datasets]
        for dataset in missing:
            rows += _unavailable_rows(claim, ClaimContext(inputs, dataset, SETTINGS[claim.dp][0], None))
        if not datasets and not missing:
            ctx = ClaimContext(inputs, "—", SETTINGS[claim.dp][0], evidence)
            rows.append(_row(claim, claim, ctx, [], "No dataset of this run has what the claim needs."))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def paper_dataset_inputs(published: pd.DataFrame | None) -> ArtefactInputs:
    """Inputs with no runs at all: what the claims read from the papers alone."""
    from privtext.report.artefacts.common import prepare_measures

    empty = pd.DataFrame(columns=["dataset", "measure", "method", "split", "attribute", "attacker", "group",
                                  "seed", "value", "run_dir", "encoder", "epsilon_effective"])
    return ArtefactInputs(measures=prepare_measures(empty), metas={}, published=published)


def paper_readings(published: pd.DataFrame) -> pd.DataFrame:
    """Every claim on every dataset it is about, each reading apart, scored on the paper's printed numbers alone
    (no runs needed); a formal claim's printed number (DPNR's ε') scored by the accounting."""
    inputs = paper_dataset_inputs(published)
    rows = []
    for claim in CLAIMS.values():
        if claim.formal is not None:
            for row in formal_rows(claim, None):
                if math.isfinite(row["paper_value"]):
                    rows.append({"claim": claim.id, "reading_label": "", "dataset": row["dataset"],
                                 "source": claim.source, "reading": claim.reading,
                                 "paper_values": f"{row['measurement']}: printed {_number(row['paper_value'])}",
                                 "paper_reading": row["paper_reading"], "paper_reading_at_0.02": ""})
            continue
        for dataset in claim.all_datasets:
            sentence = claim.on(dataset)
            for label, how in claim.readings(dataset):
                parts = how.build(ClaimContext(inputs, dataset, SETTINGS[claim.dp][0]))
                rows.append({"claim": claim.id, "reading_label": label, "dataset": dataset, "source": sentence.source,
                             "reading": "; ".join(f"{p.label}: {p.reading.describe()}" for p in parts),
                             "paper_values": "; ".join(f"{p.label} = {_number(p.paper_value) or 'not printed'}"
                                                       for p in parts),
                             "paper_reading": _paper_reading(parts, how.hedge) if parts else "not printed",
                             "paper_reading_at_0.02": _paper_reading(parts, how.hedge, at_conventional=True)})
    return pd.DataFrame(rows, columns=list(PAPER_COLUMNS))
