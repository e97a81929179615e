"""SOT: a hook on an input registered before a tensor-dependent `if` (a
graph break) is applied to each partial gradient separately instead of to
the total gradient (sin(g1) + g2 instead of sin(g1 + g2)): a silent wrong
gradient. AST gives eager's result. (README: SOT with `if` "not tested".)
Found by the fuzzer (seed 1, program 48; seed 100, program 25)."""

import numpy as np
from _common import compare, paddle


def f(x0, x1):
    v = paddle.sin(x1)
    x1.register_hook(lambda g: paddle.sin(g))
    if x1.mean() > 0:
        r = x0 + v - x1
    else:
        r = x0 * 2.0
    return r * r


compare(f, [np.array([0.3, -1.2]), np.array([0.7, 1.9])], modes=("ast", "sot"))
