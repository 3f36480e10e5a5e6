"""DPNR (Lyu, He & Li 2020): representation tanh(Linear(h)) (the BERT pooler's form), dropout 0.1,
per-example min-max normalisation, Laplace noise on every coordinate in training and inference (robust
training, §3.3), and a linear classifier. Word dropout μ acts on the text before encoding; it is not a
parameter here (the pipeline extracts features per μ and passes μ to :mod:`privtext.privacy.accounting`).

``layer`` defaults to ``minmax`` with Lap(1/ε), as published, which is (D·ε)-DP, not ε-DP; use
``minmax_calibrated`` (Lap(D/ε)) or ``l1`` for an honest ε. ε defaults to 0.05 (DPNR's default, §4); with
noise on every coordinate, as the paper describes, Lap(20) on [0,1]^D leaves little signal — the reference
code's one noise scalar per example (docs/methods.md, "The reference code's departures") is what kept its accuracy high.

Departure: DPNR fine-tunes all of BERT with AdamW 5e-5 for 4 epochs, batch 64. Over frozen features only
the pooler-like layer and the classifier train, for which 4 epochs at 5e-5 barely move the weights, so
the defaults are AdamW 1e-3 for up to 20 epochs with early stopping on dev accuracy (patience 3, not before
epoch 10: the training rule of :mod:`privtext.methods.spec`).
"""

from __future__ import annotations

from privtext.methods.spec import TRAINING_RULE, MethodSpec

SPEC = MethodSpec("dpnr", grid_params=("epsilon",), defaults={
    "encoder_hidden": [], "representation_dim": None, "encoder_output_activation": "tanh",
    "representation_dropout": 0.1, "classifier_hidden": [], "dropout": 0.1, "activation": "relu",
    "layer": "minmax", "epsilon": 0.05,
    "optimizer": "adamw", "lr": 1e-3, "weight_decay": 0.0, "batch_size": 64, "epochs": 20,
    "patience": 3, "select_on": "accuracy", **TRAINING_RULE,
}, label="DPNR", colour="#D55E00", marker="P")
