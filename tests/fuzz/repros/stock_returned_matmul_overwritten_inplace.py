"""Stock Paddle 3.3.1 bug (not fixed here; no hook or PyLayer involved):
a to_static function (AST and SOT) returning a `matmul` result that it
also adds to itself returns the *sum* in its place: the inplace pass lets
`v2 + v2` write into the buffer of `v2`, an output of the program. Found by
the fuzzer (seed s10, program 50) once programs return a second value the
caller does not differentiate; minimized. Run:
python tests/fuzz/repros/stock_returned_matmul_overwritten_inplace.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

import paddle  # noqa: E402
from harness import check  # noqa: E402

INPUT_SHAPES = [[2, 3]]


def f(x0):
    v2 = paddle.matmul(x0, x0, transpose_y=True)
    v5 = v2 + v2
    return v5, v2


if __name__ == "__main__":
    res = check(globals(), ["ast", "sot"], verbose=True)
    print(res)
    sys.exit(0 if all(r[0] == "pass" for r in res.values()) else 1)
