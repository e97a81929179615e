"""Open bug (found by the fuzzer, program s28-392, minimized; not fixed): this
AST program fails in its run with `PreconditionNotMetError: Tensor holds no
memory ... [operator < pd_kernel.phi_kernel > error]` where eager works. It
passes with `FLAGS_pir_apply_inplace_pass=0`, and with
`FLAGS_ir_inplace_kernel_blacklist=pd_op.reshape` (no other op on that
list helps), and only when the `else` branch is taken. Not known whether
stock Paddle has it: stock cannot run the program (hooks).
Run: python tests/fuzz/repros/ast_reshape_inplace_no_memory.py
(exit status 1 = still fails; eager is the reference).
"""

import os
import sys

sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
)

import functools  # noqa: E402

import paddle  # noqa: E402
from harness import check  # noqa: E402
from paddle.autograd import PyLayer  # noqa: E402

INPUT_SHAPES = [[3, 2], [4, 3, 2], [2]]
EXPECT_ERROR = {}
HAS_IF = True


def scale_hook(g, c):
    return g * c


class PL0(PyLayer):
    @staticmethod
    def forward(ctx, a0, a1):
        t1 = paddle.cos(a1)
        o0 = paddle.tanh(t1)
        o1 = paddle.sin(t1)
        return (o0, o1)

    @staticmethod
    def backward(ctx, d0, d1):
        return (None, d1 * 2.0 + d0)


def f(x0, x1, x2):
    v1 = x0 * x2
    v2 = paddle.reshape(v1, [-1])
    v4 = v1 * 3.0
    if x0.mean() > 0:
        b6 = paddle.sin(x2)
        b9 = paddle.cos(b6)
        r5 = b9 * -1.5
    else:
        b10 = paddle.square(x2)
        b10.register_hook(functools.partial(scale_hook, c=0.25))
        b12 = b10 * x2
        r5 = b12 * 0.25
    v13 = v4 * v4
    v14 = x0 * 2.0
    v15 = v13 - x0
    v16 = r5 / (paddle.square(v14) + 1.0)
    r5.register_hook(functools.partial(scale_hook, c=2.0))
    v17, v18 = PL0.apply(x0, paddle.cos(v15))
    v14.register_hook(lambda g: g * paddle.tanh(v15))
    out = v17 + v2.sum()
    return (out, v16)


if __name__ == "__main__":
    res = check(globals(), ["ast"], input_seed=707375161, verbose=True)
    print(res)
    sys.exit(0 if res["ast"][0] in ("pass", "skip") else 1)
