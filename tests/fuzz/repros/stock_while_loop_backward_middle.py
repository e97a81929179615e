"""Stock Paddle 3.3.1 bug (not fixed here; no hook or PyLayer involved): the
backward of the simplest tensor-dependent `while` loop under
to_static(full_graph=True) fails on CPU at run time with `(InvalidArgument)
The variable middle_0 should exist` (a value the backward program reads
from the forward program is not in the scope). This is why a hook inside
such a loop is a clear error by design: the loop itself cannot be
differentiated.

Cause (read from the programs and the executor log): the forward `while`
pushes to a stack made by `cf.stack_create`, whose three results (stack,
inlet, outlet) are one executor variable. The backward needs the stack
(`cf.has_elements`) and the outlet (`cf.tuple_pop`), so `split_program`
exports both as middle values: two `builtin.shadow_output` ops, `middle_0`
and `middle_1`, each renaming that one variable. After the second rename
only `middle_1` exists, and the backward's keyword argument `middle_0` is
missing. A Python-side fix would have to bind two values of different
types (stack, outlet) to one variable: a kwarg binds one value per name,
`cf.has_elements` checks its operand is a stack, `cf.tuple_pop` that its
outlet has one use, so `pd_op.share_var` or a cast cannot be added. The
fix belongs in C++ (`split_program` exporting one name for the stack's
variable, or the executor keeping every shadow name of a variable).
Run:
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
