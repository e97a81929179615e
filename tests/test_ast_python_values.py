"""Under AST, a Python value that the function, a hook or a PyLayer reads
and that changes between calls gets its current value, as in eager.

A static program holds the Python values it was traced with. to_static
keys its programs also by the current values of the globals, closure
variables and Layer attributes that the function and what it calls read
(``python_reads``), so a changed value traces a new program, as SOT's
guards do; and a converted function's copies of its globals and closure
variables are refreshed before it runs again. Each test trains or calls a
Layer for several steps, changing the value between steps, and compares
every output and gradient with eager (float64); SOT runs the same code.
"""

import warnings

import numpy as np
import paddle
import pytest

SCALE = 2.0
LOG = []


class GradReverse(paddle.autograd.PyLayer):
    """DANN's gradient reversal with a coefficient argument."""

    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        return -g * ctx.coeff


class Dann(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.features = paddle.nn.Linear(3, 4)
        self.domain = paddle.nn.Linear(4, 1)
        self.coeff = 0.0
        self.factor = 1.0

    def forward(self, x):
        f = paddle.tanh(self.features(x))
        f.register_hook(lambda g: g * SCALE)
        f.register_hook(lambda g: g * self.factor)
        f.register_hook(lambda g: LOG.append(float(g.abs().sum())))
        return self.domain(GradReverse.apply(f, self.coeff)).mean()


def _train(mode):
    global SCALE
    LOG.clear()
    paddle.seed(3)
    net = Dann().to(dtype="float64")
    opt = paddle.optimizer.SGD(0.125, parameters=net.parameters())
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    out = []
    for step, batch in enumerate((2, 3, 4, 4, 3)):
        SCALE = 0.5 + step  # exact in float32
        net.coeff = 0.25 * step
        net.factor = 1.0 if step % 2 else 0.5
        x = paddle.to_tensor(
            np.random.default_rng(step).standard_normal((batch, 3))
        )
        loss = net(x)
        loss.backward()
        out += [loss.numpy(), net.features.weight.grad.numpy()]
        opt.step()
        opt.clear_grad()
    return out, list(LOG)


@pytest.mark.parametrize("mode", ["ast", "sot"])
@pytest.mark.usefixtures("sot_env")
def test_changed_global_attribute_and_apply_argument_equal_eager(mode):
    got, got_log = _train(mode)
    want, want_log = _train("eager")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got_log, want_log, rtol=1e-12)


def _closure_scaled():
    scale = 1.0

    def f(x):
        return x * scale

    def set_scale(v):
        nonlocal scale
        scale = v

    return f, set_scale


def test_changed_closure_variable_equals_eager():
    f, set_scale = _closure_scaled()
    static_f = paddle.jit.to_static(f, full_graph=True)
    x = paddle.to_tensor([1.0, 2.0], dtype="float64")
    for v in (1.0, 3.0, 0.5, 3.0):
        set_scale(v)
        np.testing.assert_array_equal(static_f(x).numpy(), f(x).numpy())


class Temperature(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.temperature = 1.0
        self.cfg = {"shift": 0.0}

    def forward(self, x):
        return (
            paddle.nn.functional.softmax(x / self.temperature)
            + (self.cfg["shift"])
        )


def test_changed_layer_attribute_equals_eager_and_programs_are_reused():
    net = Temperature()
    static_net = paddle.jit.to_static(net, full_graph=True)
    x = paddle.to_tensor([[1.0, 2.0, 4.0]], dtype="float64")
    for t, shift in ((1.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 0.0)):
        net.temperature, net.cfg["shift"] = t, shift
        np.testing.assert_array_equal(
            static_net(x).numpy(), net.forward(x).numpy()
        )
    # three distinct values, three programs: the fourth call reuses one
    assert len(static_net.forward.program_cache) == 3


def test_sink_and_unchanged_values_trace_once():
    """A global list the function only appends to, and values that do not
    change, keep one program."""

    def f(x):
        LOG.append(SCALE)
        return x * SCALE

    static_f = paddle.jit.to_static(f, full_graph=True)
    x = paddle.to_tensor([1.0, 2.0])
    for _ in range(3):
        static_f(x)
    assert len(static_f.program_cache) == 1


def test_value_changing_at_every_call_warns_once_and_stays_bounded():
    from paddle.jit.dy2static.program_translator import MAX_READ_VARIANTS

    net = Temperature()
    static_net = paddle.jit.to_static(net, full_graph=True)
    x = paddle.to_tensor([[1.0, 2.0, 4.0]], dtype="float64")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(MAX_READ_VARIANTS + 4):
            net.temperature = 1.0 + step
            np.testing.assert_array_equal(
                static_net(x).numpy(), net.forward(x).numpy()
            )
    messages = [str(w.message) for w in caught if "traced" in str(w.message)]
    assert len(messages) == 1, messages
    assert "`self.temperature`" in messages[0]
    assert "paddle.to_tensor" in messages[0]
    assert len(static_net.forward.program_cache) == MAX_READ_VARIANTS
