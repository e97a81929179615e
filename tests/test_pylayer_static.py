"""``paddle.autograd.PyLayer`` in static graphs matches eager.

Each test builds a function using a ``PyLayer`` and checks its output and the
gradient of every input under AST ``to_static(full_graph=True)`` and, where a
plain ``paddle.static`` program can express it, under ``static_pylayer``-style
static programs (``paddle.static.gradients`` and ``append_backward``).
"""

import os
import tempfile

import numpy as np
import paddle
import pytest
from conftest import (
    STATIC_RUNNERS,
    assert_same_as_eager,
    random_inputs,
    run_eager,
    run_to_static,
)
from paddle.autograd import PyLayer

AST = STATIC_RUNNERS["ast"]


def _cot(a):
    return np.random.default_rng(1234).standard_normal(a.shape)


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
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * paddle.cos(x)


class SaveSeveral(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        a = paddle.exp(x)
        ctx.save_for_backward(x, y, a)
        return a * y

    @staticmethod
    def backward(ctx, dz):
        x, y, a = ctx.saved_tensor()
        return dz * a * y, dz * a


class ScaleMix(PyLayer):
    """Non-Tensor arguments of every kind, with defaults."""

    @staticmethod
    def forward(ctx, x, k, alpha=1.5, flip=False, shift=None, pair=(1, 2)):
        ctx.k = k
        ctx.alpha = alpha
        ctx.flip = flip
        ctx.pair = pair
        ctx.has_shift = shift is not None
        out = x * k * alpha * pair[0] + pair[1]
        if flip:
            out = -out
        if shift is not None:
            out = out + shift
        return out

    @staticmethod
    def backward(ctx, dy):
        g = dy * ctx.k * ctx.alpha * ctx.pair[0]
        if ctx.flip:
            g = -g
        if ctx.has_shift:
            return g, dy
        return g


def _times_self(t):
    return t * t


def _double(t):
    return t * 2


def _cube_grad(x, dy):
    return 3 * x * x * dy


class Helpers(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _double(x * x * x) / 2

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return _cube_grad(x, dy)


class CondInside(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.mean() > 0:
            y = x * 2
        else:
            y = x * 3
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        if x.mean() > 0:
            g = dy * 2
        else:
            g = dy * 3
        return g


class TwoInTwoOut(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x + paddle.sin(y)

    @staticmethod
    def backward(ctx, da, db):
        x, y = ctx.saved_tensor()
        return da * y + db, da * x + db * paddle.cos(y)


class NoneGrad(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(y)
        return x * y

    @staticmethod
    def backward(ctx, dz):
        (y,) = ctx.saved_tensor()
        return dz * y, None


class NonDiff(PyLayer):
    @staticmethod
    def forward(ctx, x):
        a = paddle.tanh(x)
        b = x * 3
        ctx.mark_non_differentiable(b)
        return a, b

    @staticmethod
    def backward(ctx, da, db):
        # ``db`` is zeros: ``b`` is not differentiable
        return da * (1 - paddle.square(paddle.tanh(da * 0 + 1))) + db


class NotInplace(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.mark_not_inplace(x)
        # NOTE: eager gives no gradient at all when `forward` returns the
        # marked input itself; static graphs give `backward`'s gradient.
        return x * 1

    @staticmethod
    def backward(ctx, dy):
        return dy


class Inner(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return 2 * x * dy


class Outer(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = Inner.apply(x)
        ctx.save_for_backward(x)
        return paddle.exp(y)

    @staticmethod
    def backward(ctx, dz):
        (x,) = ctx.saved_tensor()
        return dz * paddle.exp(x * x) * 2 * x


class KwNames(PyLayer):
    @staticmethod
    def forward(ctx, x, fn=paddle.tanh, func=None):
        ctx.fn = fn
        y = fn(x)
        if func is not None:
            y = func(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        return dy * 2


class Differentiable(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return 3 * x * x * dy


# --- save_for_backward ------------------------------------------------------


def test_seed_example_kwarg_function(static_runner):
    def fn(x):
        return cus_tanh.apply(x, func1=paddle.tanh)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_save_outputs(static_runner):
    def fn(x):
        return cus_tanh.apply(x, paddle.tanh)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_save_inputs(static_runner):
    def fn(x):
        return SaveInput.apply(x)

    assert_same_as_eager(fn, random_inputs([3, 4]), static_runner)


def test_save_several(static_runner):
    def fn(x, y):
        return SaveSeveral.apply(x, y)

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


# --- non-Tensor args ----------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"alpha": 0.5},
        {"flip": True},
        {"pair": (3, -1)},
        {"alpha": 2.0, "flip": True, "pair": (2, 5)},
    ],
    ids=["defaults", "float", "bool", "tuple", "all"],
)
def test_non_tensor_args(static_runner, kwargs):
    def fn(x):
        return ScaleMix.apply(x, 3, **kwargs)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_override_default_function(static_runner):
    def fn(x):
        return cus_tanh.apply(x, paddle.tanh, func2=_times_self)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_tensor_keyword_arg_shift(static_runner):
    def fn(x, s):
        return ScaleMix.apply(x, 2, shift=s)

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


# --- helpers and control flow -------------------------------------------------


def test_user_helper_functions(static_runner):
    def fn(x):
        return Helpers.apply(x)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_tensor_control_flow_inside(sign):
    def fn(x):
        return CondInside.apply(x)

    (x,) = random_inputs([2, 3])
    x = np.abs(x) * sign
    assert_same_as_eager(fn, [x], AST)


# --- inputs / outputs ---------------------------------------------------------


def test_two_inputs_two_outputs(static_runner):
    def fn(x, y):
        a, b = TwoInTwoOut.apply(x, y)
        return a * 2 + b

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


def test_one_output_unused(static_runner):
    def fn(x, y):
        a, _ = TwoInTwoOut.apply(x, y)
        return a

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


def test_hook_on_output_without_gradient_is_not_called(static_runner):
    # Eager called it with None (TypeError in the hook); a hook on a tensor
    # that gets no gradient is not called.
    def fn(x, y):
        a, b = TwoInTwoOut.apply(x, y)
        b.register_hook(lambda g: g * 3.0)
        return a

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


class DetachedForward(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x.detach() * 2.0

    @staticmethod
    def backward(ctx, d):
        return d * 3.0


def test_output_computed_from_a_detached_input_is_differentiable(
    static_runner,
):
    # Eager: a PyLayer output is differentiable when an input is; its
    # gradient comes from `backward`, not from the forward ops. The static
    # output was stop_gradient and `backward` never ran.
    def fn(x):
        return DetachedForward.apply(x) * x

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_output_computed_from_a_non_differentiable_output_is_differentiable(
    static_runner,
):
    # Fuzzer s4-169: an output computed from a nested PyLayer's output
    # marked non-differentiable.
    class Outer(PyLayer):
        @staticmethod
        def forward(ctx, x):
            n = NonDiff.apply(x)[1]
            return paddle.exp(n)

        @staticmethod
        def backward(ctx, d):
            return d * 0.5

    def fn(x):
        return Outer.apply(x) + x

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


class OnlyReturnsNone(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, d):
        return None


def test_backward_whose_body_is_only_return_none(static_runner):
    # Fuzzer s4-2542: AST turned the body into nothing (IndentationError).
    def fn(x, y):
        return OnlyReturnsNone.apply(x) + y

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


def test_backward_returns_none(static_runner):
    # Eager leaves `y.grad` None; so do the static paths (to_static gave
    # zeros to an input without gradient in stock 3.3.1).
    def fn(x, y):
        return NoneGrad.apply(x, y)

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


def test_backward_returns_none_input_used_elsewhere(static_runner):
    def fn(x, y):
        return NoneGrad.apply(x, y) + y * 3

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


def test_stop_gradient_input(static_runner):
    def fn(x, y):
        c = y.detach() * 2
        return NoneGrad.apply(x, c) + y

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


# --- ctx flags ----------------------------------------------------------------


def test_mark_non_differentiable(static_runner):
    def fn(x):
        a, b = NonDiff.apply(x)
        assert b.stop_gradient
        return a + b

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_mark_not_inplace(static_runner):
    def fn(x):
        return NotInplace.apply(x) * 2

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


class NoMaterialize(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, da, db):
        g = da * 2
        if db is not None:
            g = g + db * 3
        return g


def test_set_materialize_grads_false(static_runner):
    def fn(x):
        return NoMaterialize.apply(x)[0]

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


# --- composition --------------------------------------------------------------


def test_nested_pylayer(static_runner):
    def fn(x):
        return Outer.apply(x)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_pylayer_in_caller_if(sign):
    def fn(x):
        if x.mean() > 0:
            y = SaveInput.apply(x)
        else:
            y = cus_tanh.apply(x, func1=paddle.tanh)
        return y

    (x,) = random_inputs([2, 3])
    assert_same_as_eager(fn, [np.abs(x) * sign], AST)


def test_pylayer_in_caller_for(static_runner):
    def fn(x):
        for _ in range(3):
            x = SaveInput.apply(x)
        return x

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_same_pylayer_applied_twice(static_runner):
    def fn(x, y):
        return SaveSeveral.apply(x, y) + SaveSeveral.apply(y, x * 2)

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"fn": paddle.sin},
        {"func": paddle.cos},
        {"fn": paddle.exp, "func": paddle.tanh},
    ],
    ids=["fn", "func", "both"],
)
def test_keyword_names(static_runner, kwargs):
    def f(x):
        return KwNames.apply(x, **kwargs)

    assert_same_as_eager(f, random_inputs([2, 3]), static_runner)


def test_keyword_named_x(static_runner):
    def fn(x):
        return SaveInput.apply(x=x)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


# --- double backward ----------------------------------------------------------


def test_double_backward_matches_eager(static_runner):
    """Eager differentiates `backward` (its ops are recorded under
    `create_graph=True`); static graphs differentiate its ops too."""

    def fn(x):
        y = Differentiable.apply(x)
        (g,) = paddle.grad(y.sum(), x, create_graph=True)
        return g * paddle.sin(x)

    def static_fn(x):  # `paddle.grad` is eager/to_static only
        y = Differentiable.apply(x)
        (g,) = paddle.static.gradients([y.sum()], [x])
        return g * paddle.sin(x)

    inputs = random_inputs([2, 3])
    (x,) = inputs
    want_out, want_grads = run_eager(fn, inputs)
    np.testing.assert_allclose(want_out, 3 * x * x * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(
        want_grads[0],
        (6 * x * np.sin(x) + 3 * x * x * np.cos(x)) * _cot(x),
        rtol=1e-12,
    )
    out, grads = static_runner(
        fn if static_runner is AST else static_fn, inputs
    )
    np.testing.assert_allclose(out, want_out, rtol=1e-12)
    np.testing.assert_allclose(grads[0], want_grads[0], rtol=1e-12)


# --- rule violations ----------------------------------------------------------


class TooManyGrads(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, dy):
        return dy * 2, dy


class GradForStopGradientInput(PyLayer):
    @staticmethod
    def forward(ctx, x, c):
        return x * c

    @staticmethod
    def backward(ctx, dz):
        return dz, dz


class WrongShape(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x.sum(axis=0)

    @staticmethod
    def backward(ctx, dy):
        return dy


class NonTensorGrad(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, dy):
        return 2.0


RULE_VIOLATIONS = pytest.mark.parametrize(
    "layer, match",
    [
        (TooManyGrads, "number of"),
        (WrongShape, "shape"),
        (GradForStopGradientInput, "should return None"),
        (NonTensorGrad, "Tensor or None"),
    ],
    ids=["count", "shape", "non_tensor", "stop_gradient_input"],
)


def _violating_fn(layer):
    if layer is GradForStopGradientInput:

        def fn(x):
            return layer.apply(x, x.detach() * 2)

    else:

        def fn(x):
            return layer.apply(x)

    return fn


@RULE_VIOLATIONS
def test_rule_violation_errors(static_runner, layer, match):
    fn = _violating_fn(layer)
    if layer is not WrongShape:  # eager does not check the shape
        with pytest.raises(ValueError, match=match):
            run_eager(fn, random_inputs([2, 3]))
    # to_static raises the stop_gradient rule's error when the backward
    # runs (an eval-mode call never runs it), from the call's grad node:
    # an OSError carrying the ValueError's message
    with pytest.raises((ValueError, TypeError, OSError), match=match):
        static_runner(fn, random_inputs([2, 3]))


@RULE_VIOLATIONS
def test_rule_violation_errors_in_sot(layer, match):
    with pytest.raises((ValueError, TypeError, OSError), match=match):
        run_to_static(_violating_fn(layer), random_inputs([2, 3]), False)


class NoneForMiddle(PyLayer):
    @staticmethod
    def forward(ctx, a, b, c):
        ctx.save_for_backward(c)
        return paddle.sin(paddle.sin(b)) * 1.5

    @staticmethod
    def backward(ctx, d):
        (c,) = ctx.saved_tensor()
        return d, None, d * c


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_backward_returns_none_for_an_input_also_used_in_an_if(full_graph):
    # Found by the fuzzer: the `if`'s backward yielded the None gradient of
    # `z` (`cf_yield(): incompatible function arguments`).
    def fn(y, z):
        v = z - z
        if y.mean() > 0:
            r = v * z * -1.5
        else:
            r = v / (paddle.square(v) + 1.0) * 2.0
        return paddle.tanh(NoneForMiddle.apply(r, z, v))

    # The `else` branch (a PyLayer output read in a taken `if` branch is
    # tests/test_no_need_buffer_values.py's
    # `pylayer_output_read_in_both_branches`).
    y, z = random_inputs([3], [1, 3])
    assert_same_as_eager(
        fn,
        [-np.abs(y), z],
        lambda f, a: run_to_static(f, a, full_graph=full_graph),
    )


# --- hooks --------------------------------------------------------------------


def test_register_hook_on_inputs_and_outputs(static_runner):
    def fn(x, y):
        x.register_hook(lambda g: g * 2)
        a, b = TwoInTwoOut.apply(x, y)
        a.register_hook(lambda g: g * 3)
        b.register_hook(lambda g: g + 1)
        return a + b

    # Eager ignores hooks registered on the outputs of a PyLayer (its grad
    # node never calls them); the reference hooks an identity of them.
    def reference(x, y):
        x.register_hook(lambda g: g * 2)
        a, b = TwoInTwoOut.apply(x, y)
        a, b = a * 1, b * 1
        a.register_hook(lambda g: g * 3)
        b.register_hook(lambda g: g + 1)
        return a + b

    inputs = random_inputs([2, 3], [2, 3])
    want_out, want_grads = run_eager(reference, inputs)
    got_out, got_grads = static_runner(fn, inputs)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
    for got, want in zip(got_grads, want_grads):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# --- end to end: the seed example ---------------------------------------------


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        y = self.linear(x)
        out = cus_tanh.apply(y, func1=paddle.tanh)
        return paddle.mean(out)


def _train(net, steps=10):
    paddle.seed(2024)
    sgd = paddle.optimizer.SGD(0.001, parameters=net.parameters())
    losses = []
    for _ in range(steps):
        out = net(paddle.randn([2, 4]))
        out.backward()
        sgd.step()
        sgd.clear_grad()
        losses.append(out.item())
    return losses


def _net():
    paddle.seed(7)
    return SimpleNet()


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_seed_training_matches_eager(full_graph):
    want = _train(_net())
    net = paddle.jit.to_static(_net(), full_graph=full_graph)
    got = _train(net)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_seed_save_load_inference():
    eager = _net()
    net = paddle.jit.to_static(_net(), full_graph=True)
    _train(eager)
    _train(net)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "simple_net")
        spec = paddle.static.InputSpec(shape=[-1, 4], dtype="float32", name="x")
        paddle.jit.save(net, path, input_spec=[spec])
        loaded = paddle.jit.load(path)
        rng = np.random.default_rng(0)
        feeds = {
            b: rng.standard_normal([b, 4]).astype("float32") for b in (1, 3, 7)
        }
        for a in feeds.values():
            want = eager(paddle.to_tensor(a)).numpy()
            np.testing.assert_allclose(
                loaded(paddle.to_tensor(a)).numpy(), want, rtol=1e-6
            )

        model = path + ".json"
        if not os.path.exists(model):
            model = path + ".pdmodel"
        config = paddle.inference.Config(model, path + ".pdiparams")
        config.disable_gpu()
        predictor = paddle.inference.create_predictor(config)
        for a in feeds.values():
            inp = predictor.get_input_handle(predictor.get_input_names()[0])
            inp.reshape(a.shape)
            inp.copy_from_cpu(a)
            predictor.run()
            out = predictor.get_output_handle(predictor.get_output_names()[0])
            want = eager(paddle.to_tensor(a)).numpy()
            np.testing.assert_allclose(out.copy_to_cpu(), want, rtol=1e-6)


class SameGradTwice(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, d):
        return d, d


def test_backward_returning_one_tensor_for_two_inputs_matches_eager(
    static_runner,
):
    # Found by the fuzzer: one input's gradient came out doubled.
    def f(x0, x1):
        return SameGradTwice.apply(x0, x1 * 2.0) * x1

    assert_same_as_eager(f, random_inputs([3], [3]), static_runner)


def test_backward_returning_one_tensor_for_two_inputs_matches_eager_in_sot():
    def f(x0, x1):
        return SameGradTwice.apply(x0, x1 * 2.0) * x1

    assert_same_as_eager(
        f, random_inputs([3], [3]), lambda fn, xs: run_to_static(fn, xs, False)
    )


class SameGradCopies(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a * b

    @staticmethod
    def backward(ctx, d):
        return d, d * 1.0


def test_one_tensor_for_two_inputs_accumulated_elsewhere_is_not_aliased(
    static_runner,
):
    # Found by the fuzzer. `v` gets its PyLayer gradient plus the gradient
    # of its other use. Eager (stock 3.3.1) adds the second into the Tensor
    # `backward` returned, in place, which is also x's gradient: x.grad comes
    # out wrong in eager. The static paths give each input its own copy:
    # they equal eager with a `backward` that returns two Tensors.
    def f_same(x):
        v = paddle.square(x)
        return SameGradTwice.apply(x, v) + paddle.sin(v)

    def f_copies(x):
        v = paddle.square(x)
        return SameGradCopies.apply(x, v) + paddle.sin(v)

    inputs = random_inputs([4])
    want_out, (want_grad,) = run_eager(f_copies, inputs)
    _, (eager_same_grad,) = run_eager(f_same, inputs)
    assert not np.allclose(eager_same_grad, want_grad)  # the eager bug
    got_out, (got_grad,) = static_runner(f_same, inputs)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-12)


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


class SumAndNone(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a + b, a * b

    @staticmethod
    def backward(ctx, da, db):
        return da + db * 3, None


class SaveTwice(PyLayer):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a, a)
        return a * 3

    @staticmethod
    def backward(ctx, d):
        a, b = ctx.saved_tensor()
        return d * (a + 1) * b


def test_same_tensor_passed_twice(static_runner):
    # x.grad is the sum of the gradients `backward` returns for both places
    def fn(x):
        return SaveBoth.apply(x, x)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_same_tensor_passed_twice_and_used_elsewhere(static_runner):
    def fn(x):
        return SaveBoth.apply(x, x) * x + x

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_same_tensor_passed_twice_with_other_inputs(static_runner):
    def fn(x, y):
        return SaveBoth.apply(x, x * y) + SaveBoth.apply(y, b=y)

    assert_same_as_eager(fn, random_inputs([2, 3], [2, 3]), static_runner)


def test_same_tensor_passed_twice_one_grad_none(static_runner):
    def fn(x):
        s, p = SumAndNone.apply(x, x)
        return s + p

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_save_for_backward_same_tensor_twice(static_runner):
    # The two popped copies shared a buffer, and `a + 1` was computed into
    # it in place before `b` was read (stock 3.3.1 AST too).
    def fn(x):
        return SaveTwice.apply(x * 2)

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def _tuple_push_operands(program):
    def blocks(block):
        yield block
        for op in block.ops:
            for sub in op.blocks():
                yield from blocks(sub)

    for block in blocks(program.global_block()):
        for op in block.ops:
            if op.name() == "cf.tuple_push":
                yield op.operands_source()[1:]


def test_saved_values_merged_by_cse_get_their_own_copy():
    # CSE merges the two `x * 2` after the backward is built: the `pylayer`
    # op then saved one Value twice, and the result depended on the order
    # the executor ran the backward ops in.
    def fn(x):
        return SaveBoth.apply(x * 2, x * 2)

    inputs = random_inputs([2, 3])
    for _ in range(3):
        assert_same_as_eager(fn, inputs, AST)
    static_fn = paddle.jit.to_static(fn, full_graph=True)
    x = paddle.to_tensor(inputs[0], stop_gradient=False)
    static_fn(x)
    _, layer = static_fn.get_concrete_program(x)
    # (the backward, inlined, reads the forward's values: nothing is pushed
    # unless a backward pops it)
    pushed = list(_tuple_push_operands(layer.train_program.forward_program))
    for values in pushed:
        for i, v in enumerate(values):
            assert not any(v.is_same(u) for u in values[:i])


class ReturnsInput(PyLayer):
    @staticmethod
    def forward(ctx, a):
        return a

    @staticmethod
    def backward(ctx, d):
        return d * 2


class ReturnsFirst(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a

    @staticmethod
    def backward(ctx, d):
        return d * 2, d * 3


class ReturnsNotInplaceInput(PyLayer):
    @staticmethod
    def forward(ctx, a):
        ctx.mark_not_inplace(a)
        return a

    @staticmethod
    def backward(ctx, d):
        return d * 2


def test_forward_returning_its_input_not_used_after(static_runner):
    def fn(x):
        return ReturnsInput.apply(x * 2) * 3

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


def test_forward_returning_stop_gradient_input(static_runner):
    def fn(x):
        c = paddle.ones([2, 3], dtype=x.dtype)
        return ReturnsInput.apply(c) * x + c

    assert_same_as_eager(fn, random_inputs([2, 3]), static_runner)


@pytest.mark.parametrize("twice", [False, True])
def test_forward_returning_its_input_used_after_is_clear_error(
    static_runner, twice
):
    # Eager applies the layer in place: `y` *is* the output afterwards, and
    # both terms go through `backward`. Static graphs gave the direct use of
    # `y` its gradient past the layer (a wrong x.grad).
    def fn(x):
        y = x * 2
        out = ReturnsFirst.apply(y, y) if twice else ReturnsInput.apply(y)
        return out + y

    if not twice:
        inputs = random_inputs([2, 3])
        want_out, want_grads = run_eager(fn, inputs)
        np.testing.assert_allclose(
            want_grads[0], 8 * _cot(inputs[0]), rtol=1e-12
        )
    with pytest.raises(NotImplementedError, match="returns its input Tensor"):
        static_runner(fn, random_inputs([2, 3]))


def test_forward_returning_input_marked_not_inplace_is_clear_error(
    static_runner,
):
    # eager gives x no gradient at all here
    def fn(x):
        return ReturnsNotInplaceInput.apply(x * 2)

    assert run_eager(fn, random_inputs([2, 3]))[1] == [None]
    with pytest.raises(NotImplementedError, match="mark_not_inplace"):
        static_runner(fn, random_inputs([2, 3]))


class MatmulSaving(PyLayer):
    @staticmethod
    def forward(ctx, x, *params):
        ctx.save_for_backward(x, *params)
        return paddle.matmul(x, params[0]) + params[1]

    @staticmethod
    def backward(ctx, dy):
        x, w, b = ctx.saved_tensor()
        with paddle.enable_grad():
            inputs = [x.detach(), *(p.detach() for p in (w, b))]
            for t in inputs:
                t.stop_gradient = False
            y = paddle.matmul(inputs[0], inputs[1]) + inputs[2]
            return tuple(paddle.grad([y], inputs, [dy]))


GLOBAL_LINEAR = paddle.nn.Linear(3, 3)
GLOBAL_PARAMS = [GLOBAL_LINEAR.weight, GLOBAL_LINEAR.bias]


def apply_to_global_params(x):
    for _ in range(2):
        x = MatmulSaving.apply(x, *GLOBAL_PARAMS)
    return x


@pytest.mark.parametrize("full_graph", [True, False])
def test_parameters_of_a_global_list_passed_starred(full_graph):
    """``apply(x, *params)`` with a module-level list of parameters: AST
    does not load its items as names (stock: AttributeError on a tuple in
    `backward`; before: a segfault when `backward` detached them)."""

    def run(f):
        rng = np.random.default_rng(0)
        x = paddle.to_tensor(
            rng.standard_normal((2, 3)).astype("float32"), stop_gradient=False
        )
        y = f(x)
        y.sum().backward()
        result = [y.numpy(), x.grad.numpy()] + [
            p.grad.numpy() for p in GLOBAL_PARAMS
        ]
        for p in GLOBAL_PARAMS:
            p.clear_gradient()
        return result

    want = run(apply_to_global_params)
    got = run(
        paddle.jit.to_static(apply_to_global_params, full_graph=full_graph)
    )
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class _TransposedGrad(PyLayer):
    """The gradient of a square matrix computed from the transpose of its
    output's: static shape [3, -1] for an input of shape [-1, 3]."""

    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, d):
        return paddle.transpose(d, [1, 0]) * 2.0


def _transposed_grad_loss(x, w):
    return (_TransposedGrad.apply(x) * w).sum()


@pytest.mark.parametrize("mode", ["ast", "static"])
def test_gradient_shape_known_only_at_run_time(mode):
    """A dynamic dimension (an ``InputSpec`` with -1, a static ``data``):
    eager runs it (both [3, 3]); stock failed building the backward
    (``shape of inp_grad ... should be the same``)."""
    xa = np.arange(9, dtype="float64").reshape(3, 3)
    wa = xa[::-1] / 10.0
    x = paddle.to_tensor(xa, stop_gradient=False)
    _transposed_grad_loss(x, paddle.to_tensor(wa)).backward()
    want = x.grad.numpy()
    spec = [paddle.static.InputSpec([-1, 3], "float64")] * 2
    if mode == "ast":
        fn = paddle.jit.to_static(
            _transposed_grad_loss, input_spec=spec, full_graph=True
        )
        x = paddle.to_tensor(xa, stop_gradient=False)
        fn(x, paddle.to_tensor(wa)).backward()
        got = x.grad.numpy()
    else:
        paddle.enable_static()
        try:
            main = paddle.static.Program()
            with paddle.static.program_guard(main):
                xs = paddle.static.data("x", [-1, 3], "float64")
                ws = paddle.static.data("w", [-1, 3], "float64")
                xs.stop_gradient = False
                loss = _transposed_grad_loss(xs, ws)
                (g,) = paddle.static.gradients([loss], [xs])
            (got,) = paddle.static.Executor().run(
                main, feed={"x": xa, "w": wa}, fetch_list=[g]
            )
        finally:
            paddle.disable_static()
    np.testing.assert_allclose(got, want, rtol=1e-12)
