"""A to_static trace that fails after it used a parameter (a shape error
in ``forward``, a clear error the series raises on purpose) leaves nothing
behind: Paddle's parameter recorders key their entries by the id of the
program being traced, and an entry left by a failed trace went to the next
program Python put at the freed program's address, with Values of the freed
program (a segmentation fault when the next call read their names)."""

import numpy as np
import paddle
import pytest
from paddle.jit.dy2static.parameter_recorder import (
    _global_inplace_map,
    _global_parameter_recorder,
)


class BadShape(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 6)

    def forward(self, x):
        return paddle.reshape(self.fc(x), [5, 5]).sum()


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 3)

    def forward(self, x):
        return (paddle.tanh(self.fc(x)) ** 2).mean()


def _train(model, step):
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    losses = []
    for batch in (2, 3, 5):
        x = paddle.to_tensor(
            np.random.default_rng(batch).standard_normal((batch, 4))
        )
        loss = step(x)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()]


@pytest.mark.parametrize("full_graph", [True, False])
def test_training_after_a_failed_trace_is_eagers(full_graph):
    paddle.set_default_dtype("float64")
    try:
        for _ in range(5):
            bad = paddle.jit.to_static(BadShape(), full_graph=full_graph)
            with pytest.raises(Exception, match="reshape|shape"):
                bad(paddle.ones([2, 4]))
            assert len(_global_parameter_recorder.params_dict) == 0
            assert len(_global_parameter_recorder.tensor2value) == 0
            assert len(_global_inplace_map.params_dict) == 0
            paddle.seed(3)
            eager = Net()
            paddle.seed(3)
            model = Net()
            want = _train(eager, eager)
            got = _train(
                model, paddle.jit.to_static(model, full_graph=full_graph)
            )
            np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
            for g, w in zip(got[1], want[1]):
                np.testing.assert_allclose(g, w, rtol=1e-10)
    finally:
        paddle.set_default_dtype("float32")
