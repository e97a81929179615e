"""Stock Paddle 3.3.1 bug (not fixed here; no hook or PyLayer involved): a
to_static function returning an intermediate value that another op of the
same program also reads can return what that op wrote in place into the
value's buffer (the inplace pass does not treat the value as an output):

* AST (and SOT): `v2 = matmul(x, x.T)`, `v5 = v2 + v2`, return `v5, v2`
  returns `v5` in place of `v2`;
* SOT: `v1 = cos(x1)`, `v6 = v1 + x1` before a graph break (a tensor `if`),
  `v1` returned after it: `v1` comes out as `v6`;
* the same with `v1` the output of a PyLayer (patched SOT only: it
  captures `PyLayer.apply`, where stock SOT breaks the graph and runs the
  PyLayer eagerly, which is right).
With FLAGS_pir_apply_inplace_pass=0 all three are right.

Found by the fuzzer (seeds s10, program 50, and s15, program 549) once
programs returned a second value; minimized. The fuzzer now returns a copy
of a value no op uses as that second value. Run:
python tests/fuzz/repros/stock_returned_value_overwritten_inplace.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

import paddle  # noqa: E402
from harness import check  # noqa: E402
from paddle.autograd import PyLayer  # noqa: E402


def returned_matmul(x0):
    v2 = paddle.matmul(x0, x0, transpose_y=True)
    v5 = v2 + v2
    return v5, v2


def returned_across_graph_break(x0, x1):
    v1 = paddle.cos(x1)
    v6 = v1 + x1
    if x0.mean() > 0:
        r = paddle.cos(v6)
    else:
        r = v6 + x0
    return x0 * 2.0 + r * 0.0, v1 * 1.0


class CosCos(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return paddle.cos(paddle.cos(a)) * 1.5

    @staticmethod
    def backward(ctx, d):
        return d * 1.5


def pylayer_output_across_graph_break(x0, x1):
    v1 = x1[:, 1:2]
    v3 = paddle.cos(v1)
    v4 = CosCos.apply(v1)
    v5 = v4 - v3
    if x1.mean() > 0:
        pass
    return v4 * 1.0, v5 * 1.0


CASES = [
    (returned_matmul, [[2, 3]], ["ast", "sot"], 0),
    (returned_across_graph_break, [[1, 2], [1, 2]], ["sot"], 3),
    (pylayer_output_across_graph_break, [[2, 3, 2], [2, 2]], ["sot"], 0),
]


if __name__ == "__main__":
    ok = True
    for fn, shapes, modes, seed in CASES:
        res = check(
            {"f": fn, "INPUT_SHAPES": shapes}, modes, input_seed=seed
        )
        print(fn.__name__, res)
        ok = ok and all(r[0] == "pass" for r in res.values())
    sys.exit(0 if ok else 1)
