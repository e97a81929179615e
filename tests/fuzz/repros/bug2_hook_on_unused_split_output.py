"""AST / SOT / plain static programs: a hook on an output of a multi-output
op (`paddle.split`) that the loss does not use. Eager runs the hook on the
zero gradient that split's grad node fills in for that output, so the hook's
result reaches x; the static paths never run it: x.grad differs, with no
error. Found by the fuzzer (seed dupD with dup_prob 0.5, program 103)."""

import numpy as np
from _common import compare, paddle


def f(x0):
    a, b = paddle.split(x0 * 2.0, [3, 1])
    b.register_hook(lambda g: g + 1.0)
    return a


compare(f, [np.arange(4.0)], modes=("ast", "sot"))
