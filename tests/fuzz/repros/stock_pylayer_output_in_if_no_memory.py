"""Stock Paddle 3.3.1 bug (not fixed here; a clear error, not a wrong
gradient): a PyLayer with a saved tensor whose output is read in both
branches of a tensor-dependent `if` under to_static(full_graph=True) fails
in backward with `PreconditionNotMetError: Tensor holds no memory ...
[operator < pd_op.if > error]`. Found by the fuzzer (seed ci, program 146).
Run: python tests/fuzz/repros/stock_pylayer_output_in_if_no_memory.py
"""

import numpy as np
from _common import compare, paddle
from paddle.autograd import PyLayer


class PL0(PyLayer):
    @staticmethod
    def forward(ctx, a0, a1):
        ctx.save_for_backward(a1)
        return paddle.sin(paddle.square(a1)), paddle.exp(paddle.tanh(a1))

    @staticmethod
    def backward(ctx, d0, d1):
        (s0,) = ctx.saved_tensor()
        return d0 * s0, d0 * paddle.cos(s0) + d1 * s0


def f(x0, x1):
    v3, v4 = PL0.apply(x1, paddle.cos(x1))
    v8 = paddle.mean(v4, axis=1, keepdim=True) - x0 * x0
    if x1.mean() > 0:
        r = paddle.sin(paddle.cos(v4))
    else:
        r = v4 / (paddle.square(v8) + 1.0)
    return paddle.transpose(v3, perm=[1, 0]) + paddle.reshape(r, [2, 4])


rng = np.random.default_rng(0)
compare(f, [rng.standard_normal([4, 1]), np.abs(rng.standard_normal([4, 2]))])
