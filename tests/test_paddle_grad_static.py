"""``paddle.grad`` inside a static graph follows ``create_graph`` as in eager.

Without ``create_graph`` eager returns gradients that are not part of the
graph, so a later backward does not differentiate through them; with it the
gradients are differentiable (a gradient penalty). Each test compares outputs
and every gradient with eager in AST, SOT (``MIN_GRAPH_SIZE=0``, 0 graph
breaks) and plain static programs, over batch sizes 2, 4, 4, 8.
"""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks

BATCHES = (2, 4, 4, 8)


def inner_grad(x, w, create_graph):
    y = paddle.tanh(x * w)
    (gx,) = paddle.grad(
        [(y * y).sum()], [x], create_graph=create_graph, retain_graph=True
    )
    return (y + gx * w).sum()


def _run(mode, create_graph):
    def fn(x, w):
        return inner_grad(x, w, create_graph)

    if mode != "eager":
        fn = paddle.jit.to_static(fn, full_graph=mode == "ast")
    out = []
    for batch in BATCHES:
        rng = np.random.default_rng(batch)
        x = paddle.to_tensor(
            rng.standard_normal((batch, 3)), stop_gradient=False
        )
        w = paddle.to_tensor(rng.standard_normal((3,)), stop_gradient=False)
        loss = fn(x, w)
        loss.backward()
        out += [loss.numpy(), x.grad.numpy(), w.grad.numpy()]
    return out


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_paddle_grad_follows_create_graph(mode, create_graph):
    want = _run("eager", create_graph)
    got = _run(mode, create_graph)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    if mode == "sot":
        assert graph_breaks() == []


def test_paddle_grad_without_create_graph_is_not_differentiable():
    x = paddle.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)

    @paddle.jit.to_static(full_graph=True)
    def f(x):
        (gx,) = paddle.grad([(x * x).sum()], [x])
        assert gx.stop_gradient
        return gx

    assert f(x).stop_gradient


@pytest.mark.parametrize("create_graph", [False, True])
def test_paddle_grad_in_a_static_program(create_graph):
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((4, 3)), rng.standard_normal((3,))
    want = []
    x = paddle.to_tensor(xv, stop_gradient=False)
    w = paddle.to_tensor(wv, stop_gradient=False)
    loss = inner_grad(x, w, create_graph)
    loss.backward()
    want = [loss.numpy(), x.grad.numpy(), w.grad.numpy()]

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [4, 3], "float64")
            w = paddle.static.data("w", [3], "float64")
            x.stop_gradient = w.stop_gradient = False
            loss = inner_grad(x, w, create_graph)
            gx, gw = paddle.static.gradients([loss], [x, w])
        exe = paddle.static.Executor(paddle.CPUPlace())
        got = exe.run(main, feed={"x": xv, "w": wv}, fetch_list=[loss, gx, gw])
    finally:
        paddle.disable_static()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


class Critic(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(3, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(paddle.tanh(self.fc1(x)))


def critic_loss(critic, real, fake, alpha):
    """WGAN-GP: the critic's loss with its gradient penalty."""
    mix = alpha * real + (1.0 - alpha) * fake
    mix.stop_gradient = False
    score = critic(mix)
    (g,) = paddle.grad([score.sum()], [mix], create_graph=True)
    penalty = ((g.norm(2, axis=1) - 1.0) ** 2).mean()
    return critic(fake).mean() - critic(real).mean() + 10.0 * penalty


def _train_critic(mode):
    paddle.seed(0)
    critic = Critic().to(dtype="float64")
    opt = paddle.optimizer.SGD(0.05, parameters=critic.parameters())

    def step(real, fake, alpha):
        return critic_loss(critic, real, fake, alpha)

    if mode != "eager":
        step = paddle.jit.to_static(step, full_graph=mode == "ast")
    out = []
    for batch in BATCHES:
        rng = np.random.default_rng(batch)
        real, fake = (
            paddle.to_tensor(rng.standard_normal((batch, 3))) for _ in "rf"
        )
        alpha = paddle.to_tensor(rng.uniform(size=(batch, 1)))
        loss = step(real, fake, alpha)
        loss.backward()
        out += [loss.numpy()] + [p.grad.numpy() for p in critic.parameters()]
        opt.step()
        opt.clear_grad()
    return out


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_gradient_penalty_trains_like_eager(mode):
    want = _train_critic("eager")
    got = _train_critic(mode)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)
    if mode == "sot":
        assert graph_breaks() == []


def _tanh_of_product(x, w):
    return paddle.tanh(x * w)


def _leaves():
    rng = np.random.default_rng(3)
    x, w = (
        paddle.to_tensor(a, stop_gradient=False)
        for a in rng.standard_normal((2, 4, 3))
    )
    return x, w


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("mode", ["sot", "ast"])
def test_create_graph_through_a_to_static_call_is_a_clear_error(mode):
    """An eager ``paddle.grad(..., create_graph=True)`` through the output of
    a to_static call: the call's backward runs its program without
    recording it, so the gradient cannot be differentiated (stock: the
    next backward gave ``None``, silently). The gradient itself is right,
    and a backward that does not go through it works."""
    static_fn = paddle.jit.to_static(_tanh_of_product, full_graph=mode == "ast")
    x, w = _leaves()
    ex, ew = _leaves()
    (g,) = paddle.grad(static_fn(x, w).sum(), x, create_graph=True)
    (eg,) = paddle.grad(_tanh_of_product(ex, ew).sum(), ex, create_graph=True)
    np.testing.assert_allclose(g.numpy(), eg.numpy(), rtol=1e-12)
    with pytest.raises(OSError, match="cannot be differentiated"):
        (g * g).sum().backward()
    # a gradient whose path has no compiled node is differentiable
    x, w = _leaves()
    y = static_fn(w.detach(), w.detach()) + x * x
    (g,) = paddle.grad(y.sum(), x, create_graph=True)
    (g * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 8.0 * x.numpy(), rtol=1e-12)
    assert graph_breaks() == []


def grad_of_unused_input(x, y):
    z = paddle.tanh(x) * 2.0
    gx, gy = paddle.grad([z.sum()], [x, y], allow_unused=True)
    return z, gx, gy


@pytest.mark.parametrize("mode", ["sot", "ast"])
def test_returns_the_none_gradient_of_an_unused_input(mode):
    """``allow_unused=True`` gives None for an input the outputs do not
    use; the function returns it (SOT asserted on the None output)."""
    fn = paddle.jit.to_static(grad_of_unused_input, full_graph=mode == "ast")
    for batch in BATCHES:
        a = np.linspace(-1.0, 1.0, batch)
        results = []
        for f in (grad_of_unused_input, fn):
            x = paddle.to_tensor(a, stop_gradient=False)
            y = paddle.to_tensor(a * 2.0, stop_gradient=False)
            z, gx, gy = f(x, y)
            assert gy is None
            (z * z).sum().backward()
            results.append([z.numpy(), gx.numpy(), x.grad.numpy()])
        for got, want in zip(*results[::-1]):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def _leaf_hooks(x, w):
    """``paddle.grad`` with respect to leaves with hooks (an input, a
    tensor made a leaf, a parameter-like input) and a non-leaf with a
    hook; then a value that ``backward`` differentiates."""
    x.register_hook(lambda g: g + 1.0)
    d = (x * 1.0).detach()
    d.stop_gradient = False
    d.register_hook(lambda g: g * 10.0)
    z = x * w
    z.register_hook(lambda g: g + 100.0)
    y = paddle.tanh(z) * d
    gx, gd, gz = paddle.grad([y.sum()], [x, d, z], create_graph=True)
    return (y + gx * gx + gd + gz).sum()


@pytest.mark.parametrize("mode", ["eager", "ast", "static"])
def test_paddle_grad_runs_no_hook_of_a_leaf(mode):
    """Eager runs a leaf's hooks when it accumulates the leaf's ``grad``
    (``backward``), not in ``paddle.grad``; a non-leaf's hooks run in
    both. Static programs ran a leaf's hooks in ``paddle.grad`` too."""
    rng = np.random.default_rng(3)
    xa, wa = rng.standard_normal((2, 3)), rng.standard_normal((3,))
    if mode == "static":
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                x = paddle.static.data("x", [2, 3], "float64")
                w = paddle.static.data("w", [3], "float64")
                x.stop_gradient = w.stop_gradient = False
                loss = _leaf_hooks(x, w)
                grads = paddle.static.gradients([loss], [x, w])
            got = paddle.static.Executor().run(
                main, feed={"x": xa, "w": wa}, fetch_list=[loss, *grads]
            )
        finally:
            paddle.disable_static()
    else:
        fn = _leaf_hooks
        if mode == "ast":
            fn = paddle.jit.to_static(fn, full_graph=True)
        x = paddle.to_tensor(xa, stop_gradient=False)
        w = paddle.to_tensor(wa, stop_gradient=False)
        loss = fn(x, w)
        loss.backward()
        got = [loss.numpy(), x.grad.numpy(), w.grad.numpy()]
    x = paddle.to_tensor(xa, stop_gradient=False)
    w = paddle.to_tensor(wa, stop_gradient=False)
    want = _leaf_hooks(x, w)
    want.backward()
    for g, e in zip(got, [want.numpy(), x.grad.numpy(), w.grad.numpy()]):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def _penalty(x):
    y = paddle.sin(x)
    (g,) = paddle.grad([y.sum()], [x], create_graph=True)
    return y + (g * g).sum()


def _unused_allowed(x, w):
    (g,) = paddle.grad([(x * 2.0).sum()], [w], allow_unused=True)
    return x * 3.0 if g is None else x


@pytest.mark.parametrize("mode", ["ast", "sot", "static"])
def test_input_without_gradient_is_eagers_error(mode):
    """A gradient penalty called on inputs that need no gradient (a
    prediction): eager's ``ValueError`` (stock: ``None``, then a
    ``TypeError`` in the caller's code); with ``allow_unused=True``,
    ``None`` as in eager."""
    x = paddle.to_tensor([1.0, 2.0])
    with pytest.raises(ValueError):
        _penalty(x)
    w = paddle.to_tensor([1.0], stop_gradient=False)
    want = _unused_allowed(x, w).numpy()
    if mode == "static":
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                xs = paddle.static.data("x", [2], "float32")
                ws = paddle.static.data("w", [1], "float32")
                ws.stop_gradient = False
                with pytest.raises(ValueError, match="allow_unused=True"):
                    _penalty(xs)
                out = _unused_allowed(xs, ws)
            (got,) = paddle.static.Executor().run(
                main,
                feed={"x": x.numpy(), "w": w.numpy()},
                fetch_list=[out],
            )
        finally:
            paddle.disable_static()
    else:
        # (SOT wraps an error raised while it traces in an InnerError)
        with pytest.raises(Exception, match="allow_unused=True"):
            paddle.jit.to_static(_penalty, full_graph=mode == "ast")(x)
        got = paddle.jit.to_static(_unused_allowed, full_graph=mode == "ast")(
            x, w
        ).numpy()
    np.testing.assert_allclose(got, want)


def _fgsm_step(model, x, y, log):
    """Adversarial training (FGSM): the clean loss is logged (``float``: a
    graph break under SOT) between the loss and its ``paddle.grad``."""
    x.stop_gradient = False
    clean = ((model(x) - y) ** 2).mean()
    log.append(float(clean))
    (g,) = paddle.grad([clean], [x], retain_graph=True)
    x_adv = x + 0.125 * paddle.sign(g)
    return clean + ((model(x_adv) - y) ** 2).mean()


def _train_fgsm(mode):
    paddle.seed(0)
    model = Critic().to(dtype="float64")
    opt = paddle.optimizer.SGD(0.05, parameters=model.parameters())
    log = []

    def step(x, y):
        return _fgsm_step(model, x, y, log)

    if mode != "eager":
        step = paddle.jit.to_static(step, full_graph=False)
    out = []
    for batch in BATCHES:
        rng = np.random.default_rng(batch)
        x = paddle.to_tensor(rng.standard_normal((batch, 3)))
        y = paddle.to_tensor(rng.standard_normal((batch, 1)))
        loss = step(x, y)
        loss.backward()
        out += [loss.numpy()] + [p.grad.numpy() for p in model.parameters()]
        opt.step()
        opt.clear_grad()
    return out, log


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("min_graph_size", ["0", "10"])
def test_adversarial_training_after_a_graph_break_is_eagers(
    monkeypatch, min_graph_size
):
    """SOT: the loss is computed before a graph break, so the graph after
    it receives the loss and ``x`` as two unrelated inputs; eager's
    ``paddle.grad`` differentiates through the graph before the break."""
    monkeypatch.setenv("MIN_GRAPH_SIZE", min_graph_size)
    want, want_log = _train_fgsm("eager")
    got, got_log = _train_fgsm("sot")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(got_log, want_log, rtol=1e-12)
    assert any("paddle.grad runs eagerly" in r for r in graph_breaks())


def _grad_of_a_tensor_computed_outside(z, x):
    y = z * 3.0
    (g,) = paddle.grad([y.sum()], [x], allow_unused=True)
    return paddle.zeros_like(x) if g is None else g


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
def test_paddle_grad_of_an_input_eager_computed():
    """The graph's input ``z`` is ``x * 2`` computed eagerly in one call and
    a leaf in another: eager's gradient in both, in either order (code
    compiled for a leaf ``z`` does not serve a ``z`` with a history)."""
    fn = paddle.jit.to_static(_grad_of_a_tensor_computed_outside)
    rng = np.random.default_rng(5)
    for leaf in (True, False, True, False):
        x = paddle.to_tensor(rng.standard_normal((4, 3)), stop_gradient=False)
        if leaf:
            z = paddle.to_tensor(
                rng.standard_normal((4, 3)), stop_gradient=False
            )
        else:
            z = x * 2.0
        want = _grad_of_a_tensor_computed_outside(z, x).numpy()
        got = fn(z, x).numpy()
        np.testing.assert_array_equal(got, want)
    assert any("paddle.grad runs eagerly" in r for r in graph_breaks())
