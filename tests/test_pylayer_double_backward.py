"""Double backward through a ``PyLayer`` under ``to_static`` and in static
programs gives eager's gradients.

Eager records the ops of ``PyLayer.backward`` when a pass has
``create_graph=True`` (``paddle.grad(..., create_graph=True)``, a gradient
penalty): a tensor ``ctx.save_for_backward`` saved from the inputs of
``forward`` is connected to its graph, one that ``forward`` computed (it
runs without grad) is a constant. Each test runs the same code eagerly,
under SOT (every subgraph compiled, no graph break) and AST, across batch
sizes (SOT re-traces with dynamic shapes), and where a plain
``paddle.static`` program can express it (``paddle.static.gradients`` twice)
there too, and compares the output and every gradient.
"""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks
from paddle.autograd import PyLayer

MODES = {"sot": False, "ast": True}
RTOL = 1e-12


class Cube(PyLayer):
    """Saves its input: ``backward`` is differentiable in it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3.0 * x * x


class SavesSquare(PyLayer):
    """Saves its input and a tensor ``forward`` computes, a constant of the
    double backward."""

    @staticmethod
    def forward(ctx, x):
        s = x * x
        ctx.save_for_backward(x, s)
        return s * x

    @staticmethod
    def backward(ctx, dy):
        x, s = ctx.saved_tensor()
        return dy * 2.0 * s + dy * x * x


class BranchInBackward(PyLayer):
    """A tensor-dependent ``if`` in ``backward``."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.sin(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        if dy.sum() > 0:
            g = dy * paddle.cos(x)
        else:
            g = dy * paddle.cos(x) * 2.0
        return g


class TwoInOut(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b, paddle.tanh(a)

    @staticmethod
    def backward(ctx, d1, d2):
        a, b = ctx.saved_tensor()
        return d1 * b + d2 * (1.0 - paddle.tanh(a) ** 2), d1 * a


class OnceDifferentiable(PyLayer):
    """``backward`` under ``paddle.no_grad()`` (the ``once_differentiable``
    pattern): a later backward pass does not go through it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, d):
        (x,) = ctx.saved_tensor()
        with paddle.no_grad():
            g = d * 3.0 * x * x
        return g


class PartlyNoGrad(PyLayer):
    """Part of ``backward`` under ``paddle.no_grad()``: the gradient goes
    through the ops outside it only."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, d):
        (x,) = ctx.saved_tensor()
        with paddle.no_grad():
            c = 3.0 * x
        return d * c * x


def penalty_once_differentiable(x, w):
    y = OnceDifferentiable.apply(x * w)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return (gx * x).sum() + (gx * w).mean()


def penalty_partly_no_grad(x, w):
    y = PartlyNoGrad.apply(x * w)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return (gx * x).sum() + (gx * w).mean()


def penalty_cube(x, w):
    y = Cube.apply(x * w)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return (gx * gx).sum() + (gx * w).mean()


def penalty_saved_square(x, w):
    y = SavesSquare.apply(x * w)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return (gx * gx).sum()


def penalty_branch(x, w):
    y = BranchInBackward.apply(x * w)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return (gx**2).sum()


def returns_gradient(x, w):
    y = Cube.apply(x * w)
    (gx,) = paddle.grad([y.sum()], [x], create_graph=True)
    return gx


def two_inputs(x, w):
    p, q = TwoInOut.apply(x, w)
    gx, gw = paddle.grad([p.sum() + q.sum()], [x, w], create_graph=True)
    return (gx * gw).sum()


def _tensor(a):
    return paddle.to_tensor(a, stop_gradient=False)


def _run(fn, xs, ws):
    x, w = _tensor(xs), _tensor(ws)
    out = fn(x, w)
    out.sum().backward()
    return [out.numpy(), x.grad.numpy(), w.grad.numpy()]


def _assert_close(got, want):
    assert len(got) == len(want)
    for i, (g, e) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=1e-14, err_msg=i)


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(
    "fn",
    [
        penalty_cube,
        penalty_saved_square,
        penalty_branch,
        returns_gradient,
        two_inputs,
        penalty_once_differentiable,
        penalty_partly_no_grad,
    ],
)
def test_double_backward_matches_eager(fn, mode):
    static_fn = paddle.jit.to_static(fn, full_graph=MODES[mode])
    rng = np.random.default_rng(0)
    for batch in (3, 4, 6):
        xs, ws = rng.standard_normal([2, batch])
        _assert_close(_run(static_fn, xs, ws), _run(fn, xs, ws))
    assert graph_breaks() == []


def test_double_backward_in_a_static_program():
    """``paddle.static.gradients`` of a gradient that went through a
    PyLayer, run by the executor: eager's values."""
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal([2, 5])
    want = _run(penalty_cube, xs, ws)
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [5], "float64")
            w = paddle.static.data("w", [5], "float64")
            x.stop_gradient = w.stop_gradient = False
            y = Cube.apply(x * w)
            (gx,) = paddle.static.gradients([y.sum()], [x])
            out = (gx * gx).sum() + (gx * w).mean()
            grads = paddle.static.gradients([out], [x, w])
        exe = paddle.static.Executor(paddle.CPUPlace())
        got = exe.run(
            main, feed={"x": xs, "w": ws}, fetch_list=[out, *grads, gx]
        )
    finally:
        paddle.disable_static()
    _assert_close(got[:3], want)
    # the first gradient, a value the program also fetches
    np.testing.assert_allclose(got[3], 3.0 * (xs * ws) ** 2 * ws, rtol=RTOL)


class Softplus(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.log(1.0 + paddle.exp(x))

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * paddle.nn.functional.sigmoid(x)


class _Critic(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.l1 = paddle.nn.Linear(4, 8)
        self.l2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        return self.l2(Softplus.apply(self.l1(x)))


def wgan_gp_loss(critic, real, fake, eps):
    mixed = eps * real + (1.0 - eps) * fake
    (g,) = paddle.grad([critic(mixed).sum()], [mixed], create_graph=True)
    penalty = ((paddle.sqrt((g * g).sum(axis=1)) - 1.0) ** 2).mean()
    return critic(fake).mean() - critic(real).mean() + 10.0 * penalty


def _wgan_gp_step(fn, batch):
    paddle.seed(7)
    critic = _Critic()
    critic.to(dtype="float64")
    rng = np.random.default_rng(batch)
    real, fake = (
        paddle.to_tensor(a) for a in rng.standard_normal([2, batch, 4])
    )
    fake.stop_gradient = False
    eps = paddle.to_tensor(rng.uniform(size=[batch, 1]))
    loss = fn(critic, real, fake, eps)
    loss.backward()
    return [loss.numpy(), fake.grad.numpy()] + [
        p.grad.numpy() for p in critic.parameters()
    ]


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("mode", list(MODES))
def test_wgan_gradient_penalty_through_a_pylayer(mode):
    static_fn = paddle.jit.to_static(wgan_gp_loss, full_graph=MODES[mode])
    for batch in (5, 3):
        want = _wgan_gp_step(wgan_gp_loss, batch)
        _assert_close(_wgan_gp_step(static_fn, batch), want)
    assert graph_breaks() == []


def _cube_as_ops(v):
    return v**3


def _saves_square_as_ops(v):
    """``SavesSquare`` with Paddle ops: the value ``v**3``, the gradient
    ``2 * s + v * v`` with ``s = v * v`` a constant."""
    a = v**3 / 3.0 + 2.0 * (v * v).detach() * v
    return a + (v**3 - a).detach()


def _twice(apply):
    def fn(x, w):
        y = apply(x * w)
        (gx,) = paddle.grad([(y * w).sum()], [x], create_graph=True)
        return (y + gx * gx).sum()

    return fn


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(
    "layer, as_ops",
    [(Cube, _cube_as_ops), (SavesSquare, _saves_square_as_ops)],
    ids=["saves_input", "saves_computed"],
)
def test_forward_differentiated_again(layer, as_ops, mode):
    """The caller's backward differentiates the PyLayer's forward a second
    time (``y`` is in the loss, and the gradient of ``y * w`` reaches it).
    Eager Paddle refuses (it runs a PyLayer's backward once per call);
    static graphs give the gradients of the same function with the PyLayer
    written with Paddle ops, as PyTorch's eager does."""
    xs, ws = np.random.default_rng(2).standard_normal([2, 4])
    fn = _twice(layer.apply)
    with pytest.raises(OSError, match="its backward already ran"):
        _run(fn, xs, ws)
    static_fn = paddle.jit.to_static(fn, full_graph=MODES[mode])
    _assert_close(_run(static_fn, xs, ws), _run(_twice(as_ops), xs, ws))
    assert graph_breaks() == []


def test_pylayer_in_a_loop_body_is_a_clear_error():
    """A PyLayer in a ``while_loop`` body saves tensors of the body, which
    the loop of the backward pops per iteration: its first-order gradient
    is right, its double backward a clear error."""
    xs = np.array([0.5, -1.0, 2.0])
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [3], "float64")
            x.stop_gradient = False
            i = paddle.full([1], 0, "int64")
            _, y = paddle.static.nn.while_loop(
                lambda i, y: i < 2, lambda i, y: (i + 1, Cube.apply(y)), [i, x]
            )
            (gx,) = paddle.static.gradients([y.sum()], [x])
            exe = paddle.static.Executor(paddle.CPUPlace())
            (got,) = exe.run(main, feed={"x": xs}, fetch_list=[gx])
            np.testing.assert_allclose(got, 9.0 * xs**8, rtol=RTOL)
            with pytest.raises(NotImplementedError, match="in a loop"):
                paddle.static.gradients([(gx * gx).sum()], [x])
    finally:
        paddle.disable_static()
