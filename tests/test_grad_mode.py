"""A ``to_static`` function gives eager's outputs and gradients whatever the
grad mode of each call.

Ops traced with the grad mode off (``paddle.no_grad()``, or the ``forward`` of
a PyLayer that runs eagerly) give values with ``stop_gradient=True`` and a
program without backward. Such a program serves the calls made with the grad
mode off only; SOT's inferred metas are kept per grad mode as well. Each test
runs the same calls eagerly and under SOT (``MIN_GRAPH_SIZE=0``) and AST, and
compares outputs, ``stop_gradient`` and every gradient.
"""

import contextlib

import numpy as np
import paddle
import pytest
from conftest import graph_breaks
from paddle.autograd import PyLayer
from paddle.jit.sot.opcode_translator.executor.executor_cache import (
    OpcodeExecutorCache,
)

MODES = {"sot": False, "ast": True}
# The grad mode of each call: a program first traced without grad, then with.
NO_GRAD_FIRST = (False, True, False, True)
GRAD_FIRST = (True, False, True, False)


def _grad_mode(enabled):
    return contextlib.nullcontext() if enabled else paddle.no_grad()


def _grads(*tensors):
    return [None if t.grad is None else t.grad.numpy().copy() for t in tensors]


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        elif isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
        else:
            assert g == w


class _Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        paddle.seed(3)
        self.linear = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return paddle.tanh(self.linear(x)) * x.sum()


def _run_net(net, calls):
    """Each call: output, its stop_gradient and, with grad, the gradients of
    the input and the parameters."""
    record = []
    rng = np.random.default_rng(0)
    for enabled in calls:
        x = paddle.to_tensor(rng.standard_normal([4, 3]), stop_gradient=False)
        with _grad_mode(enabled):
            out = net(x)
        record += [out.numpy(), out.stop_gradient]
        if enabled:
            out.sum().backward()
            record += _grads(x, *net.parameters())
            net.clear_gradients()
    return record


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("calls", [NO_GRAD_FIRST, GRAD_FIRST])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_layer_called_with_and_without_grad_matches_eager(mode, calls):
    paddle.set_default_dtype("float64")
    try:
        want = _run_net(_Net(), calls)
        net = paddle.jit.to_static(_Net(), full_graph=MODES[mode])
        got = _run_net(net, calls)
    finally:
        paddle.set_default_dtype("float32")
    _assert_same(got, want)
    if mode == "sot":
        assert graph_breaks() == []


def _by_stop_gradient(x):
    t = x * 2.0
    if t.stop_gradient:
        return t - 1.0
    return t + 1.0


def _run_fn(f, calls):
    record = []
    for enabled in calls:
        x = paddle.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
        with _grad_mode(enabled):
            out = f(x)
        record += [out.numpy(), out.stop_gradient]
        if enabled:
            out.sum().backward()
            record += _grads(x)
    return record


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("calls", [NO_GRAD_FIRST, GRAD_FIRST])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_branch_on_stop_gradient_follows_the_grad_mode_of_each_call(
    mode, calls
):
    want = _run_fn(_by_stop_gradient, calls)
    got = _run_fn(
        paddle.jit.to_static(_by_stop_gradient, full_graph=MODES[mode]), calls
    )
    _assert_same(got, want)


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
def test_function_traced_without_grad_leaves_other_functions_their_metas():
    # SOT infers `x * 2.0` once per input meta: a function traced without
    # grad must not hand `stop_gradient=True` to another one traced with it.
    double = paddle.jit.to_static(lambda x: x * 2.0)
    x = paddle.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
    with paddle.no_grad():
        double(x)
    want = _run_fn(_by_stop_gradient, [True])
    got = _run_fn(paddle.jit.to_static(_by_stop_gradient), [True])
    _assert_same(got, want)


LOG = []


class _Recording(PyLayer):
    # Its store into LOG makes SOT run it eagerly: eager runs `forward` with
    # the grad mode off, and SOT translates that frame.
    @staticmethod
    def forward(ctx, a):
        LOG.append("forward")
        return a * 2.0

    @staticmethod
    def backward(ctx, d):
        return d * 2.0


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
def test_pylayer_run_eagerly_leaves_a_later_hook_compiled():
    def apply(x):
        return _Recording.apply(x) - 1.0

    def hooked(x):
        t = x * 2.0
        t.register_hook(lambda g: g * 0.5)
        return (t * t).sum()

    x = paddle.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
    paddle.jit.to_static(apply)(x).sum().backward()
    want = _run_fn(hooked, [True])
    got = _run_fn(paddle.jit.to_static(hooked), [True])
    _assert_same(got, want)
    assert [r for r in graph_breaks() if "register_hook" in r] == []


@pytest.mark.usefixtures("sot_env", "fresh_sot_cache")
@pytest.mark.parametrize("mode", sorted(MODES))
def test_each_grad_mode_is_traced_once(mode):
    f = paddle.jit.to_static(_by_stop_gradient, full_graph=MODES[mode])
    _run_fn(f, NO_GRAD_FIRST[:2])
    translated = OpcodeExecutorCache().translate_count
    programs = len(f._program_cache) if mode == "ast" else None
    _run_fn(f, NO_GRAD_FIRST * 3)
    assert OpcodeExecutorCache().translate_count == translated
    if mode == "ast":
        assert len(f._program_cache) == programs == 2
