"""CAPE's claims (Plant, Giuffrida & Gkatzia 2021), each from the paper's own sentence
(``../shared/papers/cape.txt``).

CAPE's Table 3 compares Base, Adv., DP and CAPE, each CAPE's own architecture without noise and/or adversary,
with one model per targeted private variable (the adversarial ones train their adversary on that variable
alone: the ``target`` grid value), at ε = 0.1, λ = 1. Its attacker measure is F1 (Table 3's SD and the
abstract's "3%" are of F1); our attacker is a fresh ``mlp`` trained after the model is frozen, scored by
macro-F1. TP-UK is not available offline: AG (DPNR's entity file) stands in for it, marked substitute.
"""

from __future__ import annotations

import math

from privtext.claims.claim import Claim
from privtext.claims.context import CAPE_ATTACKER, ClaimContext, accuracy, params_of
from privtext.claims.margins import paper_margin, printed
from privtext.claims.parts import (COMPARABLE, HIGHER, LOWER, Measured, Part, blocked, difference, hedged, spearman,
                                   trend, values_text)
from privtext.claims.verdicts import Reading

PAPER = "CAPE"
SOURCE = "Plant, Giuffrida & Gkatzia (2021), CAPE"
DATASETS = ("tp_uk",)
SUBSTITUTES = ("ag_dpnr",)
SETTING = {"epsilon": 0.1, "lambda": 1.0}  # Table 3
ADVERSARIAL = frozenset({"cape", "cape_adv"})  # their adversary targets one variable per model
PUBLISHED_AS = {"cape": "cape", "cape_base": "nonpriv", "cape_adv": "adv", "cape_dp": "dpnr"}
PARAMS = {"cape": SETTING, "cape_adv": {"lambda": 1.0}, "cape_dp": {"epsilon": 0.1}, "cape_base": {}}
ATTACKER_F1 = "attack_macro_f1"


def measure(ctx: ClaimContext, method: str, name: str, attribute: str, target: str | None = None,
            **params: float) -> Measured:
    """``name`` (``accuracy`` or the attacker's macro-F1 on ``attribute``) of ``method`` at Table 3's setting;
    an adversarial method's run is the one whose adversary targeted ``target``."""
    params = params or dict(PARAMS[method])
    target = target if method in ADVERSARIAL else None
    if name == "accuracy":
        return ctx.series(method, "accuracy", target=target, **params)
    return ctx.series(method, name, attribute=attribute, attacker=CAPE_ATTACKER, target=target, **params)


def _table3(ctx: ClaimContext, method: str, metric: str, attribute: str) -> float:
    return ctx.printed("cape", "table3", PUBLISHED_AS[method], metric, private=attribute)


def c1(ctx: ClaimContext) -> list[Part]:
    parts = []
    for attribute in ctx.attributes():
        cape = measure(ctx, "cape", ATTACKER_F1, attribute, target=attribute)
        for other in ("cape_base", "cape_adv", "cape_dp"):
            parts.append(difference(
                f"attacker F1 on {attribute}, {ctx.method('cape')} − {ctx.method(other)} (each targeting {attribute})",
                cape, measure(ctx, other, ATTACKER_F1, attribute, target=attribute), LOWER, attacker=CAPE_ATTACKER,
                paper_value=_table3(ctx, "cape", "attacker_f1", attribute) - _table3(ctx, other, "attacker_f1", attribute)))
    return parts


def c2(ctx: ClaimContext) -> list[Part]:
    return [difference(f"test accuracy, {ctx.method('cape')} targeting {attribute} − {ctx.method('cape_dp')}",
                       measure(ctx, "cape", "accuracy", attribute, target=attribute),
                       measure(ctx, "cape_dp", "accuracy", attribute), COMPARABLE,
                       paper_value=_table3(ctx, "cape", "target_accuracy", attribute)
                       - _table3(ctx, "cape_dp", "target_accuracy", attribute))
            for attribute in ctx.attributes()]


CHANCE_READINGS = {"gender": HIGHER, "location": HIGHER}  # "predict ... effectively"; age: "barely above chance"
BARELY = "age"


def chance_margin(ctx: ClaimContext) -> Reading | None:
    """C3's margin: the largest attacker accuracy above chance (1/6, six equal-sized bins) on age range in
    Table 3, which the paper calls "barely above random chance"."""
    chance = 1.0 / 6
    differences = [(f"{method} on age", printed(ctx.published, "cape", "table3", "tp_uk", PUBLISHED_AS[method],
                                                "attacker_accuracy", private=BARELY) - chance)
                   for method in PUBLISHED_AS]
    return paper_margin("non-inferiority", -1, differences, "barely above random chance", "CAPE Table 3")


def c3(ctx: ClaimContext) -> list[Part]:
    """Attacker accuracy above chance (1 / number of classes) on Base, TP-UK's own attributes."""
    parts = []
    for attribute in ctx.attributes():
        if attribute not in (*CHANCE_READINGS, BARELY):
            continue
        n = ctx.n_values(attribute)
        chance = 1.0 / n if n else math.nan
        label = f"attacker accuracy − chance (1/{n}) on {attribute}, cape_base"
        paper = _table3(ctx, "cape_base", "attacker_accuracy", attribute) - chance
        reading = CHANCE_READINGS.get(attribute) or chance_margin(ctx)
        if reading is None:
            parts.append(blocked(label, HIGHER, "the margin is the paper's own (CAPE Table 3): give published.csv",
                                 paper))
            continue
        attack = ctx.series("cape_base", "attack_accuracy", attribute=attribute, attacker=CAPE_ATTACKER)
        parts.append(difference(label, attack, ctx.constant(chance, attack), reading, paper_value=paper,
                                attacker=CAPE_ATTACKER))
    return parts


TABLE4_EPSILONS = (0.01, 0.1, 0.5, 1.0)
TABLE4_LAMBDAS = (0.1, 0.5, 1.0, 1.5)


def _printed_value(value: float) -> str:
    """How Table 4's settings are written in published.csv: 0.01, 0.1, 0.5, 1.0, 1.5."""
    return f"{value:g}" if value < 1 else f"{value:.1f}"


def _table4_trend(ctx: ClaimContext, param: str, values: tuple[float, ...], metric: str) -> float:
    """Spearman's ρ of Table 4's printed sweep. The ε sweep is printed first, the λ sweep second, and both
    print ε = 0.1 with λ = 1: each sweep reads its own row of that setting."""
    fixed = {"eps": "0.1"} if param == "lambda" else {"lambda": "1.0"}
    key = "eps" if param == "epsilon" else "lambda"
    points = [ctx.printed("cape", "table4", "cape", metric, occurrence=0 if param == "epsilon" else -1,
                          private="gender", **fixed, **{key: _printed_value(v)}) for v in values]
    return spearman(list(values), points)


def c4(ctx: ClaimContext) -> list[Part]:
    """Table 4 swept ε (λ = 1) and λ (ε = 0.1) on CAPE targeting gender (the dataset's first attribute here)."""
    attributes = ctx.attributes()
    target = "gender" if "gender" in attributes else (attributes[0] if attributes else "")
    parts = []
    for param, fixed, privacy_sign in (("epsilon", {"lambda": 1.0}, HIGHER), ("lambda", {"epsilon": 0.1}, LOWER)):
        values = params_of(ctx, "cape", ATTACKER_F1, param, **fixed)
        swept = TABLE4_EPSILONS if param == "epsilon" else TABLE4_LAMBDAS
        privacy = {v: measure(ctx, "cape", ATTACKER_F1, target, target=target, **{**fixed, param: v}) for v in values}
        task = {v: measure(ctx, "cape", "accuracy", target, target=target, **{**fixed, param: v}) for v in values}
        symbol = "ε" if param == "epsilon" else "λ"
        parts += [
            trend(f"Spearman ρ({symbol}, attacker F1 on {target}), {ctx.method('cape')}, {symbol} ∈ {values_text(values)}",
                  privacy, privacy_sign, attacker=CAPE_ATTACKER,
                  paper_value=_table4_trend(ctx, param, swept, "attacker_f1")),
            trend(f"Spearman ρ({symbol}, test accuracy), {ctx.method('cape')}, {symbol} ∈ {values_text(values)}",
                  task, privacy_sign, paper_value=_table4_trend(ctx, param, swept, "target_accuracy")),
        ]
    return parts


def c5(ctx: ClaimContext) -> list[Part]:
    return [hedged(difference(f"attacker F1 on {attribute}, cape_adv targeting it − {ctx.method('cape_dp')}",
                       measure(ctx, "cape_adv", ATTACKER_F1, attribute, target=attribute),
                       measure(ctx, "cape_dp", ATTACKER_F1, attribute), LOWER, attacker=CAPE_ATTACKER,
                       paper_value=_table3(ctx, "cape_adv", "attacker_f1", attribute)
                       - _table3(ctx, "cape_dp", "attacker_f1", attribute)))
            for attribute in ctx.attributes()]


def c6(ctx: ClaimContext) -> list[Part]:
    attributes = list(ctx.attributes())
    printed_differences = [_table3(ctx, "cape_dp", "target_accuracy", a) - _table3(ctx, "cape_base", "target_accuracy", a)
                           for a in attributes]
    printed_differences = [d for d in printed_differences if math.isfinite(d)]
    return [difference(f"test accuracy, {ctx.method('cape_dp')} − cape_base", accuracy(ctx, "cape_dp", epsilon=0.1),
                       accuracy(ctx, "cape_base"), LOWER,
                       paper_value=sum(printed_differences) / len(printed_differences) if printed_differences
                       else math.nan)]


CLAIMS = (
    Claim("C1", PAPER, "CAPE's attacker F1 is below Base, Adv. and DP for every variable",
          ("CAPE outperforms all other approaches in terms of privacy-preservation for all variables",
           "approximately a 3% reduction in attacker performance compared to the best-performing current method"),
          f"{SOURCE}, abstract; §3.2, Table 3",
          "attacker F1 (Table 3's measure) of CAPE below Base's, Adv.'s and DP's, one model per targeted "
          "variable, every variable (the 3% is compared through 'matches paper')", c1, DATASETS, SUBSTITUTES),
    Claim("C2", PAPER, "CAPE's task accuracy is comparable to DP alone, the competitive baseline",
          ("achieves comparable task performance against a competitive baseline while preserving privacy",),
          f"{SOURCE}, abstract; Table 3",
          "equivalence (0.02) of CAPE's accuracy with DP's (Lyu et al.'s noise alone), per targeted variable; not "
          "against Base, which §4 concedes is better ('Adding DP noise clearly harms performance outcomes')",
          c2, DATASETS, SUBSTITUTES, code_variant=True),
    Claim("C3", PAPER, "gender and location are recoverable, age range barely above chance",
          ("the attacker can predict the correct gender or location class effectively, results for age range are "
           "barely above random chance",),
          f"{SOURCE}, §4 (Discussion and Conclusion); Table 3",
          "on Base, attacker accuracy above chance (1/K) for gender and location; for the 6-bin age range no more "
          "than m above chance, m the largest such excess in Table 3", c3, DATASETS, dp="none"),
    Claim("C4", PAPER, "lower ε and higher λ give more privacy and cost more accuracy",
          ("Lower ϵ and higher λ values lead to increased privacy, but increase performance impact",),
          f"{SOURCE}, §3.3, Table 4",
          "Spearman's ρ over Table 4's sweeps: attacker F1 and accuracy rise with ε (λ = 1) and fall with λ "
          "(ε = 0.1), CAPE targeting gender", c4, DATASETS, SUBSTITUTES),
    Claim("C5", PAPER, "adversarial training can beat DP alone on the variable it targets",
          ("adversarial training can produce superior outcomes to a DP-only approach, if we consider the private "
           "variable targeted in training",),
          f"{SOURCE}, §4 (Discussion and Conclusion); Table 3",
          "attacker F1 of Adv. (targeting the variable) below DP's; 'can' asks for at least one variable",
          c5, DATASETS, SUBSTITUTES, hedge="can"),
    Claim("C6", PAPER, "adding DP noise harms task accuracy",
          ("Adding DP noise clearly harms performance outcomes",),
          f"{SOURCE}, §4 (Discussion and Conclusion); Table 3", "accuracy of DP below Base's", c6, DATASETS,
          SUBSTITUTES),
)
