"""CAPE (Plant, Giuffrida & Gkatzia 2021): shared Dense(256, relu) → dropout → Dense(256, relu), per-example
min-max normalisation and Laplace noise, then classifier and adversary heads Dense(256, relu) → dropout →
softmax, the adversary behind a gradient reversal layer with constant λ (§3). Adam 1e-4, dropout 0.4 and
hidden 256 are the paper's grid-search choices; batch 64, 20 epochs, early stopping with patience 3 on dev
loss. ε = 0.1, λ = 1.0 as in Table 3.

``layer`` defaults to ``minmax`` with Lap(1/ε) as published ((D·ε)-DP); ``minmax_calibrated``/``l1`` give ε.
Not reproduced from the reference code: noise sampled once per model, min-max over the batch. The dev loss
used for early stopping is the task loss only (Keras' val_loss also summed the adversary's loss).
"""

from __future__ import annotations

from privtext.methods.spec import ADVERSARIAL, TRAINING_RULE, MethodSpec

SPEC = MethodSpec("cape", grid_params=("epsilon", "lambda"), defaults={
    **ADVERSARIAL,
    "encoder_hidden": [256], "representation_dim": 256, "encoder_output_activation": "relu",
    "representation_dropout": 0.0, "classifier_hidden": [256], "adversary_hidden": [256],
    "dropout": 0.4, "activation": "relu", "layer": "minmax", "epsilon": 0.1,
    "lambda": 1.0, "lambda_schedule": "constant",
    "optimizer": "adam", "lr": 1e-4, "weight_decay": 0.0, "batch_size": 64, "epochs": 20,
    "patience": 3, "select_on": "loss", **TRAINING_RULE,
}, label="CAPE", colour="#009E73", marker="X")
