"""Stock Paddle 3.3.1 bug (not fixed here; no hook or PyLayer involved): the
backward of the simplest tensor-dependent `while` loop under
to_static(full_graph=True) fails on CPU at run time with `(InvalidArgument)
The variable middle_0 should exist` (a value the backward program reads
from the forward program is not in the scope). This is why a hook inside
such a loop is a clear error by design: the loop itself cannot be
differentiated. Run:
python tests/fuzz/repros/stock_while_loop_backward_middle.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

import paddle  # noqa: E402
from harness import check  # noqa: E402

INPUT_SHAPES = [[3]]


def f(x0):
    i = paddle.zeros([1], "int64")
    y = paddle.cos(x0)
    while i < 2:
        y = paddle.sin(y) * 2.0
        i = i + 1
    return y


if __name__ == "__main__":
    res = check(globals(), ["ast"], verbose=True)
    print(res)
    sys.exit(0 if res["ast"][0] == "pass" else 1)
