"""AST / SOT / plain static programs: a PyLayer backward that returns the
same tensor as the gradient of two inputs (`return d, d`) gives a silently
wrong gradient when one of those inputs is not a leaf (here `x1 * 2.0`):
the gradient of the other input comes out doubled. Eager is right (checked
by hand: d(out)/dx0 = cot * x1). Stock 3.3.1 AST has the same bug; the
patch set's new static-program PyLayer path and SOT capture inherit it.
Found by the fuzzer (seed ci, program 155; minimized by hand)."""

import numpy as np
from _common import compare
from paddle.autograd import PyLayer


class PL(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, d):
        return d, d


def f(x0, x1):
    y = PL.apply(x0, x1 * 2.0)
    return y * x1


compare(
    f,
    [np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.3, -0.7])],
    modes=("ast", "sot"),
)
