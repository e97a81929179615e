"""SOT (``to_static(full_graph=False)``) captures ``PyLayer.apply``.

``MyLayer.apply(...)`` is recorded in SOT's graph as one statement that
builds a ``pylayer`` op when the graph is compiled, instead of breaking the
graph and running the layer eagerly. Every test compiles every subgraph
(``MIN_GRAPH_SIZE=0``), checks with SOT's own bookkeeping that the function
was traced into one graph holding the ``pylayer`` op(s) with no graph break,
and compares the output and every input gradient with eager.
"""

import os

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    c_stdio_flush,
    compiled_programs,
    graph_breaks,
    random_inputs,
    run_eager,
    run_to_static,
)
from paddle.autograd import PyLayer
from paddle.jit.sot.utils.info_collector import InfoCollector
from test_pylayer_static import DetachedForward

PYLAYER_OP = '"pd_op.pylayer"'


pytestmark = pytest.mark.usefixtures("sot_env")


def check_one_graph(n_pylayers=1):
    assert graph_breaks() == []
    programs = compiled_programs()
    assert len(programs) == 1, "fn must be traced into exactly one graph"
    assert programs[0].count(PYLAYER_OP) >= n_pylayers, programs[0]


def make_run_sot(n_pylayers=1):
    def run_sot(fn, inputs):
        InfoCollector().clear()
        result = run_to_static(fn, inputs, full_graph=False)
        check_one_graph(n_pylayers)
        return result

    return run_sot


run_sot = make_run_sot()


def same_as_eager(fn, *shapes, n_pylayers=1, dtype="float64"):
    inputs = random_inputs(*shapes, dtype=dtype)
    assert_same_as_eager(fn, inputs, make_run_sot(n_pylayers))


# -- layers -----------------------------------------------------------------


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


class SaveInput(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return g * paddle.cos(x)


class SaveOutput(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensor()
        return g * y


class SaveSeveral(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        out = x * y + paddle.sin(x)
        ctx.save_for_backward(x, y, out)
        return out

    @staticmethod
    def backward(ctx, g):
        x, y, out = ctx.saved_tensor()
        return g * (y + paddle.cos(x)), g * x + 0 * out


class Scale(PyLayer):
    """Non-tensor arguments of every kind, several as keywords."""

    @staticmethod
    def forward(
        ctx,
        x,
        fn=None,
        func=paddle.tanh,
        k=2,
        alpha=1.5,
        flag=True,
        dims=(1, 1),
    ):
        ctx.save_for_backward(x)
        ctx.k, ctx.alpha, ctx.flag, ctx.dims = k, alpha, flag, dims
        y = func(x) * alpha * k
        if fn is not None:
            y = fn(y)
        if flag:
            y = y + 1
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return g * ctx.alpha * ctx.k * (1 - paddle.tanh(x) ** 2)


class KeywordX(PyLayer):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensor()
        return g * w, g * x


def _square(x):
    return x * x


def _dsquare(x, g):
    return 2 * x * g


class Helpers(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _square(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return _dsquare(x, g)


class IfInForward(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.mean() > 0:
            y = x * 2
        else:
            y = x * 3
        return y

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        if x.mean() > 0:
            return g * 2
        return g * 3


class IfInBackward(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        if g.sum() > 0:
            gx = 2 * x * g
        else:
            gx = 2 * x * g + 0.0
        return gx


class TwoInTwoOut(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x + paddle.sin(y)

    @staticmethod
    def backward(ctx, ga, gb):
        x, y = ctx.saved_tensor()
        return ga * y + gb, ga * x + gb * paddle.cos(y)


class NoneGrad(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        return x * 2 + y

    @staticmethod
    def backward(ctx, g):
        return g * 2, None


class NonDiff(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = paddle.tanh(x)
        m = paddle.ones_like(x) * 3
        ctx.mark_non_differentiable(m)
        ctx.save_for_backward(y)
        return y, m

    @staticmethod
    def backward(ctx, gy, gm):
        (y,) = ctx.saved_tensor()
        return gy * (1 - y * y)


class NoMaterialize(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        gx = ga * 2 if ga is not None else None
        if gb is not None:
            gx = gb * 3 if gx is None else gx + gb * 3
        return gx


class Inner(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return 2 * x * g


class Outer(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = Inner.apply(x)
        ctx.save_for_backward(x)
        return paddle.sin(y)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return g * paddle.cos(x * x) * 2 * x


class ListInput(PyLayer):
    @staticmethod
    def forward(ctx, xs, scale):
        ctx.save_for_backward(xs[0], xs[1])
        ctx.scale = scale
        return xs[0] * xs[1] * scale

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensor()
        # Like eager: one list of gradients for the list input.
        return [g * b * ctx.scale, g * a * ctx.scale]


class MulW(PyLayer):
    """``x * w`` with ``w`` broadcast over the rows of ``x``."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensor()
        return g * w, (g * x).sum(axis=0)


# -- tests ------------------------------------------------------------------


def test_seed_cus_tanh_keyword_function():
    def f(x):
        y = x * 2
        return cus_tanh.apply(y, func1=paddle.tanh) + 1

    same_as_eager(f, [3, 4])


def test_seed_cus_tanh_both_functions_positional():
    def f(x):
        return cus_tanh.apply(x, paddle.tanh, paddle.square)

    same_as_eager(f, [3, 4])


@pytest.mark.parametrize("layer", [SaveInput, SaveOutput])
def test_save_for_backward_input_or_output(layer):
    same_as_eager(lambda x: layer.apply(x * 1.5), [3, 4])


def test_save_for_backward_several_tensors():
    same_as_eager(lambda x, y: SaveSeveral.apply(x, y), [3, 4], [3, 4])


def test_non_tensor_keyword_args_fn_func():
    def f(x):
        return Scale.apply(
            x,
            fn=paddle.sin,
            func=paddle.tanh,
            k=3,
            alpha=0.5,
            flag=False,
            dims=(2, 3),
        )

    same_as_eager(f, [3, 4])


def test_non_tensor_positional_args_and_none():
    def f(x):
        return Scale.apply(x, None, paddle.tanh, 4, 2.0, True, (1,))

    same_as_eager(f, [3, 4])


def test_lambda_argument_defined_in_frame():
    def f(x):
        c = 3.0
        return Scale.apply(x, fn=lambda t: t * c)

    same_as_eager(f, [3, 4])


def test_tensor_keyword_named_x():
    same_as_eager(lambda a, b: KeywordX.apply(x=a, w=b), [3, 4], [3, 4])


def test_helper_functions_in_forward_and_backward():
    same_as_eager(lambda x: Helpers.apply(x) * 2, [3, 4])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tensor_dependent_if_in_forward_and_backward(sign):
    def f(x):
        return IfInForward.apply(x + sign * 10)

    same_as_eager(f, [3, 4])


def test_tensor_dependent_if_in_backward():
    same_as_eager(lambda x: IfInBackward.apply(x), [3, 4])


def test_multiple_inputs_and_outputs():
    def f(x, y):
        a, b = TwoInTwoOut.apply(x, y)
        return a * 2 + b

    same_as_eager(f, [3, 4], [3, 4])


def test_backward_returns_none():
    same_as_eager(lambda x, y: NoneGrad.apply(x, y), [3, 4], [3, 4])


def test_stop_gradient_input():
    def f(x, y):
        return NoneGrad.apply(x, y.detach())

    same_as_eager(f, [3, 4], [3, 4])


def test_stop_gradient_input_backward_must_return_none():
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, g

    def f(x, y):
        return Bad.apply(x, y.detach())

    x, y = random_inputs([3], [3])
    with pytest.raises(ValueError, match="should return None"):
        run_eager(f, [x, y])
    # raised when the backward runs, by the grad node of the SOT graph: an
    # OSError carrying the ValueError's message
    with pytest.raises(OSError, match="ValueError: .*should return None"):
        run_sot(f, [x, y])


def test_mark_non_differentiable():
    def f(x):
        y, m = NonDiff.apply(x)
        assert m.stop_gradient and not y.stop_gradient
        return y * m

    same_as_eager(f, [3, 4])


def test_set_materialize_grads_false_unused_output():
    def f(x):
        a, b = NoMaterialize.apply(x)
        return a + 1

    same_as_eager(f, [3, 4])


def test_set_materialize_grads_false_both_outputs():
    def f(x):
        a, b = NoMaterialize.apply(x)
        return a * b

    same_as_eager(f, [3, 4])


def test_nested_pylayers():
    same_as_eager(lambda x: Outer.apply(x), [3, 4])


def test_list_of_tensors_argument():
    same_as_eager(lambda x, y: ListInput.apply([x, y], 2.0), [3, 4], [3, 4])


def test_pylayer_in_for_loop():
    def f(x):
        for _ in range(3):
            x = SaveInput.apply(x)
        return x

    same_as_eager(f, [3, 4], n_pylayers=3)


def test_pylayer_in_if():
    def f(x):
        if x.shape[0] > 2:
            y = SaveInput.apply(x)
        else:
            y = SaveOutput.apply(x)
        return y

    same_as_eager(f, [3, 4])


def test_same_pylayer_applied_several_times():
    def f(x, y):
        a = SaveOutput.apply(x)
        b = SaveOutput.apply(y)
        return SaveOutput.apply(a * b)

    same_as_eager(f, [3, 4], [3, 4], n_pylayers=3)


def test_pylayer_with_register_hook_on_its_input():
    def f(x):
        t = x * 2
        t.register_hook(lambda g: g * 3)
        return SaveInput.apply(t)

    same_as_eager(f, [3, 4])


def test_guard_on_function_argument_recompiles():
    x = paddle.to_tensor(random_inputs([3])[0])
    sf = paddle.jit.to_static(
        lambda x, fn: cus_tanh.apply(x, paddle.tanh, fn), full_graph=False
    )
    for fn in (paddle.square, paddle.abs, paddle.square):
        xs = x.detach()
        xs.stop_gradient = False
        out = sf(xs, fn)
        out.sum().backward()
        xe = x.detach()
        xe.stop_gradient = False
        ref = cus_tanh.apply(xe, paddle.tanh, fn)
        ref.sum().backward()
        np.testing.assert_allclose(out.numpy(), ref.numpy())
        np.testing.assert_allclose(xs.grad.numpy(), xe.grad.numpy())
    assert graph_breaks() == []


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 4)
        self.w = self.create_parameter([4])

    def forward(self, x):
        h = self.linear(x)
        h = MulW.apply(h, w=self.w)
        return cus_tanh.apply(h, func1=paddle.tanh).mean()


def _train(net, static, steps=5):
    if static:
        net = paddle.jit.to_static(net, full_graph=False)
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    x = paddle.to_tensor(random_inputs([8, 4], dtype="float32")[0])
    losses = []
    for _ in range(steps):
        loss = net(x)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in net.parameters()]


def test_layer_training_with_sgd_matches_eager():
    paddle.seed(7)
    eager_net = Net()
    paddle.seed(7)
    sot_net = Net()
    want_losses, want_params = _train(eager_net, static=False)
    got_losses, got_params = _train(sot_net, static=True)
    assert graph_breaks() == []
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-5)
    for got, want in zip(got_params, want_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_jit_save_after_sot_training(tmp_path):
    paddle.seed(7)
    net = Net()
    _train(net, static=True, steps=2)
    x = paddle.to_tensor(random_inputs([8, 4], dtype="float32")[0])
    want = Net.forward(net, x)
    path = os.path.join(tmp_path, "net")
    paddle.jit.save(
        net, path, input_spec=[paddle.static.InputSpec([8, 4], "float32")]
    )
    loaded = paddle.jit.load(path)
    np.testing.assert_allclose(loaded(x).numpy(), want.numpy(), rtol=1e-5)


class TensorAttr(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x  # not allowed in a static graph
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_forward_that_cannot_be_static_breaks_and_runs_eagerly():
    def f(x):
        return TensorAttr.apply(x * 2) + 1

    inputs = random_inputs([3, 4])
    want_out, want_grads = run_eager(f, inputs)
    InfoCollector().clear()
    got_out, got_grads = run_to_static(f, inputs, full_graph=False)
    (reason,) = graph_breaks()
    assert "PyLayer.apply cannot be captured: TensorAttr" in reason
    assert "ctx.save_for_backward" in reason
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
    np.testing.assert_allclose(got_grads[0], want_grads[0], rtol=1e-12)


# -- the same Tensor in several places --------------------------------------


class SaveBoth(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b + a

    @staticmethod
    def backward(ctx, d):
        # not the true gradient, so that the two inputs' gradients differ
        a, b = ctx.saved_tensor()
        return d * (b + 1), d * a * 3


class SaveTwice(PyLayer):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a, a)
        return a * 3

    @staticmethod
    def backward(ctx, d):
        a, b = ctx.saved_tensor()
        return d * (a + 1) * b


def test_same_tensor_passed_twice():
    same_as_eager(lambda x: SaveBoth.apply(x, x), [3, 4])


def test_same_tensor_passed_twice_and_used_elsewhere():
    same_as_eager(lambda x: SaveBoth.apply(x, b=x) * x + x, [3, 4])


def test_same_tensor_passed_twice_with_other_inputs():
    same_as_eager(
        lambda x, y: SaveBoth.apply(x, x * y) + SaveBoth.apply(y, y),
        [3, 4],
        [3, 4],
        n_pylayers=2,
    )


def test_save_for_backward_same_tensor_twice():
    same_as_eager(lambda x: SaveTwice.apply(x * 2), [3, 4])


def test_saved_values_merged_by_cse():
    for _ in range(3):
        same_as_eager(lambda x: SaveBoth.apply(x * 2, x * 2), [3, 4])


class ReturnsInput(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return a

    @staticmethod
    def backward(ctx, d):
        return d * 2


class ReturnsNotInplaceInput(PyLayer):
    @staticmethod
    def forward(ctx, a):
        ctx.mark_not_inplace(a)
        return a

    @staticmethod
    def backward(ctx, d):
        return d * 2


def test_forward_returning_its_input_not_used_after():
    same_as_eager(lambda x: ReturnsInput.apply(x * 2) * 3, [3, 4])


def test_forward_returning_its_input_used_after_is_clear_error():
    # eager applies the layer in place (see test_pylayer_static.py)
    def f(x):
        y = x * 2
        return ReturnsInput.apply(y) + y

    with pytest.raises(NotImplementedError, match="returns its input Tensor"):
        run_to_static(f, random_inputs([3, 4]), full_graph=False)


def test_forward_returning_input_marked_not_inplace_runs_eagerly():
    # eager gives x no gradient; SOT breaks the graph and runs the layer
    # eagerly
    def f(x):
        return ReturnsNotInplaceInput.apply(x * 2) * 3

    inputs = random_inputs([3, 4])
    want_out, want_grads = run_eager(f, inputs)
    InfoCollector().clear()
    got_out, got_grads = run_to_static(f, inputs, full_graph=False)
    (reason,) = graph_breaks()
    assert "mark_not_inplace" in reason
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
    assert want_grads == [None] and got_grads == [None]


# -- Python side effects in forward / backward --------------------------------

_calls = []


class Printing(PyLayer):
    @staticmethod
    def forward(ctx, a):
        print("forward got", a)
        return a * 2

    @staticmethod
    def backward(ctx, d):
        print("backward got", d)
        return d * 3


class Recording(PyLayer):
    @staticmethod
    def forward(ctx, a):
        _calls.append("forward")
        return a * 2

    @staticmethod
    def backward(ctx, d):
        _calls.append("backward")
        return d * 3


class RecordingForward(Recording):
    @staticmethod
    def backward(ctx, d):
        return d * 3


@pytest.mark.parametrize("full_graph", [False, True])
def test_print_of_a_tensor_in_forward_and_backward_prints_at_every_call(
    capfd, full_graph
):
    # `print` becomes a print op for its Tensor arguments (Paddle's print op
    # format), which runs at every call, as eager prints at every call. Its
    # other arguments print when the program is traced.
    def fn(x):
        return Printing.apply(x) + 1

    f = paddle.jit.to_static(fn, full_graph=full_graph)
    c_stdio_flush()
    capfd.readouterr()
    for _ in range(3):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        f(x).sum().backward()
    c_stdio_flush()
    out = capfd.readouterr().out
    assert out.count("data: [1.000000 2.000000]") == 3  # forward's `a`
    assert out.count("data: [1.000000 1.000000]") == 3  # backward's `d`
    if not full_graph:
        assert graph_breaks() == []


def test_python_side_effects_of_forward_and_backward_under_sot_run_eagerly():
    # SOT breaks the graph at a PyLayer whose `forward` or `backward` stores
    # into a global: the layer runs eagerly, at every call, as in eager.
    def fn(x):
        return Recording.apply(x) - 1

    f = paddle.jit.to_static(fn)
    _calls.clear()
    for _ in range(3):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        f(x).sum().backward()
    assert _calls == ["forward", "backward"] * 3
    assert any(
        "Recording.forward` calls `_calls.append`" in r for r in graph_breaks()
    )


def test_python_side_effects_of_forward_under_ast_run_when_traced():
    # AST runs the Python code of `forward` once, when it traces the
    # program, as it runs any Python code of the converted function.
    def fn(x):
        return RecordingForward.apply(x) - 1

    f = paddle.jit.to_static(fn, full_graph=True)
    _calls.clear()
    for _ in range(3):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        f(x).sum().backward()
    assert _calls == ["forward"]


def test_python_side_effects_of_backward_under_ast_run_at_every_backward():
    # AST runs the Python code of `forward` when it traces the program, and
    # a `backward` with a Python effect at every backward (a run-time op),
    # as eager does, with eager's gradients.
    def fn(x):
        return Recording.apply(x) - 1

    f = paddle.jit.to_static(fn, full_graph=True)
    _calls.clear()
    for _ in range(3):
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        f(x).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    assert _calls == ["forward"] + ["backward"] * 3


def test_backward_returns_none_input_used_elsewhere():
    same_as_eager(lambda x, y: NoneGrad.apply(x, y) + y * 3, [3, 4], [3, 4])


def test_backward_returns_none_gives_none_like_eager_and_native_ops():
    # Eager gives `y` no gradient (None), with a PyLayer returning None for
    # it or with `y.detach()`; to_static gives None too (stock 3.3.1 gave
    # zeros to every input that it uses but that gets no gradient).
    def with_pylayer(x, y):
        return NoneGrad.apply(x, y)

    def native(x, y):
        return x * 2 + y.detach()

    inputs = random_inputs([3, 4], [3, 4])
    for fn, n_pylayers in ((with_pylayer, 1), (native, 0)):
        assert run_eager(fn, inputs)[1][1] is None
        assert_same_as_eager(fn, inputs, make_run_sot(n_pylayers))


def test_output_computed_from_a_detached_input_is_differentiable():
    # The static output was stop_gradient: `backward` never ran.
    same_as_eager(lambda x: DetachedForward.apply(x) * x, [2, 3])


class NoInputGrad(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return paddle.sin(a) * 2.0

    @staticmethod
    def backward(ctx, d):
        return None


def _no_input_grad(x):
    y = NoInputGrad.apply(x)
    return paddle.sin(y), y * y


def _run_no_input_grad(fn, hooks):
    calls = []
    x = paddle.to_tensor(random_inputs([2, 3])[0], stop_gradient=False)
    for _ in range(hooks):
        x.register_hook(lambda g: calls.append(float(g.abs().max())))
    a, b = fn(x)
    (a.sum() + b.sum()).backward()
    return [a.is_leaf, a.grad, b.is_leaf, b.grad, x.grad, calls]


@pytest.mark.parametrize("full_graph", [False, True], ids=["sot", "ast"])
@pytest.mark.parametrize("hooks", [0, 2])
def test_pylayer_giving_no_input_grad(full_graph, hooks):
    # Found by the fuzzer: a run with every input detached (none gets a
    # gradient) returned leaves, which kept the caller's gradient and, with
    # hooks on the input, failed in SOT ("Leaf Var ... can't use inplace").
    want = _run_no_input_grad(_no_input_grad, hooks)
    assert want == [False, None, False, None, None, []]
    static_fn = paddle.jit.to_static(_no_input_grad, full_graph=full_graph)
    for _ in range(2):
        assert _run_no_input_grad(static_fn, hooks) == want
    if not full_graph:
        assert graph_breaks() == []


# -- Python values read by forward / backward ----------------------------------

SHRINK = 0.5


class ShrinkGradient(PyLayer):
    """Gradient scaling by a module-level coefficient changed between
    steps (a schedule)."""

    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, d):
        return d * SHRINK


def test_pylayer_reading_a_changed_global_runs_eagerly_under_sot():
    """SOT does not simulate `forward` and `backward`, so it has no guard
    on what they read: a layer that reads a global (or a closure variable)
    breaks the graph and runs eagerly, with the value of each call (stock
    captured layers would keep the first call's value, silently)."""
    global SHRINK

    def fn(x):
        return (ShrinkGradient.apply(x * 1.0) * x).sum()

    f = paddle.jit.to_static(fn)
    try:
        for shrink in (0.5, -2.0, 0.25):
            SHRINK = shrink
            want_x = paddle.to_tensor([1.0, -2.0, 3.0], stop_gradient=False)
            fn(want_x).backward()
            x = paddle.to_tensor([1.0, -2.0, 3.0], stop_gradient=False)
            f(x).backward()
            np.testing.assert_array_equal(x.grad.numpy(), want_x.grad.numpy())
    finally:
        SHRINK = 0.5
    assert any(
        "ShrinkGradient.backward` reads the Python value `SHRINK`" in r
        for r in graph_breaks()
    )
