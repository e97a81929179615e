"""A hook runs only when a gradient reaches its tensor, as in eager.

A static backward gives a value zeros where eager gives it no gradient at
all: when its gradient would come only through the branch of a
tensor-dependent ``if`` that did not run, or only from an output of a
``to_static`` program that the caller does not differentiate (the program's
grad node fills those outputs' gradients with zeros). Eager runs no hook
then; a hook that changes zeros (``lambda g: g + 1``) shows the difference.
Every test compares with eager.
"""

import numpy as np
import paddle
import pytest
from conftest import (
    RTOL,
    assert_same_as_eager,
    graph_breaks,
    random_inputs,
)
from paddle.autograd import PyLayer
from paddle.autograd.python_effects import always_none_positions

MODES = ["ast", "sot"]


def _to_static(fn, mode):
    if mode == "eager":
        return fn
    return paddle.jit.to_static(fn, full_graph=mode == "ast")


def _run_differentiating(fn, inputs, picked, mode):
    """Run ``fn`` (returning several Tensors) in ``mode`` and differentiate
    only the outputs ``picked``; returns (outputs, input gradients)."""
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in inputs]
    outs = _to_static(fn, mode)(*xs)
    if isinstance(outs, paddle.Tensor):
        outs = [outs]
    rng = np.random.default_rng(7)
    loss = 0
    for i in picked:
        cot = paddle.to_tensor(rng.standard_normal(outs[i].shape))
        loss = loss + (outs[i] * cot).sum()
    loss.backward()
    return [o.numpy() for o in outs], [
        None if x.grad is None else x.grad.numpy() for x in xs
    ]


def _assert_same_differentiating(fn, inputs, picked, mode, hooked=(0,)):
    """Outputs and gradients equal eager's. An input without hooks
    (not in ``hooked``) that eager gives no gradient may get zeros (stock:
    the program's backward fills missing output gradients with zeros);
    a hooked one must get none, as its hooks must not run."""
    want_outs, want_grads = _run_differentiating(fn, inputs, picked, "eager")
    got_outs, got_grads = _run_differentiating(fn, inputs, picked, mode)
    for got, want in zip(got_outs, want_outs):
        np.testing.assert_allclose(got, want, rtol=RTOL["float64"], atol=0)
    for i, (got, want) in enumerate(zip(got_grads, want_grads)):
        if want is None and i not in hooked and got is not None:
            assert not np.any(got), f"grad of input {i}"
            continue
        assert (got is None) == (want is None), f"grad of input {i}"
        if want is not None:
            np.testing.assert_allclose(
                got, want, rtol=RTOL["float64"], atol=0, err_msg=f"input {i}"
            )


def _plus_one(g):
    return g + 1.0


def _hook_on_value_of_first_output(x):
    t = paddle.sin(x)
    t.register_hook(_plus_one)
    return t * 3.0, x * 4.0


def _hook_on_input_of_first_output(x, y):
    x.register_hook(_plus_one)
    return paddle.tanh(x) * 3.0 + y, y * 4.0


def _hook_on_value_of_two_outputs(x, y):
    t = paddle.sin(x)
    t.register_hook(lambda g: g * 2.0 + 1.0)
    return t * y, paddle.cos(t) + y, y * 5.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("picked", [(0,), (1,), (0, 1)])
def test_hook_on_value_feeding_an_output_runs_only_when_it_is_differentiated(
    sot_env, mode, picked
):
    (x,) = random_inputs((3, 4))
    _assert_same_differentiating(
        _hook_on_value_of_first_output, [x], picked, mode, hooked=()
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("picked", [(0,), (1,), (0, 1)])
def test_hook_on_input_feeding_an_output_runs_only_when_it_is_differentiated(
    sot_env, mode, picked
):
    _assert_same_differentiating(
        _hook_on_input_of_first_output, random_inputs((3,), (3,)), picked, mode
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("picked", [(0,), (1,), (2,), (1, 2)])
def test_hook_on_value_feeding_two_outputs_runs_when_either_is_differentiated(
    sot_env, mode, picked
):
    _assert_same_differentiating(
        _hook_on_value_of_two_outputs,
        random_inputs((3,), (3,)),
        picked,
        mode,
        hooked=(),
    )


def test_output_hooks_need_no_graph_break_in_sot(sot_env):
    _assert_same_differentiating(
        _hook_on_value_of_first_output, random_inputs((3,)), (1,), "sot"
    )
    assert graph_breaks() == []


def _hook_on_value_used_by_an_op_feeding_a_branch(x, y):
    t = paddle.sin(x)
    t.register_hook(_plus_one)
    a = t * 2.0  # used only in the else branch
    if y.sum() > 0:
        out = y * 3.0
    else:
        out = a + y
    return out


def _hook_on_input_used_by_an_op_feeding_a_branch(x, y):
    x.register_hook(_plus_one)
    a = x * 2.0
    if y.sum() > 0:
        out = y * 3.0
    else:
        out = a + y
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["not_taken", "taken"])
@pytest.mark.parametrize(
    "fn, hooked",
    [
        (_hook_on_value_used_by_an_op_feeding_a_branch, ()),
        (_hook_on_input_used_by_an_op_feeding_a_branch, (0,)),
    ],
    ids=["value", "input"],
)
def test_hook_on_value_reaching_a_branch_through_other_ops_runs_only_when_it_ran(
    sot_env, mode, sign, fn, hooked
):
    x, y = random_inputs((3,), (3,))
    y = sign * np.abs(y)
    _assert_same_differentiating(fn, [x, y], (0,), mode, hooked)


def _static_cond_reached_through_other_ops(x, y):
    t = paddle.sin(x)
    t.register_hook(_plus_one)
    a = t * 2.0
    b = a * a
    return paddle.static.nn.cond(
        y.sum() > 0, lambda: y * 3.0, lambda: b + y
    ) + paddle.cos(x)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["not_taken", "taken"])
def test_static_cond_hook_reaching_a_branch_through_other_ops(
    static_runner, sign
):
    x, y = random_inputs((3,), (3,))
    assert_same_as_eager(
        _static_cond_reached_through_other_ops,
        [x, sign * np.abs(y)],
        static_runner,
    )


def _hook_on_value_used_in_inner_if_with_a_random_condition(x, y):
    t = paddle.sin(x)
    t.register_hook(_plus_one)
    if y.sum() > 0:
        c = paddle.rand([1]) > 2.0  # always False, not computable again
        if c:
            out = t * y
        else:
            out = y * 2.0
    else:
        out = y * 3.0
    return out


def test_hook_whose_condition_cannot_be_computed_again_is_a_clear_error():
    x, y = random_inputs((3,), (3,))
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in (x, np.abs(y))]
    fn = paddle.jit.to_static(
        _hook_on_value_used_in_inner_if_with_a_random_condition,
        full_graph=True,
    )
    with pytest.raises(NotImplementedError, match="_plus_one.*random op"):
        fn(*xs).sum().backward()


@pytest.mark.parametrize("mode", MODES)
def test_hook_on_non_leaf_input_without_gradient_from_the_program_is_a_clear_error(
    sot_env, mode
):
    w, y = (
        paddle.to_tensor(a, stop_gradient=False)
        for a in random_inputs((3,), (3,))
    )
    x = w * 1.0  # a scale op: its backward cannot take "no gradient"
    _, second = _to_static(_hook_on_input_of_first_output, mode)(x, y)
    # raised in the backward of a PyLayer, which eager re-raises as OSError
    with pytest.raises(OSError, match="_plus_one.*not a leaf Tensor"):
        second.sum().backward()


@pytest.mark.parametrize("mode", MODES)
def test_hook_on_non_leaf_input_runs_when_the_program_gives_it_a_gradient(
    sot_env, mode
):
    (a,) = random_inputs((3,))
    grads = {}
    for m in ("eager", mode):
        w = paddle.to_tensor(a, stop_gradient=False)
        y = paddle.to_tensor(a * 2, stop_gradient=False)
        first, _ = _to_static(_hook_on_input_of_first_output, m)(w * 1.0, y)
        first.sum().backward()
        grads[m] = w.grad.numpy()
    np.testing.assert_allclose(grads[mode], grads["eager"], rtol=1e-12)


class _TwoPlainHeads(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.a = paddle.nn.Linear(3, 3)
        self.b = paddle.nn.Linear(3, 3)

    def forward(self, x):
        return self.a(x), self.b(x)


class _TwoHeads(_TwoPlainHeads):
    def forward(self, x):
        self.b.weight.register_hook(_plus_one)
        return self.a(x), self.b(x)


def _head_grads(mode, picked):
    paddle.seed(0)
    net = _TwoHeads()
    outs = _to_static(net, mode)(paddle.ones([2, 3]))
    sum(outs[i].sum() for i in picked).backward()
    return [p.grad for p in (net.a.weight, net.b.weight)]


@pytest.mark.parametrize("mode", MODES)
def test_parameter_hook_runs_when_its_output_is_differentiated(sot_env, mode):
    want, got = _head_grads("eager", (0, 1)), _head_grads(mode, (0, 1))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_parameter_hook_does_not_run_when_no_gradient_reaches_it(sot_env, mode):
    want, got = _head_grads("eager", (0,)), _head_grads(mode, (0,))
    assert want[1] is None and got[1] is None
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_parameter_hook_registered_at_every_call_trains_like_eager(
    sot_env, mode
):
    weights = {}
    for m in ("eager", mode):
        paddle.seed(0)
        net = _TwoHeads()
        step = _to_static(net, m)
        opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
        for _ in range(3):
            a, b = step(paddle.ones([2, 3]))
            (a.sum() + b.sum()).backward()
            opt.step()
            opt.clear_grad()
        weights[m] = net.b.weight.numpy()
    np.testing.assert_allclose(weights[mode], weights["eager"], rtol=1e-6)


# Hooks registered eagerly, outside the to_static function: on a parameter
# (say in ``__init__``) or on an input before the call. The run gives the
# Tensor zeros when none of the outputs it affects is differentiated; eager
# gives it no gradient and runs none of its hooks.


def _eagerly_hooked_head_grads(mode, picked):
    paddle.seed(0)
    net = _TwoPlainHeads()
    calls = []
    net.b.weight.register_hook(lambda g: (calls.append(1), g + 1.0)[1])
    outs = _to_static(net, mode)(paddle.ones([2, 3]))
    sum(outs[i].sum() for i in picked).backward()
    return calls, [p.grad for p in (net.a.weight, net.b.weight)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("picked", [(0,), (1,), (0, 1)])
def test_eager_parameter_hook_runs_only_when_its_output_is_differentiated(
    sot_env, mode, picked
):
    want_calls, want = _eagerly_hooked_head_grads("eager", picked)
    got_calls, got = _eagerly_hooked_head_grads(mode, picked)
    assert got_calls == want_calls
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None and i == 0 and g is not None:
            # no hooks: zeros instead of None (stock)
            assert not np.any(g.numpy())
            continue
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_eager_parameter_hook_trains_like_eager_when_heads_alternate(
    sot_env, mode
):
    weights = {}
    for m in ("eager", mode):
        paddle.seed(0)
        net = _TwoPlainHeads()
        net.b.weight.register_hook(_plus_one)
        step = _to_static(net, m)
        opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
        for i in range(4):
            outs = step(paddle.ones([2, 3]))
            outs[i % 2].sum().backward()
            opt.step()
            opt.clear_grad(set_to_zero=False)
        weights[m] = [p.numpy() for p in net.parameters()]
    for got, want in zip(weights[mode], weights["eager"]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _first_uses_x(x, y):
    return paddle.tanh(x) * 3.0 + y, y * 4.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("picked", [(0,), (1,), (0, 1)])
def test_eager_input_hook_runs_only_when_its_output_is_differentiated(
    sot_env, mode, picked
):
    def run(m):
        xs = [
            paddle.to_tensor(a, stop_gradient=False)
            for a in random_inputs((3,), (3,))
        ]
        xs[0].register_hook(_plus_one)
        outs = _to_static(_first_uses_x, m)(*xs)
        sum(outs[i].sum() for i in picked).backward()
        return [None if x.grad is None else x.grad.numpy() for x in xs]

    want, got = run("eager"), run(mode)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=RTOL["float64"], atol=0)


def _x_used_only_in_else(x, y):
    a = x * 2.0
    if y.sum() > 0:
        out = y * 3.0
    else:
        out = a + y
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["not_taken", "taken"])
def test_eager_input_hook_runs_only_when_the_branch_using_it_ran(
    sot_env, mode, sign
):
    x, y = random_inputs((3,), (3,))
    y = sign * np.abs(y)

    def run(m):
        xs = [paddle.to_tensor(a, stop_gradient=False) for a in (x, y)]
        xs[0].register_hook(_plus_one)
        _to_static(_x_used_only_in_else, m)(*xs).sum().backward()
        return None if xs[0].grad is None else xs[0].grad.numpy()

    want, got = run("eager"), run(mode)
    assert (got is None) == (want is None)
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=RTOL["float64"], atol=0)


@pytest.mark.parametrize("mode", MODES)
def test_removed_eager_input_hook_does_not_run(sot_env, mode):
    xs = [
        paddle.to_tensor(a, stop_gradient=False)
        for a in random_inputs((3,), (3,))
    ]
    calls = []
    handle = xs[0].register_hook(lambda g: calls.append(1))
    handle.remove()
    _, second = _to_static(_first_uses_x, mode)(*xs)
    second.sum().backward()
    assert calls == []
    assert xs[0].grad is None or not np.any(xs[0].grad.numpy())


@pytest.mark.parametrize("mode", MODES)
def test_eager_hook_on_non_leaf_input_without_gradient_is_a_clear_error(
    sot_env, mode
):
    w, y = (
        paddle.to_tensor(a, stop_gradient=False)
        for a in random_inputs((3,), (3,))
    )
    x = w * 1.0  # a scale op: its backward cannot take "no gradient"
    x.register_hook(_plus_one)
    _, second = _to_static(_first_uses_x, mode)(x, y)
    with pytest.raises(OSError, match="not a leaf Tensor"):
        second.sum().backward()


def _hooked_before_a_break(x):
    # fuzz s40-1847: SOT compiles the hook on `s` into the graph before
    # the break (`s` has another use there, `dead`), and passes `s` to the
    # graph after it, which returns it in an output the caller may not
    # differentiate.
    s = paddle.sum(x / (paddle.square(x) + 1.0), axis=1)
    s.register_hook(_plus_one)
    dead = paddle.concat([paddle.exp(x), paddle.exp(x)], axis=1) + s  # noqa: F841
    if x.mean() > 0:
        r = x * 2.0
    else:
        r = x
    return r * -1.5, s * 1.0


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_hook_in_a_graph_before_a_break_whose_value_the_next_graph_does_not_reach(
    sot_env, sign
):
    (a,) = random_inputs((4, 2, 2), seed=3)
    a = np.abs(a) * sign
    _assert_same_differentiating(
        _hooked_before_a_break, [a], [0, 1], "sot", hooked=()
    )
    # The graph after the break gives `s` zeros when the caller does not
    # differentiate `s * 1.0`; the graph before it would run the hook on
    # them (eager does not run it): a clear error, not a wrong gradient.
    x = paddle.to_tensor(a, stop_gradient=False)
    first, _ = _to_static(_hooked_before_a_break, "sot")(x)
    with pytest.raises(OSError, match="so the hooks cannot be skipped"):
        first.sum().backward()


def _hooked_call(x):
    t = paddle.sin(x)
    t.register_hook(_plus_one)
    return t * 2.0


def _two_heads(h, y):
    return y * 3.0, h * 1.0


@pytest.mark.parametrize("mode", MODES)
def test_call_on_an_output_of_a_hooked_call_that_it_does_not_reach(
    sot_env, mode
):
    def chained(in_mode):
        def fn(x, y):
            h = _to_static(_hooked_call, in_mode)(x)
            return _to_static(_two_heads, in_mode)(h, y)

        return fn

    # Both outputs differentiated: eager's outputs and gradients.
    inputs = random_inputs((3,), (3,))
    want = _run_differentiating(chained("eager"), inputs, [0, 1], "eager")
    got = _run_differentiating(chained(mode), inputs, [0, 1], "eager")
    for g, w in zip([*got[0], *got[1]], [*want[0], *want[1]]):
        np.testing.assert_allclose(g, w, rtol=RTOL["float64"], atol=0)
    x, y = (paddle.to_tensor(a, stop_gradient=False) for a in inputs)
    first, _ = chained(mode)(x, y)
    # The second call would give `h` zeros, and the first call's hook
    # would run on them (eager runs it not at all): a clear error.
    with pytest.raises(OSError, match="so the hooks cannot be skipped"):
        first.sum().backward()


# -- a PyLayer whose backward returns None for an input -------------------------


class _HalfGrad(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return paddle.sin(b) * b

    @staticmethod
    def backward(ctx, d):
        return d * 0.5, None


class _NoGrad(PyLayer):
    @staticmethod
    def forward(ctx, a, b, k=1.5):
        return (a - b) - paddle.tanh(a - b)

    @staticmethod
    def backward(ctx, d):
        return None, None


@pytest.mark.parametrize("picked", [[0], [0, 1]], ids=["first", "both"])
@pytest.mark.parametrize("mode", MODES)
def test_input_hook_and_a_pylayer_that_gives_the_input_none(mode, picked):
    # Found by the fuzzer. x1 reaches output 0 only through `_NoGrad`,
    # whose backward gives it None, and output 1 through `_HalfGrad`.
    # When the caller differentiates output 0 only, eager gives x1 no
    # gradient and runs none of its hooks; the run used to give it zeros,
    # on which its hook ran (x1.grad 1 where eager has None).
    def f(x0, x1):
        v1 = _HalfGrad.apply(x1, x0)
        x1.register_hook(lambda g: g + 1.0)
        v2 = _NoGrad.apply(x0, x1, 3.0)
        v5 = _NoGrad.apply(x1, x0)
        a, _ = paddle.split(v5, 2, axis=1)
        return paddle.sin(v2) + a, v1 * 1.0

    inputs = random_inputs([4, 2, 3], [4, 2, 3])
    _assert_same_differentiating(f, inputs, picked, mode, hooked=(1,))


class _SavesProduct(PyLayer):
    @staticmethod
    def forward(ctx, a0, a1, a2):
        t = a1 * a0
        ctx.save_for_backward(t)
        return paddle.tanh(t)

    @staticmethod
    def backward(ctx, d):
        (t,) = ctx.saved_tensor()
        return d, None, d * (1.0 - paddle.square(paddle.tanh(t)))


@pytest.mark.parametrize("mode", MODES)
def test_pylayer_none_beside_computed_gradients_runs_no_hook(mode):
    # Found by the fuzzer: `backward` returns `None` for x0 beside computed
    # gradients. x0 otherwise feeds only the output the caller does not
    # differentiate: eager gives it no gradient and runs no hook; the run
    # gave it zeros and its hook ran (x0.grad 1 where eager has None).
    def f(x0, x1):
        v = _SavesProduct.apply(x1, x0, paddle.square(x1) * 0.5)
        x0.register_hook(lambda g: g + 1.0)
        return paddle.reshape(v, [1, 2]), x0 * 2.0

    inputs = random_inputs([2], [2])
    _assert_same_differentiating(f, inputs, [0], mode, hooked=(0,))


@pytest.mark.parametrize("mode", MODES)
def test_leaf_input_hook_where_a_pylayer_gives_none_does_not_run(mode):
    # Eager gives x no gradient and does not call its hook. (A non-leaf
    # value that only such a PyLayer uses crashes eager Paddle 3.3.1 in
    # its backward: docs/upstream-bugs.md.)
    calls = []

    def f(x, y):
        x.register_hook(lambda g: calls.append(1) or g + 1.0)
        return _NoGrad.apply(x, y) + y * 3.0, x * 2.0

    for m in ("eager", mode):
        calls.clear()
        _, grads = _run_differentiating(
            f, random_inputs([2, 3], [2, 3]), [0], m
        )
        assert grads[0] is None and calls == [], m


def _returns_second_none(ctx, d):
    return d * 0.5, None


def _returns_none(ctx, d):
    return None


def _returns_none_on_one_path(ctx, d):
    if d.sum() > 0:
        return d, None
    return None, d


def _returns_a_variable(ctx, d):
    nothing = None
    return d, nothing


def _returns_a_conditional(ctx, d):
    return d, d if d is not None else None


def _returns_none_beside_a_product(ctx, d):
    (s,) = ctx.saved_tensor()
    return d * s, None, d * (1.0 - paddle.tanh(s))


def _returns_none_in_a_nested_function(ctx, d):
    def helper():
        return None, None

    helper()
    return d, d


@pytest.mark.parametrize(
    "backward, n, want",
    [
        (_returns_second_none, 2, {1}),
        (_returns_none, 1, {0}),
        (lambda ctx, d: (None, None), 2, {0, 1}),
        (_returns_none_on_one_path, 2, set()),
        (_returns_a_variable, 2, set()),
        (_returns_a_conditional, 2, set()),
        (_returns_none_beside_a_product, 3, {1}),
        (_returns_none_in_a_nested_function, 2, set()),
    ],
    ids=[
        "second",
        "all",
        "constant",
        "one_path",
        "variable",
        "conditional",
        "beside_product",
        "nested_function",
    ],
)
def test_always_none_positions_reads_literal_nones_only(backward, n, want):
    assert always_none_positions(backward, n) == want
