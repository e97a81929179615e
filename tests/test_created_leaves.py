"""A leaf Tensor that a to_static function creates and returns gets its
gradient in ``grad``, as in eager, under SOT and AST:
``paddle.to_tensor(..., stop_gradient=False)``, ``paddle.full`` then
``stop_gradient = False``, ``x.detach()`` (or ``x.detach().clone()``) then
``stop_gradient = False``, a Tensor made from a NumPy array, and (SOT)
``paddle.create_parameter``. Its gradient is the sum of the caller's uses
and the function's own, and its hooks run once on that sum.

Stock Paddle returned such a Tensor as an output of the program, not a
leaf: its ``grad`` stayed None, silently. ``paddle.create_parameter`` in
the function failed at run time ("Cannot find ... in scope"); AST now says
why, SOT creates it eagerly.
"""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks

MODES = ("sot", "ast")
LOG = []


def _convert(fn, mode):
    if mode == "eager":
        return fn
    return paddle.jit.to_static(fn, full_graph=mode == "ast")


def _grads(*tensors):
    return [None if t.grad is None else t.grad.numpy() for t in tensors]


def _assert_same(got, want):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        if isinstance(b, (bool, tuple)) or b is None:
            assert a == b, f"result {i}: {a} != {b}"
        else:
            np.testing.assert_allclose(a, b, rtol=1e-13, err_msg=f"result {i}")


def leaf_forms(x):
    w = paddle.to_tensor([1.0, 2.0, 3.0], dtype="float64", stop_gradient=False)
    v = paddle.full([3], 2.0, dtype="float64")
    v.stop_gradient = False
    d = x.detach().clone()
    d.stop_gradient = False
    e = (x * 1.0).detach()
    e.stop_gradient = False
    return x * w * v * d * e, w, v, d, e


def _leaf_forms(mode):
    fn = _convert(leaf_forms, mode)
    out = []
    for seed in (1, 2):
        a = np.random.default_rng(seed).standard_normal(3)
        x = paddle.to_tensor(a, stop_gradient=False)
        y, w, v, d, e = fn(x)
        loss = (y * y).sum() + (w * w).sum() + (v * 3.0).sum() + d.sum()
        (loss + (e * e).sum()).backward()
        out += [
            *_grads(x, w, v, d, e),
            (w.is_leaf, v.is_leaf, d.is_leaf, e.is_leaf),
        ]
    return out


@pytest.mark.parametrize("mode", MODES)
def test_created_leaves_get_their_gradient(mode):
    _assert_same(_leaf_forms(mode), _leaf_forms("eager"))


def numpy_leaf(x):
    u = paddle.to_tensor(np.array([1.0, 2.0, 3.0]), stop_gradient=False)
    return x * u, u


def only_returned(x):
    w = paddle.ones([3], "float64")
    w.stop_gradient = False
    return x * 2.0, w, w


@pytest.mark.parametrize("fn", [numpy_leaf, only_returned])
@pytest.mark.parametrize("mode", MODES)
def test_leaf_from_numpy_or_only_returned(mode, fn):
    def run(mode):
        f = _convert(fn, mode)
        out = []
        for _ in range(2):
            x = paddle.to_tensor(
                [0.5, -1.0, 2.0], "float64", stop_gradient=False
            )
            y, u, *rest = f(x)
            ((y * u).sum() + (u * u * u).sum()).backward()
            out += [*_grads(x, u), u.is_leaf, all(r is u for r in rest)]
        return out

    _assert_same(run(mode), run("eager"))


class LeafNet(paddle.nn.Layer):
    """Returns, with its output, a leaf copy of its input (an attack or a
    probe on the input) with a hook on it."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)

    def forward(self, x):
        d = x.detach().clone()
        d.stop_gradient = False
        d.register_hook(lambda g: LOG.append(("in", float(g.sum()))) or g * 2)
        return paddle.tanh(self.fc(x) * d), d


def _train(mode):
    paddle.seed(7)
    paddle.set_default_dtype("float64")
    try:
        net = _convert(LeafNet(), mode)
    finally:
        paddle.set_default_dtype("float32")
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    LOG.clear()
    out = []
    for batch in (2, 3, 4, 5):  # SOT goes dynamic at the second shape
        a = np.random.default_rng(batch).standard_normal([batch, 3])
        x = paddle.to_tensor(a, stop_gradient=False)
        h, d = net(x)
        d.register_hook(lambda g: LOG.append(("out", float(g.sum()))))
        ((h * h).sum() + (d * 3.0).sum()).backward()
        out += [*_grads(x, d, net.fc.weight, net.fc.bias), d.is_leaf]
        opt.step()
        opt.clear_grad()
    out.append(tuple(LOG))
    return out


@pytest.mark.parametrize("mode", MODES)
def test_layer_returning_a_hooked_leaf_trains_as_eager(mode):
    got, want = _train(mode), _train("eager")
    assert [k for k, _ in want[-1]] == ["in", "out"] * 4
    # LOG: floats of sums, compared with the same tolerance
    np.testing.assert_allclose(
        [v for _, v in got[-1]], [v for _, v in want[-1]], rtol=1e-13
    )
    assert [k for k, _ in got[-1]] == [k for k, _ in want[-1]]
    _assert_same(got[:-1], want[:-1])


def hook_reads_traced(x):
    y = x * 2.0
    d = x.detach().clone()
    d.stop_gradient = False
    d.register_hook(lambda g: g * y)
    return y * d, d


def test_hook_on_a_returned_leaf_reading_traced_tensors_is_a_clear_error():
    f = paddle.jit.to_static(hook_reads_traced, full_graph=True)
    x = paddle.to_tensor([1.0, 2.0], "float64", stop_gradient=False)
    with pytest.raises(NotImplementedError, match="leaf Tensor the to_static"):
        f(x)


def creates_parameter(x):
    p = paddle.create_parameter([3], "float64")
    return x * p, p


def _parameter(mode):
    f = _convert(creates_parameter, mode)
    out = []
    for seed in (3, 4):
        paddle.seed(seed)
        x = paddle.to_tensor([1.0, 2.0, 3.0], "float64", stop_gradient=False)
        y, p = f(x)
        ((y * y).sum() + (p * 3.0).sum()).backward()
        out += [p.numpy(), *_grads(x, p), p.is_leaf]
    return out


def test_parameter_created_in_function_sot(sot_env, fresh_sot_cache):
    _assert_same(_parameter("sot"), _parameter("eager"))
    assert any("create_parameter" in r for r in graph_breaks())


def test_parameter_created_in_function_ast_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="creates the parameter"):
        _parameter("ast")


class _MultiMethodNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.first = paddle.nn.Linear(3, 2)
        self.second = paddle.nn.Linear(3, 2)
        self.scale = paddle.to_tensor([0.5])

    def forward(self, x):
        return self.first(x)

    def forward_no_param(self, x):
        return x * 2.0

    def forward_general(self, x):
        return self.first(x) + self.second(x) * self.scale


def test_jit_loaded_methods_run_as_saved(tmp_path):
    """A `jit.load`ed program names its parameters apart from the Tensors
    loaded for them (`linear_0.b_0_0` for `linear_0.b_0_1`): each converted
    method of the loaded model runs and gives the saved model's output, and
    the check for a parameter created in the function (above) does not
    take them for new ones (Paddle's test_jit_save_load.py,
    TestJitSaveLoadMultiMethods)."""
    net = paddle.jit.to_static(_MultiMethodNet(), full_graph=True)
    for name in ("forward_no_param", "forward_general"):
        method = paddle.jit.to_static(getattr(net, name), full_graph=True)
        setattr(net, name, method)
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((2, 3)))
    x = x.astype("float32")
    names = ("forward", "forward_no_param", "forward_general")
    want = {name: getattr(net, name)(x).numpy() for name in names}
    paddle.jit.save(net, str(tmp_path / "model"))
    loaded = paddle.jit.load(str(tmp_path / "model"))
    for name in names:
        np.testing.assert_array_equal(
            getattr(loaded, name)(x).numpy(), want[name]
        )


def test_created_leaf_in_static_program():
    """In a static program the leaf's gradient is asked for by name."""

    def build(x):
        w = paddle.to_tensor([1.0, 2.0, 3.0], "float64", stop_gradient=False)
        return (x * w * w).sum() + (w * 3.0).sum(), w

    a = np.array([0.5, -1.0, 2.0])
    x = paddle.to_tensor(a, stop_gradient=False)
    loss, w = build(x)
    loss.backward()
    want = [x.grad.numpy(), w.grad.numpy()]
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            xs = paddle.static.data("x", [3], "float64")
            xs.stop_gradient = False
            loss, w = build(xs)
            grads = paddle.static.gradients([loss], [xs, w])
        got = paddle.static.Executor().run(
            main, feed={"x": a}, fetch_list=grads
        )
    finally:
        paddle.disable_static()
    _assert_same(got, want)


def reads_its_flag(x):
    d = x.detach().clone()
    d.stop_gradient = False
    return x * (2.0 if d.stop_gradient else 3.0), d.stop_gradient


@pytest.mark.parametrize("mode", MODES)
def test_stop_gradient_read_after_it_is_set(mode):
    """SOT kept the flag a tensor had before ``t.stop_gradient = False``
    for later reads of it (stock: the other branch, silently)."""
    x = paddle.to_tensor([1.0, 2.0], "float64")
    y, flag = _convert(reads_its_flag, mode)(x)
    want_y, want_flag = reads_its_flag(x)
    np.testing.assert_array_equal(y.numpy(), want_y.numpy())
    assert flag is want_flag is False


def returns_its_input(x):
    return x * 2.0, x


@pytest.mark.parametrize("mode", MODES)
def test_returned_input_is_the_callers_tensor_and_takes_hooks(mode):
    """An input the function returns is the caller's Tensor, as in eager;
    the caller may hook it (stock AST returned a copy)."""

    def run(mode):
        x = paddle.to_tensor([1.0, 2.0], "float64", stop_gradient=False)
        y, same = _convert(returns_its_input, mode)(x)
        x.register_hook(lambda g: g * 10.0)
        (y.sum() + same.sum()).backward()
        return [x.grad.numpy(), same is x]

    _assert_same(run(mode), run("eager"))
