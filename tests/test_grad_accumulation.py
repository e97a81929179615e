"""Gradients accumulate across to_static calls that need a new program
(micro-batches with a partial last batch, variable sequence lengths), as in
eager: no ``clear_grad`` between the calls, with hooks and a PyLayer in
``forward``, under SOT and AST.

Stock Paddle replaced each parameter's gradient by an empty one whenever a
call built a new program (``_set_grad_type``), so only the calls since the
last new program counted, silently.
"""

import numpy as np
import paddle
import pytest
from conftest import Square

MODES = ("sot", "ast")
LOG = []


class Net(paddle.nn.Layer):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.fc1 = paddle.nn.Linear(4, 5)
        self.fc2 = paddle.nn.Linear(5, 2)

    def forward(self, x):
        h = paddle.tanh(self.fc1(x))
        if self.kind == "hook":
            h.register_hook(lambda g: g * 0.5)
        elif self.kind == "logging_hook":
            h.register_hook(lambda g: LOG.append(float(g.sum())))
        elif self.kind == "pylayer":
            h = Square.apply(h)
        return self.fc2(h)


def _accumulate(kind, mode, batches, set_to_zero=None):
    paddle.seed(2026)
    net = Net(kind)
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    rng = np.random.default_rng(5)
    LOG.clear()
    out = []
    for i, batch in enumerate(batches):
        x = paddle.to_tensor(rng.standard_normal([batch, 4]).astype("float32"))
        net(x).square().mean().backward()
        out.append([p.grad.numpy() for p in net.parameters()])
        if set_to_zero is not None and i == 1:
            net.clear_gradients(set_to_zero=set_to_zero)
    return out, list(LOG)


def _assert_same(got, want):
    (got_grads, got_log), (want_grads, want_log) = got, want
    for step, (g, w) in enumerate(zip(got_grads, want_grads)):
        for i, (a, b) in enumerate(zip(g, w)):
            np.testing.assert_allclose(
                a, b, rtol=1e-5, atol=1e-6, err_msg=f"call {step}, grad {i}"
            )
    np.testing.assert_allclose(got_log, want_log, rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["plain", "hook", "logging_hook", "pylayer"])
def test_accumulates_over_new_shapes(kind, mode):
    batches = (2, 3, 4, 3, 2)
    _assert_same(
        _accumulate(kind, mode, batches), _accumulate(kind, "eager", batches)
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("set_to_zero", [True, False])
def test_clear_gradients_between_new_shapes(mode, set_to_zero):
    batches = (2, 3, 4, 5)
    _assert_same(
        _accumulate("hook", mode, batches, set_to_zero),
        _accumulate("hook", "eager", batches, set_to_zero),
    )
