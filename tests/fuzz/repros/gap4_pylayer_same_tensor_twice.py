"""AST / SOT / plain static programs: `PyLayer.apply(x, x)` (one tensor
passed twice) fails with a cryptic error; eager gives the sum of both
gradients. Also in stock 3.3.1 for AST (not introduced by the patch set),
but not documented in the README, and the new static-program and SOT paths
hit it too:

ValueError: [Hint: Expected ret_num == 1 == true, but received
ret_num == 1:0 != true:1.] (python_callable_registry.cc:44)"""

import numpy as np
from _common import compare
from paddle.autograd import PyLayer


class PL(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, d):
        return d, d * 2.0


def f(x):
    return PL.apply(x, x)


compare(f, [np.arange(3.0)], modes=("ast", "sot"))
