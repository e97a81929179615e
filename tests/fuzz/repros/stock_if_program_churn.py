"""Stock Paddle 3.3.1 bug (not ours): tracing a function with a tensor `if`
under to_static(full_graph=True) again and again (a new to_static function
each time), interleaved with eager runs, segfaults after some iterations
(stock and patched), and with the patch set it sometimes gives all-zero
gradients instead (seen once in ~150 iterations). No hooks or PyLayers are
needed for the crash. Run: python tests/fuzz/repros/stock_if_program_churn.py
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
