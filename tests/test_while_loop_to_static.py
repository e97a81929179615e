"""The backward of a tensor-dependent ``while`` loop under
``to_static(full_graph=True)`` (AST), against eager's Python loop.

Stock Paddle 3.3.1 fails there at run time with ``The variable middle_0
should exist``: the loop's stack and its outlet are one executor variable,
passed to the backward under two names. Each case runs twice per shape
(the cached program) over several shapes (a new program each).
"""

import numpy as np
import paddle
import pytest
from conftest import Square


def counted(x):
    i = paddle.zeros([1], "int64")
    y = x
    while i < 3:
        y = y * 2.0 + x
        i = i + 1
    return y


def value_dependent(x, w):
    y = paddle.cos(x)
    while y.sum() < 10.0:
        y = y * (w + 1.0) + 0.5
    return y


def zero_iterations(x):
    i = paddle.zeros([1], "int64")
    y = x * 1.5
    while i < 0:
        y = paddle.sin(y)
        i = i + 1
    return y


def if_in_body(x):
    i = paddle.zeros([1], "int64")
    y = x
    while i < 3:
        if y.sum() > 0:
            y = y * 1.5
        else:
            y = paddle.exp(y)
        i = i + 1
    return y


def pylayer_in_body(x):
    i = paddle.zeros([1], "int64")
    y = x
    while i < 2:
        y = Square.apply(y) + x
        i = i + 1
    return y


def two_loops(x, w):
    i = paddle.zeros([1], "int64")
    y = x
    while i < 2:
        y = paddle.tanh(y * w)
        i = i + 1
    j = paddle.zeros([1], "int64")
    while j < 3:
        y = y + paddle.exp(y * 0.5)
        j = j + 1
    return y


def grads(fn, inputs):
    tensors = [paddle.to_tensor(v, stop_gradient=False) for v in inputs]
    out = fn(*tensors)
    out.sum().backward()
    return [out.numpy()] + [t.grad.numpy() for t in tensors]


@pytest.mark.parametrize(
    "fn",
    [
        counted,
        value_dependent,
        zero_iterations,
        if_in_body,
        pylayer_in_body,
        two_loops,
    ],
    ids=lambda f: f.__name__,
)
def test_while_loop_backward_matches_eager(fn):
    rng = np.random.default_rng(19)
    static_fn = paddle.jit.to_static(fn, full_graph=True)
    for shape in ([3], [3], [5], [2, 4]):
        inputs = [
            rng.uniform(-0.9, 0.9, shape)
            for _ in range(fn.__code__.co_argcount)
        ]
        if fn is value_dependent:
            inputs = [np.abs(v) + 0.1 for v in inputs]
        want = grads(fn, inputs)
        got = grads(static_fn, inputs)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


class LoopNet(paddle.nn.Layer):
    """``start="constant"``: the loop variable starts without gradient and
    gets one from the Layer's parameters in the body."""

    def __init__(self, start):
        super().__init__()
        self.start = start
        self.fc = paddle.nn.Linear(4, 4)

    def forward(self, x, n):
        i = paddle.zeros([1], "int64")
        h = x if self.start == "input" else paddle.zeros_like(x.detach())
        while i < n:
            h = paddle.tanh(self.fc(h) + x)
            i = i + 1
        return (h * h).mean()


def _loop_net(start):
    paddle.seed(7)
    paddle.set_default_dtype("float64")
    try:
        return LoopNet(start)
    finally:
        paddle.set_default_dtype("float32")


@pytest.mark.parametrize("start", ["input", "constant"])
def test_training_a_layer_with_a_while_loop_matches_eager(start):
    def train(to_static):
        net = _loop_net(start)
        opt = paddle.optimizer.SGD(0.5, parameters=net.parameters())
        step = paddle.jit.to_static(net, full_graph=True) if to_static else net
        rng = np.random.default_rng(3)
        losses = []
        for n, batch in ((1, 2), (3, 2), (2, 5), (3, 3)):
            x = paddle.to_tensor(
                rng.standard_normal([batch, 4]),
                stop_gradient=start == "constant",
            )
            loss = step(x, paddle.to_tensor([n], "int64"))
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
        return losses, [p.numpy() for p in net.parameters()]

    (want_losses, want_params), (got_losses, got_params) = (
        train(False),
        train(True),
    )
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-10)
    for got, want in zip(got_params, want_params):
        np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("start", ["input", "constant"])
def test_fine_tuning_a_loaded_layer_with_a_while_loop_matches_eager(
    start, tmp_path
):
    """The serializer drops the `stop_gradient` of the loop body's
    arguments: the loaded loop's variables stopped gradient (wrong
    gradients, silently; stock: `The variable middle_0 should exist`)."""
    path = str(tmp_path / "loop")
    paddle.jit.save(
        paddle.jit.to_static(_loop_net(start), full_graph=True),
        path,
        input_spec=[
            paddle.static.InputSpec([-1, 4], "float64", "x"),
            paddle.static.InputSpec([1], "int64", "n"),
        ],
    )
    loaded = paddle.jit.load(path)
    loaded.train()
    eager = _loop_net(start)
    rng = np.random.default_rng(3)
    for model in (loaded, eager):
        model.opt = paddle.optimizer.SGD(0.5, parameters=model.parameters())
    for n, batch in ((1, 2), (3, 2), (2, 5), (3, 3)):
        x_np = rng.standard_normal([batch, 4])
        losses, x_grads = [], []
        for model in (loaded, eager):
            x = paddle.to_tensor(x_np, stop_gradient=False)
            loss = model(x, paddle.to_tensor([n], "int64"))
            loss.backward()
            model.opt.step()
            model.opt.clear_grad()
            losses.append(float(loss))
            x_grads.append(x.grad.numpy())
        np.testing.assert_allclose(losses[0], losses[1], rtol=1e-10)
        np.testing.assert_allclose(x_grads[0], x_grads[1], rtol=1e-10)


def list_in_while_loop(x):
    """Paddle's own test_list.py (TestListInWhileLoop): a list appended to
    and popped from in a tensor-dependent loop becomes a tensor array."""
    iter_num = paddle.full([1], 3, "int32")
    a = []
    b = [x]
    b.append(x)
    b.pop()
    i = 0
    while i < iter_num:
        a.append(x + i)
        b.append(x - i)
        i += 1
        if i % 2 == 1:
            a.pop()
    return a[0], b[2]


def test_list_in_while_loop_converts():
    x = paddle.to_tensor([1, 2, 3], dtype="int32")
    want = [t.numpy() for t in list_in_while_loop(x)]
    got = paddle.jit.to_static(list_in_while_loop, full_graph=True)(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def static_while_loop(x, w):
    """``paddle.static.nn.while_loop`` called in a to_static function (and
    eagerly): its loop variable gains a gradient, a PyLayer in the body."""

    def cond(i, h):
        return i < 3

    def body(i, h):
        return [i + 1, Square.apply(paddle.tanh(h * w)) + x]

    _, h = paddle.static.nn.while_loop(
        cond, body, [paddle.zeros([1], "int64"), x * 1.0]
    )
    return h


def python_while_loop(x, w):
    i, h = paddle.zeros([1], "int64"), x * 1.0
    while i < 3:
        i, h = i + 1, Square.apply(paddle.tanh(h * w)) + x
    return h


@pytest.mark.parametrize("mode", ["eager", "sot", "ast"])
def test_while_loop_api_gives_the_python_loops_gradients(mode):
    """Eager's ``while_loop`` (which SOT runs) assigned each iteration into
    the loop variables in place: "modified by an inplace operation", or
    wrong gradients. Eager Python loop as the reference."""
    fn = static_while_loop
    if mode != "eager":
        fn = paddle.jit.to_static(fn, full_graph=mode == "ast")
    rng = np.random.default_rng(4)
    for batch in (2, 3, 5):
        a, b = rng.standard_normal([2, batch])
        results = []
        for f in (python_while_loop, fn):
            x = paddle.to_tensor(a, stop_gradient=False)
            w = paddle.to_tensor(b, stop_gradient=False)
            out = f(x, w)
            out.sum().backward()
            results.append([out.numpy(), x.grad.numpy(), w.grad.numpy()])
        for got, want in zip(results[1], results[0]):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_while_loop_api_without_gradient_updates_its_variables_in_place():
    """Stock behaviour kept when nothing needs a gradient."""
    i = paddle.zeros([1], "int64")
    paddle.static.nn.while_loop(lambda i: i < 3, lambda i: [i + 1], [i])
    assert i.numpy().tolist() == [3]
