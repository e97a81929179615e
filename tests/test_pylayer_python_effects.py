"""A PyLayer whose ``forward`` or ``backward`` stores something that outlives
the call (``LOG.append(dy)``, ``CACHE[k] = ...``, ``self.calls += 1``).

Eager Paddle runs ``forward`` and ``backward`` at every call, with Tensors. A
static graph runs their Python code once, while it builds the program, with
symbolic values. So:

- SOT breaks the graph at such a layer and runs it eagerly (stock SOT did so
  at every PyLayer): the stores and the gradients are eager's, at every call
  and batch size;
- AST (``full_graph=True``) and plain static programs raise a clear error
  when they build the backward of such a ``backward`` (a ``forward`` runs
  when traced, like any Python code of a converted function);
- a layer with no such store is still compiled (0 graph breaks), also when
  its ``backward`` re-runs the forward under ``paddle.enable_grad()`` and
  calls ``paddle.grad`` (activation recomputation).
"""

import types

import numpy as np
import paddle
import pytest
from conftest import graph_breaks, run_static_program
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
        np.asarray(v.numpy()) if isinstance(v, paddle.Tensor) else v
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
        results.append((out.numpy(), x.grad.numpy()))
    return results, _log_items(LOG)


def _assert_same(got, want):
    (got_results, got_log), (want_results, want_log) = got, want
    for (go, gg), (wo, wg) in zip(got_results, want_results):
        np.testing.assert_allclose(go, wo, rtol=1e-12)
        np.testing.assert_allclose(gg, wg, rtol=1e-12)
    assert len(got_log) == len(want_log)
    for g, w in zip(got_log, want_log):
        assert type(g) is type(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(EFFECTFUL))
def test_sot_runs_a_layer_with_python_effects_eagerly(name):
    layer = EFFECTFUL[name]
    want = _run(_apply(layer))
    got = _run(paddle.jit.to_static(_apply(layer)))
    _assert_same(got, want)
    method = "forward" if name == "logs_forward" else "backward"
    reasons = graph_breaks()
    assert reasons, "the layer was compiled"
    assert all(f"`{layer.__name__}.{method}`" in r for r in reasons)


@pytest.mark.parametrize(
    "name", sorted(n for n in EFFECTFUL if n != "logs_forward")
)
def test_ast_backward_with_python_effects_is_a_clear_error(name):
    layer = EFFECTFUL[name]
    f = paddle.jit.to_static(_apply(layer), full_graph=True)
    x = paddle.to_tensor(np.ones((2, 4)), stop_gradient=False)
    with pytest.raises(
        NotImplementedError,
        match=rf"{layer.__name__}: `PyLayer.backward` (calls|assigns)",
    ):
        f(x).backward()


def test_static_program_backward_with_python_effects_is_a_clear_error():
    def f(x):
        return StoresGradient.apply(x * 2.0) * 3.0

    LOG.clear()
    with pytest.raises(NotImplementedError, match="calls `LOG.append`"):
        run_static_program(f, [np.ones((2, 4))])
    assert LOG == []


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
    ctx.n += 1
    [grads.append(g) for g in (dy,)]
    return paddle.tensor.add(dy.add(dy), paddle.add(dy, dy))


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
        None,  # a dunder call is not seen
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
}


@pytest.mark.parametrize("name", sorted(STORES))
def test_python_effect_finds_stores_that_outlive_the_call(name):
    function, want = STORES[name]
    assert python_effect(function) == want
