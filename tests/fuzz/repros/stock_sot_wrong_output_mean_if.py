"""Stock Paddle 3.3.1 SOT bug (not fixed here; no hook or PyLayer involved):
to_static(full_graph=False) returns a wrong *output* for this program, a
mean and a product around a tensor `if` that breaks the graph (stock SOT
too). Found by the fuzzer (seed s6, program 1285), minimized. Run:
python tests/fuzz/repros/stock_sot_wrong_output_mean_if.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

import paddle  # noqa: E402
from harness import check  # noqa: E402

INPUT_SHAPES = [[2, 2]]
HAS_IF = True


def f(x0):
    v1 = paddle.transpose(x0, perm=[1, 0])
    v2 = x0 * -1.5
    v3 = paddle.mean(v2, axis=0, keepdim=False)
    v4 = v2 - v1  # noqa: F841 (unused)
    if x0.mean() > 0:
        pass
    else:
        pass
    return v3 * v2


if __name__ == "__main__":
    res = check(globals(), ["sot"], input_seed=2244660271, verbose=True)
    print(res)
    sys.exit(0 if res["sot"][0] in ("pass", "skip") else 1)
