"""The handle of a parameter hook that ``forward`` registers, removed in a
later call (traced as another program under AST) or outside the function,
stops the hook as in eager, and a later call that registers it again
brings it back: SOT and AST against eager, over a sequence of steps that
revisits cached programs.
"""

import numpy as np
import paddle
import pytest

STEPS = (0, 1, 2, 1, 0, 1, 2, 1, 0, 1)


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.lin = paddle.nn.Linear(3, 2)
        self.h = None

    def forward(self, x, step):
        if step == 0:
            self.h = self.lin.weight.register_hook(lambda g: g * 3.0)
        if step == 2:
            self.h.remove()
        return self.lin(x)


def _weight_grads(mode):
    paddle.seed(0)
    net = Net()
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    x = paddle.to_tensor(np.linspace(-1.0, 1.0, 6).reshape([2, 3]))
    x = x.astype("float32")
    grads = []
    for step in STEPS:
        net(x, step).sum().backward()
        grads.append(net.lin.weight.grad.numpy())
        net.clear_gradients()
    net.h.remove()  # outside the function
    net(x, 1).sum().backward()
    grads.append(net.lin.weight.grad.numpy())
    return grads


@pytest.mark.parametrize("mode", ["sot", "ast"])
def test_handle_removed_in_a_later_call(mode):
    want = _weight_grads("eager")
    got = _weight_grads(mode)
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"call {step}")
