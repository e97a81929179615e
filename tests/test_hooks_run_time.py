"""Hooks that are not pure tensor math run at every backward, like eager.

A hook that stores its gradient, reads a Python value of it (``.item()``,
``float()``, ``.numpy()``, ``.shape``), branches on it, reads a global that
changes between calls, multiplies by an eager Tensor, changes the gradient in
place, prints, or removes another hook is called with the real gradient
Tensor at every run of the backward program (the ``run_tensor_hooks`` op).
Each test runs the same code eagerly and under SOT (``MIN_GRAPH_SIZE=0``,
0 graph breaks), AST and plain static programs, over three batch sizes
(SOT re-traces with a dynamic batch dimension at the second), and compares
every gradient and every side effect with eager's.
"""

import functools
import gc
import re
import subprocess
import sys

import numpy as np
import paddle
import pytest
from conftest import graph_breaks
from paddle.autograd import PyLayer, run_time_hooks
from paddle.base import run_time_ops

RUN_TIME_OP = "py_op.run_tensor_hooks"
BATCHES = (2, 4, 4, 8)  # the repeated 4 reuses the program of the second call

# What the hooks record, compared with eager's.
LOG = []
SCALE = {"value": 2.0}
MASK = paddle.to_tensor([1.0, 0.0, 1.0, 1.0], dtype="float64")


def _store(g):
    LOG.append(g)


def _item(g):
    LOG.append(g.abs().max().item())


def _float(g):
    LOG.append(float(g.norm()))


def _numpy(g):
    LOG.append(g.numpy().copy())


def _branch(g):
    if g.abs().max() > 0.3:
        return g * 0.25
    return None


def _by_batch(g):
    return g / g.shape[0]


def _global(g):
    return g * SCALE["value"]


def _eager_mask(g):
    return g * MASK


def _in_place(g):
    g.detach().scale_(3.0)


def _setitem(g):
    g = g.clone()
    g[0] = 0.0
    return g


def _print(g):
    print("hook saw", g.shape, "max", round(float(g.max()), 6))


HOOKS = {
    "store": _store,
    "item": _item,
    "float": _float,
    "numpy": _numpy,
    "branch": _branch,
    "shape": _by_batch,
    "global": _global,
    "eager_tensor": _eager_mask,
    "in_place": _in_place,
    "setitem": _setitem,
    "print": _print,
}


class Net(paddle.nn.Layer):
    def __init__(self, hook):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 4)
        self.fc2 = paddle.nn.Linear(4, 1)
        self.hook = hook

    def forward(self, x):
        h = self.fc1(x)
        h.register_hook(self.hook)
        return self.fc2(paddle.tanh(h)).sum()


def _logged():
    return [
        v.numpy() if isinstance(v, paddle.Tensor) else np.asarray(v)
        for v in LOG
    ]


def _train(hook, mode, capsys=None):
    """Gradients of x and of every parameter, the log and what was printed,
    over three calls with batch sizes 2, 4, 8."""
    LOG.clear()
    paddle.seed(7)
    net = Net(hook).to(dtype="float64")
    if mode == "sot":
        net = paddle.jit.to_static(net)
    elif mode == "ast":
        net = paddle.jit.to_static(net, full_graph=True)
    grads = []
    for i, batch in enumerate(BATCHES):
        SCALE["value"] = 2.0 + i
        rng = np.random.default_rng(batch)
        x = paddle.to_tensor(
            rng.standard_normal((batch, 4)), stop_gradient=False
        )
        net(x).backward()
        grads.append(x.grad.numpy())
        for p in net.parameters():
            grads.append(p.grad.numpy())
        net.clear_gradients()
    out = capsys.readouterr().out if capsys is not None else ""
    # (SOT's info collector prints too)
    printed = [line for line in out.splitlines() if "hook saw" in line]
    return grads, _logged(), printed


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("mode", ["sot", "ast"])
@pytest.mark.parametrize("kind", sorted(HOOKS))
def test_hook_runs_at_every_backward_like_eager(kind, mode, capsys):
    hook = HOOKS[kind]
    want_grads, want_log, want_printed = _train(hook, "eager", capsys)
    got_grads, got_log, got_printed = _train(hook, mode, capsys)
    assert len(got_grads) == len(want_grads)
    for got, want in zip(got_grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert len(got_log) == len(want_log)
    for got, want in zip(got_log, want_log):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert got_printed == want_printed
    if mode == "sot":
        assert graph_breaks() == []
    if kind == "store":  # real Tensors, not static values
        assert all(isinstance(g, paddle.Tensor) for g in LOG)


def _static_run(hook, use_append_backward):
    """A plain static program with ``hook`` on an intermediate, run twice."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [3, 4], "float64")
            x.stop_gradient = False
            t = x * 1.5
            t.register_hook(hook)
            loss = (paddle.tanh(t) * t).sum()
            if use_append_backward:
                (gx,) = [
                    g
                    for _, g in paddle.static.append_backward(
                        loss, parameter_list=[x]
                    )
                ]
            else:
                (gx,) = paddle.static.gradients([loss], [x])
        assert RUN_TIME_OP in str(main)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        out = []
        for i in range(2):
            SCALE["value"] = 2.0 + i
            x_np = np.random.default_rng(i).standard_normal((3, 4))
            out.append(exe.run(main, feed={"x": x_np}, fetch_list=[gx])[0])
        return out
    finally:
        paddle.disable_static()


def _static_eager(hook):
    out = []
    for i in range(2):
        SCALE["value"] = 2.0 + i
        x_np = np.random.default_rng(i).standard_normal((3, 4))
        x = paddle.to_tensor(x_np, stop_gradient=False)
        t = x * 1.5
        t.register_hook(hook)
        (paddle.tanh(t) * t).sum().backward()
        out.append(x.grad.numpy())
    return out


@pytest.mark.parametrize("use_append_backward", [False, True])
@pytest.mark.parametrize(
    "kind", ["item", "branch", "global", "in_place", "setitem"]
)
def test_static_program_runs_hook_at_every_run(kind, use_append_backward):
    hook = HOOKS[kind]
    LOG.clear()
    want = _static_eager(hook)
    want_log = _logged()
    LOG.clear()
    got = _static_run(hook, use_append_backward)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    got_log = _logged()
    assert len(got_log) == len(want_log)
    for g, w in zip(got_log, want_log):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)


def _remover_f(x):
    handles = {}

    def first(g):
        handles["second"].remove()
        return g * 3.0

    def second(g):
        return g * 100.0

    t = x * 1.5
    t.register_hook(first)
    handles["second"] = t.register_hook(second)
    return (paddle.tanh(t) * t).sum()


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("mode", ["sot", "ast"])
def test_hook_removing_a_later_hook_skips_it_like_eager(mode):
    def grads(f):
        out = []
        for _ in range(2):
            x = paddle.to_tensor([0.5, -1.0, 2.0], stop_gradient=False)
            f(x).backward()
            out.append(x.grad.numpy())
        return out

    want = grads(_remover_f)
    got = grads(paddle.jit.to_static(_remover_f, full_graph=mode == "ast"))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=0)


def test_hook_reading_a_traced_tensor_gets_its_run_time_value():
    seen = []

    def f(x):
        w = paddle.exp(x)
        t = x * 2.0

        def hook(g):
            seen.append(float(w.sum()))
            return g * w

        t.register_hook(hook)
        return (t * t).sum()

    xs = [np.array([0.1, 0.2]), np.array([-0.3, 0.4])]

    def run(fn):
        seen.clear()
        out = []
        for a in xs:
            x = paddle.to_tensor(a, stop_gradient=False)
            fn(x).backward()
            out.append(x.grad.numpy())
        return out, list(seen)

    want, want_seen = run(f)
    for full_graph in (True, False):
        got, got_seen = run(paddle.jit.to_static(f, full_graph=full_graph))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
        np.testing.assert_allclose(got_seen, want_seen, rtol=1e-12)


def test_error_in_a_run_time_hook_names_the_hook():
    def broken_hook(g):
        raise KeyError("no such statistic")

    @paddle.jit.to_static(full_graph=True)
    def f(x):
        t = x * 2.0
        t.register_hook(broken_hook)
        return t.sum()

    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    loss = f(x)
    # the hook's own exception, a note naming the hook
    with pytest.raises(KeyError, match="no such statistic") as info:
        loss.backward()
    notes = "\n".join(getattr(info.value, "__notes__", [])) + str(info.value)
    assert re.search("broken_hook.*registered on", notes)


def test_run_time_hook_returning_another_shape_is_a_clear_error():
    def wrong_shape(g):
        if g.numpy().size:  # a Python read: runs at run time
            return g.sum()
        return None

    @paddle.jit.to_static(full_graph=True)
    def f(x):
        t = x * 2.0
        t.register_hook(wrong_shape)
        return t.sum()

    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    loss = f(x)
    with pytest.raises(
        Exception, match="wrong_shape.*must not change the shape"
    ):
        loss.backward()


W = 3.0


@pytest.mark.parametrize(
    "hook, compiled",
    [
        (lambda g: None, True),
        (lambda g: g * 0.5, True),
        (lambda g: paddle.clip(g, -1.0, 1.0) * 2, True),
        (lambda g: paddle.nn.functional.relu(g).abs(), True),
        (lambda g: g * W, False),  # a global: read at each backward
        (lambda g: g / g.shape[0], False),
        (lambda g: g.item(), False),
        (lambda g: g.scale_(2.0), False),
        (lambda g: g if g.sum() > 0 else None, False),
        (lambda g: print(g), False),
        (lambda g: LOG.append(g), False),
        (_store, False),
        (max, False),
    ],
)
def test_only_provably_pure_hooks_are_compiled(hook, compiled):
    assert run_time_hooks.compilable(hook) == compiled


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("full_graph", [True, False])
def test_pure_hook_is_compiled_into_the_backward(full_graph):
    """A pure hook adds its ops to the backward program: no run-time op."""

    @paddle.jit.to_static(full_graph=full_graph)
    def f(x):
        t = x * 2.0
        t.register_hook(lambda g: g * 0.5)
        return (t * t).sum()

    before = set(run_time_ops._live)
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    f(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    assert not set(run_time_ops._live) - before
    if not full_graph:
        assert graph_breaks() == []


def test_hook_registering_a_hook_on_a_program_tensor_is_a_clear_error():
    """Eager applies a hook that a hook registers on an upstream tensor in
    the same backward; a static backward program was built before it ran."""

    def f(x):
        u = paddle.sin(x)
        t = u * 2.0

        def hook(g):
            u.register_hook(lambda gu: gu * 10.0)
            return g

        t.register_hook(hook)
        return (t * t).sum()

    for full_graph in (True, False):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        loss = paddle.jit.to_static(f, full_graph=full_graph)(x)
        with pytest.raises(
            RuntimeError, match="Register the hook in the traced"
        ):
            loss.backward()


class _HookInForward(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = x * 2.0
        y.register_hook(lambda g: g * 10.0)
        return y

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


def _apply_hook_in_forward(x):
    return _HookInForward.apply(x * 1.0)


@pytest.mark.parametrize("mode", ["eager", "ast", "sot", "static"])
def test_register_hook_in_pylayer_forward_is_eagers_error(mode):
    """Eager runs PyLayer.forward without gradient: the hook is an error
    (the static paths used to accept it and never run it)."""
    match = "Cannot register hook on a tensor that stop gradient"
    x_np = np.array([1.0, 2.0])
    if mode == "static":
        paddle.enable_static()
        try:
            with paddle.static.program_guard(paddle.static.Program()):
                x = paddle.static.data("x", [2], "float64")
                x.stop_gradient = False
                with pytest.raises(RuntimeError, match=match):
                    _apply_hook_in_forward(x)
        finally:
            paddle.disable_static()
        return
    f = _apply_hook_in_forward
    if mode != "eager":
        f = paddle.jit.to_static(f, full_graph=mode == "ast")
    x = paddle.to_tensor(x_np, stop_gradient=False)
    # SOT may report it as its InnerError, with this message, when it
    # traces the forward into the graph
    error = Exception if mode == "sot" else RuntimeError
    with pytest.raises(error, match=match):
        f(x)


def _scale(g, c):
    return g * c


class _CosPair(PyLayer):
    @staticmethod
    def forward(ctx, a0, a1):
        t1 = paddle.cos(a1)
        o0 = paddle.tanh(t1)
        o1 = paddle.sin(t1)
        return (o0, o1)

    @staticmethod
    def backward(ctx, d0, d1):
        return (None, d1 * 2.0 + d0)


def _reached_read_by_run_time_hook(x0, x2):
    v1 = x0 * x2
    v2 = paddle.reshape(v1, [-1])
    v4 = v1 * 3.0
    if x0.mean() > 0:
        b6 = paddle.sin(x2)
        b9 = paddle.cos(b6)
        r5 = b9 * -1.5
    else:
        b10 = paddle.square(x2)
        b10.register_hook(functools.partial(_scale, c=0.25))
        b12 = b10 * x2
        r5 = b12 * 0.25
    v13 = v4 * v4
    v14 = x0 * 2.0
    v15 = v13 - x0
    v16 = r5 / (paddle.square(v14) + 1.0)
    r5.register_hook(functools.partial(_scale, c=2.0))
    v17, v18 = _CosPair.apply(x0, paddle.cos(v15))
    v14.register_hook(lambda g: g * paddle.tanh(v15))
    out = v17 + v2.sum()
    return (out, v16)


def _run_reached_case(fn, x0, x2):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in (x0, x2)]
    out, extra = fn(*xs)
    cot = np.random.default_rng(5).standard_normal(out.shape)
    (out * paddle.to_tensor(cot)).sum().backward()
    return [out.numpy(), extra.numpy()] + [x.grad.numpy() for x in xs]


def _assert_reached_case_as_eager(fn, mode, *inputs):
    want = _run_reached_case(fn, *inputs)
    static_fn = paddle.jit.to_static(fn, full_graph=mode == "ast")
    for _ in range(2):
        got = _run_reached_case(static_fn, *inputs)
        for i, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"result {i}")


@pytest.mark.parametrize("mode", ["ast", "sot"])
@pytest.mark.parametrize("sign", [-1.0, 1.0], ids=["else", "then"])
def test_run_time_hook_and_compiled_hook_share_a_reach_signal(mode, sign):
    # Found by the fuzzer: the signal telling whether a gradient reached a
    # value is read by a run-time hook op in the backward of an `if` and
    # selects a compiled hook's result; running `reshape` of it in place
    # failed (AST, `else` taken: "Tensor holds no memory").
    rng = np.random.default_rng(392)
    x0 = sign * np.abs(rng.standard_normal([3, 2]))
    x2 = rng.standard_normal([2])
    _assert_reached_case_as_eager(_reached_read_by_run_time_hook, mode, x0, x2)


def _branch_hook(g):
    if float(g.abs().max()) > 1.0:
        return g * 0.5
    return None


def _reach_signals_read_in_and_out_of_a_branch(x0, x1):
    v1 = x1 * x1
    v3 = x0 / (paddle.square(x0) + 1.0)
    v4 = v1 + v1
    v5 = paddle.concat([paddle.cos(v1), x1], axis=1)
    if x0.mean() > 0:
        r6 = paddle.tanh(paddle.square(v3)) * -1.5
    else:
        b10 = v3 + x0
        b10.register_hook(_branch_hook)
        r6 = b10 * v3
    v1.register_hook(lambda g: g * v4)
    v15, v16 = paddle.split(r6, 2, axis=0)
    v15.register_hook(lambda g: g.detach().scale_(0.5))
    return v16 + v5.mean(), v4 * 1.0


@pytest.mark.parametrize("mode", ["ast", "sot"])
@pytest.mark.parametrize("sign", [-1.0, 1.0], ids=["else", "then"])
def test_run_time_hooks_in_and_out_of_a_branch_read_one_reach_signal(
    mode, sign
):
    # Found by the fuzzer: two run-time hook ops of the backward, one in the
    # backward of an `if` branch, read the same reach signals; CSE merged
    # their `builtin.combine`s into one of the outer block, and a later op
    # of that block reading the signal failed (AST, `else` taken: "Tensor
    # holds no memory").
    rng = np.random.default_rng(1848)
    x0 = sign * np.abs(rng.standard_normal([4]))
    x1 = rng.standard_normal([4, 3])
    _assert_reached_case_as_eager(
        _reach_signals_read_in_and_out_of_a_branch, mode, x0, x1
    )


def _numpy_hooks_in_the_function(x):
    y = paddle.tanh(x * 1.5)

    def keep(g):
        LOG.append(g.numpy().copy())

    y.register_hook(keep)
    z = y * y
    z.register_hook(lambda g: LOG.append(g.numpy().tolist()))
    return z.sum()


@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_numpy_in_a_hook_defined_in_the_function(mode, sot_env):
    # AST removes `.numpy()` from the function it converts (a traced value
    # has no numpy array); a hook defined there runs at every backward with
    # the gradient Tensor and gets its numpy array, as in eager.
    logs = {}
    for run in ("eager", mode):
        LOG.clear()
        fn = _numpy_hooks_in_the_function
        if run != "eager":
            fn = paddle.jit.to_static(fn, full_graph=run == "ast")
        for batch in (2, 3):
            x = paddle.to_tensor(
                np.linspace(-1.0, 1.0, batch * 2).reshape(batch, 2),
                stop_gradient=False,
            )
            fn(x).backward()
        logs[run] = list(LOG)
    assert [type(v) for v in logs[mode]] == [type(v) for v in logs["eager"]]
    for got, want in zip(logs[mode], logs["eager"]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


ORDER = []


def _chunks_with_logging_hooks(x):
    """A logging (run-time) hook on each output of one multi-output op."""
    parts = paddle.chunk(x * 1.0, 4)
    for i, part in enumerate(parts):
        part.register_hook(functools.partial(_log_index, i))
    return sum(part * float(i + 1) for i, part in enumerate(parts))


def _log_index(i, g):
    ORDER.append(i)


def _hook_orders(fn, runs=30):
    orders = []
    for run in range(runs):
        ORDER.clear()
        a = np.random.default_rng(run).standard_normal([8])
        x = paddle.to_tensor(a, stop_gradient=False)
        fn(x).sum().backward()
        orders.append(list(ORDER))
    return orders


@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_hooks_on_outputs_of_one_op_run_in_eager_order(mode):
    want = _hook_orders(_chunks_with_logging_hooks)
    static_fn = paddle.jit.to_static(
        _chunks_with_logging_hooks, full_graph=mode == "ast"
    )
    assert _hook_orders(static_fn) == want


def test_run_time_hook_ops_are_chained_in_build_order():
    """Each run-time hook op of a block reads the size of the result of the
    one built before it (the result itself may be taken over by a `while`
    op built in between), so that the executor runs them in that order."""
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [8], "float64")
            x.stop_gradient = False
            out = _chunks_with_logging_hooks(x)
            paddle.static.gradients([out.sum()], [x])
    finally:
        paddle.disable_static()
    ops = [
        op
        for op in main.global_block().ops
        if op.name().startswith(RUN_TIME_OP)
    ]
    assert len(ops) == 4
    for before, op in zip(ops, ops[1:]):
        # the last input
        numel = op.operand_source(op.num_operands() - 1).get_defining_op()
        assert numel is not None and numel.name() == "pd_op.numel"
        assert numel.operand_source(0).is_same(before.result(0))


class IgnoresSecondGradient(PyLayer):
    """``backward`` ignores the gradient of its second output."""

    @staticmethod
    def forward(ctx, a):
        return paddle.sin(a), paddle.square(a)

    @staticmethod
    def backward(ctx, d0, d1):
        return d0 * 0.25


def _hooked_dead_end(x):
    """Logging hooks on values whose gradient reaches no input (the
    PyLayer's backward drops it): eager runs them all the same."""
    y, z = IgnoresSecondGradient.apply(x * 1.0)
    a, b = paddle.split(z, 2)
    a.register_hook(functools.partial(_log_index, 0))
    b.register_hook(functools.partial(_log_index, 1))
    return paddle.concat([z, paddle.square(a)]).sum() + y.sum()


@pytest.mark.parametrize("mode", ["ast", "sot", "static"])
def test_run_time_hook_on_a_gradient_reaching_no_input_runs(mode):
    want = _hook_orders(_hooked_dead_end, runs=3)
    if mode == "static":
        got = []
        for run in range(3):
            ORDER.clear()
            a = np.random.default_rng(run).standard_normal([4])
            paddle.enable_static()
            try:
                main = paddle.static.Program()
                with paddle.static.program_guard(main):
                    x = paddle.static.data("x", [4], "float64")
                    x.stop_gradient = False
                    (gx,) = paddle.static.gradients([_hooked_dead_end(x)], [x])
                exe = paddle.static.Executor(paddle.CPUPlace())
                exe.run(main, feed={"x": a}, fetch_list=[gx])
            finally:
                paddle.disable_static()
            got.append(list(ORDER))
    else:
        static_fn = paddle.jit.to_static(
            _hooked_dead_end, full_graph=mode == "ast"
        )
        got = _hook_orders(static_fn, runs=3)
    assert want == [[0, 1]] * 3
    assert got == want


PROGRAM = {}


def _log_then_register(g):
    print(g.shape)  # not pure: runs when the backward runs
    PROGRAM["z"].register_hook(lambda gz: gz * 2.0)


def _log_then_grad(g):
    print(g.shape)  # not pure: runs when the backward runs
    return g + paddle.grad([PROGRAM["z"]], [PROGRAM["y"]])[0]


def _closure_grad(y, z):
    def hook(g):
        print(g.shape)
        return g + paddle.grad([z], [y])[0]

    return hook


@pytest.mark.parametrize(
    "make_hook, what",
    [
        (lambda y, z: _log_then_register, "register_hook"),
        (lambda y, z: _log_then_grad, "paddle.grad"),
        (_closure_grad, "paddle.grad"),
    ],
)
def test_run_time_hook_using_program_tensors_is_a_clear_error(make_hook, what):
    """A hook running with the backward program that registers a hook on,
    or calls ``paddle.grad`` with, tensors of the program (from a global or
    a closure): stock-like errors about control flow blocks, "Elements of
    outputs must be Tensor" or "Null autograd_meta" before."""
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [3], "float32")
            x.stop_gradient = False
            y = x * 2.0
            z = (y * y).sum()
            PROGRAM.update(y=y, z=z)
            y.register_hook(make_hook(y, z))
            grads = paddle.static.gradients([z], [x])
        with pytest.raises(
            Exception, match=f"Cannot call {what}, in a gradient hook"
        ):
            paddle.static.Executor().run(
                main, feed={"x": np.ones(3, "float32")}, fetch_list=grads
            )
    finally:
        paddle.disable_static()
        PROGRAM.clear()


def _program_with_a_run_time_hook(seen):
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        x = paddle.static.data("x", [3], "float32")
        x.stop_gradient = False
        y = x * 2.0
        y.register_hook(lambda g: seen.append(float(g.sum())))
        (gx,) = paddle.static.gradients([(y * y).sum()], [x])
    return main, gx


def test_run_time_hooks_go_with_their_programs():
    """The hooks a backward program runs are owned by the program (through
    its hook table): building, running and dropping 1,000 programs leaves
    no hooks behind."""
    seen = []
    created = set()
    paddle.enable_static()
    try:
        exe = paddle.static.Executor(paddle.CPUPlace())
        for _ in range(1000):
            before = set(run_time_ops._live)
            main, gx = _program_with_a_run_time_hook(seen)
            exe.run(main, feed={"x": np.ones(3, "float32")}, fetch_list=[gx])
            new = set(run_time_ops._live) - before
            assert len(new) == 1
            created |= new
            del main, gx
        # the executor caches its last 8 programs, in a reference cycle
        # (a per-instance lru_cache of its own method): the collector
        # frees them with it
        assert len(created & set(run_time_ops._live)) <= 8
        del exe
        gc.collect()
    finally:
        paddle.disable_static()
    assert seen == [12.0] * 1000
    assert not created & set(run_time_ops._live)


_PREDICT_AFTER_HOOK = """
import sys
import numpy as np
import paddle

seen = []

@paddle.jit.to_static(full_graph=sys.argv[2] == "ast")
def f(x):
    t = x * 2.0
    t.register_hook(lambda g: seen.append(float(g.sum())))
    return (t * t).sum()

x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
f(x).backward()
assert seen == [12.0], seen

net = paddle.nn.Linear(3, 2)
prefix = sys.argv[1] + "/model"
paddle.jit.save(
    net, prefix, input_spec=[paddle.static.InputSpec([None, 3], "float32")]
)
config = paddle.inference.Config(prefix + ".json", prefix + ".pdiparams")
config.disable_gpu()
predictor = paddle.inference.create_predictor(config)
data = np.random.rand(2, 3).astype("float32")
handle = predictor.get_input_handle(predictor.get_input_names()[0])
handle.reshape(data.shape)
handle.copy_from_cpu(data)
predictor.run()
out = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
# float32; the predictor's fused ops round differently (an output near
# zero has no relative precision left)
np.testing.assert_allclose(
    out, net(paddle.to_tensor(data)).numpy(), rtol=1e-5, atol=1e-6
)
print("predicted")
"""


@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_paddle_inference_after_a_run_time_hook(tmp_path, mode):
    """Paddle Inference registers the process's custom operators at its
    first predictor; a run-time hook's Python op must not make that abort
    (a fresh process: the suite creates predictors before)."""
    script = tmp_path / "predict_after_hook.py"
    script.write_text(_PREDICT_AFTER_HOOK)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path), mode],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "predicted" in done.stdout


def test_second_backward_through_a_run_time_hook_is_a_clear_error():
    """A run-time hook is Python, not ops: a second backward through the
    gradient it gave says so (it was ``op ... has no grad op``)."""
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [3], "float32")
            x.stop_gradient = False
            y = paddle.tanh(x) * 2.0
            y.register_hook(lambda g: print(g.shape))
            (gx,) = paddle.static.gradients([(y * y).sum()], [x])
            with pytest.raises(
                NotImplementedError,
                match="Cannot differentiate the result of the gradient hooks",
            ):
                paddle.static.gradients([(gx * gx).sum()], [x])
    finally:
        paddle.disable_static()
