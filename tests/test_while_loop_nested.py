"""A tensor-dependent ``while`` loop nested in another one, differentiated.

Paddle's static while backward cannot differentiate such a pair: its grad
loop for the inner loop pops the iterations of every outer iteration at the
first one, and loses the gradient of the inner loop variables, so stock
Paddle 3.3.1 gives wrong gradients, silently (``x.grad`` ``[1, 1, 1]``
where eager gives ``[1.07, 1.84, 0.90]`` below); and when the inner loop
reads a value computed in the outer body (its counter's ``zeros``), the
executor frees that value before the outer loop saves it for the backward
(``DenseTensor shouldn't be null``), whether the inner loop needs a gradient
or not. Static programs and ``to_static(full_graph=True)`` raise a clear
error at backward build instead when the inner loop carries a
differentiable tensor across its iterations or reads a value of the outer
body. A nested loop that needs no gradient, and one whose inner loop needs
none and reads only loop variables of the outer loop, run as before; SOT
runs tensor loops in Python, as eager does.
"""

import numpy as np
import paddle
import pytest
from conftest import STATIC_RUNNERS, assert_same_as_eager, tensor_while

STATIC = sorted(k for k in STATIC_RUNNERS if k.startswith("static_"))
X = np.array([0.3, -0.2, 0.7])


def inner_differentiated(x):
    def outer_body(i, y):
        _, y = tensor_while(
            lambda j, t: j < 3,
            lambda j, t: (j + 1, paddle.sin(t) * 1.5),
            [paddle.zeros([1], "int64"), y],
        )
        return i + 1, y + x

    _, y = tensor_while(
        lambda i, y: i < 2, outer_body, [paddle.zeros([1], "int64"), x]
    )
    return y


def inner_differentiated_over_outer_loop_variables(x):
    def outer_body(i, j, y):
        _, y = tensor_while(
            lambda j, t: j < 3,
            lambda j, t: (j + 1, paddle.sin(t) * 1.5),
            [j, y],
        )
        return i + 1, j, y + x

    zero = paddle.zeros([1], "int64")
    _, _, y = tensor_while(lambda i, j, y: i < 2, outer_body, [zero, zero, x])
    return y


def inner_without_gradient_reading_the_outer_body(x):
    def outer_body(i, y):
        _, c = tensor_while(
            lambda j, c: j < 3,
            lambda j, c: (j + 1, c + 1.0),
            [paddle.zeros([1], "int64"), paddle.zeros([3], "float64")],
        )
        return i + 1, paddle.sin(y) * c

    _, y = tensor_while(
        lambda i, y: i < 2, outer_body, [paddle.zeros([1], "int64"), x]
    )
    return y


def inner_without_gradient_over_outer_loop_variables(x):
    def outer_body(i, j, c, y):
        _, c1 = tensor_while(
            lambda j, c: j < 3, lambda j, c: (j + 1, c + 1.0), [j, c]
        )
        return i + 1, j, c, paddle.sin(y) * c1

    zero = paddle.zeros([1], "int64")
    _, _, _, y = tensor_while(
        lambda i, j, c, y: i < 2,
        outer_body,
        [zero, zero, paddle.zeros([3], "float64"), x],
    )
    return y


UNSUPPORTED = [
    inner_differentiated,
    inner_differentiated_over_outer_loop_variables,
    inner_without_gradient_reading_the_outer_body,
]


@pytest.mark.parametrize("runner", STATIC)
@pytest.mark.parametrize("fn", UNSUPPORTED, ids=lambda f: f.__name__)
def test_differentiating_a_nested_loop_is_a_clear_error(fn, runner):
    with pytest.raises(NotImplementedError, match="nested in another one"):
        STATIC_RUNNERS[runner](fn, [X])


@pytest.mark.parametrize("runner", STATIC)
def test_inner_loop_without_gradient_over_outer_loop_variables(runner):
    assert_same_as_eager(
        inner_without_gradient_over_outer_loop_variables,
        [X],
        STATIC_RUNNERS[runner],
    )


def nested_python_loops(x, n, m):
    i = paddle.zeros([1], "int64")
    y = x
    while i < n:
        j = paddle.zeros([1], "int64")
        while j < m:
            y = paddle.sin(y) * 1.5
            j = j + 1
        y = y + x
        i = i + 1
    return y


def _call(fn, stop_gradient):
    x = paddle.to_tensor(X, stop_gradient=stop_gradient)
    y = fn(x, paddle.to_tensor([2], "int64"), paddle.to_tensor([3], "int64"))
    if stop_gradient:
        return y.numpy(), None
    y.sum().backward()
    return y.numpy(), x.grad.numpy()


def test_to_static_nested_loops_with_gradient_is_a_clear_error():
    static_fn = paddle.jit.to_static(nested_python_loops, full_graph=True)
    with pytest.raises(NotImplementedError, match="nested in another one"):
        _call(static_fn, stop_gradient=False)


def test_to_static_nested_loops_without_gradient_match_eager():
    static_fn = paddle.jit.to_static(nested_python_loops, full_graph=True)
    got, _ = _call(static_fn, stop_gradient=True)
    want, _ = _call(nested_python_loops, stop_gradient=True)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_sot_nested_loops_match_eager(sot_env):
    # SOT runs the tensor-dependent loops in Python.
    got = _call(paddle.jit.to_static(nested_python_loops), stop_gradient=False)
    want = _call(nested_python_loops, stop_gradient=False)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
