"""AST / SOT: a hook on an input of the to_static function that gets no
gradient (its only use does not reach the output). Eager never runs the
hook and leaves x.grad None; to_static gives such an input a zero gradient
and runs the hook on it, so x.grad is `hook(0)` (here ones). Found by the
fuzzer (seed dupD with dup_prob 0.5, programs 2 and 8)."""

import numpy as np
from _common import compare


def f(x0, x1):
    _ = x0 * 3.0
    x0.register_hook(lambda g: g + 1.0)
    return x1 * 2.0


compare(f, [np.arange(3.0), np.arange(3.0)], modes=("ast", "sot"))
