"""A PyLayer whose ``forward`` or ``backward`` stores something that outlives
the call (``LOG.append(dy)``, ``CACHE[k] = ...``, ``self.calls += 1``).

Eager Paddle runs ``forward`` and ``backward`` at every call, with Tensors. A
static graph runs their Python code once, while it builds the program, with
symbolic values, unless it runs them at run time. So:

- AST (``full_graph=True``), SOT and plain static programs run such a
  ``backward`` at every backward, with Tensors, in a run-time op: eager's
  stores and gradients (a ``forward`` runs when traced, like any Python
  code of a converted function); SOT keeps the layer in its graph;
- SOT breaks the graph at a layer whose ``forward`` has such a store, and
  at one whose run-time ``backward`` might pass no gradient on to an input
  of the graph (a compiled graph then runs no backward), and runs it
  eagerly (stock SOT did so at every PyLayer);
- a layer with no such store is still compiled (0 graph breaks), also when
  its ``backward`` re-runs the forward under ``paddle.enable_grad()`` and
  calls ``paddle.grad`` (activation recomputation).
"""

import dis
import logging
import math
import random
import threading
import types

import numpy as np
import paddle
import pytest
from conftest import graph_breaks, random_inputs, run_eager
from paddle.autograd import PyLayer
from paddle.autograd.python_effects import python_effect

pytestmark = pytest.mark.usefixtures("sot_env", "fresh_sot_cache")

LOG = []
CACHE = {}


def d_tanh(dy, x):
    return dy * (1 - paddle.tanh(x) ** 2)


class Tanh(PyLayer):
    """The base: no effect."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return d_tanh(dy, x)


class StoresGradient(Tanh):  # Grad-CAM style
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(dy)
        return d_tanh(dy, x)


class LogsItem(Tanh):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(dy.abs().max().item())
        return d_tanh(dy, x)


def log_norm(g):
    LOG.append(float(g.norm()))


class LogsInHelper(Tanh):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        log_norm(dy)
        return d_tanh(dy, x)


class CachesItem(Tanh):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        CACHE["shape"] = dy.shape
        return d_tanh(dy, x)


class LogsInComprehension(Tanh):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        [LOG.append(float(g.sum())) for g in (dy, x)]
        return d_tanh(dy, x)


class RecomputesSaved(Tanh):
    """Logs, and recomputes the forward on its saved input (not a detached
    copy): eager's saved tensors require grad when the input did."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(float(dy.sum()))
        with paddle.enable_grad():
            y = paddle.tanh(x)
            (dx,) = paddle.grad([y], [x], [dy])
        return dx


class GradStats:
    """Keeps the gradients a layer sees, as a monitoring object does."""

    def __init__(self):
        self.seen = LOG

    def record(self, g):
        self.seen.append(g)


STATS = GradStats()


class RecordsInObject(Tanh):
    """Calls a method of a global object, which stores."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        STATS.record(dy)
        return d_tanh(dy, x)


def _log():
    return LOG


class StoresThroughCall(Tanh):
    """Stores into an object a call returns."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        _log().append(dy)
        return d_tanh(dy, x)


class StoresThroughLocal(Tanh):
    """Stores into a global through a local name for it."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        log = LOG
        log.append(dy)
        return d_tanh(dy, x)


class StoresThroughObject(Tanh):
    """Stores into a global that an object it makes holds (a grad-keeping
    helper object)."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        keeper = types.SimpleNamespace()
        keeper.grads = LOG
        keeper.grads.append(dy)
        return d_tanh(dy, x)


def _log_gradient(g):
    LOG.append(g)


class CallsStoredCallback(Tanh):
    """``forward`` keeps a callback on ``ctx``, ``backward`` calls it: the
    check reads what ``ctx`` holds."""

    @staticmethod
    def forward(ctx, x, callback):
        ctx.save_for_backward(x)
        ctx.callback = callback
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        ctx.callback(dy)
        return d_tanh(dy, x)


class LogsForward(Tanh):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        LOG.append(x.shape[0])
        return paddle.tanh(x)


EFFECTFUL = {
    "stores_gradient": StoresGradient,
    "logs_item": LogsItem,
    "logs_in_helper": LogsInHelper,
    "caches_item": CachesItem,
    "logs_in_comprehension": LogsInComprehension,
    "recomputes_saved": RecomputesSaved,
    "records_in_object": RecordsInObject,
    "stores_through_call": StoresThroughCall,
    "stores_through_local": StoresThroughLocal,
    "stores_through_object": StoresThroughObject,
    "logs_forward": LogsForward,
}


def _apply(layer):
    def f(x):
        return (layer.apply(x * 2.0) * 3.0).sum()

    return f


def _log_items(log):
    """The stores, comparable across runs: numbers as they are, Tensors as
    arrays (a symbolic value has no array: the comparison fails)."""
    return [
        "a symbolic value"
        if isinstance(v, paddle.pir.Value)
        else np.asarray(v.numpy())
        if isinstance(v, paddle.Tensor)
        else v
        for v in log
    ] + [list(CACHE.get("shape", []))]


def _run(fn):
    results = []
    LOG.clear()
    CACHE.clear()
    for batch in (2, 3, 5):
        x = paddle.to_tensor(
            np.random.default_rng(batch).standard_normal((batch, 4)),
            stop_gradient=False,
        )
        out = fn(x)
        out.backward()
        grad = None if x.grad is None else x.grad.numpy()
        results.append((out.numpy(), grad))
    return results, _log_items(LOG)


def _assert_same(got, want):
    (got_results, got_log), (want_results, want_log) = got, want
    assert len(got_results) == len(want_results)
    for (go, gg), (wo, wg) in zip(got_results, want_results):
        np.testing.assert_allclose(go, wo, rtol=1e-12)
        assert (gg is None) == (wg is None)
        if wg is not None:
            np.testing.assert_allclose(gg, wg, rtol=1e-12)
    assert len(got_log) == len(want_log)
    for g, w in zip(got_log, want_log):
        assert type(g) is type(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)


@pytest.mark.parametrize(
    "name", sorted(n for n in EFFECTFUL if n != "logs_forward")
)
def test_sot_runs_a_backward_with_python_effects_in_the_graph(name):
    """Its stores happen at every backward, with Tensors, as in eager, and
    the layer stays in the graph (SOT broke the graph at it)."""
    layer = EFFECTFUL[name]
    want = _run(_apply(layer))
    got = _run(paddle.jit.to_static(_apply(layer)))
    _assert_same(got, want)
    assert graph_breaks() == []


def test_sot_runs_a_layer_whose_forward_has_python_effects_eagerly():
    want = _run(_apply(LogsForward))
    got = _run(paddle.jit.to_static(_apply(LogsForward)))
    _assert_same(got, want)
    reasons = graph_breaks()
    assert reasons, "the layer was compiled"
    assert all("`LogsForward.forward`" in r for r in reasons)


class Halves(PyLayer):
    """No effect; its ``backward`` gives its input no gradient."""

    @staticmethod
    def forward(ctx, x):
        return x * 0.5

    @staticmethod
    def backward(ctx, dy):
        return None


@pytest.mark.parametrize("plus_x", [False, True])
def test_sot_runs_a_backward_that_might_pass_no_gradient_on_eagerly(plus_x):
    """The logging layer's input comes from a layer whose ``backward``
    returns None, or it returns None itself: a compiled graph whose inputs
    get no gradient runs no backward, so SOT runs the logging layer
    eagerly, eager's log at every backward (with the layer in the graph:
    a clear error, as under AST, where eager runs it)."""

    def through_halves(x):
        out = (LogsGradientSum.apply(Halves.apply(x)) * 3.0).sum()
        return out + (x * x).sum() if plus_x else out

    def gives_none(x):
        out = (LogsAndGivesNone.apply(x) * 3.0).sum()
        return out + (x * x).sum() if plus_x else out

    for f, layer in ((through_halves, "Halves"), (gives_none, "")):
        want = _run(f)
        assert len(want[1]) == 3 + 1  # the stores, then CACHE's shape
        _assert_same(_run(paddle.jit.to_static(f)), want)
        reasons = graph_breaks()
        assert reasons and all("returns None" in r for r in reasons)
        assert all(f"`{layer}`" in r for r in reasons if layer)


def test_sot_logging_layer_with_hooks_and_no_grad_calls_is_eagers():
    """Under SOT the layer's run-time ``backward`` and a logging hook on
    its input run in eager's order, with eager's values; a call under
    ``paddle.no_grad()`` runs neither. No graph break."""

    def f(x):
        y = x * 2.0
        if not y.stop_gradient:  # eager: no hook on what stops gradient
            y.register_hook(lambda g: LOG.append(("hook", float(g.sum()))))
        return (LogsGradientSum.apply(y) * 3.0).sum()

    def run(fn):
        LOG.clear()
        results = []
        for batch in (2, 3, 5):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal((batch, 4)),
                stop_gradient=False,
            )
            with paddle.no_grad():
                results.append(fn(x).numpy())
            out = fn(x)
            out.backward()
            results += [out.numpy(), x.grad.numpy()]
        return results, list(LOG)

    want = run(f)
    got = run(paddle.jit.to_static(f))
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert [type(v) for v in got[1]] == [type(v) for v in want[1]]
    assert len(want[1]) == 6
    for g, w in zip(got[1], want[1]):
        assert np.allclose(
            np.asarray(w[1] if isinstance(w, tuple) else w),
            np.asarray(g[1] if isinstance(g, tuple) else g),
            rtol=1e-12,
        )
        assert isinstance(g, tuple) == isinstance(w, tuple)
    assert graph_breaks() == []


ACTIVATIONS = {}


class KeepsActivationGradient(PyLayer):
    """Grad-CAM: keeps the gradient of the activations it passes on."""

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, dy):
        ACTIVATIONS["grad"] = dy
        return dy


class _CamModel(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 5)
        self.head = paddle.nn.Linear(5, 1)

    def forward(self, x):
        h = KeepsActivationGradient.apply(paddle.tanh(self.fc(x)))
        return self.head(h)


@pytest.mark.parametrize("full_graph", [False, True])
def test_model_keeping_activation_gradients_trains_as_in_eager(full_graph):
    """SGD steps at batches 2, 4, 4, 8 (SOT goes dynamic): eager's losses,
    parameters and kept gradients, with the layer in SOT's graph."""

    def train(to_static):
        paddle.seed(5)
        model = _CamModel()
        model.to(dtype="float64")
        step = (
            paddle.jit.to_static(model, full_graph=full_graph)
            if (to_static)
            else model
        )
        opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
        losses, kept = [], []
        for batch in (2, 4, 4, 8):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal((batch, 4))
            )
            loss = (step(x) ** 2).mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss))
            kept.append(ACTIVATIONS.pop("grad").numpy())
        return losses, kept, [p.numpy() for p in model.parameters()]

    want = train(False)
    got = train(True)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-10)
    assert graph_breaks() == []


@pytest.mark.parametrize("full_graph", [False, True])
def test_paddle_grad_through_a_logging_layer_in_the_function(full_graph):
    """``paddle.grad`` of the function runs the layer's ``backward`` in the
    forward program: eager's gradient and log, and no error (AST said the
    ``backward`` would never run, since no input gets a gradient from the
    backward program)."""

    def f(x):
        y = x * 2.0
        (g,) = paddle.grad([(LogsGradientSum.apply(y) * 3.0).sum()], [x])
        return g

    def run(fn):
        LOG.clear()
        results = []
        for batch in (2, 3, 5):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal((batch, 4)),
                stop_gradient=False,
            )
            results.append(fn(x).numpy())
        return results, list(LOG)

    want = run(f)
    assert len(want[1]) == 3
    got = run(paddle.jit.to_static(f, full_graph=full_graph))
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    assert graph_breaks() == []


@pytest.mark.parametrize(
    "name", sorted(n for n in EFFECTFUL if n != "logs_forward")
)
def test_ast_runs_a_backward_with_python_effects_at_every_backward(name):
    """Its stores happen at every backward, with Tensors, as in eager (the
    program runs ``backward`` in a run-time op)."""
    layer = EFFECTFUL[name]
    want = _run(_apply(layer))
    got = _run(paddle.jit.to_static(_apply(layer), full_graph=True))
    _assert_same(got, want)


def _static_runs(fn, xs):
    """One static program of ``fn`` (batch dimension unknown), run at each
    input of ``xs``: outputs and input gradients."""
    results = []
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [-1, 4], "float64")
            x.stop_gradient = False
            out = fn(x)
            (gx,) = paddle.static.gradients([out], [x])
        exe = paddle.static.Executor(paddle.CPUPlace())
        for a in xs:
            o, g = exe.run(main, feed={"x": a}, fetch_list=[out, gx])
            results.append((o, g))
    finally:
        paddle.disable_static()
    return results


def _run_static(layer):
    """``_apply(layer)`` as one static program, run at batch sizes 2, 3 and
    5: outputs, input gradients and the stores."""
    LOG.clear()
    CACHE.clear()
    xs = [np.random.default_rng(b).standard_normal((b, 4)) for b in (2, 3, 5)]
    return _static_runs(_apply(layer), xs), _log_items(LOG)


@pytest.mark.parametrize(
    "name", sorted(n for n in EFFECTFUL if n != "logs_forward")
)
def test_static_program_runs_a_backward_with_python_effects_at_every_run(
    name,
):
    layer = EFFECTFUL[name]
    want = _run(_apply(layer))
    got = _run_static(layer)
    _assert_same(got, want)


# --- `backward` runs only when a gradient reaches the layer, as in eager ---


class LogsGradientSum(Tanh):
    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(float(dy.sum()))
        return d_tanh(dy, x)


class LogsAndGivesNone(PyLayer):
    """A `backward` for its effect only: no gradient for its input."""

    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        LOG.append(float(dy.sum()))
        return None


def _branch(x):
    # the layer's output feeds one branch of a tensor-dependent `if`
    y = LogsGradientSum.apply(x * 2.0)
    out = paddle.static.nn.cond(x.sum() > 0, lambda: y * 3.0, lambda: x * 5.0)
    return out.sum()


def _in_loop(x, n):
    # the layer's output is used in a `while` body that runs n times
    y = LogsGradientSum.apply(x * 2.0)
    out = x * 5.0
    i = paddle.zeros([1], "int64")
    while i < n:
        out = out * y
        i += 1
    return out.sum()


def _layer_in_loop(x):
    # the layer itself runs in a `while` body: `backward` once per pass
    i = paddle.zeros([1], "int64")
    while i < 3:
        x = LogsGradientSum.apply(x) * 1.5
        i += 1
    return x.sum()


def _gives_none(x):
    return (LogsAndGivesNone.apply(x) + x * 3.0).sum()


def _runs(fn, xs, *args):
    """Output, input gradient and the stores of ``fn`` at each of ``xs``."""
    LOG.clear()
    results = []
    for a in xs:
        x = paddle.to_tensor(a, stop_gradient=False)
        out = fn(x, *args)
        out.backward()
        results.append((out.numpy(), x.grad.numpy()))
    return results, list(LOG)


def _signed_inputs():
    rng = np.random.default_rng(3)
    # `x.sum()` negative, then positive, then negative, at batches 2, 3, 4
    return [
        -np.abs(rng.standard_normal((2, 4))),
        np.abs(rng.standard_normal((3, 4))),
        -np.abs(rng.standard_normal((4, 4))),
    ]


def test_ast_backward_runs_only_when_the_branch_using_it_ran():
    """Eager runs ``backward`` only in the backward passes where the branch
    reading the layer's output ran (it ran in every one)."""
    want = _runs(_branch, _signed_inputs())
    got = _runs(
        paddle.jit.to_static(_branch, full_graph=True), _signed_inputs()
    )
    assert len(want[1]) == 1
    _assert_same(got, want)


def test_static_program_backward_runs_only_when_the_branch_using_it_ran():
    want = _runs(_branch, _signed_inputs())
    LOG.clear()
    got = _static_runs(_branch, _signed_inputs())
    _assert_same((got, list(LOG)), want)


@pytest.mark.parametrize("n", [0, 2])
def test_ast_backward_runs_only_when_the_loop_using_it_ran(n):
    xs = [np.random.default_rng(b).standard_normal((b, 4)) for b in (2, 3)]
    count = paddle.to_tensor([n], "int64")
    want = _runs(_in_loop, xs, count)
    got = _runs(paddle.jit.to_static(_in_loop, full_graph=True), xs, count)
    assert len(want[1]) == (2 if n else 0)
    _assert_same(got, want)


def test_ast_backward_of_a_layer_in_a_loop_runs_at_each_pass():
    xs = [
        0.3 * np.random.default_rng(b).standard_normal((b, 4)) for b in (2, 3)
    ]
    want = _runs(_layer_in_loop, xs)
    got = _runs(paddle.jit.to_static(_layer_in_loop, full_graph=True), xs)
    assert len(want[1]) == 6
    _assert_same(got, want)


@pytest.mark.parametrize("full_graph", [False, True])
def test_backward_does_not_run_for_an_output_the_caller_leaves(full_graph):
    """The caller differentiates only the output that does not use the
    layer: eager never runs ``backward`` (the program fills the other
    output's gradient with zeros). (SOT ran the layer eagerly, and the
    graph's grad node gave it zeros: its ``backward`` ran on them.)"""

    def f(x):
        return (LogsGradientSum.apply(x * 2.0) * 3.0).sum(), (x * 5.0).sum()

    def run(fn, which):
        LOG.clear()
        results = []
        for b in (2, 3, 4):
            x = paddle.to_tensor(
                np.random.default_rng(b).standard_normal((b, 4)),
                stop_gradient=False,
            )
            outs = fn(x)
            outs[which].backward()
            results.append((outs[which].numpy(), x.grad.numpy()))
        return results, list(LOG)

    static_f = paddle.jit.to_static(f, full_graph=full_graph)
    for which in (1, 0):
        want = run(f, which)
        got = run(static_f, which)
        assert len(want[1]) == (3 if which == 0 else 0)
        _assert_same(got, want)


def test_backward_giving_no_gradient_runs_for_its_effect(static_runner):
    """``backward`` returns None: eager still runs it at every backward."""

    def f(x):
        return LogsAndGivesNone.apply(x) + x * 3.0

    inputs = random_inputs([3, 4])
    LOG.clear()
    want = run_eager(f, inputs), list(LOG)
    LOG.clear()
    got = static_runner(f, inputs), list(LOG)
    assert len(want[1]) == 1
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=1e-12)
    np.testing.assert_allclose(got[0][1][0], want[0][1][0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


class _GatedModel(paddle.nn.Layer):
    """A Layer whose logging PyLayer feeds one branch, trained with SGD."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)
        self.head = paddle.nn.Linear(4, 1)

    def forward(self, x):
        h = self.fc(x)
        g = LogsGradientSum.apply(h)
        h = paddle.static.nn.cond(x.mean() > 0, lambda: g * 2.0, lambda: h)
        return self.head(h)


def _train(model):
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    LOG.clear()
    losses = []
    for a in _signed_inputs():
        loss = (model(paddle.to_tensor(a)) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()], list(LOG)


def test_ast_layer_with_a_gated_logging_pylayer_trains_as_in_eager():
    paddle.set_default_dtype("float64")
    try:
        paddle.seed(11)
        want = _train(_GatedModel())
        paddle.seed(11)
        got = _train(paddle.jit.to_static(_GatedModel(), full_graph=True))
    finally:
        paddle.set_default_dtype("float32")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert len(want[2]) == 1
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)


class LocalStores(Tanh):
    """Stores into objects it makes or into ``ctx``: no effect."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.calls = 0
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        ctx.calls += 1
        parts = []
        parts.append(d_tanh(dy, x))
        found = {}
        found["dy"] = dy
        return paddle.add(parts[0], dy.add(-found["dy"]))


GRAD_SCALE = 2.0


class CountsAndReadsAGlobal(LocalStores):
    """Counts its backward passes on ``ctx`` (a number: no effect) and
    reads a global that changes between calls."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        ctx.calls += 1
        return d_tanh(dy, x) * GRAD_SCALE


class Recompute(PyLayer):
    """Activation recomputation: ``backward`` re-runs the forward."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        with paddle.no_grad():
            return paddle.tanh(x @ w)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensor()
        x = x.detach()
        w = w.detach()
        x.stop_gradient = False
        w.stop_gradient = False
        with paddle.enable_grad():
            y = paddle.tanh(x @ w)
        return tuple(paddle.grad([y], [x, w], [dy]))


@pytest.mark.parametrize("full_graph", [False, True])
def test_layer_without_python_effects_is_compiled(full_graph):
    f = _apply(LocalStores)
    want = _run(f)
    got = _run(paddle.jit.to_static(f, full_graph=full_graph))
    _assert_same(got, want)
    assert graph_breaks() == []


@pytest.mark.parametrize("full_graph", [False, True])
def test_backward_counting_on_ctx_reads_a_changed_global_as_in_eager(
    full_graph,
):
    """What ``ctx`` holds is known where the layer is built: the traced
    ``backward`` must not keep the global it reads (SOT decides first
    without ``ctx``, then checks the program's decision)."""
    global GRAD_SCALE
    f = _apply(CountsAndReadsAGlobal)

    def run(fn):
        global GRAD_SCALE
        results = []
        for scale in (2.0, 5.0, 7.0):
            GRAD_SCALE = scale
            results.append(_run(fn))
        return results

    try:
        want = run(f)
        got = run(paddle.jit.to_static(f, full_graph=full_graph))
    finally:
        GRAD_SCALE = 2.0
    for g, w in zip(got, want):
        _assert_same(g, w)
    if not full_graph:
        assert any("GRAD_SCALE" in r for r in graph_breaks())


@pytest.mark.parametrize("full_graph", [False, True])
def test_recomputing_backward_is_compiled(full_graph):
    w_value = np.random.default_rng(7).standard_normal((4, 3))

    def f(x, w):
        return (Recompute.apply(x * 2.0, w) * 3.0).sum()

    def run(fn):
        results = []
        for batch in (2, 3, 5):
            x = paddle.to_tensor(
                np.random.default_rng(batch).standard_normal((batch, 4)),
                stop_gradient=False,
            )
            w = paddle.to_tensor(w_value, stop_gradient=False)
            out = fn(x, w)
            out.backward()
            results += [out.numpy(), x.grad.numpy(), w.grad.numpy()]
        return results

    want = run(f)
    got = run(paddle.jit.to_static(f, full_graph=full_graph))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert graph_breaks() == []


def _apply_with_callback(x):
    return (CallsStoredCallback.apply(x * 2.0, _log_gradient) * 3.0).sum()


def test_backward_calling_a_callback_forward_kept_runs_at_every_backward():
    """The callback ``forward`` keeps on ``ctx`` stores: ``backward`` runs
    at every backward, as in eager, under AST and in static programs (the
    check reads what ``ctx`` holds once ``forward`` ran). SOT runs the
    layer eagerly: it is given a function that stores."""
    want = _run(_apply_with_callback)
    assert len(want[1]) == 3 + 1  # the stores, then CACHE's shape
    for full_graph in (True, False):
        got = _run(
            paddle.jit.to_static(_apply_with_callback, full_graph=full_graph)
        )
        _assert_same(got, want)
        reasons = graph_breaks()
        assert all("_log_gradient" in r for r in reasons)
        assert bool(reasons) == (not full_graph)
    paddle.set_default_dtype("float64")
    try:
        LOG.clear()
        xs = [
            np.random.default_rng(b).standard_normal((b, 4)) for b in (2, 3, 5)
        ]
        static = _static_runs(_apply_with_callback, xs)
        log = _log_items(LOG)
    finally:
        paddle.set_default_dtype("float32")
    for (o, g), (wo, wg) in zip(static, want[0]):
        np.testing.assert_allclose(o, wo, rtol=1e-12)
        np.testing.assert_allclose(g, wg, rtol=1e-12)
    assert len(log) == len(want[1])


class CallsCallbackInForward(Tanh):
    """``forward`` calls the function it is given."""

    @staticmethod
    def forward(ctx, x, callback):
        ctx.save_for_backward(x)
        callback(x)
        return paddle.tanh(x)


def _apply_calling_callback(x):
    return (CallsCallbackInForward.apply(x * 2.0, _log_gradient) * 3.0).sum()


def test_sot_runs_a_layer_whose_forward_calls_a_storing_callback_eagerly():
    """SOT reads the function given to ``apply`` that ``forward`` calls: it
    stores, so the layer runs eagerly, with eager's stores (compiled, it
    stored once, when the graph was built)."""
    want = _run(_apply_calling_callback)
    assert len(want[1]) == 3 + 1
    got = _run(paddle.jit.to_static(_apply_calling_callback))
    _assert_same(got, want)
    reasons = graph_breaks()
    assert reasons and all("_log_gradient" in r for r in reasons)


class GradientNoise(PyLayer):
    """Adds noise to the gradient it passes on, drawn with Python's
    ``random`` (a C function, which the check cannot read) at each
    backward."""

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, dy):
        return dy * (1.0 + 0.1 * random.gauss(0.0, 1.0))


@pytest.mark.parametrize("full_graph", [False, True])
def test_backward_calling_what_the_check_cannot_read_runs_at_every_backward(
    full_graph,
):
    """A new draw at every backward, as in eager, at one batch size (a
    compiled ``backward`` would keep the draw of the call that built it)."""

    def f(x):
        return (GradientNoise.apply(x * 2.0) * 3.0).sum()

    def run(fn):
        random.seed(7)
        grads = []
        for _ in range(3):
            x = paddle.to_tensor(
                np.random.default_rng(2).standard_normal((2, 4)),
                stop_gradient=False,
            )
            fn(x).backward()
            grads.append(x.grad.numpy())
        return grads

    want = run(f)
    assert not np.allclose(want[0], want[1])
    got = run(paddle.jit.to_static(f, full_graph=full_graph))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert graph_breaks() == []


# -- the bytecode check itself, on each kind of store --------------------------

SHARED = types.SimpleNamespace(log=[], n=0)
COUNT = 0


def _outer_with_closure():
    seen = []

    def stores_into_closure(ctx, dy):
        seen.append(dy)

    def counts_nonlocal(ctx, dy):
        nonlocal seen
        seen = []

    return stores_into_closure, counts_nonlocal


def _global_statement(ctx, dy):
    global COUNT
    COUNT = 1


def _augmented_item(ctx, dy):
    CACHE["calls"] += 1


def _augmented_attribute(ctx, dy):
    SHARED.n += 1


def _argument_store(ctx, dy, store):
    store.append(dy)


def _argument_attribute(ctx, dy, store):
    store.last = dy


def _module_attribute(ctx, dy):
    np.random.last = dy


HANDLERS = {"log": _log_gradient}


def _computed_key(ctx, dy):
    i = 0
    LOG[i + 1] = dy


LOGGER = logging.getLogger("pylayer_python_effects")


def _nested_calls(n):
    """``_f0`` calls ``_f1`` ... calls ``_f{n-1}``, which stores."""
    scope = {"LOG": LOG}
    exec(
        f"def _f{n - 1}(dy):\n    LOG.append(dy)\n"
        + "".join(
            f"def _f{k}(dy):\n    return _f{k + 1}(dy)\n" for k in range(n - 1)
        ),
        scope,
    )
    first = scope["_f0"]
    return lambda ctx, dy: first(dy)


def _pure_calls(ctx, dy):
    n = len(dy.shape) + max(1, abs(-2)) + int(math.sqrt(4.0))
    k = float(np.prod([2, 3])) + float(np.exp(0.0))
    return tuple([dy * (n + k + sum(range(3)))])[0]


def _locals_only(ctx, dy):
    grads = []
    grads.append(dy)
    grads[0] = dy
    table = {}
    table["a"] = dy
    table.update(b=dy)
    box = types.SimpleNamespace()
    box.log = []
    box.log.append(dy)
    ctx.last = dy
    [grads.append(g) for g in (dy,)]
    kept = [g for g in (dy,)]  # 3.12+: gives `g` back
    a = b = []
    a.append(dy)
    b += [dy]
    g = dy
    g += 1
    t = dy.clone()
    t[0] = 1
    return paddle.tensor.add(dy.add(kept[0]), paddle.add(dy, dy))


def _local_alias(ctx, dy):
    log = LOG
    log.append(dy)


def _local_alias_in_place(ctx, dy):
    log = LOG
    log += [dy]


def _local_alias_in_comprehension(ctx, dy):
    log = LOG
    [log.append(g) for g in (dy,)]


def _local_alias_of_ctx_attribute(ctx, dy):
    log = ctx.log
    log.append(dy)


LISTS = [[], []]


def _loop_over_a_global(ctx, dy):
    for log in LISTS:
        log.append(dy)


def _pair_of_values(ctx, dy):
    log, _other = LOG, []
    log.append(dy)


class _Keeps:
    def __init__(self):
        self.seen = LOG


def _object_a_class_makes(ctx, dy):
    keeper = _Keeps()
    keeper.seen.append(dy)


def _local_a_call_returns(ctx, dy):
    log = _log()
    log.append(dy)


LOGS = {"log": LOG}


def _masked(g):
    return g * (g.abs() < 1.0)


def _item_of_a_helper_result(ctx, dy):
    g = _masked(dy)
    g[g > 0.5] = 0.0
    return g


def _passed_back(g):
    return g


def _item_of_an_argument_a_helper_returns(ctx, dy):
    g = _passed_back(dy)
    g[g > 0.5] = 0.0
    return g


class _Box:
    pass


def _attribute_of_an_object_it_makes(ctx, dy):
    box = _Box()
    box.log = LOG
    box.log.append(dy)


def _through_another_name(ctx, dy):
    box = types.SimpleNamespace()
    other = box
    other.log = LOG
    box.log.append(dy)


def _item_a_method_puts(ctx, dy):
    out = []
    out.append(ctx.log)
    out[0].append(dy)


def _items_extend_puts(ctx, dy):
    out = []
    out.extend([LOG])
    for log in out:
        log.append(dy)


def _item_in_place(ctx, dy):
    out = [LOG]
    out[0] += [dy]


def _ctx_counter(ctx, dy):
    ctx.calls += 1
    return dy


_closure_store, _nonlocal_store = _outer_with_closure()
STORES = {
    "global append": (lambda ctx, dy: LOG.append(dy), "calls `LOG.append`"),
    "attribute of a global": (
        lambda ctx, dy: SHARED.log.append(dy),
        "calls `SHARED.log.append`",
    ),
    "attribute of ctx": (
        lambda ctx, dy: ctx.log.append(dy),
        "calls `ctx.log.append`",
    ),
    "closure variable": (_closure_store, "calls `seen.append`"),
    "nonlocal": (_nonlocal_store, "assigns the nonlocal variable `seen`"),
    "global statement": (
        _global_statement,
        "assigns the global variable `COUNT`",
    ),
    "item of a global": (
        lambda ctx, dy: CACHE.__setitem__("k", dy),
        "calls `CACHE.__setitem__`",
    ),
    "augmented item": (_augmented_item, "assigns an item of `CACHE`"),
    "augmented attribute": (
        _augmented_attribute,
        "assigns the attribute `SHARED.n`",
    ),
    "argument": (_argument_store, "calls `store.append`"),
    "attribute of an argument": (
        _argument_attribute,
        "assigns the attribute `store.last`",
    ),
    "module attribute": (
        _module_attribute,
        "assigns the attribute `np.random.last`",
    ),
    "helper": (
        lambda ctx, dy: log_norm(dy),
        "calls `LOG.append` (in `log_norm`)",
    ),
    "comprehension": (
        lambda ctx, dy: [LOG.append(g) for g in (dy,)],
        "calls `LOG.append`",
    ),
    "locals, ctx, paddle functions, Tensor methods": (_locals_only, None),
    "local name for a global": (_local_alias, "calls `log.append`"),
    "local name for a global, in place": (
        _local_alias_in_place,
        "updates `log` in place",
    ),
    "local name for a global, in a comprehension": (
        _local_alias_in_comprehension,
        "calls `log.append`",
    ),
    "local name for an attribute of ctx": (
        _local_alias_of_ctx_attribute,
        "calls `log.append`",
    ),
    # an object the function makes holds what it puts into it
    "attribute of an object it makes": (
        _attribute_of_an_object_it_makes,
        "calls `box.log.append`",
    ),
    "through another name for an object it makes": (
        _through_another_name,
        "calls `box.log.append`",
    ),
    "item a method puts": (_item_a_method_puts, "calls `out[...].append`"),
    "items `extend` puts": (_items_extend_puts, "calls `log.append`"),
    "item updated in place": (
        _item_in_place,
        "updates an item of `out` in place",
    ),
    # what `ctx.calls` holds is known only given `ctx`
    "in place on an attribute of ctx": (
        _ctx_counter,
        "updates `ctx.calls` in place",
    ),
    # what a function of the user returns is read in it
    "object a call returns": (
        lambda ctx, dy: _log().append(dy),
        "calls `_log().append`",
    ),
    "item of what a helper makes": (_item_of_a_helper_result, None),
    "item of what a helper gives back": (
        _item_of_an_argument_a_helper_returns,
        "assigns an item of `g`",
    ),
    # what the check cannot read counts as an effect
    "C function": (
        lambda ctx, dy: dy * random.random(),
        "calls `random.random`, a call this check cannot read",
    ),
    "method of a global object": (
        lambda ctx, dy: STATS.record(dy),
        "calls `self.seen.append` (in `GradStats.record`)",
    ),
    "object a C method returns": (
        lambda ctx, dy: LOGS.get("log").append(dy),
        "calls `.append` of an object this check cannot name",
    ),
    "item with a computed key": (_computed_key, "assigns an item of `LOG`"),
    "item of a global, in a loop": (_loop_over_a_global, "calls `log.append`"),
    "one of two values assigned at once": (
        _pair_of_values,
        "calls `.append` of an object this check cannot name",
    ),
    "attribute of an object a class makes": (
        _object_a_class_makes,
        "calls `.append` of an object this check cannot name",
    ),
    "local holding what a call returns": (
        _local_a_call_returns,
        "calls `log.append`",
    ),
    "logging": (
        lambda ctx, dy: LOGGER.info("%s", dy),
        "calls `LOGGER.info`, a function of `logging`, which writes",
    ),
    "calls nested deeper than 8": (
        _nested_calls(10),
        "calls `_f8`, deeper than 8 calls, which this check does not read",
    ),
    "function in a dict": (
        lambda ctx, dy: HANDLERS["log"](dy),
        "calls `LOG.append` (in `_log_gradient`)",
    ),
    "builtins, math and numpy functions": (_pure_calls, None),
}


@pytest.mark.parametrize("name", sorted(STORES))
def test_python_effect_finds_stores_that_outlive_the_call(name):
    function, want = STORES[name]
    # (the bytecode read, should another Python compile it differently)
    assert python_effect(function) == want, dis.Bytecode(function).dis()


@pytest.mark.parametrize(
    ("calls", "want"),
    [(0, None), (0.5, None), ([], "updates `ctx.calls` in place")],
)
def test_in_place_update_of_a_ctx_attribute_reads_what_ctx_holds(calls, want):
    """``ctx.calls += 1`` makes a new number (no effect); on a list that
    ``forward`` put on ``ctx`` it updates the list."""
    ctx = types.SimpleNamespace(calls=calls)
    assert python_effect(_ctx_counter, ctx) == want


def test_jit_loaded_layer_runs_a_gated_backward_as_in_eager(tmp_path):
    """``jit.save`` -> ``jit.load`` -> fine-tune: the loaded program runs
    the logging ``backward`` only in the steps whose branch used it."""
    paddle.set_default_dtype("float64")
    try:
        paddle.seed(5)
        model = _GatedModel()
        path = str(tmp_path / "gated")
        paddle.jit.save(
            paddle.jit.to_static(model, full_graph=True),
            path,
            input_spec=[paddle.static.InputSpec([None, 4], "float64", "x")],
        )
        loaded = paddle.jit.load(path)
        loaded.train()
        paddle.seed(5)
        want = _train(_GatedModel())
        got = _train(loaded)
    finally:
        paddle.set_default_dtype("float32")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert len(want[2]) == 1
    np.testing.assert_allclose(got[2], want[2], rtol=1e-12)


class RecordsItsThread(Tanh):
    """Records the thread its ``backward`` runs on, and recomputes with
    ``paddle.grad`` (eager autograd nested in the backward pass)."""

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        LOG.append(threading.current_thread() is threading.main_thread())
        with paddle.enable_grad():
            x2 = x.detach()
            x2.stop_gradient = False
            (dx,) = paddle.grad([paddle.tanh(x2)], [x2], [dy])
        return dx


@pytest.mark.parametrize("mode", ["ast", "static"])
def test_run_time_backward_runs_on_the_thread_of_the_backward_pass(mode):
    """As in eager, the nested autograd of a run-time ``backward`` runs on
    the thread that runs the backward pass (on an executor thread it could
    crash the process)."""
    f = _apply(RecordsItsThread)
    want = _run(f)
    got = (
        _run(paddle.jit.to_static(f, full_graph=True))
        if mode == "ast"
        else _run_static(RecordsItsThread)
    )
    assert want[1][:3] == [True, True, True]
    _assert_same(got, want)


def test_ast_backward_no_input_gets_a_gradient_through_is_a_clear_error():
    """Every input's gradient is a literal None: a to_static call runs no
    backward program, so a run-time ``backward`` (or hook) would silently
    not run, where eager runs it: a clear error at the call."""

    def f(x):
        return (LogsAndGivesNone.apply(x) * 3.0).sum()

    LOG.clear()
    x = paddle.to_tensor(np.ones((2, 4)), stop_gradient=False)
    f(x).backward()
    assert len(LOG) == 1 and x.grad is None  # eager
    with pytest.raises(
        NotImplementedError,
        match="PyLayer LogsAndGivesNone, which calls `LOG.append`, would "
        "never run under to_static",
    ):
        paddle.jit.to_static(f, full_graph=True)(x)


class RecomputesThroughALoggingLayer(PyLayer):
    """Its ``backward`` applies a layer whose ``backward`` logs, and
    differentiates it with ``paddle.grad``."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        with paddle.enable_grad():
            x2 = x.detach()
            x2.stop_gradient = False
            (g,) = paddle.grad([LogsGradientSum.apply(x2)], [x2], [dy])
        return g * 2.0


@pytest.mark.parametrize("full_graph", [False, True])
def test_logging_layer_in_another_layers_backward(full_graph):
    """The outer layer's ``backward`` applies a logging layer: its effect
    is the outer layer's (its ``backward`` runs at run time, the inner
    layer eagerly in it), eager's gradient and log. (AST traced the outer
    ``backward`` and aborted the process.)"""

    def f(x):
        return (RecomputesThroughALoggingLayer.apply(x) * 3.0).sum()

    xs = [np.random.default_rng(b).standard_normal((b, 4)) for b in (2, 3)]
    want = _runs(f, xs)
    assert len(want[1]) == 2
    got = _runs(paddle.jit.to_static(f, full_graph=full_graph), xs)
    _assert_same(got, want)
