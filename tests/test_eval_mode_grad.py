"""A to_static Layer in eval mode is differentiable, as in eager.

Saliency maps and adversarial inputs on a frozen model call ``model.eval()``
and differentiate the output with respect to the input (and parameters).
Each test compares the input and parameter gradients, and the side effects
of a hook registered in ``forward``, with eager, in AST and SOT
(``MIN_GRAPH_SIZE=0``, 0 graph breaks), over batch sizes 2, 4, 4; a call
under ``paddle.no_grad()`` runs the inference program and matches eager's
output.
"""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks

SEEN = []


class FrozenNet(paddle.nn.Layer):
    def __init__(self, hook):
        super().__init__()
        self.bn = paddle.nn.BatchNorm1D(3)
        self.fc = paddle.nn.Linear(3, 2)
        self.drop = paddle.nn.Dropout(0.5)
        self.hook = hook

    def forward(self, x):
        h = self.bn(x)
        if self.hook:
            h.register_hook(lambda g: SEEN.append(float(g.abs().sum())))
        return self.drop(self.fc(h)).sum()


def _run(mode, hook):
    SEEN.clear()
    paddle.seed(0)
    net = FrozenNet(hook).to(dtype="float64")
    net.eval()
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    out = []
    for batch in (2, 4, 4):
        rng = np.random.default_rng(batch)
        x = paddle.to_tensor(
            rng.standard_normal((batch, 3)), stop_gradient=False
        )
        net(x).backward()
        out += [x.grad.numpy(), net.fc.weight.grad.numpy()]
        net.clear_gradients()
        if not hook:  # (eager cannot register a hook under no_grad)
            with paddle.no_grad():
                out.append(net(x).numpy())
    return out, list(SEEN)


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("hook", [False, True], ids=["no_hook", "hook"])
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_eval_mode_layer_gives_eager_gradients(mode, hook):
    want, want_seen = _run("eager", hook)
    got, got_seen = _run(mode, hook)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    assert got_seen == want_seen
    if mode == "sot":
        assert graph_breaks() == []


def _fine_tune_frozen(mode, hook):
    """Fine-tuning with frozen batch-norm statistics: ``eval()``, an input
    that needs no gradient, an optimizer stepping on the parameters."""
    SEEN.clear()
    paddle.seed(0)
    net = FrozenNet(hook).to(dtype="float64")
    net.eval()
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    out = []
    for batch in (2, 3, 4):
        rng = np.random.default_rng(batch)
        x = paddle.to_tensor(rng.standard_normal((batch, 3)))
        loss = net(x)
        loss.backward()
        out += [loss.numpy(), net.fc.weight.grad.numpy()]
        out += [net.bn.weight.grad.numpy()]
        opt.step()
        opt.clear_grad()
        out += [p.numpy() for p in net.parameters()]
    return out, list(SEEN)


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("hook", [False, True], ids=["no_hook", "hook"])
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_eval_mode_layer_gives_parameters_their_gradients(mode, hook):
    want, want_seen = _fine_tune_frozen("eager", hook)
    got, got_seen = _fine_tune_frozen(mode, hook)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    assert got_seen == want_seen
    if mode == "sot":
        assert graph_breaks() == []
