"""AST: a hook registered in a tensor-dependent `if` on a value defined in
the branch (README: supported, "eager") that reads a forward tensor of the
branch (`lambda g: g * b`, README: supported) fails when the backward is
built: the closure cell of `b` holds an UndefinedVar.

TypeError: (InvalidType) full(): argument (position 2) must be double, but
got UndefinedVar ... raised by gradient hook ...true_fn_0.<locals>.<lambda>
Found by the fuzzer (seed 1, program 27)."""

import numpy as np
from _common import compare, paddle


def f(x0):
    if x0.mean() > 0:
        b = paddle.square(x0)
        b.register_hook(lambda g: g * b)
        r = b * 3.0
    else:
        r = x0 * 0.5
    return r


compare(f, [np.array([0.5, 2.0])], modes=("ast", "sot"))
