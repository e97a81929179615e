"""Stock Paddle 3.3.1 bug (not fixed here; no hook or PyLayer involved):
to_static(full_graph=True) gives a wrong gradient when a tensor-dependent
`if` branch returns an input unchanged and the input is also used after
the `if`. The backward program is right; running it is not (probably the
`if` result shares the input's buffer, and the `add` writes into it in
place). Returning `x1 * 1` from the branch avoids it. Found by the fuzzer
(seed s8, program 252 and variants). Run:
python tests/fuzz/repros/stock_if_returns_input_runtime.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

from harness import check  # noqa: E402

INPUT_SHAPES = [[3], [3]]
HAS_IF = True


def f(x0, x1):
    y = x1 * x0
    if x0.mean() > 0:
        r = x1
    else:
        r = x1 * 3.0
    return r + y


if __name__ == "__main__":
    res = check(globals(), ["ast"], input_seed=1, verbose=True)
    print(res)
    sys.exit(0 if res["ast"][0] in ("pass", "skip") else 1)
