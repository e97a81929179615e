"""In-place ops inside tensor-dependent ``while`` bodies and ``if`` branches
give eager's outputs and gradients.

A static graph builds ``t.add_(y)`` out of place. A loop body or a branch
is a block of its own: AST rewrites the statement ``t.add_(y)`` on a local
name into ``t = _jst.Inplace(t, t.add_(y))``, so the loop and branch
conversions carry ``t`` like after ``t = t + y``; in a static program, a
``while_loop`` body's in-place op rebinds its loop variable. Stock dropped
the op in both, silently. Each case runs eagerly, under AST, SOT
(``MIN_GRAPH_SIZE=0``) and, for ``tensor_while``, as a static program;
a Layer with such a loop trains for 3 steps at batch sizes 2, 3, 4.
"""

import numpy as np
import paddle
import pytest
from conftest import (
    STATIC_RUNNERS,
    assert_same_as_eager,
    random_inputs,
    run_to_static,
    tensor_while,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore:In static graph mode, .* does not perform inplace operation"
)


def loop_multiply(x, y):
    t = x * 1.0
    i = paddle.zeros([], "int64")
    while i < 3:
        t.multiply_(y)
        i += 1
    return t * t


def branch_update(x, y):
    t = x * 2.0
    if y.sum() < 0:
        t.add_(y)
    else:
        t.scale_(0.5)
    if x.sum() > 100:
        t.tanh_()
    return t * y


def while_loop_multiply(x, y):
    def body(i, t):
        t.multiply_(y)
        t.add_(x)
        return i + 1, t

    _, t = tensor_while(
        lambda i, t: i < 3, body, [paddle.zeros([], "int64"), x * 1.0]
    )
    return t * t


@pytest.mark.parametrize(
    "fn", [loop_multiply, branch_update], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
@pytest.mark.usefixtures("sot_env")
def test_inplace_in_loop_or_branch_equals_eager(fn, full_graph):
    for seed, shape in enumerate([(3,), (4,)]):
        inputs = random_inputs(shape, shape, seed=seed)
        inputs[1] = -np.abs(inputs[1]) if seed else np.abs(inputs[1])
        assert_same_as_eager(
            fn,
            inputs,
            lambda f, a: run_to_static(f, a, full_graph=full_graph),
        )


@pytest.mark.parametrize("runner", sorted(STATIC_RUNNERS))
def test_inplace_in_while_loop_body_equals_eager(runner):
    assert_same_as_eager(
        while_loop_multiply, random_inputs((3,), (3,)), STATIC_RUNNERS[runner]
    )


class Smoother(paddle.nn.Layer):
    """A Layer that refines its hidden state in place a data-dependent
    number of times."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)
        self.out = paddle.nn.Linear(4, 1)

    def forward(self, x):
        h = self.fc(x) * 1.0
        steps = paddle.zeros([], "int64")
        while steps < (x.abs().mean() * 4).astype("int64") + 1:
            h.scale_(0.75)  # (eager: no op saves `h` for its backward)
            h.add_(paddle.tanh(self.fc(h.clone())) * 0.25)
            steps += 1
        if h.mean() > 0:
            h.scale_(2.0)
        return self.out(h).mean()


def _train(mode):
    paddle.seed(7)
    net = Smoother().to(dtype="float64")
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    out = []
    for batch in (2, 3, 4):
        x = paddle.to_tensor(
            np.random.default_rng(batch).standard_normal((batch, 4))
        )
        loss = net(x)
        loss.backward()
        out += [loss.numpy(), net.fc.weight.grad.numpy()]
        opt.step()
        opt.clear_grad()
    return out


@pytest.mark.parametrize("mode", ["ast", "sot"])
@pytest.mark.usefixtures("sot_env")
def test_layer_with_inplace_loop_trains_as_eager(mode):
    for got, want in zip(_train(mode), _train("eager")):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


BUFFER = paddle.zeros([3], dtype="float64")


class Counter:
    def bump_(self):
        self.n = getattr(self, "n", 0) + 1  # returns None


def test_rewrite_leaves_globals_and_python_objects_bound():
    """A global tensor changed in place is not made a local (no
    UnboundLocalError; the op does not change the global in a static
    graph, as in stock), and a Python object whose method ends with ``_``
    stays bound to itself, not to the method's ``None``."""

    def f(x):
        BUFFER.add_(x)
        c = Counter()
        c.bump_()
        c.bump_()
        return x * c.n

    x = paddle.to_tensor([1.0, 2.0, 3.0], dtype="float64")
    got = paddle.jit.to_static(f, full_graph=True)(x)
    np.testing.assert_array_equal(got.numpy(), [2.0, 4.0, 6.0])


def _unused_inplace_result(x, y):
    t = y * 0.5
    t.multiply_(x)  # `t` is not used after
    return paddle.tanh(y) * 2.0


def _unused_setitem_result(x, y):
    t = x * -0.75
    t[0] = -1.5  # `t` is not used after
    return paddle.tanh(y) * 2.0


@pytest.mark.parametrize("fn", [_unused_inplace_result, _unused_setitem_result])
@pytest.mark.usefixtures("sot_env")
def test_sot_inplace_on_unused_graph_tensor_gives_no_gradient(fn):
    """An in-place op (a method, `t[i] = v`) on a tensor the SOT graph
    computed and does not use after: it is no output of the graph, so ``x``
    gets no gradient (None, as in eager), not the zeros a graph output
    would give it (stock SOT, `t[i] = v`)."""
    assert_same_as_eager(
        fn,
        random_inputs((3,), (3,)),
        lambda f, a: run_to_static(f, a, full_graph=False),
    )


def _chained_inplace(x, y):
    t = x * 2.0
    t.add_(y).scale_(0.5)  # `add_` returns `t` itself
    return t * t


@pytest.mark.parametrize("runner", sorted(STATIC_RUNNERS))
def test_chained_inplace_ops_equal_eager(runner):
    """An in-place op returns the tensor itself, so a chained one changes it
    too (stock static graphs: the second op changed a copy, silently)."""
    assert_same_as_eager(
        _chained_inplace, random_inputs((3,), (3,)), STATIC_RUNNERS[runner]
    )
