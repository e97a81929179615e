"""Stock Paddle 3.3.1 SOT bug (not fixed here; no hook or PyLayer involved):
to_static(full_graph=False) returns a wrong *output* for this split/reshape
+ tensor-if program (stock SOT too). Found by the fuzzer (seed s3, program
59), minimized. Run: python tests/fuzz/repros/stock_sot_wrong_output_split_if.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

import paddle  # noqa: E402
from harness import check  # noqa: E402

INPUT_SHAPES = [[2], [1, 2]]
HAS_IF = True


def f(x0, x1):
    v3, v4 = paddle.split(x1, 2, axis=1)
    v6 = paddle.reshape(v3, [1])
    v8 = v6.sum(axis=0, keepdim=True)
    v9 = v3 / (paddle.square(v6) + 1.0)
    if x0.mean() > 0:
        pass
    else:
        b13 = paddle.exp(paddle.clip(v6, -3.0, 3.0))
        r10 = b13 * -1.5
    out = r10 + v8.mean()
    return out


if __name__ == "__main__":
    res = check(globals(), ["sot"], input_seed=1466934592, verbose=True)
    print(res)
    sys.exit(0 if res["sot"][0] in ("pass", "skip") else 1)
