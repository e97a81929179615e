"""SOT (``to_static(full_graph=False)``) captures ``Tensor.register_hook``.

``register_hook`` and ``handle.remove()`` are recorded in SOT's graph instead
of breaking it (stock SOT breaks the graph there), so the compiled program
holds the hook and the hook sees the total gradient of the tensor, as in
eager. Every test compiles every subgraph (``MIN_GRAPH_SIZE=0``), checks
with SOT's own bookkeeping that the function was traced into one graph with
no graph break, and compares the output and input gradients with eager.
"""

import functools
import sys

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    compiled_programs,
    compiles,
    graph_breaks,
    random_inputs,
    run_eager,
    run_to_static,
)
from paddle.jit.sot.utils.info_collector import InfoCollector

pytestmark = pytest.mark.usefixtures("sot_env")


def run_sot(fn, inputs):
    """``run_to_static`` in SOT mode, checking ``fn`` was traced in one graph
    without a graph break."""
    InfoCollector().clear()
    result = run_to_static(fn, inputs, full_graph=False)
    assert graph_breaks() == []
    programs = compiled_programs()
    assert len(programs) == 1, "fn must be traced into exactly one graph"
    return result


run_sot_input_hook = run_sot


def double(g):
    return 2 * g


def times5(g):
    return g * 5


def test_seed_example_hook_registered_after_use_doubles_grad():
    def f(x):
        t = 3 * x
        x.register_hook(lambda g: 2 * g)
        return t

    x = paddle.to_tensor([2.0], "float64", stop_gradient=False)
    paddle.jit.to_static(f)(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0])
    assert graph_breaks() == []
    assert_same_as_eager(f, [np.array([2.0])], run_sot_input_hook)


def test_hook_on_leaf_input_registered_before_use():
    def f(x, y):
        x.register_hook(lambda g: g * 3)
        return paddle.tanh(x) * y + x

    assert_same_as_eager(f, random_inputs([3, 4], [3, 4]), run_sot_input_hook)


def test_hook_on_intermediate_used_before_and_after_registration():
    # Stock SOT broke the graph at register_hook and registered the hook
    # eagerly on the output of the compiled subgraph: the hook missed the
    # gradient of ``u = t * x`` computed inside that subgraph.
    def f(x):
        t = paddle.tanh(x)
        u = t * x
        t.register_hook(times5)
        return u + t

    inputs = random_inputs([2, 3])
    # Gradients first (without the bookkeeping checks of ``run_sot``), so
    # that stock SOT fails on the wrong gradient rather than on the break.
    assert_same_as_eager(f, inputs, lambda fn, xs: run_to_static(fn, xs, False))
    assert_same_as_eager(f, inputs, run_sot)


def test_hook_on_intermediate_between_two_uses_sees_total_grad():
    seen = []

    def f(x, y):
        t = paddle.sin(x) * y
        u = t * t
        t.register_hook(lambda g: seen.append(g) or g.exp())
        return u + paddle.matmul(t, y, transpose_y=True).sum(-1, keepdim=True)

    assert_same_as_eager(f, random_inputs([3, 4], [3, 4]), run_sot)
    # once in eager, once when the compiled backward ran (run_time_hooks):
    # the run-time gradient, eager's
    assert len(seen) == 2
    assert isinstance(seen[1], paddle.Tensor)
    np.testing.assert_allclose(seen[1].numpy(), seen[0].numpy(), rtol=1e-12)


def test_hook_on_returned_output_sees_outer_grad():
    def f(x):
        t = paddle.exp(x)
        t.register_hook(lambda g: g * g)
        return t

    assert_same_as_eager(f, random_inputs([2, 5]), run_sot)


def test_hook_on_output_that_is_also_used_inside():
    def f(x):
        t = paddle.exp(x)
        t.register_hook(lambda g: g + 1)
        return t + paddle.sin(t)

    assert_same_as_eager(f, random_inputs([2, 5]), run_sot)


def test_hooks_run_in_registration_order():
    def f(x):
        t = x * x
        t.register_hook(lambda g: g * 2)
        t.register_hook(lambda g: g + 1)
        return t.sum(-1)

    def f_reversed(x):
        t = x * x
        t.register_hook(lambda g: g + 1)
        t.register_hook(lambda g: g * 2)
        return t.sum(-1)

    inputs = random_inputs([3, 4])
    assert_same_as_eager(f, inputs, run_sot)
    assert_same_as_eager(f_reversed, inputs, run_sot)
    assert not np.allclose(
        run_eager(f, inputs)[1], run_eager(f_reversed, inputs)[1]
    )


def test_hook_returning_none_leaves_grad_unchanged():
    calls = []

    def f(x):
        t = paddle.tanh(x)
        t.register_hook(lambda g: calls.append(1))
        t.register_hook(lambda g: g * 5)
        return t * x

    assert_same_as_eager(f, random_inputs([4]), run_sot)
    assert len(calls) == 2


def test_removed_hook_is_not_applied():
    def f(x):
        t = paddle.tanh(x)
        handle = t.register_hook(lambda g: g * 100)
        t.register_hook(lambda g: g - 1)
        u = t * x
        assert handle.remove() is True
        return u

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def test_hook_removed_right_away_is_not_applied():
    def f(x):
        handle = x.register_hook(double)
        handle.remove()
        return x * x

    assert_same_as_eager(f, random_inputs([4]), run_sot_input_hook)


def test_several_hooked_values_in_one_graph():
    def f(x, y):
        a = x * y
        b = paddle.exp(a)
        x.register_hook(lambda g: g * 0.5)
        a.register_hook(lambda g: g + 2)
        b.register_hook(lambda g: -g)
        y.register_hook(lambda g: g * g)
        return b + a * x

    assert_same_as_eager(f, random_inputs([2, 3], [2, 3]), run_sot)


def test_hook_closure_over_an_argument():
    def f(x, scale):
        t = paddle.tanh(x)
        t.register_hook(lambda g: g * scale)
        return t * x

    inputs = random_inputs([4])
    assert_same_as_eager(lambda x: f(x, 3.0), inputs, run_sot)


def test_hook_capturing_a_tensor_is_captured_and_matches_eager():
    # The hook's ops read the tensors in the backward program.
    def f(x, w):
        m = paddle.exp(w)
        t = paddle.tanh(x)
        u = t * x
        t.register_hook(lambda g: g * w + m)
        return u + t * w

    assert_same_as_eager(
        f,
        random_inputs([4], [4]),
        lambda fn, inputs: run_to_static(fn, inputs, False),
    )
    assert graph_breaks() == []


def test_hook_on_input_capturing_a_computed_tensor_breaks_the_graph():
    # A hook on an input runs eagerly, where ``m`` does not exist.
    def f(x):
        m = paddle.exp(x)
        x.register_hook(lambda g: g * m)
        return paddle.tanh(x) * m

    assert_same_as_eager(
        f,
        random_inputs([4]),
        lambda fn, inputs: run_to_static(fn, inputs, False),
    )
    assert len(graph_breaks()) == 1
    assert "reads a tensor computed in the graph" in graph_breaks()[0]


def test_hook_on_full_slice_of_input_capturing_a_computed_tensor_matches_eager():
    # Fuzzer s7-1321: ``x[0:2]`` is ``x`` itself once the program is built,
    # so the hook is one on an input, which cannot read ``v``: the frame
    # runs eagerly (it raised an InnerError).
    def f(x):
        s = x[0:2]
        v = x * s
        s.register_hook(lambda g: g * v)
        return v + s

    assert_same_as_eager(
        f,
        random_inputs([2, 1]),
        lambda fn, inputs: run_to_static(fn, inputs, False),
    )


def test_hook_defined_with_def_inside_the_function():
    def f(x):
        offset = 0.5

        def hook(g):
            return g + offset

        t = x * x
        t.register_hook(hook)
        return t

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def test_module_level_function_hook():
    def f(x):
        t = 3 * x
        t.register_hook(double)
        return t * x

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def scale_grad(g, factor):
    return g * factor


def test_functools_partial_hook():
    def f(x):
        t = x * x
        t.register_hook(functools.partial(scale_grad, factor=3.0))
        return t

    assert_same_as_eager(f, random_inputs([4]), run_sot)


class Scaler:
    def __init__(self, factor):
        self.factor = factor

    def hook(self, g):
        return g * self.factor


def test_bound_method_hook():
    scaler = Scaler(4.0)

    def f(x):
        t = paddle.sin(x)
        t.register_hook(scaler.hook)
        return t * x

    assert_same_as_eager(f, random_inputs([4]), run_sot)


class ActivationHookMLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 3)
        self.factor = 0.5

    def scale(self, g):
        return g * self.factor

    def forward(self, x):
        h = paddle.tanh(self.fc1(x))
        h.register_hook(lambda g: g + 0.1)
        h.register_hook(self.scale)
        return self.fc2(h)


def test_layer_with_activation_hook_trains_like_eager():
    paddle.seed(7)
    eager = ActivationHookMLP()
    static = ActivationHookMLP()
    static.set_state_dict(eager.state_dict())
    static = paddle.jit.to_static(static, full_graph=False)
    inputs = random_inputs([5, 4], [5, 4], [5, 4], dtype="float32")

    def train(layer):
        opt = paddle.optimizer.SGD(0.1, parameters=layer.parameters())
        trace = []
        for a in inputs:
            loss = layer(paddle.to_tensor(a)).square().mean()
            loss.backward()
            trace += [float(loss)] + [
                p.grad.numpy() for p in layer.parameters()
            ]
            opt.step()
            opt.clear_grad()
        return trace + [p.numpy() for p in layer.parameters()]

    InfoCollector().clear()
    got = train(static)
    assert graph_breaks() == []
    assert compiles() == 1
    for g, w in zip(got, train(eager)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_new_lambda_each_call_reuses_the_compiled_graph():
    def f(x):
        t = x * x
        t.register_hook(lambda g: g * 3)
        return t

    static_f = paddle.jit.to_static(f, full_graph=False)
    inputs = random_inputs([4])
    want = run_eager(f, inputs)
    for _ in range(3):
        got = run_eager(static_f, inputs)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-12)
    assert compiles() == 1
    assert graph_breaks() == []


def test_hook_capturing_a_new_value_recompiles():
    def f(x, scale):
        t = x * x
        t.register_hook(lambda g: g * scale)
        return t

    static_f = paddle.jit.to_static(f, full_graph=False)
    inputs = random_inputs([4])
    for scale in (2.0, 3.0, 2.0):
        want = run_eager(functools.partial(f, scale=scale), inputs)
        got = run_eager(functools.partial(static_f, scale=scale), inputs)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-12)
    assert compiles() == 2  # one per value of scale
    assert graph_breaks() == []


def test_different_hook_from_outside_recompiles():
    def f(x, hook):
        t = x * x
        t.register_hook(hook)
        return t

    static_f = paddle.jit.to_static(f, full_graph=False)
    inputs = random_inputs([4])
    for hook in (double, times5, double):
        want = run_eager(functools.partial(f, hook=hook), inputs)
        got = run_eager(functools.partial(static_f, hook=hook), inputs)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-12)
    assert compiles() == 2  # one per hook
    assert graph_breaks() == []


def test_register_hook_on_stop_gradient_tensor_raises_like_eager():
    def f(x):
        c = paddle.ones([3])
        c.register_hook(double)
        return x * c

    with pytest.raises(RuntimeError, match="stop gradient"):
        run_to_static(f, random_inputs([3]), full_graph=False)


class ParamHookLinear(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 3)
        self.fc2 = paddle.nn.Linear(3, 3)

    def forward(self, x):
        self.fc.weight.register_hook(double)
        h = paddle.tanh(self.fc(x))
        return self.fc2(h) + paddle.matmul(x, self.fc.weight)


def test_hook_on_parameter_in_forward_is_captured_and_matches_eager():
    # Eager adds one more hook to the parameter at every call (the gradient
    # doubles, then quadruples, ...); the captured hook is registered on the
    # eager parameter at each run, and sees the sublayer's uses too.
    paddle.seed(3)
    eager = ParamHookLinear()
    static = ParamHookLinear()
    static.set_state_dict(eager.state_dict())
    static = paddle.jit.to_static(static, full_graph=False)
    x = paddle.to_tensor(random_inputs([2, 3], dtype="float32")[0])
    for _ in range(3):
        for layer in (eager, static):
            layer.clear_gradients()
            layer(x).sum().backward()
        for p, q in zip(static.parameters(), eager.parameters()):
            np.testing.assert_allclose(
                p.grad.numpy(), q.grad.numpy(), rtol=1e-6
            )
    assert graph_breaks() == []
    assert compiles() == 1


# Closure variables are read late, like eager: an eager hook reads its
# closure cells when it runs (at the backward), so it sees a variable rebound
# after ``register_hook``. SOT reads them when the graph is compiled, at the
# end of the traced frame.


def test_hook_sees_closure_variable_rebound_after_registration():
    def f(x):
        t = x * 3
        s = 2.0
        t.register_hook(lambda g: g * s)
        s = 10.0  # the eager hook sees 10.0
        return t * t

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def test_hook_registered_before_its_closure_variable_is_bound():
    def f(x):
        t = x * 3
        t.register_hook(lambda g: g * s)
        s = 4.0
        return t * t

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def test_hooks_of_a_loop_see_the_last_loop_variable():
    # A for loop whose body makes a closure is not simulated by SOT (the
    # frame falls back to dygraph); the gradient is eager's either way.
    def f(x):
        ts = [x * 1, x * 2, x * 3]
        for i in range(3):
            ts[i].register_hook(lambda g: g * i)  # noqa: B023 (late binding)
        return ts[0] + ts[1] * ts[2]

    inputs = random_inputs([4])
    assert_same_as_eager(f, inputs, lambda fn, xs: run_to_static(fn, xs, False))
    # All hooks multiply by 2, so this differs from hooks using 0, 1 and 2.
    assert not np.allclose(run_eager(f, inputs)[1][0], 0)


def test_hooks_made_in_a_comprehension_see_the_last_variable():
    def f(x):
        ts = [x * 1, x * 2, x * 3]
        [ts[i].register_hook(lambda g: g * i) for i in range(3)]  # noqa: B023
        return ts[0] + ts[1] * ts[2]

    if sys.version_info < (3, 12):
        assert_same_as_eager(f, random_inputs([4]), run_sot)
        return
    # Python 3.12 inlines comprehensions (PEP 709); stock 3.3.1 SOT then runs
    # the whole function eagerly, without a graph break reason.
    InfoCollector().clear()
    assert_same_as_eager(
        f, random_inputs([4]), lambda fn, xs: run_to_static(fn, xs, False)
    )
    assert graph_breaks() == []
    assert compiled_programs() == []


def hook_scale_set_in_branch(x, flag):
    t = x * 3
    s = 2.0
    t.register_hook(lambda g: g * s)
    if flag:
        s = 5.0
    return t * t


def test_closure_variable_rebound_in_a_branch_on_a_python_bool():
    static_f = paddle.jit.to_static(hook_scale_set_in_branch, full_graph=False)
    inputs = random_inputs([4])
    for flag in (True, False, True):
        want = run_eager(
            functools.partial(hook_scale_set_in_branch, flag=flag), inputs
        )
        got = run_eager(functools.partial(static_f, flag=flag), inputs)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-12)
    assert compiles() == 2  # one per final value of s
    assert graph_breaks() == []


def test_final_closure_value_is_guarded():
    def f(x, scale):
        t = x * x
        s = 1.0
        t.register_hook(lambda g: g * s)
        s = scale * 2
        return t

    static_f = paddle.jit.to_static(f, full_graph=False)
    inputs = random_inputs([4])
    for scale in (2.0, 3.0, 2.0, 3.0):
        want = run_eager(functools.partial(f, scale=scale), inputs)
        got = run_eager(functools.partial(static_f, scale=scale), inputs)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-12)
    assert compiles() == 2  # one per final value of s
    assert graph_breaks() == []


def test_nested_function_in_the_hook_sees_its_rebound_variable():
    def f(x):
        s = 2.0

        def scale(g):
            return g * s

        t = x * 3
        t.register_hook(lambda g: scale(g) + 1)
        s = 7.0
        return t * t

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def test_hook_made_by_a_nested_function_sees_the_rebound_variable():
    def f(x):
        s = 2.0

        def make():
            return lambda g: g * s

        t = x * 3
        t.register_hook(make())
        s = 7.0
        return t * t

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def scale_rebound_after_hook(t):
    s = 1.5
    t.register_hook(lambda g: g * s)
    s = 2.5
    return t * t


def test_hook_in_an_inlined_call_sees_the_rebound_variable():
    def f(x):
        return scale_rebound_after_hook(x * 3) + x

    assert_same_as_eager(f, random_inputs([4]), run_sot)


def test_hook_in_an_inlined_call_before_a_graph_break():
    # The inlined call returned before the graph is compiled at the break:
    # its cells hold their final values.
    def f(x):
        u = scale_rebound_after_hook(x * 3)
        print("graph break")
        return u * x

    inputs = random_inputs([4])
    assert_same_as_eager(f, inputs, lambda fn, xs: run_to_static(fn, xs, False))
    assert len(graph_breaks()) == 1
    programs = compiled_programs()
    assert len(programs) == 2


def test_closure_variable_rebound_to_a_tensor_falls_back_like_eager():
    # Rebound to a tensor computed after register_hook, which the statement
    # cannot read, and too late to break the graph: the frame runs eagerly.
    def f(x):
        t = x * 3
        s = 2.0
        t.register_hook(lambda g: g * s)
        s = x * 2
        return t * t

    assert_same_as_eager(
        f,
        random_inputs([4]),
        lambda fn, inputs: run_to_static(fn, inputs, False),
    )
    assert compiled_programs() == []


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_input_sees_gradient_of_uses_outside_the_function(full_graph):
    def f(x):
        x.register_hook(lambda g: g * 10)
        return paddle.tanh(x)

    static_f = paddle.jit.to_static(f, full_graph=full_graph)
    (a,) = random_inputs([3])
    grads = []
    for fn in (f, static_f):
        x = paddle.to_tensor(a, stop_gradient=False)
        (fn(x).sum() + (x * x).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def _hook_before_tensor_if(on_input):
    def f(x0, x1):
        v = paddle.sin(x1)
        hooked = x1 if on_input else v
        hooked.register_hook(lambda g: paddle.sin(g))
        if x1.mean() > 0:
            r = x0 + v - x1
        else:
            r = x0 * 2.0
        return r * r

    return f


@pytest.mark.parametrize(
    "on_input", [True, False], ids=["input", "intermediate"]
)
def test_nonlinear_hook_before_a_tensor_if_sees_the_total_gradient(on_input):
    # Found by the fuzzer: the `if` splits the SOT graph, and the hook was
    # applied to each part of the gradient instead of their sum.
    f = _hook_before_tensor_if(on_input)
    for sign in (1.0, -1.0):
        inputs = [np.array([0.3, -1.2]), sign * np.array([0.7, 1.9])]
        assert_same_as_eager(
            f, inputs, lambda fn, xs: run_to_static(fn, xs, full_graph=False)
        )


def test_hook_on_unused_output_of_split_runs_on_zeros_like_eager():
    def f(x):
        a, b = paddle.split(x * 2.0, [2, 1], axis=0)
        b.register_hook(lambda g: g + 1.0)
        return a * 3.0

    assert_same_as_eager(f, random_inputs([3, 2]), run_sot)


def test_hook_on_input_reading_a_computed_tensor_matches_eager():
    # The hook reads `w`, computed in the function: SOT runs the frame
    # eagerly (AST raises a clear error).
    def f(x):
        w = paddle.exp(x)
        x.register_hook(lambda g: g * w)
        return x * w

    assert_same_as_eager(
        f, random_inputs([3]), lambda fn, a: run_to_static(fn, a, False)
    )
