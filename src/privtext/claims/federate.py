"""FEDERATE's claims (Maheshwari, Denis, Keller & Bellet 2022), each from the paper's own sentence
(``../shared/papers/federate.md``).

§5.1's claims are about Twitter Sentiment and Bias in Bios; the paper says of Adult and CelebA that "they
exhibit similar trends" (§5), so they are tested there too, except where Appendix D.5 says otherwise: then
D.5's sentence is the claim on those two (a :class:`~privtext.claims.claim.Variant`). §5.2's claims (Figures
3–4, Table 7) are about Twitter and Bias in Bios only: Adult and CelebA stand in for them, marked substitute.
Every method's setting is the one chosen on dev at relaxation threshold RT = 1 (Table 1), unless the claim
sweeps RT or ε. Leakage is FEDERATE's scikit-learn MLP attacker; MDL (kbits) depends on the dataset's scale, so
MDL differences are relative to the reference method's MDL.
"""

from __future__ import annotations

import math
from dataclasses import replace

from privtext.claims import formal
from privtext.claims.claim import Alternative, Builder, Claim, Variant
from privtext.claims.context import (LEAKAGE_ATTACKER, RT, ClaimContext, params_of, protected, ratio, selected,
                                     selection_grid, zero)
from privtext.claims.departures import FEATURES, FRESH, Procedure
from privtext.claims.margins import paper_margin, printed
from privtext.claims.parts import (COMPARABLE, HIGHER, LOWER, NOT_LOWER, Measured, Part, blocked, difference,
                                   hedged, spearman, trend, values_text)
from privtext.claims.verdicts import Reading

PAPER = "FEDERATE"
SOURCE = "Maheshwari, Denis, Keller & Bellet (2022), FEDERATE"
MAIN = ("twitter", "bios")  # §5.1–5.2
APPENDIX = ("adult", "celeba")  # D.5: "they exhibit similar trends"
TABLE = {"twitter": "table1a", "bios": "table1b", "celeba": "table2", "adult": "table3"}
WORDS = {"test_fairness": "fairness gap (TPR-gap/GRMS)", "test_leakage": f"leakage ({LEAKAGE_ATTACKER})",
         "test_accuracy": "test accuracy", "mdl_kbits": "MDL, relative to the second method"}
LABELS = {"nonpriv": "Unconstrained", "adv": "Adversarial", "multiadv": "Adversarial + Multiple", "inlp": "INLP",
          "noise": "Noise", "federate": "FEDERATE"}
PERCENT = 0.01
# §5 and Appendix D: Twitter's tweets "obtained from a Deepmoji encoder", Bios encoded "with BERT … over the CLS
# token" (both pre-encoded files: the datasets' own features here, as Adult's and CelebA's), "batch size of 2000",
# leakage by an attacker trained on the frozen representation; epochs unstated. Its code normalised by L2, not
# L1 (F15).
PROCEDURE = Procedure(encoder={"*": "bert-base-uncased", **{d: FEATURES for d in (*MAIN, *APPENDIX)}},
                      trains_encoder=False, attacker=FRESH, batch_size=2000, code_layers=("l2_code",),
                      code_mechanism="the code's L2 normalisation")


def _metric(dataset: str, column: str) -> str:
    if column == "test_fairness":
        return "grms" if TABLE.get(dataset) == "table1b" else "tpr_gap"
    return {"test_accuracy": "accuracy", "test_leakage": "leakage", "mdl_kbits": "mdl"}[column]


def _printed(published: object, dataset: str, method: str, column: str, table: str | None = None,
             rt: float = RT) -> float:
    table = table or TABLE.get(dataset)
    if table is None:
        return math.nan
    scale = 1.0 if column == "mdl_kbits" else PERCENT
    return printed(published, "federate", table, dataset, method, _metric(dataset, column), scale, rt=f"{rt:.1f}")


def _printed_difference(published: object, dataset: str, a: str, b: str, column: str) -> float:
    value_a, value_b = _printed(published, dataset, a, column), _printed(published, dataset, b, column)
    return (value_a - value_b) / value_b if column == "mdl_kbits" else value_a - value_b


def compare(ctx: ClaimContext, a: str, b: str, column: str, reading: Reading, rt: float = RT) -> Part:
    """``column`` of method ``a`` − method ``b``, each at its setting chosen at ``rt`` (MDL: relative)."""
    label = f"{WORDS[column]} at RT = {rt:g}, {a} − {b}"
    first, second = selected(ctx, a, column, rt), selected(ctx, b, column, rt)
    if column == "mdl_kbits":
        first, second = ratio(first, second), zero(ratio(first, second))
    return difference(label, first, second, reading,
                      paper_value=_printed_difference(ctx.published, ctx.dataset, a, b, column),
                      attacker=LEAKAGE_ATTACKER if column == "test_leakage" else "")


def _blocked_margin(label: str, where: str) -> Part:
    return blocked(label, COMPARABLE, f"the margin is the paper's own ({where}): give published.csv")


# --- §5.1 and D.5 ---------------------------------------------------------------------------------------------

ADVERSARIAL = ("adv", "multiadv", "federate")


def f1(ctx: ClaimContext) -> list[Part]:
    parts = [compare(ctx, method, other, "test_fairness", LOWER) for method in ADVERSARIAL for other in ("nonpriv", "noise")]
    parts += [compare(ctx, "federate", other, "test_fairness", LOWER) for other in ("adv", "multiadv", "inlp")]
    return parts


def f2(ctx: ClaimContext) -> list[Part]:
    return [compare(ctx, "federate", other, column, reading) for other in ("adv", "multiadv")
            for column, reading in (("test_leakage", LOWER), ("mdl_kbits", HIGHER))]


def similar_margins(ctx: ClaimContext) -> dict[str, Reading | None]:
    """F3's margins: the largest leakage difference, and the largest relative MDL difference, between a purely
    adversarial method and Unconstrained in Table 1, which the paper calls "similar"."""
    margins = {}
    for column in ("test_leakage", "mdl_kbits"):
        differences = [(f"{LABELS[m]} on {d}", _printed_difference(ctx.published, d, m, "nonpriv", column))
                       for d in MAIN for m in ("adv", "multiadv")]
        margins[column] = paper_margin("equivalence", 1, differences, "similar", "FEDERATE Table 1a–b",
                                       " (relative)" if column == "mdl_kbits" else "")
    return margins


def f3(ctx: ClaimContext) -> list[Part]:
    margins = similar_margins(ctx)
    parts = []
    for method in ("adv", "multiadv"):
        for column in ("test_leakage", "mdl_kbits"):
            reading = margins[column]
            parts.append(compare(ctx, method, "nonpriv", column, reading) if reading is not None else
                         _blocked_margin(f"{WORDS[column]}, {method} − nonpriv", "FEDERATE Table 1a–b"))
    return parts


def f4(ctx: ClaimContext) -> list[Part]:
    """Twitter and Bios: "Noise achieves slightly weaker privacy than FEDERATE with much worse accuracy and
    fairness" (both privacy metrics)."""
    return [compare(ctx, "noise", "federate", "test_leakage", HIGHER),
            compare(ctx, "noise", "federate", "mdl_kbits", LOWER),
            compare(ctx, "noise", "federate", "test_accuracy", LOWER),
            compare(ctx, "noise", "federate", "test_fairness", HIGHER)]


def _appendix_rival(method: str) -> Builder:
    """D.5 on Adult and CelebA: ``method`` (Noise or INLP) "performs marginally better in privacy than FEDERATE;
    however, [it] suffer[s] significantly in the fairness metric" (D.5's "comparable accuracy" is F14)."""
    def build(ctx: ClaimContext) -> list[Part]:
        return [compare(ctx, method, "federate", "test_leakage", LOWER),
                compare(ctx, method, "federate", "test_fairness", HIGHER)]
    return build


# F8's and F20's "improves upon" / "better trade-offs": fairer, less leakage, accuracy not lower by more than 0.02
NOT_WORSE_ON_ANY = (("test_fairness", LOWER), ("test_leakage", LOWER), ("test_accuracy", NOT_LOWER))
COMPETITORS = ("adv", "multiadv", "inlp", "noise")  # the previous methods FEDERATE's tables compare
STATE_OF_THE_ART = ("adv", "multiadv", "inlp")  # §5's state of the art; Unconstrained is a "simple baseline"


def f14(ctx: ClaimContext) -> list[Part]:
    """D.5: "all approaches have comparable accuracy, including Noise and INLP", each against FEDERATE (the
    method the paragraph compares each with)."""
    return [compare(ctx, other, "federate", "test_accuracy", COMPARABLE) for other in ("nonpriv", *COMPETITORS)]


def f17(ctx: ClaimContext) -> list[Part]:
    """§1: DP noise alone (Noise, Lyu et al.'s and Plant et al.'s approach with a corrected analysis) "harms
    accuracy and fairness compared to adversarial learning"."""
    return [compare(ctx, "noise", "adv", "test_accuracy", LOWER), compare(ctx, "noise", "adv", "test_fairness", HIGHER)]


def f18(ctx: ClaimContext) -> list[Part]:
    """§5.1 on Twitter: the adversarial approaches "achieve higher accuracy than Unconstrained"."""
    return [compare(ctx, method, "nonpriv", "test_accuracy", HIGHER) for method in ADVERSARIAL]


def f25(ctx: ClaimContext) -> list[Part]:
    """§5.1 on Twitter: "all adversarial approaches perform similarly" in accuracy: each pair within 0.02."""
    return [compare(ctx, a, b, "test_accuracy", COMPARABLE) for i, a in enumerate(ADVERSARIAL)
            for b in ADVERSARIAL[i + 1:]]


def f19(ctx: ClaimContext) -> list[Part]:
    """§5.1 on Bios: "a small drop in accuracy" of FEDERATE against Adversarial: a drop, and small (0.02)."""
    return [compare(ctx, "federate", "adv", "test_accuracy", LOWER),
            compare(ctx, "federate", "adv", "test_accuracy", NOT_LOWER)]


def fairness_similar_margin(ctx: ClaimContext) -> Reading | None:
    """F22's margin: the largest |Noise or INLP − Unconstrained| fairness gap of D.5's Tables 2–3, which D.5
    calls "similar"."""
    differences = [(f"{LABELS[m]} on {d}", _printed_difference(ctx.published, d, m, "nonpriv", "test_fairness"))
                   for d in APPENDIX for m in ("noise", "inlp")]
    return paper_margin("equivalence", 1, differences, "similar", "FEDERATE Tables 2–3")


def f22(ctx: ClaimContext) -> list[Part]:
    reading = fairness_similar_margin(ctx)
    if reading is None:
        return [_blocked_margin(f"{WORDS['test_fairness']}, {m} − nonpriv", "FEDERATE Tables 2–3")
                for m in ("noise", "inlp")]
    return [compare(ctx, m, "nonpriv", "test_fairness", reading) for m in ("noise", "inlp")]


def _each_dimension(with_accuracy: bool) -> Builder:
    """§7: FEDERATE "improves upon competitors on each dimension separately": fairness and leakage below each
    competitor's, and (second reading) accuracy above."""
    def build(ctx: ClaimContext) -> list[Part]:
        columns = [("test_fairness", LOWER), ("test_leakage", LOWER)] + ([("test_accuracy", HIGHER)] if with_accuracy else [])
        return [compare(ctx, "federate", other, column, reading) for other in COMPETITORS for column, reading in columns]
    return build


def f7(ctx: ClaimContext) -> list[Part]:
    return [compare(ctx, "federate", "inlp", "test_accuracy", HIGHER),
            compare(ctx, "federate", "inlp", "test_fairness", LOWER),
            compare(ctx, "federate", "inlp", "test_leakage", LOWER),
            compare(ctx, "federate", "inlp", "mdl_kbits", HIGHER)]


def f8(ctx: ClaimContext) -> list[Part]:
    """FEDERATE against every previous method the paper compares: fairer, less leakage, accuracy not lower by
    more than 0.02."""
    return [compare(ctx, "federate", other, column, reading) for other in COMPETITORS
            for column, reading in NOT_WORSE_ON_ANY]


def f9(ctx: ClaimContext) -> list[Part]:
    """"maintaining comparable accuracy" against the state-of-the-art methods: non-inferiority (0.02)."""
    return [compare(ctx, "federate", other, "test_accuracy", NOT_LOWER) for other in STATE_OF_THE_ART]


def f13(ctx: ClaimContext) -> list[Part]:
    return [compare(ctx, method, dp, "test_leakage", HIGHER) for method in ("adv", "multiadv")
            for dp in ("noise", "federate")]


# --- relaxation threshold (§5.1, Figure 2; D.6, Tables 4–6) -----------------------------------------------------

RT_TABLES = {0.0: "table4", 1.0: "table1a", 3.0: "table5", 10.0: "table6"}  # Twitter only
RT_METHODS = ("nonpriv", "noise", "adv", "multiadv", "federate")  # the methods of Tables 4–6


def _rt_printed(ctx: ClaimContext, method: str, column: str, rt: float) -> float:
    return _printed(ctx.published, "twitter", method, column, RT_TABLES[rt], rt)


def rt_margins(ctx: ClaimContext, method: str | None = None) -> dict[str, Reading | None]:
    """F5's margins from Tables 4–6 (and 1a at RT = 1), Twitter: the largest accuracy drop from RT = 0 that the
    paper calls "a negligible or small cost", and the largest leakage difference between two RTs of one method
    that it calls "no significant differences". ``method``: from that method's own printed rows alone."""
    rts = sorted(RT_TABLES)
    methods = (method,) if method else RT_METHODS
    where = f"FEDERATE Tables 4–6 (Twitter){f', {LABELS[method]}' if method else ''}"
    drops = [(f"{LABELS[m]}, RT {rt:g} vs 0", _rt_printed(ctx, m, "test_accuracy", rt)
              - _rt_printed(ctx, m, "test_accuracy", 0.0)) for m in methods for rt in rts[1:]]
    drops = [(label, value) for label, value in drops if not value > 0]  # a gain is not a cost
    leakage = [(f"{LABELS[m]}, RT {r1:g} vs {r2:g}", _rt_printed(ctx, m, "test_leakage", r1)
                - _rt_printed(ctx, m, "test_leakage", r2)) for m in methods for i, r1 in enumerate(rts)
               for r2 in rts[i + 1:]]
    return {"test_accuracy": paper_margin("non-inferiority", 1, drops, "a negligible or small cost", where),
            "test_leakage": paper_margin("equivalence", 1, leakage, "no significant differences", where)}


def method_rt_margins(ctx: ClaimContext, method: str,
                      pooled: dict[str, Reading | None] | None = None) -> dict[str, Reading | None]:
    """Each method's margins from its own printed rows; where they give none (no printed drop, or every RT
    printed alike), the pooled margin over Tables 4–6 (``pooled``: :func:`rt_margins`, if already at hand),
    saying why."""
    own, pooled = rt_margins(ctx, method), pooled or rt_margins(ctx)
    margins = {}
    for column, reading in own.items():
        if reading is None and pooled[column] is not None:
            reading = replace(pooled[column], margin_reason=pooled[column].margin_reason + (
                f"; pooled over Tables 4–6: {LABELS[method]}'s own rows print no such difference"))
        margins[column] = reading
    return margins


def _f5(per_method: bool) -> Builder:
    """F5 with each approach's margins from its own printed rows, or with the sentence's one margin (the
    largest difference over every approach it summarises)."""
    return lambda ctx: f5(ctx, per_method)


def f5(ctx: ClaimContext, per_method: bool = True) -> list[Part]:
    low, high = min(RT_TABLES), max(RT_TABLES)
    pooled = rt_margins(ctx)
    parts = []
    for method in RT_METHODS:
        margins = method_rt_margins(ctx, method, pooled) if per_method else pooled
        gap = {rt: selected(ctx, method, "test_fairness", rt) for rt in RT_TABLES}
        printed_trend = (spearman(list(RT_TABLES), [_rt_printed(ctx, method, "test_fairness", rt) for rt in RT_TABLES])
                         if ctx.dataset == "twitter" else math.nan)
        parts.append(hedged(trend(f"Spearman ρ(RT, fairness gap of the {method} setting chosen), RT ∈ "
                                  f"{values_text(list(RT_TABLES))}", gap, LOWER, paper_value=printed_trend)))
        for column in ("test_accuracy", "test_leakage"):
            label = f"{WORDS[column]}, {method} chosen at RT = {high:g} − at RT = {low:g}"
            reading = margins[column]
            if reading is None:
                parts.append(_blocked_margin(label, "FEDERATE Tables 4–6"))
                continue
            paper = (_rt_printed(ctx, method, column, high) - _rt_printed(ctx, method, column, low)
                     if ctx.dataset == "twitter" else math.nan)
            parts.append(difference(label, selected(ctx, method, column, high), selected(ctx, method, column, low),
                                    reading, paper_value=paper,
                                    attacker=LEAKAGE_ATTACKER if column == "test_leakage" else ""))
    return parts


FIGURE2_COMPETITORS = ("nonpriv", "noise", "adv", "multiadv")  # Tables 4–6's other methods


def f20(ctx: ClaimContext) -> list[Part]:
    """Figure 2: "better accuracy-fairness-privacy trade-offs than its competitors across all RTs": at each RT,
    against each competitor, a fairness gap and leakage below it with accuracy not lower by more than 0.02."""
    parts = []
    for rt in RT_TABLES:
        for other in FIGURE2_COMPETITORS:
            for column, reading in NOT_WORSE_ON_ANY:
                part = compare(ctx, "federate", other, column, reading, rt)
                paper = (_rt_printed(ctx, "federate", column, rt) - _rt_printed(ctx, other, column, rt)
                         if ctx.dataset == "twitter" else math.nan)
                parts.append(replace(part, paper_value=paper))
    return parts


# --- ε (§5.2, Figure 4; D.6, Table 7) -----------------------------------------------------------------------

TABLE7_EPSILONS = (8.0, 10.0, 12.0, 14.0, 16.0)
FEDERATE_LAMBDA = 1.0  # Table 7 does not say which λ; ours is FEDERATE's middle value at every ε


def _table7(ctx: ClaimContext, method: str, metric: str, epsilon: float) -> float:
    return ctx.printed("federate", "table7", method, metric, PERCENT, eps=f"{epsilon:.1f}")


def _at(method: str) -> dict[str, float]:
    return {"lambda": FEDERATE_LAMBDA} if method == "federate" else {}


def leakage(ctx: ClaimContext, method: str, **params: float) -> Measured:
    """Leakage (FEDERATE's attacker on the protected attribute) of ``method`` at ``params``."""
    return ctx.series(method, "attack_accuracy", attribute=protected(ctx), attacker=LEAKAGE_ATTACKER, **params)


def leakage_at(ctx: ClaimContext, method: str, epsilon: float) -> Measured:
    return leakage(ctx, method, epsilon=epsilon, **_at(method))


def f6(ctx: ClaimContext) -> list[Part]:
    parts = []
    for method in ("noise", "federate"):
        epsilons = params_of(ctx, method, "attack_accuracy", "epsilon", paper=TABLE7_EPSILONS, mu=0.0,
                             **_at(method))
        paper = spearman(list(TABLE7_EPSILONS), [_table7(ctx, method, "leakage", e) for e in TABLE7_EPSILONS])
        parts.append(trend(f"Spearman ρ(ε, leakage ({LEAKAGE_ATTACKER})), {method}"
                           f"{' λ = 1' if method == 'federate' else ''}, ε ∈ {values_text(epsilons)}",
                           {e: leakage_at(ctx, method, e) for e in epsilons}, HIGHER, attacker=LEAKAGE_ATTACKER,
                           paper_value=paper))
    return parts


def _against_noise(ctx: ClaimContext, leakage: Reading | None, accuracy: Reading) -> list[Part]:
    """At each ε of Table 7, FEDERATE (λ = 1) − Noise on leakage and on accuracy, read as given (a leakage
    margin that is the paper's own needs published.csv: ``leakage`` None)."""
    parts = []
    for epsilon in TABLE7_EPSILONS:
        label = f"leakage ({LEAKAGE_ATTACKER}) at ε = {epsilon:g}, federate λ = 1 − noise"
        paper = _table7(ctx, "federate", "leakage", epsilon) - _table7(ctx, "noise", "leakage", epsilon)
        parts.append(blocked(label, COMPARABLE, "the margin is the paper's own (Table 7): give published.csv", paper)
                     if leakage is None else
                     difference(label, leakage_at(ctx, "federate", epsilon), leakage_at(ctx, "noise", epsilon),
                                leakage, attacker=LEAKAGE_ATTACKER, paper_value=paper))
        parts.append(difference(
            f"test accuracy at ε = {epsilon:g}, federate λ = 1 − noise",
            ctx.series("federate", "accuracy", epsilon=epsilon, **_at("federate")),
            ctx.series("noise", "accuracy", epsilon=epsilon), accuracy,
            paper_value=_table7(ctx, "federate", "accuracy", epsilon) - _table7(ctx, "noise", "accuracy", epsilon)))
    return parts


def f11(ctx: ClaimContext) -> list[Part]:
    return _against_noise(ctx, LOWER, NOT_LOWER)


def f26(ctx: ClaimContext) -> list[Part]:
    """§5.2 on Twitter: FEDERATE "outperforms Noise in both accuracy and privacy for every ε"."""
    return _against_noise(ctx, LOWER, HIGHER)


def bios_margin(ctx: ClaimContext) -> Reading | None:
    """F21's leakage margin: the largest |FEDERATE − Noise| leakage of Table 7 on Bias in Bios, which §5.2 calls
    "comparable"."""
    other = replace(ctx, dataset="bios")
    differences = [(f"ε = {e:g}", _table7(other, "federate", "leakage", e) - _table7(other, "noise", "leakage", e))
                   for e in TABLE7_EPSILONS]
    return paper_margin("equivalence", 1, differences, "comparable in both accuracy and privacy",
                        "FEDERATE Table 7 (Bias in Bios)")


def f21(ctx: ClaimContext) -> list[Part]:
    return _against_noise(ctx, bios_margin(ctx), COMPARABLE)


# --- footnote 4: leakage over each method's hyper-parameters ------------------------------------------------------

def f24(ctx: ClaimContext) -> list[Part]:
    """Footnote 4: "no significant change in Leakage across different hyperparameters": per method and swept
    hyper-parameter, leakage at the grid's largest value − at its smallest, within the paper's own margin for "no
    significant differences" in leakage (§5.1, across RTs); Table 7's printed sweep over ε scored the same way."""
    reading = rt_margins(ctx)["test_leakage"]
    sweeps = (("adv", "lambda", {}), ("multiadv", "lambda", {}), ("noise", "epsilon", {}),
              ("federate", "lambda", {"epsilon": 8.0}), ("federate", "epsilon", {"lambda": FEDERATE_LAMBDA}))
    parts = []
    for method, param, fixed in sweeps:
        values = params_of(ctx, method, "attack_accuracy", param, paper=selection_grid(ctx.dataset, method)[param],
                           **fixed)
        symbol = "ε" if param == "epsilon" else "λ"
        at = "".join(f", {'ε' if k == 'epsilon' else 'λ'} = {v:g}" for k, v in fixed.items())
        label = f"leakage ({LEAKAGE_ATTACKER}), {method}{at}: largest {symbol} − smallest {symbol} of {values_text(values)}"
        paper = (_table7(ctx, method, "leakage", TABLE7_EPSILONS[-1]) - _table7(ctx, method, "leakage", TABLE7_EPSILONS[0])
                 if param == "epsilon" else math.nan)
        if reading is None:
            parts.append(_blocked_margin(label, "FEDERATE Tables 1a, 4–6"))
        elif len(values) < 2:
            parts.append(blocked(label, reading, f"the grid has {len(values)} value(s) of {symbol} with runs, 2 needed",
                                 paper))
        else:
            parts.append(difference(label, leakage(ctx, method, **fixed, **{param: values[-1]}),
                                    leakage(ctx, method, **fixed, **{param: values[0]}), reading,
                                    attacker=LEAKAGE_ATTACKER, paper_value=paper))
    return parts


# --- Figure 3: best fairness per accuracy interval (§5.2) ---------------------------------------------------------

ACCURACY_BIN_POINTS = 1.0  # Figure 3: "[71.5, 72.5] is represented by 72"


def f10(ctx: ClaimContext) -> list[Part]:
    """Per interval of dev accuracy (1 point), the fairest setting on dev of FEDERATE and of Adversarial, and
    their test fairness gaps over seeds (test values never choose)."""
    from privtext.report.artefacts.federate import best_fairness_per_interval, runs_frame

    frontier = best_fairness_per_interval(runs_frame(ctx.inputs, ctx.dataset), ACCURACY_BIN_POINTS)
    best = {(row.method, row.interval): row for row in frontier.itertuples(index=False)}
    intervals = sorted({i for m, i in best if m == "federate"} & {i for m, i in best if m == "adv"})
    if not intervals:
        return [blocked("fairness gap, federate − adv, per dev-accuracy interval", LOWER,
                        "no dev-accuracy interval has runs of both FEDERATE and Adversarial")]
    parts = []
    for interval in intervals:
        series = []
        for method in ("federate", "adv"):
            row = best[(method, interval)]
            params = {c[len("param_"):]: getattr(row, c) for c in frontier.columns
                      if c.startswith("param_") and isinstance(getattr(row, c), float) and math.isfinite(getattr(row, c))}
            series.append(ctx.series(method, "fairness", attribute=protected(ctx), **params))
        parts.append(hedged(difference(f"test fairness gap of the fairest dev setting with dev accuracy in "
                                       f"[{interval:g}, {interval + ACCURACY_BIN_POINTS:g}) %, federate − adv",
                                       *series, LOWER)))
    return parts


# --- the claims -------------------------------------------------------------------------------------------------

_APPENDIX_QUOTE = ("Noise and INLP performs marginally better in privacy than FEDERATE; however, they suffer "
                   "significantly in the fairness metric",)
_APPENDIX_READING = "{m} leakage below FEDERATE's, its fairness gap above FEDERATE's (Adult, CelebA; accuracy: F14)"

CLAIMS = (
    Claim("F1", PAPER, "every adversarial method is fairer than Unconstrained and Noise; FEDERATE the fairest",
          ("all adversarial approaches induce a fairer model than Unconstrained or Noise, with FEDERATE performing best",),
          f"{SOURCE}, §5.1, Table 1a–b", "fairness gap at RT = 1 of Adversarial, Adversarial + Multiple and "
          "FEDERATE below Unconstrained's and Noise's; FEDERATE's below every other method's", f1, MAIN,
          dp="l1", variants=(Variant(APPENDIX, ("adversarial-based approaches induce a more fair model than "
                                                "Unconstrained or Noise, with FEDERATE outperforming all other methods",),
                                     f"{SOURCE}, Appendix D.5, Tables 2–3", "as on Twitter and Bios", f1),)),
    Claim("F2", PAPER, "FEDERATE has lower leakage and higher MDL than every adversarial method",
          ("In terms of both privacy metrics, FEDERATE significantly outperforms all adversarial methods on both "
           "datasets",), f"{SOURCE}, §5.1, Table 1a–b",
          "leakage below and MDL above Adversarial's and Adversarial + Multiple's, at RT = 1", f2, MAIN + APPENDIX,
          dp="l1"),
    Claim("F3", PAPER, "purely adversarial methods leak about as much as Unconstrained (leakage and MDL)",
          ("the leakage and MDL of purely adversarial methods are similar to that of Unconstrained",),
          f"{SOURCE}, §5.1, Table 1a–b",
          "equivalence of Adversarial's and Adversarial + Multiple's leakage (and relative MDL) with "
          "Unconstrained's, margins the largest such differences of Table 1a–b", f3, MAIN + APPENDIX, dp="none"),
    Claim("F4", PAPER, "Noise is slightly less private than FEDERATE, with worse accuracy and fairness",
          ("Noise achieves slightly weaker privacy than FEDERATE with much worse accuracy and fairness",),
          f"{SOURCE}, §5.1, Table 1a–b",
          "Noise's leakage above and MDL below FEDERATE's, its accuracy below and fairness gap above", f4, MAIN,
          dp="l1", variants=(Variant(APPENDIX, _APPENDIX_QUOTE, f"{SOURCE}, Appendix D.5, Tables 2–3",
                                     _APPENDIX_READING.format(m="Noise's"), _appendix_rival("noise")),)),
    Claim("F5", PAPER, "raising RT makes every approach fairer at small accuracy cost, same privacy",
          ("fairness generally improves with increasing RT. This improvement comes at a negligible or small cost in "
           "accuracy. In terms of privacy, we find no significant differences across RTs.",),
          f"{SOURCE}, §5.1, Figure 2; Appendix D.6, Tables 4–6",
          "each approach of Tables 4–6: Spearman ρ(RT, fairness gap) < 0 in most of them ('generally'); accuracy "
          "at RT = 10 not below RT = 0 by more than the paper's largest such drop; leakage within the paper's "
          "largest difference across RTs. Whose differences set the margins is read two ways, each its own row. "
          "Figure 2 and Tables 4–6 are Twitter only: Adult and CelebA are substitutes", _f5(True), ("twitter",),
          APPENDIX, dp="l1", hedge="most",
          alternatives=(Alternative("each approach's own margins", "margins from each approach's own printed rows "
                                    "(pooled where they print no such difference)", _f5(True), hedge="most"),
                        Alternative("one margin for the sentence", "margins the largest difference over every "
                                    "approach the sentence summarises (one row sets them for all)", _f5(False),
                                    hedge="most"))),
    Claim("F6", PAPER, "ε correlates with empirical leakage, for Noise and FEDERATE",
          ("the value of $\\epsilon$ correlates well with the empirical leakage",),
          f"{SOURCE}, §5.2, Figure 4; Appendix D.6, Table 7",
          "Spearman ρ(ε, leakage) > 0 for Noise and for FEDERATE (λ = 1)", f6, MAIN, APPENDIX, dp="l1"),
    Claim("F7", PAPER, "FEDERATE beats INLP on accuracy, fairness, leakage and MDL",
          ("FEDERATE also consistently outperforms INLP in all dimensions",), f"{SOURCE}, §5.1, Table 1a–b",
          "FEDERATE's accuracy and MDL above INLP's, its fairness gap and leakage below", f7, MAIN, dp="l1",
          variants=(Variant(APPENDIX, _APPENDIX_QUOTE, f"{SOURCE}, Appendix D.5, Tables 2–3",
                            _APPENDIX_READING.format(m="INLP's"), _appendix_rival("inlp")),)),
    Claim("F8", PAPER, "FEDERATE improves on every previous method: privacy and fairness reinforce each other",
          ("FEDERATE consistently improves upon previous methods, and thus suggest that privacy and fairness can "
           "positively reinforce each other",), f"{SOURCE}, abstract",
          "against every previous method the paper compares (Adversarial, Adversarial + Multiple, INLP, Noise): "
          "FEDERATE fairer and less leaky, accuracy not below by more than 0.02 (not 'Noise fairer than "
          "Adversarial', which §5.1 denies)", f8, MAIN + APPENDIX, dp="l1"),
    Claim("F9", PAPER, "FEDERATE keeps accuracy comparable to the state-of-the-art methods",
          ("more private representations and fairer models than state-of-the-art methods while maintaining "
           "comparable accuracy",), f"{SOURCE}, abstract; §1 (Introduction)",
          "non-inferiority (0.02) of FEDERATE's accuracy against the state-of-the-art methods compared (Adversarial, "
          "Adversarial + Multiple, INLP) at RT = 1; not against Unconstrained, which §5 calls a 'simple baseline' "
          "(privacy and fairness: F1, F2)", f9, MAIN + APPENDIX, dp="l1"),
    Claim("F10", PAPER, "FEDERATE is fairer than Adversarial in almost all accuracy intervals",
          ("FEDERATE provides better fairness than the Adversarial approach for almost all accuracy intervals",),
          f"{SOURCE}, §5.2, Figure 3",
          "per 1-point interval of dev accuracy, the fairest dev setting's test fairness gap: FEDERATE below "
          "Adversarial in all intervals but one", f10, MAIN, APPENDIX, dp="l1", hedge="almost all"),
    Claim("F11", PAPER, "FEDERATE leaks less than Noise with accuracy as good, at every ε",
          ("FEDERATE gives lower leakage and better or comparable accuracy to Noise over both datasets",),
          f"{SOURCE}, §5.2, Figure 4; Appendix D.6, Table 7",
          "at each ε of Table 7: FEDERATE's (λ = 1) leakage below Noise's, its accuracy not below by more than 0.02",
          f11, MAIN, APPENDIX, dp="l1"),
    Claim("F12", PAPER, "DPNR's and CAPE's ε should be multiplied by D",
          ("the $\\epsilon$ values they report should be multiplied by D",), f"{SOURCE}, §3.4; Appendix C",
          "the ε audit of the min–max layer: some measured lower bound above the nominal ε, none above D·ε",
          lambda ctx: [], (), dp="none", formal=formal.multiplied_by_d),
    Claim("F13", PAPER, "on Adult and CelebA adversarial methods leak more than the DP-based ones",
          ("purely adversarial-based approaches leak significantly more information than the DP-based approaches",),
          f"{SOURCE}, Appendix D.5, Tables 2–3",
          "leakage of Adversarial and Adversarial + Multiple above Noise's and FEDERATE's, at RT = 1", f13,
          APPENDIX, dp="l1", added=True),
    Claim("F14", PAPER, "on Adult and CelebA every approach has accuracy comparable to FEDERATE's",
          ("all approaches have comparable accuracy, including Noise and INLP",), f"{SOURCE}, Appendix D.5, Tables 2–3",
          "equivalence (0.02) of each other method's accuracy (Unconstrained, Adversarial, Adversarial + Multiple, "
          "INLP, Noise) with FEDERATE's, the method D.5 compares each with, at RT = 1", f14, APPENDIX, dp="l1",
          added=True),
    Claim("F15", PAPER, "FEDERATE's encoder and predictions are ε-DP (Theorem 1)",
          ("Our encoder $E_{priv}$ and the downstream predictions $C \\circ E_{priv}$ satisfy $\\epsilon$ -DP",),
          f"{SOURCE}, §3.4 (Theorem 1); Appendix B",
          "formal: the accounting of the L1 layer (sensitivity 2, Lap(2/ε): ε) and its ε audit, no bound above ε; "
          "beside it the reference code's L2 normalisation, whose guarantee is √D·ε", lambda ctx: [], (),
          dp="none", added=True, formal=formal.l1_theorem),
    Claim("F16", PAPER, "DP noise stabilises the training dynamics of adversarial learning",
          ("has a stabilizing effect on the training dynamics of adversarial learning",),
          f"{SOURCE}, §1; §5.2 (Figure 3)",
          "not measurable as stated: the paper infers it from Figure 3's smoother accuracy–fairness frontier and "
          "measures no training dynamics", lambda ctx: [], (), dp="none", added=True,
          formal=formal.not_measurable(
              "the paper measures no training dynamics: it infers stability from Figure 3's smoother frontier "
              "('this suggests'). To settle it, compare the spread over seeds of the adversary's loss curve (or of "
              "test fairness at a fixed λ) between FEDERATE and Adversarial, over 15 or more seeds")),
    Claim("F17", PAPER, "DP noise alone harms accuracy and fairness compared to adversarial learning",
          ("their approach harms accuracy and fairness compared to adversarial learning",),
          f"{SOURCE}, §1 (Introduction)",
          "Noise (Lyu et al.'s and Plant et al.'s approach with a corrected analysis): accuracy below Adversarial's "
          "and fairness gap above it, at RT = 1", f17, MAIN + APPENDIX, dp="l1", added=True),
    Claim("F18", PAPER, "on Twitter the adversarial approaches are more accurate than Unconstrained",
          ("Interestingly, they achieve higher accuracy than Unconstrained",), f"{SOURCE}, §5.1, Table 1a",
          "accuracy of Adversarial, Adversarial + Multiple and FEDERATE above Unconstrained's, at RT = 1, Twitter "
          "(the paper attributes it to Twitter's train–test mismatch: no substitute)", f18, ("twitter",), dp="l1",
          added=True),
    Claim("F19", PAPER, "on Bias in Bios FEDERATE's accuracy is a little below Adversarial's",
          ("On Bias in Bios, we observe a small drop in accuracy of our proposed approach in comparison to "
           "Adversarial",), f"{SOURCE}, §5.1, Table 1b",
          "FEDERATE − Adversarial accuracy below 0 (a drop) and not below −0.02 (small), at RT = 1", f19, ("bios",),
          dp="l1", added=True),
    Claim("F20", PAPER, "FEDERATE has better accuracy–fairness–privacy trade-offs at every RT",
          ("Our approach FEDERATE consistently achieves better accuracy-fairness-privacy trade-offs than its "
           "competitors across all RTs",), f"{SOURCE}, §5, Figure 2; Appendix D.6, Tables 4–6",
          "at each RT of Tables 4–6, against each competitor there (Unconstrained, Noise, Adversarial, Adversarial + "
          "Multiple): fairness gap and leakage below, accuracy not below by more than 0.02", f20, ("twitter",),
          APPENDIX, dp="l1", added=True),
    Claim("F21", PAPER, "on Bias in Bios FEDERATE and Noise are comparable in accuracy and privacy",
          ("On Bias in Bios, FEDERATE and Noise are comparable in both accuracy and privacy",),
          f"{SOURCE}, §5.2, Figure 4; Appendix D.6, Table 7",
          "at each ε of Table 7: accuracy within 0.02, leakage within the largest |FEDERATE − Noise| Table 7 prints on "
          "Bias in Bios", f21, ("bios",), APPENDIX, dp="l1", added=True),
    Claim("F22", PAPER, "on Adult and CelebA Noise and INLP are about as unfair as Unconstrained",
          ("they induce fairness levels which are similar to Unconstrained",), f"{SOURCE}, Appendix D.5, Tables 2–3",
          "equivalence of Noise's and INLP's fairness gaps with Unconstrained's, the margin the largest such "
          "difference of Tables 2–3", f22, APPENDIX, dp="l1", added=True),
    Claim("F23", PAPER, "FEDERATE improves on its competitors on each dimension separately",
          ("We also find that our approach improves upon competitors on each dimension separately",),
          f"{SOURCE}, §7 (Conclusion)",
          "against Adversarial, Adversarial + Multiple, INLP and Noise at RT = 1; 'each dimension' read two ways, "
          "each its own row", _each_dimension(False), MAIN + APPENDIX, dp="l1", added=True,
          alternatives=(Alternative("privacy and fairness", "fairness gap and leakage below each competitor's",
                                    _each_dimension(False)),
                        Alternative("accuracy, privacy and fairness", "fairness gap and leakage below and accuracy "
                                    "above each competitor's", _each_dimension(True)))),
    Claim("F24", PAPER, "leakage does not change across each method's hyper-parameters",
          ("we found no significant change in Leakage across different hyperparameters",),
          f"{SOURCE}, §5.1, footnote 4; Appendix D.6, Table 7",
          "per method and swept hyper-parameter, leakage at the largest value − at the smallest within the paper's "
          "own margin for 'no significant differences' in leakage (§5.1, across RTs)", f24, MAIN + APPENDIX,
          dp="l1", added=True),
    Claim("F25", PAPER, "on Twitter the adversarial approaches are about equally accurate",
          ("In terms of accuracy, all adversarial approaches perform similarly on Twitter Sentiment",),
          f"{SOURCE}, §5.1, Table 1a",
          "equivalence (0.02) of the accuracies of Adversarial, Adversarial + Multiple and FEDERATE, each pair, at "
          "RT = 1", f25, ("twitter",), dp="l1", added=True),
    Claim("F26", PAPER, "on Twitter FEDERATE beats Noise in accuracy and privacy at every ε",
          ("for Twitter Sentiment, our approach outperforms Noise in both accuracy and privacy for every "
           "$\\epsilon$",), f"{SOURCE}, §5.2, Figure 4; Appendix D.6, Table 7",
          "at each ε of Table 7: FEDERATE's (λ = 1) leakage below Noise's and its accuracy above", f26, ("twitter",),
          APPENDIX, dp="l1", added=True),
)

