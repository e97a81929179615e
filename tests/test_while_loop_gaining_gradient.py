"""A ``while`` loop variable that starts without gradient and gets one in
the body (``h = paddle.ones_like(x.detach())``, then ``h = h * w + x``).

Eager's Python loop differentiates every later iteration of ``h``. Stock
Paddle 3.3.1 builds the body on a ``stop_gradient`` block argument, so the
loop's backward leaves ``h`` out and ``w.grad`` is ``None`` (or misses the
terms of the earlier iterations), silently, in static programs and under
``to_static(full_graph=True)``. Each function runs as a Python ``while`` in
eager mode (the reference) and as a ``while_loop`` op in static programs
and under AST.
"""

import numpy as np
import paddle
import pytest
from conftest import (
    STATIC_RUNNERS,
    Square,
    assert_same_as_eager,
    random_inputs,
    run_static_program,
    tensor_while,
)


def _loop(n, body, *loop_vars):
    """``n`` iterations of ``loop_vars = body(*loop_vars)``."""
    _, *out = tensor_while(
        lambda i, *v: i < n,
        lambda i, *v: (i + 1, *body(*v)),
        [paddle.zeros([1], "int64"), *loop_vars],
    )
    return out


def _ones(x):
    # `paddle.ones_like(x)` of a differentiable `x` is stop_gradient in
    # eager mode but not in a static program: start from a detached `x`.
    return paddle.ones_like(x.detach())


def starts_constant(x, w):
    (h,) = _loop(3, lambda h: (h * 2.0 + h * w + x,), _ones(x))
    return h


def gains_in_the_second_round(x, w):
    # b gets a gradient from x in the body, and a only from b: the body is
    # built twice more before both block arguments are differentiable.
    a, b = _loop(
        3,
        lambda a, b: (b * w, a + x),
        _ones(x),
        _ones(x),
    )
    return a * 2.0 + b


def starts_from_a_detached_input(x, w):
    (h,) = _loop(2, lambda h: (paddle.tanh(h * w),), x.detach())
    return h


def hook_in_the_body(x, w):
    def body(h):
        t = h * w
        t.register_hook(lambda g: g * 2.0 + 1.0)
        return (paddle.sin(t) + x,)

    (h,) = _loop(3, body, _ones(x))
    return h


def pylayer_in_the_body(x, w):
    (h,) = _loop(2, lambda h: (Square.apply(h * w) + x,), _ones(x) * 0.5)
    return h


CASES = [
    starts_constant,
    gains_in_the_second_round,
    starts_from_a_detached_input,
    hook_in_the_body,
    pylayer_in_the_body,
]


@pytest.mark.parametrize("runner", sorted(STATIC_RUNNERS))
@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_loop_variable_gaining_a_gradient_matches_eager(fn, runner):
    inputs = random_inputs((4,), (4,), seed=5)
    inputs = [v * 0.5 for v in inputs]
    assert_same_as_eager(fn, inputs, STATIC_RUNNERS[runner])


def test_a_loop_without_such_variable_builds_its_body_once():
    calls = []

    def fn(x, w):
        def body(h):
            calls.append(1)
            return (h * 2.0,)

        (h,) = _loop(3, body, _ones(x))
        return h * x * w

    inputs = random_inputs((4,), (4,), seed=5)
    assert_same_as_eager(fn, inputs, run_static_program)
    assert len(calls) == 1 + 3  # the static program's build, eager's loop


def _matches_eager_over_shapes(fn, static_fn, seed):
    """``static_fn(x, w, n)`` gives ``fn``'s output and gradients over three
    calls, the last with another shape."""
    rng = np.random.default_rng(seed)
    for shape in ([3], [3], [5]):
        x = rng.uniform(-0.9, 0.9, shape)
        w = rng.uniform(-0.9, 0.9, shape)
        results = []
        for f in (fn, static_fn):
            xt = paddle.to_tensor(x, stop_gradient=False)
            wt = paddle.to_tensor(w, stop_gradient=False)
            out = f(xt, wt, paddle.to_tensor([3], "int64"))
            out.sum().backward()
            results.append([out.numpy(), xt.grad.numpy(), wt.grad.numpy()])
        for got, want in zip(results[1], results[0]):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_loop_variable_defined_in_the_body():
    # AST passes `t`, first assigned in the body, as an undefined loop
    # variable; the body is built again for `h` and `t` stays right.
    def fn(x, w, n):
        i = paddle.zeros([1], "int64")
        h = _ones(x)
        while i < n:
            t = h * w
            h = t + x
            i = i + 1
        return h + t

    static_fn = paddle.jit.to_static(fn, full_graph=True)
    _matches_eager_over_shapes(fn, static_fn, seed=2)


def test_sot_runs_the_loop_as_eager(sot_env):
    def fn(x, w, n):
        i = paddle.zeros([1], "int64")
        h = x.detach()
        while i < n:  # SOT runs the tensor-dependent loop in Python
            h = paddle.tanh(h * w) + x
            i = i + 1
        return h

    static_fn = paddle.jit.to_static(fn)
    _matches_eager_over_shapes(fn, static_fn, seed=4)
