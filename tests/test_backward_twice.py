"""Several backward passes over one ``to_static`` call give eager's gradients.

Eager keeps a graph for another pass when a pass says ``retain_graph=True``:
``l1.backward(retain_graph=True)`` then ``l2.backward()`` on two outputs of
one call, the same loss twice, or two ``paddle.grad`` calls. A call of a
to_static function is one grad node whose backward program frees the values
it reads; the node keeps copies of them for the next pass when the pass keeps
the graph. Each test runs the same passes eagerly and under SOT
(``MIN_GRAPH_SIZE=0``) and AST and compares every gradient and the hooks'
side effects; without ``retain_graph`` a second pass is an error in both.
"""

import numpy as np
import paddle
import pytest
from paddle.autograd import PyLayer

MODES = {"sot": False, "ast": True}


def _tensor(values):
    return paddle.to_tensor(np.asarray(values, "float64"), stop_gradient=False)


def _inputs(batch=3):
    rng = np.random.default_rng(batch)
    x = _tensor(rng.standard_normal([batch, 3]))
    w = _tensor(rng.standard_normal([3]))
    return x, w


def _grads(*tensors):
    return [None if t.grad is None else t.grad.numpy().copy() for t in tensors]


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def _two_losses(x, w):
    y = paddle.tanh(x * w)
    return (y * y).sum(), paddle.exp(y).sum()


def _static(fn, mode):
    return paddle.jit.to_static(fn, full_graph=MODES[mode])


def _both(run, fn):
    """``run(fn)`` eagerly and in each mode: what each returns."""
    want = run(fn)
    return want, {mode: run(_static(fn, mode)) for mode in MODES}


def _check(run, fn):
    want, got = _both(run, fn)
    for mode, g in got.items():
        assert len(g) == len(want), mode
        for gs, ws in zip(g, want):
            _assert_same(gs, ws)


def test_second_loss_after_a_retained_pass():
    def run(fn):
        x, w = _inputs()
        l1, l2 = fn(x, w)
        l1.backward(retain_graph=True)
        first = _grads(x, w)
        l2.backward()
        return first, _grads(x, w)

    _check(run, _two_losses)


def test_same_loss_three_times():
    def run(fn):
        x, w = _inputs()
        loss, _ = fn(x, w)
        passes = []
        for retain in (True, True, False):
            loss.backward(retain_graph=retain)
            passes.append(_grads(x, w))
        return passes

    _check(run, _two_losses)


def test_paddle_grad_twice_and_autograd_backward():
    def run(fn):
        x, w = _inputs()
        l1, l2 = fn(x, w)
        (g1,) = paddle.grad([l1], [x], retain_graph=True)
        (g2,) = paddle.grad([l2], [w], retain_graph=True)
        paddle.autograd.backward([l1, l2], retain_graph=False)
        return [g1.numpy(), g2.numpy()], _grads(x, w)

    _check(run, _two_losses)


@pytest.mark.parametrize("mode", list(MODES))
def test_batch_sizes_with_parameters(mode):
    """A Layer's parameters get both passes' gradients, batch after batch
    (SOT re-traces with a dynamic batch dimension)."""

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            paddle.seed(7)
            self.fc = paddle.nn.Linear(3, 4)
            self.fc.to(dtype="float64")

        def forward(self, x):
            h = paddle.tanh(self.fc(x))
            return h.mean(), (h * h).sum()

    eager, static = Net(), Net()
    static_fn = paddle.jit.to_static(static.forward, full_graph=MODES[mode])
    for batch in (2, 3, 5, 4):
        results = []
        for net, fn in ((eager, eager.forward), (static, static_fn)):
            net.clear_gradients()
            x, _ = _inputs(batch)
            a, b = fn(x)
            b.backward(retain_graph=True)
            a.backward()
            results.append(_grads(x, net.fc.weight, net.fc.bias))
        _assert_same(results[1], results[0])


_SEEN = []


@pytest.mark.parametrize("hook", ["store", "halve"])
def test_hooks_run_at_each_pass(hook):
    """A hook that stores its gradient (run at run time), or a compiled
    one, runs at every pass with that pass's gradient."""

    def run(fn):
        _SEEN.clear()
        x, w = _inputs()
        loss = fn(x, w)
        for retain in (True, True, False):
            loss.backward(retain_graph=retain)
        return [[g.numpy() for g in _SEEN]], _grads(x, w)

    def fn(x, w):
        y = x * w
        if hook == "store":
            y.register_hook(lambda g: _SEEN.append(g))
        else:
            y.register_hook(lambda g: g * 0.5)
        return (paddle.tanh(y) ** 2).sum()

    want, got = _both(run, fn)
    assert len(want[0][0]) == (3 if hook == "store" else 0)
    for g in got.values():
        _assert_same(g[0][0], want[0][0])
        _assert_same(g[1], want[1])


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("on", ["output", "input"])
def test_hooked_call_with_two_outputs_runs_one_pass_per_output(mode, on):
    """Differs from eager, a clear error: with two outputs, to_static ties
    the outputs (and hooked inputs) of a hooked call to eager PyLayers, and
    Paddle runs a PyLayer's backward once per call. A pass over each output
    works; a second pass over one output is the error (eager: works)."""

    def fn(x, w):
        y = x * w
        (y if on == "output" else x).register_hook(lambda g: g * 0.5)
        z = paddle.tanh(y)
        return (z * z).sum(), paddle.exp(z).sum()

    static_fn = _static(fn, mode)
    x, w = _inputs()
    l1, l2 = static_fn(x, w)
    if on == "output":
        ex, ew = _inputs()
        e1, e2 = fn(ex, ew)
        e1.backward(retain_graph=True)
        e2.backward()
        l1.backward(retain_graph=True)
        l2.backward()
        _assert_same(_grads(x, w), _grads(ex, ew))
        l1, l2 = static_fn(x, w)
    l1.backward(retain_graph=True)
    with pytest.raises(OSError, match="to_static call with hooks.*once"):
        l1.backward()


class _Double(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class _Pass(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        return x, y * 1.0

    @staticmethod
    def backward(ctx, dx, dy):
        return dx, dy


@pytest.mark.parametrize("returns", ["new", "input"])
def test_eager_pylayer_second_pass_is_an_error(returns):
    """Eager (stock 3.3.1 too) frees a PyLayer's context after its first
    backward and a second pass crashed the process (SIGSEGV), with
    ``retain_graph=True`` too; it is a clear error, naming the layer."""
    x = _tensor([1.0, 2.0])
    if returns == "new":
        y, name = _Double.apply(x), "_Double"
    else:  # an input returned as it is gets the layer's grad node too
        y, _ = _Pass.apply(x * 1.0, x)
        name = "_Pass"
    l1, l2 = y.sum(), (y * y).sum()
    l1.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    with pytest.raises(OSError, match=f"PyLayer {name}: its backward already"):
        l2.backward()
    np.testing.assert_array_equal(x.grad.numpy(), first)
    (x * 3.0).sum().backward()  # the process goes on
    np.testing.assert_array_equal(x.grad.numpy(), first + 3.0)


def test_eager_pylayer_without_grad_gets_no_guard():
    x = _tensor([1.0, 2.0])
    with paddle.no_grad():
        y = _Double.apply(x)
    assert y.stop_gradient
    y = _Double.apply(paddle.to_tensor([1.0]))
    assert y.stop_gradient


class _Cube(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3.0 * x * x


def test_eager_pylayer_inside_runs_one_pass():
    """Eager runs a PyLayer's backward once per call (see above)."""

    def fn(x, w):
        y = _Cube.apply(x * w)
        return y.sum(), (y * y).mean()

    x, w = _inputs()
    l1, l2 = fn(x, w)
    l2.backward(retain_graph=True)
    with pytest.raises(OSError, match="PyLayer _Cube"):
        l1.backward()


@pytest.mark.parametrize("mode", list(MODES))
def test_pylayer_inside_static_runs_several_passes(mode):
    """A compiled PyLayer's backward reads the tensors it saved from the
    forward program (they are not popped from a stack): a second pass gives
    the gradients of the same function with the PyLayer written with Paddle
    ops, as PyTorch's eager does, where eager Paddle refuses (above)."""

    def fn(x, w):
        y = _Cube.apply(x * w)
        return y.sum(), (y * y).mean()

    def with_ops(x, w):
        y = (x * w) ** 3
        return y.sum(), (y * y).mean()

    def run(fn):
        x, w = _inputs()
        l1, l2 = fn(x, w)
        l2.backward(retain_graph=True)
        first = _grads(x, w)
        l1.backward()
        return first, _grads(x, w)

    got, want = run(_static(fn, mode)), run(with_ops)
    for g, w in zip(got, want):
        _assert_same(g, w)


def _branch(x, w):
    y = x * w
    if y.sum() > 0:
        z = paddle.sin(y)
    else:
        z = paddle.cos(y) * y
    return (z * z).sum(), z.mean()


def test_branch_inside_sot():
    def run(fn):
        passes = []
        for sign in (1.0, -1.0):
            x, w = _inputs()
            x = _tensor(np.abs(x.numpy()) * sign)
            w = _tensor(np.abs(w.numpy()))
            l1, l2 = fn(x, w)
            l1.backward(retain_graph=True)
            l2.backward()
            passes.append(_grads(x, w))
        return passes

    want = run(_branch)
    got = run(_static(_branch, "sot"))
    for g, e in zip(got, want):
        _assert_same(g, e)


def test_branch_inside_ast_is_an_error():
    """Differs from eager, a clear error: the backward of an AST ``if``
    pops the values its forward pushed on a stack, which a pass empties."""
    x, w = _inputs()
    l1, l2 = _static(_branch, "ast")(x, w)
    l1.backward(retain_graph=True)
    with pytest.raises(OSError, match="pops the stacks of `if`/`while`"):
        l2.backward()


def test_other_calls_between_the_passes():
    """Calls made between two passes over an earlier call run in their own
    values: each call's gradients are its own."""

    def run(fn):
        xa, wa = _inputs(2)
        xb, wb = _inputs(3)
        xc, wc = _inputs(4)
        a1, a2 = fn(xa, wa)
        a1.backward(retain_graph=True)
        b1, b2 = fn(xb, wb)
        b2.backward(retain_graph=True)
        c1, _ = fn(xc, wc)
        a2.backward()
        c1.backward()
        b1.backward()
        return [_grads(xa, wa), _grads(xb, wb), _grads(xc, wc)]

    _check(run, _two_losses)


@pytest.mark.parametrize("mode", [None, *MODES])
def test_second_pass_without_retain_graph_is_an_error(mode):
    fn = _two_losses if mode is None else _static(_two_losses, mode)
    x, w = _inputs()
    l1, l2 = fn(x, w)
    l1.backward()
    with pytest.raises(SystemError, match="TensorWrappers .* do not exist"):
        l2.backward()


def test_passes_without_retain_graph_hold_no_scope():
    """A call whose pass does not keep the graph leaves its scope to the
    next call; a kept scope is not given to another call, and is given
    back after the last pass or when the call's outputs are gone."""
    fn = _static(_two_losses, "ast")
    x, w = _inputs()
    layer = fn.get_concrete_program(x, w)[1]

    def scopes():
        return sum(len(s) for s in layer._scope_cache.values())

    for _ in range(3):
        fn(x, w)[0].backward()
    assert not layer._held_scopes
    assert scopes() == 1
    l1, l2 = fn(x, w)
    l1.backward(retain_graph=True)
    assert len(layer._held_scopes) == 1
    fn(x, w)[0].backward()  # runs in another scope
    assert scopes() == 2
    l2.backward()
    assert not layer._held_scopes
    l1, l2 = fn(x, w)
    l1.backward(retain_graph=True)
    assert len(layer._held_scopes) == 1
    del l1, l2
    assert not layer._held_scopes
    for _ in range(3):
        fn(x, w)[0].backward()
    assert scopes() == 2
