"""In-place ops on intermediates give eager's outputs and gradients.

A static graph builds ``t.add_(y)`` out of place; the Python variable ``t``
now refers to the result (``rebind_after_inplace``), so the later uses of
``t`` read, and are differentiated through, the new value, as in eager,
and ``y`` gets its gradient. Each op runs eagerly, under AST, SOT
(``MIN_GRAPH_SIZE=0``) and as a plain static program (both backward APIs),
on float64 inputs; a use of ``t`` before the op keeps the old value.
``retain_grads()`` and ``backward()`` inside a converted function are a
clear error in AST and static programs, eager under SOT.
"""

import warnings

import numpy as np
import paddle
import paddle.nn.functional as F
import pytest
from conftest import (
    STATIC_RUNNERS,
    _cotangent,
    assert_same_as_eager,
    graph_breaks,
    run_eager,
    run_to_static,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:In static graph mode, .* does not perform inplace operation"
)

OPS = {
    "add_": lambda t, y: t.add_(y),
    "subtract_": lambda t, y: t.subtract_(y),
    "multiply_": lambda t, y: t.multiply_(y),
    "scale_": lambda t, y: t.scale_(2.0),
    "clip_": lambda t, y: t.clip_(-0.5, 1.5),
    "exp_": lambda t, y: t.exp_(),
    "tanh_": lambda t, y: t.tanh_(),
    "relu_": lambda t, y: F.relu_(t),
    "zero_": lambda t, y: t.zero_(),
    "fill_": lambda t, y: t.fill_(0.5),
}


def _with_op(op):
    def f(x, y):
        t = x * 2.0
        s = t * 1.0  # a use before the op: the old value
        op(t, y)
        return t * t + s + y

    return f


def _setitem_scalar(x, y):
    t = x * 2.0
    s = t * 1.0
    t[0] = -0.75  # not 0: stock passed the new t's gradient to the old t
    return t * t + s + y


def _setitem_tensor(x, y):
    t = x * 2.0
    s = t * 1.0
    t[1] = y[0]
    return t * t + s + y


def _setitem_slice(x, y):
    t = x * 2.0
    s = t * 1.0
    t[0:2] = y[1:3]
    return t * t + s + y


def _setitem_mask_scalar(x, y):
    t = x * 2.0
    s = t * 1.0
    t[t > 1.0] = 0.5
    return t * t + s + y


FUNCTIONS = {
    **{name: _with_op(op) for name, op in OPS.items()},
    "setitem_scalar": _setitem_scalar,
    "setitem_tensor": _setitem_tensor,
    "setitem_slice": _setitem_slice,
    "setitem_mask_scalar": _setitem_mask_scalar,
}
INPUTS = [np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.25, -3.0])]


def run_sot(fn, inputs):
    return run_to_static(fn, inputs, full_graph=False)


RUNNERS = {"sot": run_sot, **STATIC_RUNNERS}


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_inplace_op_on_intermediate_matches_eager(name, runner):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_eager(FUNCTIONS[name], INPUTS, RUNNERS[runner])


def _setitem_mask_tensor(x, y):
    t = x * 2.0
    t[t > 1.0] = y[0]
    return (t * t).sum()


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_setitem_mask_with_tensor_value_gives_the_documented_gradient(runner):
    """``t[mask] = y[0]``: eager Paddle gives ``y`` no gradient (a stock
    eager bug: the mask path's ``where_`` drops the value's gradient);
    the static paths give the documented one. t = 2x = [1, -2, 4], the
    mask picks t[2], so the loss is 1 + 4 + y0^2: dloss/dy = [2 y0, 0, 0],
    dloss/dx = [4, -8, 0]."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, (gx, gy) = RUNNERS[runner](_setitem_mask_tensor, INPUTS)
    c = _cotangent((), "float64")  # the runners differentiate out * c
    np.testing.assert_allclose(out, 1.0 + 4.0 + 1.0, rtol=1e-12)
    np.testing.assert_allclose(gx, c * np.array([4.0, -8.0, 0.0]), rtol=1e-12)
    np.testing.assert_allclose(gy, c * np.array([2.0, 0.0, 0.0]), rtol=1e-12)


def _hooks_around_multiply(seen):
    def f(x, y):
        t = x * 2.0
        t.register_hook(lambda g: seen.append(("before", g.numpy())))
        t.multiply_(y)
        t.register_hook(lambda g: seen.append(("after", g.numpy())))
        return t * t

    return f


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_hooks_before_and_after_an_inplace_op_see_old_and_new_gradient(mode):
    """A hook registered before ``t.multiply_(y)`` sees the gradient of the
    old ``t`` (times y), one registered after it that of the new ``t``."""
    want_seen, got_seen = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_out, want_grads = run_eager(
            _hooks_around_multiply(want_seen), INPUTS
        )
        got_out, got_grads = run_to_static(
            _hooks_around_multiply(got_seen), INPUTS, full_graph=mode == "ast"
        )
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert [k for k, _ in got_seen] == [k for k, _ in want_seen]
    for (_, g), (_, w) in zip(got_seen, want_seen):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _retains(x):
    t = x * 2.0
    t.retain_grads()
    return (t * t).sum()


def _calls_backward(x):
    t = x * 2.0
    loss = (t * t).sum()
    loss.backward()
    return loss


def _x():
    return paddle.to_tensor(np.array([1.0, -2.0]), stop_gradient=False)


@pytest.mark.parametrize(
    "fn, what", [(_retains, "retain_grads"), (_calls_backward, "backward")]
)
def test_eager_only_tensor_methods_under_ast_are_a_clear_error(fn, what):
    with pytest.raises(NotImplementedError, match=rf"Tensor.{what}\(\) on a"):
        paddle.jit.to_static(fn, full_graph=True)(_x())


@pytest.mark.usefixtures("sot_env")
def test_eager_only_tensor_methods_under_sot_run_eagerly():
    """SOT breaks the graph at them and runs them eagerly: eager's
    gradients (and ``t.grad`` for ``retain_grads``)."""
    for fn in (_retains, _calls_backward):
        want, got = _x(), _x()
        loss = fn(want)
        if fn is _retains:
            loss.backward()
        loss = paddle.jit.to_static(fn)(got)
        if fn is _retains:
            loss.backward()
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy())
    assert len(graph_breaks()) >= 2


def test_eager_only_tensor_methods_in_a_static_program_are_a_clear_error():
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program()):
            x = paddle.static.data("x", [2], "float64")
            x.stop_gradient = False
            with pytest.raises(NotImplementedError, match="paddle.static"):
                (x * 2.0).sum().backward()
    finally:
        paddle.disable_static()
