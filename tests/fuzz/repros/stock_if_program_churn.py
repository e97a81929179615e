"""Stock Paddle 3.3.1 bug (fixed by the patch set): tracing a function with a
tensor `if` under to_static(full_graph=True) again and again (a new
to_static function each time), interleaved with eager runs, gives all-zero
gradients or segfaults after some dozens of iterations, no hook or PyLayer
needed. Cause: the C++ binding `get_used_external_value` sometimes returns a
null or dangling value (patch "[PIR] Stable get_used_external_value ...").
Run with stock Paddle to see it: python tests/fuzz/repros/stock_if_program_churn.py
Regression test: tests/test_control_flow_backward.py.
"""

import numpy as np
import paddle


def f(x):
    if x.mean() > 0:
        y = (x * 2) * x
    else:
        y = x * x
    return y


def grads(fn, a):
    x = paddle.to_tensor(a, stop_gradient=False)
    fn(x).sum().backward()
    return x.grad.numpy()


x = np.random.default_rng(0).standard_normal(4)
bad = 0
for i in range(300):
    for sign in (1.0, -1.0):
        a = np.abs(x) * sign
        want = grads(f, a)
        got = grads(paddle.jit.to_static(f, full_graph=True), a)
        if not np.allclose(got, want):
            bad += 1
            print("wrong gradient at iteration", i, got, want, flush=True)
print("wrong gradients:", bad)
