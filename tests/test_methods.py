"""Methods: the registry contract, determinism, the adversarial update, and behaviour on planted data."""

from __future__ import annotations

import numpy as np
import pytest
import safetensors.torch
import torch
import torch.nn.functional as F
from sklearn.linear_model import LogisticRegression

from conftest import without_timings
from privtext.methods import METHODS, Split, build_method
from privtext.methods.base import orthogonality_penalty
from privtext.methods.inlp_model import inlp_projection, nullspace_projection
from privtext.training.nn import lambda_schedule
from privtext.training.loop import (PLATEAU_TOLERANCE, PLATEAU_WINDOW, TaskClassifier, TensorSplit, TrainingSettings,
                               converged, train)

torch.set_num_threads(1)
ATTRIBUTES = {"planted": 2, "other": 3}
FAST = {"batch_size": 64, "epochs": 2}  # every neural method accepts these
# The grid parameters of the methods the papers define, pinned so that a spec edit changing them is deliberate.
# A method added later needs no entry: its spec is checked when it is made (MethodSpec.__post_init__).
PINNED_GRID_PARAMS = {
    "majority": (), "nonpriv": (), "adv": ("lambda",), "adv_br": ("lambda",), "multiadv": ("lambda", "lambda_orth"),
    "inlp": ("n_iter",), "noise": ("epsilon",), "dpnr": ("epsilon",), "cape": ("epsilon", "lambda"),
    "federate": ("epsilon", "lambda"), "dpnr_calibrated": ("epsilon",), "cape_calibrated": ("epsilon", "lambda"),
    "dpnr_code": ("epsilon",), "cape_code": ("epsilon", "lambda"), "dpnr_nonpriv": (), "cape_base": (),
    "cape_adv": ("lambda",), "cape_dp": ("epsilon",), "cape_dp_calibrated": ("epsilon",),
    "cape_dp_code": ("epsilon",),
}


def planted_split(n: int, seed: int) -> Split:
    """y (3 classes) in dims 0–2; a balanced binary attribute planted strongly in dims 3–4, independent
    of y; a 3-valued attribute that is pure noise."""
    rng = np.random.default_rng(seed)
    y, planted, other = rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 3, n)
    X = rng.standard_normal((n, 16)).astype(np.float32)
    X[np.arange(n), y] += 3.0
    X[:, 3:5] += (4.0 * planted - 2.0)[:, None]
    return Split(X, y, {"planted": planted, "other": other})


@pytest.fixture(scope="module")
def data() -> dict[str, Split]:
    return {"train": planted_split(600, 0), "dev": planted_split(300, 1), "test": planted_split(600, 2)}


def build(name: str, params: dict | None = None, seed: int = 1):
    fast = FAST if name != "majority" else {}
    return build_method(name, {**fast, **(params or {})}, input_dim=16, n_classes=3,
                        attribute_sizes=ATTRIBUTES, seed=seed, threads=1)


def linear_attack(method, data: dict[str, Split]) -> float:
    """Accuracy on test of a fresh logistic regression trained on released train representations."""
    probe = LogisticRegression(max_iter=2000).fit(method.release(data["train"].X), data["train"].Z["planted"])
    return probe.score(method.release(data["test"].X), data["test"].Z["planted"])


def majority_rate(data: dict[str, Split]) -> float:
    return np.bincount(data["test"].Z["planted"]).max() / len(data["test"].y)


# -- the registry contract --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(METHODS))
def test_method_fits_and_returns_well_formed_outputs(name: str, data: dict[str, Split]) -> None:
    method = build(name)
    history = method.fit(data["train"], data["dev"])
    X = data["test"].X[:50]
    predictions, released = method.predict(X), method.release(X)
    assert predictions.shape == (50,) and predictions.dtype == np.int64
    assert set(predictions) <= {0, 1, 2}
    assert released.shape == (50, method.representation_dim) and released.dtype == np.float32
    assert method.predict_released(released).shape == (50,)
    assert {"epochs_run", "best_epoch", "epochs"} <= set(history)
    # every run records how much it was optimised and whether dev accuracy had plateaued
    n = len(data["train"].y)
    batch = min(FAST["batch_size"], -(-n // 50))  # the training rule: at least 50 steps an epoch
    steps = 0 if name == "majority" else FAST["epochs"] * -(-n // batch)
    assert history["optimizer_steps"] == steps and isinstance(history["converged"], bool)
    if name != "majority":
        assert history["batch_size"] == batch and history["required_steps"] == 10 * -(-n // batch)
    safetensors.torch.save(method.state_dict())  # raises on non-tensor or shared storage


def test_the_same_architecture_ablations_differ_from_their_method_only_in_noise_or_adversary() -> None:
    def parts(name: str) -> tuple:
        return (METHODS[name].privacy_layer, METHODS[name].adversarial)

    assert parts("dpnr_nonpriv") == (None, False) and parts("cape_base") == (None, False)
    assert parts("cape_adv") == (None, True) and parts("cape_dp") == ("minmax", False)
    architecture = ("encoder_hidden", "representation_dim", "classifier_hidden", "dropout", "optimizer", "lr",
                    "batch_size", "epochs", "patience", "select_on")
    for ablation, method in (("dpnr_nonpriv", "dpnr"), ("cape_base", "cape"), ("cape_adv", "cape"),
                             ("cape_dp", "cape")):
        assert {k: METHODS[ablation].defaults[k] for k in architecture} == {
            k: METHODS[method].defaults[k] for k in architecture}
    assert build("dpnr_nonpriv").representation_dim == build("dpnr").representation_dim


def test_the_plateau_criterion_on_hand_cases() -> None:
    w = PLATEAU_WINDOW
    flat = [0.5, 0.6, 0.7] + [0.7 + PLATEAU_TOLERANCE / 2] * (2 * w)
    rising = [0.5, 0.6, 0.7] + [0.7 + 0.01 * k for k in range(1, 2 * w + 1)]
    assert converged(flat) and not converged(rising)
    assert not converged([0.5] * (2 * w - 1))  # too few epochs to tell
    assert converged([0.5, 0.6], stopped_early=True)  # patience ran out: dev stopped improving


def test_the_plateau_criterion_is_not_fooled_by_noisy_dev_scores() -> None:
    """A DP method's dev accuracy goes through fresh noise every epoch: a flat but noisy curve has converged
    (its running maximum keeps creeping up by chance), a clearly rising noisy one has not."""
    rng = np.random.default_rng(0)
    flat_noisy = 0.70 + rng.normal(0, 0.01, (2000, 20))
    assert np.mean([converged(list(curve)) for curve in flat_noisy]) >= 0.95
    rising_noisy = 0.5 + 0.01 * np.arange(20) + rng.normal(0, 0.01, (2000, 20))
    assert np.mean([converged(list(curve)) for curve in rising_noisy]) <= 0.01
    w = PLATEAU_WINDOW
    assert not converged([0.70] * w + [0.73] * w)  # a clean rise of 0.03 between windows


def test_the_training_rule_shrinks_the_batch_and_delays_early_stopping() -> None:
    settings = TrainingSettings(epochs=45, batch_size=2000, lr=1e-3)
    assert settings.batch_size_for(10_000) == 200  # FEDERATE's 2,000 would give 5 steps an epoch
    assert settings.batch_size_for(200_000) == 2000  # the paper's batch where the paper's rows are
    assert settings.required_steps(10_000) == 10 * 50
    assert TrainingSettings(epochs=4, batch_size=64, lr=1e-3).batch_size_for(10_000) == 64
    # patience 1 would stop after epoch 2 on a constant dev score; the rule keeps it going to epoch 10
    model = torch.nn.Linear(3, 2)
    split = TensorSplit(torch.zeros(100, 3), torch.zeros(100, dtype=torch.long), {})
    history = train(TaskClassifier(model), split, split, TrainingSettings(epochs=30, batch_size=10, lr=1e-3, patience=1),
                    generator=torch.Generator().manual_seed(0))
    assert history["epochs_run"] == 10 and history["optimizer_steps"] == history["required_steps"] == 10 * 50


class ScriptedDevAccuracy(torch.nn.Module):
    """A model whose dev accuracy after epoch e is ``curve[e]`` (one optimiser step an epoch): dev rows carry
    x = (i + 0.5) / n with label 1, and the model calls a row right when x < the scripted accuracy."""

    def __init__(self, curve: list[float]) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.curve, self.steps = curve, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        right = x[:, 0] < self.curve[min(self.steps, len(self.curve)) - 1]
        return torch.stack([(~right).float(), right.float()], 1)

    def training_loss(self, x: torch.Tensor, y: torch.Tensor, z: dict) -> torch.Tensor:
        self.steps += 1
        return (self.weight ** 2).sum()


@pytest.mark.parametrize("curve, epochs, expected_epochs, expected_converged", [
    ([0.5 + 0.01 * e for e in range(200)], 10, 30, False),  # still rising at the cap: 3 x 10 epochs, says so
    ([min(0.5 + 0.02 * e, 0.8) for e in range(200)], 10, 23, True),  # flat from epoch 15: stops once the plateau shows
    ([0.8] * 200, 10, 10, True),  # converged within its epochs: not one more
    ([0.5 + 0.01 * e for e in range(200)], 4, 4, False),  # too short a budget to judge: never extended
])
def test_a_run_still_rising_after_its_epochs_trains_on_until_it_plateaus_or_reaches_the_cap(
        curve: list[float], epochs: int, expected_epochs: int, expected_converged: bool) -> None:
    n_dev = 1000
    train_split = TensorSplit(torch.zeros(10, 1), torch.ones(10, dtype=torch.long), {})
    dev_split = TensorSplit(((torch.arange(n_dev) + 0.5) / n_dev)[:, None], torch.ones(n_dev, dtype=torch.long), {})
    settings = TrainingSettings(epochs=epochs, batch_size=10, lr=1e-3, min_steps_per_epoch=1, max_epochs_factor=3)
    history = train(ScriptedDevAccuracy(curve), train_split, dev_split, settings,
                    generator=torch.Generator().manual_seed(0))
    assert [round(r["dev_accuracy"], 3) for r in history["epochs"]] == [round(a, 3) for a in curve[:expected_epochs]]
    assert history["epochs_run"] == expected_epochs and history["epochs_planned"] == epochs
    assert history["converged"] is expected_converged
    assert TrainingSettings(epochs=epochs, batch_size=10, lr=1e-3).max_epochs == epochs  # the default: never


@pytest.mark.parametrize("name", list(PINNED_GRID_PARAMS))
def test_method_declares_its_grid_params_with_paper_defaults(name: str) -> None:
    cls = METHODS[name]
    assert cls.grid_params == PINNED_GRID_PARAMS[name]
    assert set(cls.grid_params) <= set(cls.defaults)


def test_privacy_layer_and_representation_dim_follow_the_papers() -> None:
    assert build("dpnr").privacy_layer == ("minmax", 0.05) and build("dpnr").representation_dim == 16
    assert build("cape").privacy_layer == ("minmax", 0.1) and build("cape").representation_dim == 256
    assert build("federate").privacy_layer == ("l1", 8.0) and build("noise").privacy_layer == ("l1", 8.0)
    assert build("nonpriv").privacy_layer is None and build("nonpriv").representation_dim == 50
    assert build("dpnr", {"layer": "minmax_calibrated"}).privacy_layer == ("minmax_calibrated", 0.05)
    # the claims study's honest-ε twins: the same models with Lap(D/ε)
    assert build("dpnr_calibrated").privacy_layer == ("minmax_calibrated", 0.05)
    assert build("cape_calibrated").privacy_layer == ("minmax_calibrated", 0.1)


def test_unknown_method_error_names_it_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match="'dpsgd'.*majority, nonpriv, adv"):
        build_method("dpsgd", {}, input_dim=4, n_classes=2, attribute_sizes={}, seed=0)


def test_unknown_param_error_names_it_and_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"'federate'.*\['mu'\].*allowed:.*epsilon.*lambda"):
        build("federate", {"mu": 0.1})


@pytest.mark.parametrize(("name", "params", "message"), [
    ("noise", {"epsilon": 0}, "epsilon.*0"),
    ("cape", {"layer": "l2"}, "layer.*'l2'"),
    ("adv", {"lambda_schedule": "linear"}, "lambda_schedule.*'linear'"),
    ("adv", {"attributes": ["age"]}, r"\['age'\]"),
])
def test_invalid_param_values_are_rejected_with_their_value(name: str, params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build(name, params)


def test_split_with_wrong_feature_dimension_is_rejected(data: dict[str, Split]) -> None:
    bad = Split(data["train"].X[:, :10], data["train"].y, data["train"].Z)
    with pytest.raises(ValueError, match=r"\[n, 16\].*\(600, 10\)"):
        build("nonpriv").fit(bad, data["dev"])


# -- determinism and noise -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["federate", "multiadv", "inlp", "cape"])
def test_same_seed_gives_bitwise_identical_results(name: str, data: dict[str, Split]) -> None:
    runs = []
    for _ in range(2):
        method = build(name)
        history = method.fit(data["train"], data["dev"])
        runs.append((history, method.predict(data["test"].X), method.release(data["test"].X),
                     method.state_dict()))
    (h1, p1, r1, s1), (h2, p2, r2, s2) = runs
    assert without_timings(h1) == without_timings(h2) and np.array_equal(p1, p2) and np.array_equal(r1, r2)
    assert all(torch.equal(s1[k], s2[k]) for k in s1)


def test_different_seeds_give_different_models(data: dict[str, Split]) -> None:
    a, b = build("nonpriv", seed=1), build("nonpriv", seed=2)
    a.fit(data["train"], data["dev"]), b.fit(data["train"], data["dev"])
    assert not np.array_equal(a.release(data["test"].X), b.release(data["test"].X))


@pytest.mark.parametrize("name", ["noise", "dpnr", "cape", "federate"])
def test_released_noise_is_fresh_on_every_call(name: str, data: dict[str, Split]) -> None:
    method = build(name)
    method.fit(data["train"], data["dev"])
    first, second = method.release(data["test"].X[:20]), method.release(data["test"].X[:20])
    assert not np.isclose(first, second).any()


def test_non_private_release_is_deterministic(data: dict[str, Split]) -> None:
    method = build("nonpriv")
    method.fit(data["train"], data["dev"])
    assert np.array_equal(method.release(data["test"].X), method.release(data["test"].X))


# -- training: adversarial update, schedule, model selection ----------------------------------------------
def test_adversarial_update_reverses_the_attribute_gradient_into_the_encoder(data: dict[str, Split]) -> None:
    """One backward pass gives E: ∇CE(y) − λ∇CE(z); A: ∇CE(z) (FEDERATE Algorithm 1)."""
    method = build("adv", {"dropout": 0.0, "attributes": ["planted"]})
    model = method.build_model(noise_seed=0)
    model.reversal.lambda_ = 0.7
    x = torch.from_numpy(data["train"].X[:64])
    y, z = torch.from_numpy(data["train"].y[:64]), torch.from_numpy(data["train"].Z["planted"][:64])

    def gradients(loss: torch.Tensor) -> list[torch.Tensor]:
        model.zero_grad()
        loss.backward()
        return [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]

    joint = gradients(model.training_loss(x, y, {"planted": z}))
    task = gradients(F.cross_entropy(model(x), y))
    attribute = gradients(F.cross_entropy(model.adversaries[0](model.encoder(x))[:, 0], z))
    names = [name for name, _ in model.named_parameters()]
    for name, g_joint, g_task, g_attr in zip(names, joint, task, attribute):
        expected = g_task - 0.7 * g_attr if name.startswith("encoder") else g_task + g_attr
        assert torch.allclose(g_joint, expected, atol=1e-6), name


def test_best_response_steps_move_only_the_adversaries_before_each_joint_step(data: dict[str, Split]) -> None:
    method = build("adv_br", {"epochs": 1, "batch_size": 200, "adversary_steps": 3, "min_steps_per_epoch": 1})
    model = method.build_model(noise_seed=0)
    encoder_before = [p.detach().clone() for p in model.encoder.parameters()]
    model.adversary_loss(torch.from_numpy(data["train"].X[:64]),
                         {a: torch.from_numpy(v[:64]) for a, v in data["train"].Z.items()}).backward()
    assert all(p.grad is None for p in [*model.encoder.parameters(), *model.classifier.parameters()])
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.adversary_parameters())

    calls = []
    adversary_loss = model.adversary_loss
    model.adversary_loss = lambda x, z: calls.append(len(x)) or adversary_loss(x, z)
    model.zero_grad()
    train(model, method.check_split(data["train"], "train"), method.check_split(data["dev"], "dev"),
          method.settings, generator=torch.Generator().manual_seed(0))
    assert calls == [200] * 9  # 600 examples, batches of 200, 3 adversary-only updates before each
    assert all(not torch.equal(a, p) for a, p in zip(encoder_before, model.encoder.parameters()))


def test_scheduled_lambda_is_applied_per_epoch(data: dict[str, Split]) -> None:
    history = build("federate", {"epochs": 4, "lambda": 2.0}).fit(data["train"], data["dev"])
    assert [e["lambda"] for e in history["epochs"]] == [lambda_schedule(2.0, e, 4, 7.0) for e in range(4)]


def test_cape_keeps_lambda_constant(data: dict[str, Split]) -> None:
    history = build("cape", {"lambda": 0.5}).fit(data["train"], data["dev"])
    assert {e["lambda"] for e in history["epochs"]} == {0.5}


def test_best_epoch_is_the_best_dev_accuracy_for_federate(data: dict[str, Split]) -> None:
    history = build("federate", {"epochs": 6}).fit(data["train"], data["dev"])
    accuracies = [e["dev_accuracy"] for e in history["epochs"]]
    assert history["epochs_run"] == 6 and history["best_epoch"] == int(np.argmax(accuracies))


def test_cape_selects_and_stops_on_dev_loss(data: dict[str, Split]) -> None:
    history = build("cape", {"epochs": 40, "patience": 2, "lr": 1e-2, "min_epochs": 1}).fit(data["train"], data["dev"])
    losses = [e["dev_loss"] for e in history["epochs"]]
    assert history["best_epoch"] == int(np.argmin(losses))
    assert history["epochs_run"] == history["best_epoch"] + 3  # stopped after 2 epochs without improvement


def test_orthogonality_penalty_is_zero_for_orthogonal_and_maximal_for_equal_adversaries() -> None:
    h = torch.zeros(4, 2, 3)  # [examples, adversaries, hidden units]
    h[:2, 0], h[2:, 1] = torch.rand(2, 3) + 0.1, torch.rand(2, 3) + 0.1  # active on disjoint examples
    assert orthogonality_penalty(h).item() == 0.0
    same = torch.randn(8, 1, 3).expand(8, 2, 3)
    assert orthogonality_penalty(same).item() > 0.1


def test_majority_predicts_the_training_majority_and_releases_nothing(data: dict[str, Split]) -> None:
    method = build("majority")
    method.fit(data["train"], data["dev"])
    expected = np.bincount(data["train"].y).argmax()
    assert (method.predict(data["test"].X) == expected).all()
    assert not method.release(data["test"].X).any()


# -- behaviour on planted data ----------------------------------------------------------------------------
def test_nonpriv_release_leaks_the_planted_attribute(data: dict[str, Split]) -> None:
    method = build("nonpriv", {"epochs": 10})
    method.fit(data["train"], data["dev"])
    assert linear_attack(method, data) > 0.9 > majority_rate(data) + 0.3
    assert (method.predict(data["test"].X) == data["test"].y).mean() > 0.9


@pytest.mark.parametrize("name", ["noise", "federate"])
def test_small_epsilon_release_hides_the_planted_attribute(name: str, data: dict[str, Split]) -> None:
    method = build(name, {"epsilon": 0.1, "epochs": 5})
    method.fit(data["train"], data["dev"])
    assert linear_attack(method, data) < majority_rate(data) + 0.08


def test_best_response_adversary_lowers_leakage_where_the_simultaneous_update_raises_it(
        data: dict[str, Split]) -> None:
    """With one simultaneous update the encoder makes its lagging adversary wrong and the attribute stays
    (inverted); an adversary near its best response makes the encoder remove it, at no task cost."""
    def fitted(name: str, params: dict) -> object:
        method = build(name, {"epochs": 30, **params})
        method.fit(data["train"], data["dev"])
        return method

    nonpriv = fitted("nonpriv", {})
    simultaneous = fitted("adv_br", {"attributes": ["planted"], "adversary_steps": 0})
    best_response = fitted("adv_br", {"attributes": ["planted"]})
    leak = {m: linear_attack(m, data) for m in (nonpriv, simultaneous, best_response)}
    assert leak[best_response] < leak[nonpriv] - 0.1 and leak[best_response] < leak[simultaneous] - 0.1
    assert leak[simultaneous] > 0.95
    assert (best_response.predict(data["test"].X) == data["test"].y).mean() > 0.9


def test_inlp_release_hides_the_attribute_from_a_linear_attacker(data: dict[str, Split]) -> None:
    method = build("inlp", {"n_iter": 30, "epochs": 10, "attributes": ["planted"]})
    method.fit(data["train"], data["dev"])
    assert linear_attack(method, data) < majority_rate(data) + 0.1
    assert (method.predict(data["test"].X) == data["test"].y).mean() > 0.85


def test_inlp_projection_is_an_orthogonal_projector_removing_the_probe_rows() -> None:
    rows = np.random.default_rng(0).standard_normal((3, 7))
    projection = nullspace_projection(rows, 7)
    assert np.allclose(projection @ projection, projection) and np.allclose(projection, projection.T)
    assert np.allclose(rows @ projection, 0.0) and np.isclose(np.trace(projection), 4.0)


def test_inlp_stops_once_every_direction_is_removed() -> None:
    rng = np.random.default_rng(0)
    projection, log = inlp_projection(rng.standard_normal((300, 4)), {"a": rng.integers(0, 3, 300)}, 5, 0)
    assert np.allclose(projection, 0.0) and log[-1]["rank_removed"] == 4 and len(log) < 5
