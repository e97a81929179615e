"""A list unpacked into a call (``fuse(*feats)``) whose length changes
between calls (a head over a variable number of feature maps): SOT gives
eager's outputs and gradients at each call, with and without a graph
break in the called function.

Stock SOT reused the code translated for the first length, which read
that many items: the other features were dropped, silently.
"""

import numpy as np
import paddle
import pytest

BREAK = []


def fuse(*feats):
    if BREAK:
        feats[0].numpy()  # a graph break in the called function
    out = feats[0]
    for f in feats[1:]:
        out = out + paddle.tanh(f)
    return out


class Head(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)

    def forward(self, feats, extra):
        if extra:
            return fuse(*feats, self.fc(feats[0]))
        return self.fc(fuse(*feats))


def _train(convert, extra):
    paddle.seed(11)
    paddle.set_default_dtype("float64")
    try:
        net = Head()
    finally:
        paddle.set_default_dtype("float32")
    step = paddle.jit.to_static(net) if convert else net
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    out = []
    for n in (2, 2, 3, 4, 2):
        rng = np.random.default_rng(n)
        feats = [
            paddle.to_tensor(rng.standard_normal([2, 3]), stop_gradient=False)
            for _ in range(n)
        ]
        loss = (step(feats, extra) ** 2).sum()
        loss.backward()
        out.append(
            [loss.numpy(), net.fc.weight.grad.numpy()]
            + [f.grad.numpy() for f in feats]
        )
        opt.step()
        opt.clear_grad()
    return out


@pytest.mark.parametrize("with_break", [False, True])
@pytest.mark.parametrize("extra", [False, True])
def test_star_args_of_changing_length(
    sot_env, fresh_sot_cache, extra, with_break
):
    BREAK[:] = [True] if with_break else []
    try:
        got, want = _train(True, extra), _train(False, extra)
    finally:
        BREAK.clear()
    for step, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w), step
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=f"step {step}")
