"""A tensor that ``forward`` stores on its Layer for a hook or the caller
to read (Grad-CAM's ``self.activations``, attention relevance): SOT stores
each call's Tensor, as eager; AST says why it cannot when the attribute is
used after the call (stock: a static ``Value`` failed later with
"The Scalar only supports Tensor with 1 element" or "'numpy' only can be
called by paddle.Tensor in dynamic graph mode").
"""

import numpy as np
import paddle
import pytest


class GradCamNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = paddle.nn.Linear(4, 3)
        self.head = paddle.nn.Linear(3, 2)
        self.activations = None
        self.gradients = None

    def forward(self, x):
        a = paddle.tanh(self.features(x))
        self.activations = a
        a.register_hook(self.save_gradient)
        return self.head(a)

    def save_gradient(self, g):
        self.gradients = g


def _cam(mode):
    paddle.seed(5)
    paddle.set_default_dtype("float64")
    try:
        net = GradCamNet()
    finally:
        paddle.set_default_dtype("float32")
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    cams = []
    for batch in (2, 3):
        x = paddle.to_tensor(np.random.default_rng(batch).random((batch, 4)))
        out = net(x)
        out[:, 1].sum().backward()
        cams.append((net.activations * net.gradients).sum(axis=1).numpy())
    return cams


def test_grad_cam_sot_is_eager(sot_env):
    for got, want in zip(_cam("sot"), _cam("eager")):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_grad_cam_ast_is_a_clear_error():
    with pytest.raises(RuntimeError, match="GradCamNet.activations. holds a"):
        _cam("ast")


class CachesAMask(paddle.nn.Layer):
    """Stores a traced tensor on itself and never reads it after the call:
    unchanged (stock runs it)."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)

    def forward(self, x):
        self.mask = (x > 0).astype(x.dtype)
        return self.fc(x * self.mask)


def test_stored_tensor_not_read_after_the_call_runs():
    x = paddle.rand([2, 3]) - 0.5
    paddle.seed(1)
    want = CachesAMask()(x).numpy()
    paddle.seed(1)
    net = CachesAMask()
    got = paddle.jit.to_static(net, full_graph=True)(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert "not usable after the trace" in repr(net.mask)
