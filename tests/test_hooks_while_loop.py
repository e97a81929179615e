"""Hooks and PyLayers inside the body of a tensor-dependent ``while`` loop.

A plain static program's ``paddle.static.nn.while_loop`` is differentiated
like eager's Python loop: a PyLayer in the body runs its ``backward`` at
each iteration, a hook registered in the body on a value of the body runs
at each iteration on that iteration's gradient. Each function runs as a
Python ``while`` in eager mode (the reference) and as ``while_loop`` in
the static program. Under SOT the tensor ``while`` breaks the graph and
runs in Python, as in eager. Under ``to_static(full_graph=True)`` the
tensor ``while`` is a ``while`` op and its hooks run as in a static program.
"""

import numpy as np
import paddle
import pytest
from conftest import (
    STATIC_RUNNERS,
    assert_same_as_eager,
    random_inputs,
    run_static_program,
    tensor_while,
)

STATIC = sorted(k for k in STATIC_RUNNERS if k.startswith("static_"))


@pytest.fixture(params=STATIC)
def runner(request):
    """The plain static program paths (to_static: see the last test)."""
    return STATIC_RUNNERS[request.param]


def _loop(n, body, y):
    """``n`` iterations of ``y = body(y)``."""
    _, y = tensor_while(
        lambda i, y: i < n,
        lambda i, y: (i + 1, body(y)),
        [paddle.zeros([1], "int64"), y],
    )
    return y


class _Cube(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return g * 3.0 * x * x


class _TimesTwo(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


def test_pylayer_saving_a_tensor_in_a_while_body(runner):
    def fn(x):
        return _loop(3, lambda y: paddle.sin(_Cube.apply(y)), x)

    assert_same_as_eager(fn, random_inputs((4,)), runner)


def test_pylayer_saving_nothing_in_a_while_body(runner):
    def fn(x):
        return _loop(3, _TimesTwo.apply, x)

    assert_same_as_eager(fn, random_inputs((4,)), runner)


def _hooked_body(*hooks):
    def body(y):
        t = paddle.sin(y)
        for hook in hooks:
            t.register_hook(hook)
        return t * 1.5

    return body


def test_hook_on_a_body_value_runs_at_every_iteration(runner):
    def fn(x):
        return _loop(3, _hooked_body(lambda g: g * 2.0 + 1.0), x)

    assert_same_as_eager(fn, random_inputs((4,)), runner)


def test_hooks_in_a_body_run_in_registration_order_none_unchanged(runner):
    def fn(x):
        body = _hooked_body(lambda g: g + 1.0, lambda g: None, lambda g: g * g)
        return _loop(2, body, x)

    assert_same_as_eager(fn, random_inputs((4,)), runner)


def test_removed_hook_in_a_body_does_not_run(runner):
    def body(y):
        t = paddle.sin(y)
        t.register_hook(lambda g: g * 3.0)
        t.register_hook(lambda g: g + 100.0).remove()
        return t * 1.5

    assert_same_as_eager(
        lambda x: _loop(3, body, x), random_inputs((4,)), runner
    )


def test_hook_reading_a_tensor_of_its_iteration(runner):
    def body(y):
        m = paddle.cos(y)
        t = paddle.sin(y)
        t.register_hook(lambda g: g * m)
        return t * 1.5 + m

    assert_same_as_eager(
        lambda x: _loop(3, body, x), random_inputs((4,)), runner
    )


def test_hook_in_a_body_that_runs_zero_times_does_not_run(runner):
    def fn(x):
        return _loop(0, _hooked_body(lambda g: g + 1.0), x) * 2.0

    assert_same_as_eager(fn, random_inputs((4,)), runner)


def test_print_hook_in_a_body_prints_at_every_iteration(capfd):
    def fn(x):
        return _loop(3, _hooked_body(lambda g: print(g)), x)

    (x,) = random_inputs((4,))
    run_static_program(fn, [x])
    printed = capfd.readouterr()
    # The hook runs at each iteration of the backward loop and prints the
    # gradient Tensor, like eager's loop.
    assert (printed.out + printed.err).count("Tensor(shape=[4]") == 3


@pytest.mark.parametrize("shape", [(4,), (2, 3)])
def test_hook_in_a_to_static_while_runs_at_every_iteration(shape):
    seen = []

    def fn(x):
        i = paddle.zeros([1], "int64")
        y = x
        while i < 2:
            t = paddle.sin(y)
            t.register_hook(lambda g: g * 2.0)
            t.register_hook(lambda g: seen.append(float((g * g).sum())))
            y = t * 1.5
            i = i + 1
        return y

    results = {}
    static_fn = paddle.jit.to_static(fn, full_graph=True)
    for mode, f in (
        ("eager", fn),
        ("ast", static_fn),
        ("ast again", static_fn),
    ):
        seen.clear()
        x = paddle.to_tensor(random_inputs(shape)[0], stop_gradient=False)
        y = f(x)
        y.sum().backward()
        results[mode] = (y.numpy(), x.grad.numpy(), list(seen))
    want_y, want_grad, want_seen = results.pop("eager")
    assert len(want_seen) == 2
    for got_y, got_grad, got_seen in results.values():
        np.testing.assert_allclose(got_y, want_y, rtol=1e-12)
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)
        assert len(got_seen) == len(want_seen)
        for got, want in zip(got_seen, want_seen):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_hook_in_a_tensor_while_under_sot_runs_at_every_iteration(sot_env):
    def fn(x):
        i = paddle.zeros([1], "int64")
        while i < 3:  # a graph break: SOT runs the loop in Python
            t = paddle.sin(x)
            t.register_hook(lambda g: g * 2.0 + 1.0)
            x = t * 1.5
            i = i + 1
        return x

    grads = {}
    for mode in ("eager", "sot"):
        x = paddle.to_tensor(random_inputs((4,))[0], stop_gradient=False)
        f = fn if mode == "eager" else paddle.jit.to_static(fn)
        f(x).sum().backward()
        grads[mode] = x.grad.numpy()
    np.testing.assert_allclose(grads["sot"], grads["eager"], rtol=1e-12)


def _branching_body(*hooks):
    def body(y):
        def true_fn():
            t = paddle.sin(y)
            for hook in hooks:
                t.register_hook(hook)
            return t * 2.0

        # the `if` result is the loop variable itself
        return paddle.static.nn.cond(
            y.sum() > 0, true_fn, lambda: paddle.cos(y)
        )

    return body


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_in_a_while_body_gives_every_iteration_its_gradient(runner, sign):
    (x,) = random_inputs((4,))
    x = sign * np.abs(x)
    assert_same_as_eager(lambda x: _loop(3, _branching_body(), x), [x], runner)


def test_hook_in_a_cond_branch_of_a_while_body(runner):
    (x,) = random_inputs((4,))
    body = _branching_body(lambda g: g * 2.0 + 1.0)
    assert_same_as_eager(lambda x: _loop(3, body, x), [np.abs(x)], runner)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["runs", "runs_zero_times"])
def test_hook_on_a_value_the_body_reads_runs_only_if_the_loop_ran(runner, sign):
    def fn(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        # 2 iterations when the inputs sum above 0, none otherwise
        n = paddle.cast(x.sum() > 0, "int64") * 2
        return _loop(n, lambda y: y * 1.5 + t, x * 2.0)

    (x,) = random_inputs((4,))
    assert_same_as_eager(fn, [sign * np.abs(x)], runner)


LOG = []


def _hooks_around_a_loop(x, y):
    a = paddle.mean(x, axis=1)
    t = y * 1.0
    i = paddle.zeros([], "int64")
    while i < 2:
        t = t + x
        i += 1
    t.register_hook(lambda g: LOG.append(("t", float(g.sum()))))
    a.register_hook(lambda g: LOG.append(("a", float(g.sum()))))
    return (t * t).sum() + (a * a).sum(), t * 1.0


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
@pytest.mark.usefixtures("sot_env")
def test_run_time_hooks_on_either_side_of_a_loop_equal_eager(full_graph):
    """Two run-time hooks of the backward block, the first on the loop's
    result, which the loop's backward takes as its start: the second still
    runs after the first (it reads a value computed from the first's
    result, not that result, which the loop moved), with eager's log and
    gradients; a second output the caller does not differentiate makes
    both hooks depend on which outputs got a gradient."""
    results = []
    for fn in (
        _hooks_around_a_loop,
        paddle.jit.to_static(_hooks_around_a_loop, full_graph=full_graph),
    ):
        LOG.clear()
        rng = np.random.default_rng(5)
        x = paddle.to_tensor(rng.standard_normal((2, 3)), stop_gradient=False)
        y = paddle.to_tensor(rng.standard_normal((2, 3)), stop_gradient=False)
        fn(x, y)[0].backward()
        results.append((x.grad.numpy(), y.grad.numpy(), list(LOG)))
    (gx, gy, log), (wx, wy, want_log) = results[1], results[0]
    np.testing.assert_allclose(gx, wx, rtol=1e-12)
    np.testing.assert_allclose(gy, wy, rtol=1e-12)
    assert [k for k, _ in log] == [k for k, _ in want_log]
    np.testing.assert_allclose(
        [v for _, v in log], [v for _, v in want_log], rtol=1e-12
    )


def _hooks_after_a_scalar_hook(x):
    a = x.mean()  # 0-D: its shape is an empty tensor
    a.register_hook(lambda g: LOG.append(("a", float(g))))
    b = x * 2.0
    b.register_hook(lambda g: LOG.append(("b", float(g.sum()))))
    return a * 3.0 + b.sum(), a * 1.0


@pytest.mark.usefixtures("sot_env")
def test_run_time_hook_after_one_on_a_0d_value_equals_eager():
    """The run-time hook op after one on a 0-D value reads that op's result
    size (one element), not its shape (an empty tensor, which dropped the
    op's other inputs)."""
    results = []
    for fn in (
        _hooks_after_a_scalar_hook,
        paddle.jit.to_static(_hooks_after_a_scalar_hook, full_graph=True),
    ):
        LOG.clear()
        x = paddle.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)
        fn(x)[0].backward()
        results.append((x.grad.numpy(), sorted(LOG)))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12)
    assert results[1][1] == results[0][1]
