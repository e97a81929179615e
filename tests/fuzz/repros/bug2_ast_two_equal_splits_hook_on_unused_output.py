"""AST (full_graph=True): two identical `split`s of one input and a hook on
an unused output of the second make the run fail:

ValueError: (InvalidArgument) The variable middle_1 should exist
(pir_adaptor_util.cc:811).  Eager and SOT give [2, 0.5].
Found by the fuzzer (seed 1, program 93)."""

import numpy as np
from _common import compare, paddle


def f(x0):
    v1, v2 = paddle.split(x0, [1, 1], axis=0)
    v6, v7 = paddle.split(x0, [1, 1], axis=0)
    v7.register_hook(lambda g: g * 2.0)
    return paddle.matmul(v6, v2)


compare(f, [np.array([[0.5], [2.0]])], modes=("ast", "sot"))
