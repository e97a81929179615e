"""A ``PyLayer.forward`` that reads a tensor that is not an argument of
``apply`` (a parameter of a Layer passed as a non-Tensor argument): eager
gives that tensor no gradient through the PyLayer (its ``backward`` returns
gradients for the Tensor arguments only), only from its other uses. Static
programs and AST failed to build the backward; every mode now gives
eager's gradients (SOT with ``MIN_GRAPH_SIZE=0``: one graph break, at the
PyLayer, which it runs eagerly)."""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks
from paddle.autograd import PyLayer


class UsesParameter(PyLayer):
    @staticmethod
    def forward(ctx, x, layer):
        return x * layer.weight.sum()

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = paddle.nn.Linear(2, 2)

    def forward(self, x):
        return UsesParameter.apply(x, self.lin) + self.lin(x)


X = np.array([[1.0, 2.0], [-0.5, 0.25]])


def _grads(mode):
    paddle.seed(0)
    net = Net().to(dtype="float64")
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    x = paddle.to_tensor(X, stop_gradient=False)
    net(x).sum().backward()
    return (
        x.grad.numpy(),
        net.lin.weight.grad.numpy(),
        net.lin.bias.grad.numpy(),
    )


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_to_static_matches_eager(mode):
    for got, want in zip(_grads(mode), _grads("eager")):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    if mode == "sot":
        # SOT cannot capture a forward reading an eager parameter: it breaks
        # the graph there and runs the PyLayer eagerly
        breaks = graph_breaks()
        assert len(breaks) == 1 and "cannot be captured" in breaks[0]


def test_static_program_gives_the_documented_gradients():
    """x.grad: the PyLayer's custom 2 * dy plus the Linear's row sums of
    W; W.grad and b.grad from the Linear only, as in eager."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            net = Net()
            x = paddle.static.data("x", [2, 2], "float32")
            x.stop_gradient = False
            loss = net(x).sum()
            grads = paddle.static.gradients(
                [loss], [x, net.lin.weight, net.lin.bias]
            )
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        gx, gw, gb, w = exe.run(
            main,
            feed={"x": X.astype("float32")},
            fetch_list=[*grads, net.lin.weight],
        )
    finally:
        paddle.disable_static()
    want_gx = np.broadcast_to(2.0 + w.sum(axis=1), X.shape)
    np.testing.assert_allclose(gx, want_gx, rtol=1e-6)
    np.testing.assert_allclose(
        gw, X.sum(axis=0)[:, None] * np.ones((1, 2)), rtol=1e-6
    )
    np.testing.assert_allclose(gb, [2.0, 2.0], rtol=1e-6)
