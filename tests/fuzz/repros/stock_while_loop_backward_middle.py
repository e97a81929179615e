"""Stock Paddle 3.3.1 bug, fixed here: the backward of the simplest
tensor-dependent `while` loop under to_static(full_graph=True) failed on CPU
at run time with `(InvalidArgument) The variable middle_0 should exist`.

Cause: the forward `while` pushes to a stack made by `cf.stack_create`,
whose three results (stack, inlet, outlet) are one executor variable. The
backward needs the stack (`cf.has_elements`) and the outlet
(`cf.tuple_pop`), so `split_program` exports both as middle values: two
`builtin.shadow_output` ops, `middle_0` and `middle_1`, each renaming that
one variable, so only `middle_1` existed when the backward ran. The fix
(`RunnableProgram.pass_stacks_under_one_name`) gives the outlet's name to a
placeholder in the forward and binds the backward's outlet to the stack's
variable.
Run:
python tests/fuzz/repros/stock_while_loop_backward_middle.py
(exit status 1 = fails; eager is the reference).
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
