"""A hook on a PyLayer's output replaces the gradient that ``backward`` gets.

The documented meaning of ``register_hook``: the hook's result is used in
place of the Tensor's gradient. Eager Paddle's PyLayer node used to call the
hooks of its outputs and discard their results; every mode now applies them.
The reference is the same function with the PyLayer replaced by the plain
ops it stands for, run eagerly. Compared in eager, AST, SOT
(``MIN_GRAPH_SIZE=0``, 0 graph breaks, batch sizes 2, 4, 4, 8) and plain
static programs: outputs, every gradient and what the hooks saw.
"""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks, random_inputs

SEEN = []


class Pair(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x, paddle.sin(x)

    @staticmethod
    def backward(ctx, da, db):
        (x,) = ctx.saved_tensor()
        # db: zeros when b gets no gradient (materialized grads)
        return 2.0 * x * da + paddle.cos(x) * db


def pair_ops(x):
    return x * x, paddle.sin(x)


def scale_first(pair):
    def f(x):
        a, b = pair(x)
        a.register_hook(lambda g: g * 3.0)
        return a + b * 2.0

    return f


def chain_on_second(pair):
    def f(x):
        a, b = pair(x)
        b.register_hook(lambda g: SEEN.append(float(g.sum())))
        b.register_hook(lambda g: g - 1.0)
        b.register_hook(lambda g: SEEN.append(float(g.sum())) or g * 0.5)
        return a * b

    return f


def unused_output(pair):
    def f(x):
        a, b = pair(x)
        b.register_hook(lambda g: SEEN.append("called") or g * 10.0)
        a.register_hook(lambda g: g + 1.0)
        return a * 2.0

    return f


CASES = [scale_first, chain_on_second, unused_output]


def _run(case, mode):
    SEEN.clear()
    fn = case(pair_ops if mode == "reference" else Pair.apply)
    if mode in ("ast", "sot"):
        fn = paddle.jit.to_static(fn, full_graph=mode == "ast")
    out = []
    for batch in (2, 4, 4, 8):
        (xv,) = random_inputs((batch, 3), seed=batch)
        x = paddle.to_tensor(xv, stop_gradient=False)
        y = fn(x)
        y.sum().backward()
        out += [y.numpy(), x.grad.numpy()]
    return out, list(SEEN)


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("mode", ["eager", "ast", "sot"])
def test_hook_result_reaches_backward(case, mode):
    want, want_seen = _run(case, "reference")
    got, got_seen = _run(case, mode)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    assert len(got_seen) == len(want_seen)
    for g, w in zip(got_seen, want_seen):
        assert g == w if isinstance(w, str) else abs(g - w) <= 1e-12 * abs(w)
    if mode == "sot":
        assert graph_breaks() == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_hook_result_reaches_backward_in_a_static_program(case):
    (xv,) = random_inputs((4, 3))

    def run(pair):
        SEEN.clear()
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data("x", [4, 3], "float64")
                x.stop_gradient = False
                y = case(pair)(x)
                (gx,) = paddle.static.gradients([y.sum()], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            return exe.run(main, feed={"x": xv}, fetch_list=[y, gx])
        finally:
            paddle.disable_static()

    want, got = run(pair_ops), run(Pair.apply)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


def test_eager_hook_removed_before_backward_is_not_applied():
    x = paddle.to_tensor([1.0, -2.0], stop_gradient=False)
    a, b = Pair.apply(x)
    handle = a.register_hook(lambda g: g * 100.0)
    handle.remove()
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, -4.0])


def test_eager_pylayer_returning_its_input_keeps_the_input_hooks_alone():
    class Identity(paddle.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0, x

        @staticmethod
        def backward(ctx, da, db):
            return da

    x = paddle.to_tensor([1.0, -2.0], stop_gradient=False)
    h = x * 2.0
    a, _ = Identity.apply(h)
    a.register_hook(lambda g: g * 4.0)
    a.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 8.0])
