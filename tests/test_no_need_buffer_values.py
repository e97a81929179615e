"""A value a to_static program returns keeps its values when a later op of
the same program reads it (the stock inplace pass wrote into it when the
backward needed only its shape), and a value the backward of an `if` branch
reads keeps its buffer. Found by the fuzzer; eager is the
reference for every output and gradient, in AST and SOT (each subgraph
compiled), across batch sizes. Under SOT the value may also be an output of
a subgraph before a graph break that an op of that subgraph reads."""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks, random_inputs
from paddle.autograd import PyLayer

pytestmark = pytest.mark.usefixtures("sot_env", "fresh_sot_cache")


def returned_and_added(x, c):
    y = paddle.matmul(x, x, transpose_y=True)
    return y + y, y


def returned_and_read_twice(x, c):
    # two later readers whose backward needs only the shape of `y`
    # (`sum_grad`, `add_grad`; `sin_grad` reads `x`); `add` can run in
    # place on `y`
    y = paddle.sin(x)
    s = y.sum()
    z = y + paddle.exp(y)
    return z * c + s, y


def returned_across_graph_break(x, c):
    y = paddle.cos(x)
    z = y + x
    if c.mean() > 0:
        r = paddle.cos(z)
    else:
        r = z + c
    return r, y * 1.0


class CosTwice(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return paddle.cos(paddle.cos(a)) * 1.5

    @staticmethod
    def backward(ctx, d):
        return d * 1.5


def pylayer_output_across_graph_break(x, c):
    a = x[:, 1:2]
    y = CosTwice.apply(a)
    z = y - paddle.cos(a)
    if c.mean() > 0:
        pass
    return y * 1.0, z * 1.0


def pylayer_output_returned(x, c):
    y = CosTwice.apply(x)
    return y - c, y


def split_read_across_graph_break(x, c):
    a, b = paddle.split(x, [1, 2], axis=1)
    v = paddle.reshape(a, [-1])
    s = v.sum(axis=0, keepdim=True)
    unused = a / (paddle.square(v) + 1.0)  # noqa: F841 (a use before the break)
    if c.mean() > 0:
        r = paddle.exp(paddle.clip(v, -3.0, 3.0)) * -1.5
    else:
        r = v
    return r + s.mean(), b * 1.0


def mean_read_across_graph_break(x, c):
    t = paddle.transpose(x, perm=[1, 0])
    v = x[:, :2] * -1.5
    m = paddle.mean(v, axis=0, keepdim=False)
    unused = v - t[:2, :].T  # noqa: F841 (a use before the break)
    if c.mean() > 0:
        pass
    return m * v, t * 1.0


def value_read_by_branch_backward(x, c):
    # `sum_grad` needs only the shape of `v`, `clip_grad` in the branch's
    # backward its values (stock AST: "Tensor holds no memory")
    v = x * 1.0
    s = v.sum()
    if c.mean() > 0:
        r = paddle.clip(v, -0.5, 0.5)
    else:
        r = v
    return r + s, s * 1.0


class SavesSecond(PyLayer):
    @staticmethod
    def forward(ctx, a0, a1):
        ctx.save_for_backward(a1)
        return paddle.sin(paddle.square(a1)), paddle.exp(paddle.tanh(a1))

    @staticmethod
    def backward(ctx, d0, d1):
        (s0,) = ctx.saved_tensor()
        return d0 * s0, d0 * paddle.cos(s0) + d1 * s0


def pylayer_output_read_in_both_branches(x, c):
    # stock AST: "Tensor holds no memory" in the backward of the `if`
    v3, v4 = SavesSecond.apply(x, paddle.cos(x))
    v8 = paddle.mean(v4, axis=1, keepdim=True) - c * c
    if x.mean() > 0:
        r = paddle.sin(paddle.cos(v4))
    else:
        r = v4 / (paddle.square(v8) + 1.0)
    return v3 + r, v8 * 1.0


FUNCTIONS = [
    returned_and_added,
    returned_and_read_twice,
    returned_across_graph_break,
    pylayer_output_across_graph_break,
    pylayer_output_returned,
    split_read_across_graph_break,
    mean_read_across_graph_break,
    value_read_by_branch_backward,
    pylayer_output_read_in_both_branches,
]


NO_GRAPH_BREAK = [
    returned_and_added,
    returned_and_read_twice,
    pylayer_output_returned,
]


def run(fn, x, c):
    x = paddle.to_tensor(x, stop_gradient=False)
    c = paddle.to_tensor(np.abs(c))
    outs = fn(x, c)
    cots = random_inputs(*[o.shape for o in outs], seed=7)
    sum((o * paddle.to_tensor(t)).sum() for o, t in zip(outs, cots)).backward()
    return [o.numpy() for o in outs] + [x.grad.numpy()]


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_matches_eager(fn, full_graph):
    static_fn = paddle.jit.to_static(fn, full_graph=full_graph)
    for batch in (2, 3, 5):  # SOT re-traces with a dynamic batch
        x, c = random_inputs([batch, 3], [batch, 3], seed=batch)
        want = run(fn, x, c)
        got = run(static_fn, x, c)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"result {i}")
    if not full_graph and fn in NO_GRAPH_BREAK:
        assert graph_breaks() == []
