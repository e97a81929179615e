"""``Value.register_hook`` in PIR static graphs behaves like eager.

Every behaviour is checked against the same function run eagerly, in each
static path: ``to_static(full_graph=True)`` (AST), and a plain
``paddle.static`` program differentiated with ``paddle.static.gradients`` and
with ``paddle.static.append_backward``.
"""

import functools
import re

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    c_stdio_flush,
    random_inputs,
    run_eager,
    run_static_program,
    run_to_static,
)


def double(g):
    return 2 * g


def test_seed_example_hook_registered_before_use_doubles_grad():
    def f(x):
        x.register_hook(double)
        return 3 * x

    x = paddle.to_tensor([2.0], stop_gradient=False)
    paddle.jit.to_static(f, full_graph=True)(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0])
    assert_same_as_eager(f, [np.array([2.0], "float32")], run_to_static)


def test_seed_example_hook_registered_after_use_doubles_grad():
    def f(x):
        t = 3 * x
        x.register_hook(double)
        return t

    x = paddle.to_tensor([2.0], stop_gradient=False)
    paddle.jit.to_static(f, full_graph=True)(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0])
    assert_same_as_eager(f, [np.array([2.0], "float32")], run_to_static)


def test_hook_on_leaf_input_registered_before_use(static_runner):
    def f(x, y):
        x.register_hook(lambda g: g * 3)
        return paddle.tanh(x) * y + x

    assert_same_as_eager(f, random_inputs([3, 4], [3, 4]), static_runner)


def test_hook_on_leaf_input_registered_after_all_uses(static_runner):
    def f(x, y):
        out = paddle.tanh(x) * y + x
        x.register_hook(lambda g: g * 3)
        return out

    assert_same_as_eager(f, random_inputs([3, 4], [3, 4]), static_runner)


def test_hook_on_intermediate_between_two_uses_sees_total_grad(static_runner):
    seen = []

    def f(x, y):
        t = paddle.sin(x) * y
        u = t * t
        t.register_hook(lambda g: seen.append(g) or g.exp())
        return u + paddle.matmul(t, y, transpose_y=True).sum(-1, keepdim=True)

    assert_same_as_eager(f, random_inputs([3, 4], [3, 4]), static_runner)
    assert len(seen) == 2  # once in eager, once when the backward was built


def test_hook_on_returned_output_sees_outer_grad(static_runner):
    def f(x):
        t = paddle.exp(x)
        t.register_hook(lambda g: g * g)
        return t

    assert_same_as_eager(f, random_inputs([2, 5]), static_runner)


def test_hook_on_output_that_is_also_used_inside(static_runner):
    def f(x):
        t = paddle.exp(x)
        t.register_hook(lambda g: g + 1)
        return t + paddle.sin(t)

    assert_same_as_eager(f, random_inputs([2, 5]), static_runner)


OUTPUT_HOOK_ERROR = "returned by a function converted by paddle.jit.to_static"


def _hook_output_after_call(fn, full_graph):
    """Call ``fn`` (eagerly, or converted) and hook the tensor it returns,
    then differentiate; returns the input's gradient."""
    x = paddle.to_tensor(random_inputs([2, 3])[0], stop_gradient=False)
    if full_graph is not None:
        fn = paddle.jit.to_static(fn, full_graph=full_graph)
    y = fn(x)
    y.register_hook(lambda g: paddle.sin(g))
    (y * y).sum().backward()
    return x.grad.numpy()


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hooks_of_function_and_caller_on_returned_tensor_run_in_order(
    full_graph,
):
    # Eager: the function's hook first, then the caller's. In the program
    # the function's hook ran after the caller's: a wrong gradient.
    def f(x):
        y = x * 2.0
        y.register_hook(lambda g: g * 0.25)
        return y

    want = _hook_output_after_call(f, None)
    np.testing.assert_allclose(
        _hook_output_after_call(f, full_graph), want, rtol=1e-12
    )


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_returned_tensor_the_caller_does_not_use_does_not_run(
    full_graph,
):
    calls = []

    def f(x):
        y = x * 2.0
        y.register_hook(lambda g: calls.append(1))
        return y, paddle.tanh(x)

    def loss(fn):
        x = paddle.to_tensor(random_inputs([2, 3])[0], stop_gradient=False)
        y, z = fn(x)
        z.sum().backward()
        return x.grad.numpy()

    want = loss(f)
    assert calls == []
    for _ in range(2):
        got = loss(paddle.jit.to_static(f, full_graph=full_graph))
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert calls == []


def test_hook_on_returned_tensor_whose_function_hook_reads_a_traced_tensor_raises():
    # That hook stays in the program, where it runs after the caller's.
    def f(x):
        w = paddle.exp(x)
        y = x * 2.0
        y.register_hook(lambda g: g * w)
        return y

    with pytest.raises(RuntimeError, match=OUTPUT_HOOK_ERROR):
        _hook_output_after_call(f, True)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_returned_tensor_that_the_function_used_raises(full_graph):
    # Eager: the caller's hook sees the gradient of the uses inside the
    # function too; the program's backward keeps them out of its reach.
    def f(x):
        y = paddle.tanh(x)
        return y, y * x

    with pytest.raises(RuntimeError, match=OUTPUT_HOOK_ERROR):
        x = paddle.to_tensor(random_inputs([2, 3])[0], stop_gradient=False)
        y, z = paddle.jit.to_static(f, full_graph=full_graph)(x)
        y.register_hook(lambda g: g * 2.0)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_returned_tensor_used_only_without_gradient_matches_eager(
    full_graph,
):
    def f(x):
        y = paddle.tanh(x)
        return y * (y > 0).astype(y.dtype)

    def h(x):
        y = paddle.tanh(x)
        mask = (y > 0).astype(y.dtype)
        return y, mask

    def f2(x):
        y, mask = h(x)
        return y

    want = _hook_output_after_call(f2, None)
    got = _hook_output_after_call(
        lambda x: paddle.jit.to_static(h, full_graph=full_graph)(x)[0], None
    )
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_hooks_run_in_registration_order(static_runner):
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
    assert_same_as_eager(f, inputs, static_runner)
    assert_same_as_eager(f_reversed, inputs, static_runner)
    # The two orders differ, so the check above can tell them apart.
    assert not np.allclose(
        run_eager(f, inputs)[1], run_eager(f_reversed, inputs)[1]
    )


def test_hook_returning_none_leaves_grad_unchanged(static_runner):
    calls = []

    def f(x):
        t = paddle.tanh(x)
        t.register_hook(lambda g: calls.append(1))
        t.register_hook(lambda g: g * 5)
        return t * x

    assert_same_as_eager(f, random_inputs([4]), static_runner)
    assert len(calls) == 2


def test_removed_hook_is_not_applied(static_runner):
    def f(x):
        t = paddle.tanh(x)
        handle = t.register_hook(lambda g: g * 100)
        t.register_hook(lambda g: g - 1)
        u = t * x
        assert handle.remove() is True
        return u

    assert_same_as_eager(f, random_inputs([4]), static_runner)


def test_remove_twice_warns_and_returns_false():
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program()):
            x = paddle.static.data("x", [3], "float32")
            x.stop_gradient = False
            handle = x.register_hook(double)
            assert handle.remove() is True
            with pytest.warns(RuntimeWarning, match="does not exist"):
                assert handle.remove() is False
    finally:
        paddle.disable_static()


def test_several_hooked_values_in_one_program(static_runner):
    def f(x, y):
        a = x * y
        b = paddle.exp(a)
        x.register_hook(lambda g: g * 0.5)
        a.register_hook(lambda g: g + 2)
        b.register_hook(lambda g: -g)
        y.register_hook(lambda g: g * g)
        return b + a * x

    assert_same_as_eager(f, random_inputs([2, 3], [2, 3]), static_runner)


def test_float32_grads_match_eager(static_runner):
    def f(x):
        t = paddle.nn.functional.relu(x) * 3
        t.register_hook(lambda g: g / 3)
        return t * x

    assert_same_as_eager(
        f, random_inputs([5, 2], dtype="float32"), static_runner
    )


def _forward_op_names(fn, shapes):
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            xs = []
            for i, shape in enumerate(shapes):
                x = paddle.static.data(f"x{i}", shape, "float32")
                x.stop_gradient = False
                xs.append(x)
            fn(*xs)
        names = []
        for op in main.global_block().ops:
            names.append(op.name())
            for block in op.blocks():
                names.extend(o.name() for o in block.ops)
        return names
    finally:
        paddle.disable_static()


def test_forward_program_gains_no_op_for_a_hook():
    def plain(x):
        t = paddle.tanh(x)
        return t * x

    def hooked(x):
        t = paddle.tanh(x)
        out = t * x
        x.register_hook(double)
        x.register_hook(lambda g: g + 1)
        t.register_hook(double)
        return out

    assert _forward_op_names(hooked, [[3]]) == _forward_op_names(plain, [[3]])


def _clone_and_differentiate(replace_hooked_op=False):
    """A program with a hooked ``h = sin(x)``, cloned with ``Program.clone``;
    x's gradient built and run in the clone (optionally after replacing the
    op computing ``h`` there, as a pass may)."""
    x_value = np.array([0.1, -0.4, 0.7])
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [3], "float64")
            x.stop_gradient = False
            h = paddle.sin(x)
            h.register_hook(lambda g: g * 3.0)
            (h * h).sum()
        clone = main.clone()
        ops = clone.global_block().ops
        x, loss = ops[0].result(0), ops[-1].result(0)
        with paddle.static.program_guard(clone):
            if replace_hooked_op:
                sin = next(op for op in ops if op.name() == "pd_op.sin")
                paddle.pir.set_insertion_point(sin)
                sin.result(0).replace_all_uses_with(paddle.sin(x))
                sin.erase()
            (grad,) = paddle.static.gradients([loss], [x])
        exe = paddle.static.Executor(paddle.CPUPlace())
        (got,) = exe.run(clone, feed={"x": x_value}, fetch_list=[grad])
        return got, x_value
    finally:
        paddle.disable_static()


def test_hooks_are_kept_by_a_program_clone():
    got, x = _clone_and_differentiate()
    np.testing.assert_allclose(got, 3.0 * 2 * np.sin(x) * np.cos(x), rtol=1e-12)


def test_hooks_of_an_op_a_pass_replaced_after_a_clone_are_a_clear_error():
    with pytest.raises(RuntimeError, match="were lost: a pass replaced"):
        _clone_and_differentiate(replace_hooked_op=True)


def test_register_hook_on_stop_gradient_value_raises():
    def f(x):
        c = paddle.ones([3])  # stop_gradient=True, as in eager
        c.register_hook(double)
        return x * c

    with pytest.raises(RuntimeError, match="stop gradient"):
        run_eager(f, random_inputs([3]))
    with pytest.raises(RuntimeError, match="stop_gradient=True"):
        run_static_program(f, random_inputs([3]))


def test_register_hook_with_non_callable_raises_type_error():
    def f(x):
        x.register_hook("not a function")
        return x * 2

    with pytest.raises(TypeError, match="expects a callable"):
        run_static_program(f, random_inputs([3]))


def test_hook_returning_wrong_shape_raises_naming_the_hook():
    def summing_hook(g):
        return g.sum()

    def f(x):
        x.register_hook(summing_hook)
        return x * 2

    with pytest.raises(ValueError, match="summing_hook.*shape"):
        run_static_program(f, random_inputs([3]))


def test_hook_returning_non_tensor_raises_naming_the_hook():
    def f(x):
        x.register_hook(lambda g: 1.0)
        return x * 2

    with pytest.raises(TypeError, match="lambda.*returned float"):
        run_static_program(f, random_inputs([3]))


def test_hook_that_raises_keeps_its_exception_with_a_note():
    def failing_hook(g):
        raise KeyError("boom")

    def f(x):
        x.register_hook(failing_hook)
        return x * 2

    # The hook runs when the program runs (run_time_hooks): its exception
    # reaches the caller of exe.run as itself, with the hook's frames and a
    # note naming the hook.
    with pytest.raises(KeyError, match="boom") as info:
        run_static_program(f, random_inputs([3]))
    notes = "\n".join(getattr(info.value, "__notes__", [])) + str(info.value)
    assert "failing_hook" in notes
    assert any(entry.name == "failing_hook" for entry in info.traceback), (
        "the hook's own frame is in the traceback"
    )


class HookedMLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.fc1(x))
        self.fc1.weight.register_hook(lambda g: g * 0.5)
        h.register_hook(lambda g: g + 0.1)
        return self.fc2(h)


def _loss_and_grads(layer, x):
    x = paddle.to_tensor(x, stop_gradient=False)
    loss = layer(x).square().mean()
    loss.backward()
    return [float(loss), x.grad.numpy()] + [
        p.grad.numpy() for p in layer.parameters()
    ]


def test_parameter_hook_registered_in_forward_matches_eager_at_every_call():
    # Eager adds one more hook to the parameter at every call of forward
    # (the hooks accumulate); AST registers it on the eager parameter at
    # every call too, so each call's gradients equal eager's.
    paddle.seed(7)
    eager = HookedMLP()
    static = HookedMLP()
    static.set_state_dict(eager.state_dict())
    static = paddle.jit.to_static(static, full_graph=True)
    for (x,) in (
        random_inputs([5, 4], dtype="float32", seed=i) for i in range(3)
    ):
        want = _loss_and_grads(eager, x)
        got = _loss_and_grads(static, x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
        for layer in (eager, static):
            layer.clear_gradients()


def test_hook_registered_after_rebinding_hooks_the_new_value(static_runner):
    def f(x):
        y = x * 2
        x = y + 1
        x.register_hook(lambda g: g * 10)
        return x * y

    assert_same_as_eager(f, random_inputs([3]), static_runner)


class ActivationHookMLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.fc1(x))
        h.register_hook(lambda g: g * 0.5)
        return self.fc2(h)


def test_activation_hook_trains_like_eager_for_several_steps():
    paddle.seed(7)
    eager = ActivationHookMLP()
    static = ActivationHookMLP()
    static.set_state_dict(eager.state_dict())
    static = paddle.jit.to_static(static, full_graph=True)
    inputs = random_inputs([5, 4], [5, 4], [5, 4], [5, 4], dtype="float32")

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

    for got, want in zip(train(static), train(eager)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_hook_on_value_defined_and_hooked_inside_taken_branch():
    def f(x):
        if x.mean() > 0:
            t = x * 2
            t.register_hook(lambda g: g * 3)
            y = t * x
        else:
            y = x * x
        return y

    (x,) = random_inputs([4])
    for sign in (1.0, -1.0):  # the branch with the hook taken, then not
        assert_same_as_eager(f, [np.abs(x) * sign], run_to_static)


def test_hook_in_branch_reads_a_tensor_defined_only_in_that_branch():
    # AST leaves `b` an UndefinedVar after the `if`; eager reads the branch's b.
    def f(x):
        if x.mean() > 0:
            b = paddle.square(x)
            b.register_hook(lambda g: g * b)
            y = b * 3.0
        else:
            y = x * 0.5
        return y

    (x,) = random_inputs([4])
    for sign in (1.0, -1.0):
        assert_same_as_eager(f, [np.abs(x) * sign], run_to_static)


def test_hook_in_branch_reads_the_branch_variable_late_like_eager():
    # The hook reads `b` when the backward runs: the value b has at the end
    # of the branch, not the one it had at register_hook.
    def f(x):
        if x.mean() > 0:
            b = paddle.square(x)
            b.register_hook(lambda g: g * b)
            y = b * 3.0
            b = paddle.exp(x)
        else:
            y = x * 0.5
        return y

    (x,) = random_inputs([4])
    assert_same_as_eager(f, [np.abs(x)], run_to_static)


def test_hook_in_nested_branch_reads_tensors_of_both_branches():
    def f(x):
        if x.mean() > 0:
            a = paddle.tanh(x)
            if x.sum() > 1:
                b = a * x
                b.register_hook(lambda g: g * a + b)
                y = b * 2.0
            else:
                y = a
        else:
            y = x * 0.5
        return y

    (x,) = random_inputs([4])
    for scale in (1.0, 0.01, -1.0):  # both taken, inner not taken, none
        assert_same_as_eager(f, [np.abs(x) * scale], run_to_static)


def test_hook_in_static_cond_branch_reads_a_branch_tensor():
    def f(x):
        def true_fn():
            b = paddle.square(x)
            b.register_hook(lambda g: g * b)
            return b * 3.0

        return paddle.static.nn.cond(x.mean() > 0, true_fn, lambda: x * 0.5)

    def eager_f(x):
        if x.mean() > 0:
            b = paddle.square(x)
            b.register_hook(lambda g: g * b)
            return b * 3.0
        return x * 0.5

    (x,) = random_inputs([4])
    for sign in (1.0, -1.0):
        a = [np.abs(x) * sign]
        _assert_static_program_same_as_eager(f, eager_f, a)


def _both_signs(x):
    return [[np.abs(x) * 1.0], [np.abs(x) * -1.0]]


def _assert_static_program_same_as_eager(f, eager_f, inputs):
    """``f`` built as a plain static program, differentiated with
    ``gradients`` and with ``append_backward``, gives ``eager_f``'s eager
    output and gradient."""
    want_out, want_grads = run_eager(eager_f, inputs)
    for use_append_backward in (False, True):
        got_out, got_grads = run_static_program(f, inputs, use_append_backward)
        np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
        np.testing.assert_allclose(got_grads[0], want_grads[0], rtol=1e-12)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_value_used_only_in_a_branch_runs_only_when_it_ran(full_graph):
    # Eager calls no hook when the branch using ``t`` does not run; the
    # static graph gave ``t`` zeros from the `if` and ran ``g + 1`` on them.
    def f(x):
        t = x * 2.0
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            y = paddle.tanh(t)
        else:
            y = x * 3.0
        return y

    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(
            f, inputs, functools.partial(run_to_static, full_graph=full_graph)
        )


def test_hook_on_value_used_in_a_nested_branch_runs_only_when_it_ran():
    # The inner condition is computed outside the outer `if`: one computed
    # inside it cannot be read by the hook's backward (docs/status.md).
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        big = x.sum() > 100.0
        if x.mean() > 0:
            if big:
                y = t * x
            else:
                y = x * 2.0
        else:
            y = x * 3.0
        return y

    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, run_to_static)
        assert_same_as_eager(f, [inputs[0] * 100.0], run_to_static)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_value_used_in_inner_branch_with_condition_computed_in_outer(
    full_graph,
):
    # The backward computes the inner condition again from the values it
    # is computed from: it cannot read the one of the outer branch.
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            s = paddle.exp(x).sum() * 0.5
            if s > 100.0:
                y = t * x
            else:
                y = x * 2.0
        else:
            y = x * 3.0
        return y

    runner = functools.partial(run_to_static, full_graph=full_graph)
    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, runner)
        assert_same_as_eager(f, [inputs[0] * 10.0], runner)


def test_hook_on_value_in_static_cond_with_condition_computed_in_outer():
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)

        def outer():
            s = paddle.exp(x).sum() * 0.5
            return paddle.static.nn.cond(
                s > 100.0, lambda: t * x, lambda: x * 2.0
            )

        return paddle.static.nn.cond(x.mean() > 0, outer, lambda: x * 3.0)

    def eager_f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            return t * x if paddle.exp(x).sum() * 0.5 > 100.0 else x * 2.0
        return x * 3.0

    for inputs in _both_signs(random_inputs([4])[0]):
        for a in (inputs, [inputs[0] * 10.0]):
            _assert_static_program_same_as_eager(f, eager_f, a)


def test_hook_on_value_a_branch_returns_unchanged_runs_when_it_ran():
    # The branch's yield uses ``t`` itself: that use counts.
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            y = t
        else:
            y = x * 3.0
        return y

    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, run_to_static)


def test_hook_on_value_in_static_cond_branch_returning_it_runs_when_it_ran():
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        return paddle.static.nn.cond(x.mean() > 0, lambda: t, lambda: x * 3.0)

    def eager_f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        return t if x.mean() > 0 else x * 3.0

    for a in _both_signs(random_inputs([4])[0]):
        _assert_static_program_same_as_eager(f, eager_f, a)


def test_use_of_hooked_value_in_a_branch_only_for_a_condition_does_not_count():
    # ``(t * x).sum() > 3`` gives ``t`` no gradient; only the inner branch
    # differentiates through ``t``.
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            if (t * x).sum() > 3.0:
                y = t * x
            else:
                y = x * 2.0
        else:
            y = x * 3.0
        return y

    (x,) = random_inputs([4])
    for scale in (0.1, -1.0, 10.0):
        assert_same_as_eager(f, [np.abs(x) * scale], run_to_static)


def _hook_on_if_result(x):
    t = paddle.sin(x)
    if x.mean() > 0:
        r = t
    else:
        r = t * 2.0
    r.register_hook(lambda g: g * g + 1.0)
    return r * x


def _hook_on_variable_assigned_in_one_branch(x):
    h = paddle.sin(x)
    if x.mean() > 0:
        h = h * 2.0
    h.register_hook(lambda g: g * g + 1.0)
    return h * x


def _hook_on_if_result_of_branch_value(x):
    if x.mean() > 0:
        b = paddle.sin(x)
        r = b
    else:
        r = x * 3.0
    r.register_hook(lambda g: g * g + 1.0)
    return r * x


@pytest.mark.parametrize(
    "f",
    [
        _hook_on_if_result,
        _hook_on_variable_assigned_in_one_branch,
        _hook_on_if_result_of_branch_value,
    ],
)
@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_if_result_a_branch_returns_unchanged_matches_eager(
    f, full_graph
):
    # When the branch returning ``t`` runs, eager hooks ``t`` itself: the
    # same gradient, as ``t`` has no other use or hook.
    runner = functools.partial(run_to_static, full_graph=full_graph)
    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, runner)


def _alias_with_other_use(x):
    t = paddle.sin(x)
    r = t if x.mean() > 0 else t * 2.0
    r.register_hook(lambda g: g * g)
    return r * x + t * 3.0


def _alias_with_hook(x):
    t = paddle.sin(x)
    t.register_hook(lambda g: g * 3.0)
    r = t if x.mean() > 0 else t * 2.0
    r.register_hook(lambda g: g * g)
    return r * x


def _alias_of_output(x):
    t = paddle.sin(x)
    r = t if x.mean() > 0 else t * 2.0
    r.register_hook(lambda g: g * g)
    return r * x, t


def _alias_of_input(x):
    r = x if x.mean() > 0 else x * 2.0
    r.register_hook(lambda g: g * g)
    return r * 3.0


def _alias_of_branch_value_with_hook(x):
    if x.mean() > 0:
        b = paddle.sin(x)
        b.register_hook(lambda g: g + 1.0)
        r = b
    else:
        r = x * 3.0
    r.register_hook(lambda g: g * 2.0)
    return r * x


def _alias_of_branch_value_with_other_use(x):
    if x.mean() > 0:
        b = paddle.sin(x)
        y = b * 2.0
        r = b
    else:
        y = x * 1.0
        r = x * 3.0
    r.register_hook(lambda g: g * g)
    return r * x + y


@pytest.mark.parametrize(
    "f",
    [
        _alias_with_other_use,
        _alias_with_hook,
        _alias_of_output,
        _alias_of_input,
        _alias_of_branch_value_with_hook,
        _alias_of_branch_value_with_other_use,
    ],
)
def test_hook_on_if_result_aliasing_a_tensor_with_more_gradient_raises(f):
    # Eager would give the hook ``t``'s total gradient when the branch
    # returning ``t`` runs; the hook op sees only the `if` result's.
    x = paddle.to_tensor(random_inputs([4])[0], stop_gradient=False)
    static_f = paddle.jit.to_static(f, full_graph=True)
    with pytest.raises(
        NotImplementedError, match=r"(?s)returns unchanged.*`t \* 1`"
    ):
        out = static_f(x)
        paddle.add_n([o.sum() for o in paddle.utils.flatten(out)]).backward()


def test_hook_on_static_cond_result_aliasing_a_tensor_with_other_use_raises():
    def f(x):
        t = paddle.sin(x)
        r = paddle.static.nn.cond(x.mean() > 0, lambda: t, lambda: t * 2.0)
        r.register_hook(lambda g: g * g)
        return r * x + t

    with pytest.raises(NotImplementedError, match="returns unchanged"):
        run_static_program(f, random_inputs([4]))


def test_hook_on_value_used_only_by_dead_code_of_a_branch_does_not_run():
    # Fuzzer s6-2028: ``d`` is computed in the branch but reaches nothing,
    # so eager gives ``t`` no gradient; the `if` gave it zeros.
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            d = x - t
            d.register_hook(lambda g: None)
            y = x * 2.0
        else:
            y = x * 3.0
        return y

    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, run_to_static)


def test_use_of_hooked_value_outside_the_branch_reaching_no_output_does_not_count():
    # Fuzzer s8-458: ``m`` reaches no output, so only the `else` branch
    # gives ``t`` a gradient; the hooks ran on zeros when it did not run.
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        m = t.mean(axis=0, keepdim=True)  # noqa: F841
        if x.mean() > 0:
            y = x * 2.0
        else:
            y = t * x
        return y

    def static_f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        m = t.mean(axis=0, keepdim=True)  # noqa: F841
        return paddle.static.nn.cond(
            x.mean() > 0, lambda: x * 2.0, lambda: t * x
        )

    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, run_to_static)
        _assert_static_program_same_as_eager(static_f, f, inputs)


def test_hook_on_value_used_in_both_branches_runs_either_way():
    def f(x):
        t = paddle.sin(x)
        t.register_hook(lambda g: g + 1.0)
        if x.mean() > 0:
            y = t * x
        else:
            y = t * 2.0
        return y

    for inputs in _both_signs(random_inputs([4])[0]):
        assert_same_as_eager(f, inputs, run_to_static)


def test_print_hook_on_value_used_only_in_untaken_branch_prints_nothing(capfd):
    def f(x):
        t = x * 2.0
        t.register_hook(lambda g: print(g))
        if x.mean() > 0:
            y = paddle.tanh(t)
        else:
            y = x * 3.0
        return y

    for inputs in _both_signs(random_inputs([4])[0]):
        capfd.readouterr()
        assert_same_as_eager(f, inputs, run_to_static)
        c_stdio_flush()
        printed = capfd.readouterr().out
        # eager prints the Tensor once when the branch ran; the program
        # prints it too (print op), or neither does.
        assert ("[4]" in printed) == (inputs[0].mean() > 0), printed


def test_hook_on_value_used_only_in_static_cond_branch_runs_only_when_it_ran():
    def f(x):
        t = x * 2.0
        t.register_hook(lambda g: g + 1.0)
        return paddle.static.nn.cond(
            x.mean() > 0, lambda: paddle.tanh(t), lambda: x * 3.0
        )

    def eager_f(x):
        t = x * 2.0
        t.register_hook(lambda g: g + 1.0)
        return paddle.tanh(t) if x.mean() > 0 else x * 3.0

    for a in _both_signs(random_inputs([4])[0]):
        _assert_static_program_same_as_eager(f, eager_f, a)


def test_hook_inside_branch_on_value_defined_outside_raises():
    def f(x):
        t = x * 2
        if x.mean() > 0:
            t.register_hook(lambda g: g * 3)
            y = t * x
        else:
            y = t + x
        return y

    with pytest.raises(NotImplementedError, match="fire only when"):
        run_to_static(f, random_inputs([4]))


def test_hook_inside_branch_on_value_hooked_before_the_if_raises():
    # Found by the fuzzer: the value's existing hook op skipped the check,
    # and the hook applied whichever branch ran.
    def f(x):
        t = x * 2
        t.register_hook(lambda g: g + 1.0).remove()
        if x.mean() > 0:
            t.register_hook(lambda g: g * 3.0)
            r = t * 2.0
        else:
            r = t * 0.5
        return r

    (x,) = random_inputs([4])
    for sign in (1.0, -1.0):
        with pytest.raises(NotImplementedError, match="fire only when"):
            run_to_static(f, [np.abs(x) * sign])


def test_hook_in_python_loop_body_matches_eager(static_runner):
    def f(x):
        y = x
        for _ in range(3):
            t = y * 2
            t.register_hook(lambda g: g * 3)
            y = t.sin()
        return y

    assert_same_as_eager(f, random_inputs([4]), static_runner)


def test_hook_inside_tensor_while_loop_matches_eager():
    # A float counter updated in place (i += 1); the hook runs at each
    # iteration under to_static as in eager's Python loop.
    def f(x):
        y = x
        i = paddle.zeros([1])
        while i < 3:
            t = y * 2
            t.register_hook(lambda g: g * 3)
            y = t.sin()
            i += 1
        return y

    assert_same_as_eager(f, random_inputs([4]), run_to_static)


class EagerParamHookMLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(3, 2)
        self.calls = 0
        self.fc.weight.register_hook(self.scale_grad)

    def scale_grad(self, g):
        self.calls += 1
        return g * 2

    def forward(self, x):
        return paddle.tanh(self.fc(x))


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_eagerly_registered_parameter_hook_fires_once_per_backward(full_graph):
    paddle.seed(3)
    eager = EagerParamHookMLP()
    static = EagerParamHookMLP()
    static.set_state_dict(eager.state_dict())
    compiled = paddle.jit.to_static(static, full_graph=full_graph)
    (x,) = random_inputs([4, 3], dtype="float32")
    for step in range(1, 3):
        for layer, fn in ((eager, eager), (static, compiled)):
            fn(paddle.to_tensor(x)).sum().backward()
            assert layer.calls == step
        np.testing.assert_allclose(
            static.fc.weight.grad.numpy(),
            eager.fc.weight.grad.numpy(),
            rtol=1e-6,
        )


@pytest.mark.parametrize("inline_pylayer", [False, True])
def test_jit_save_marks_hooks_without_compute_ops(tmp_path, inline_pylayer):
    # A saved model keeps a hooked value's hooks for fine-tuning as one
    # identity `pylayer` op (tests/test_jit_load_hooks.py); an inference
    # export (`inline_pylayer=True`) has none. No hook adds a compute op.
    paddle.seed(5)
    layer = ActivationHookMLP()
    static = paddle.jit.to_static(layer, full_graph=True)
    (x,) = random_inputs([6, 4], dtype="float32")
    static(paddle.to_tensor(x)).mean().backward()  # train once: hook ops built
    path = str(tmp_path / "model")
    spec = paddle.static.InputSpec([-1, 4], "float32", "x")
    paddle.jit.save(
        static, path, input_spec=[spec], inline_pylayer=inline_pylayer
    )
    op_names = re.findall(
        r'"#":"\d+\.(\w+)"', (tmp_path / "model.json").read_text()
    )
    assert "tanh" in op_names
    assert op_names.count("pylayer") == (0 if inline_pylayer else 1)
    assert op_names.count("scale") == 0
    loaded = paddle.jit.load(path)
    for batch in (1, 3, 6):
        np.testing.assert_allclose(
            loaded(paddle.to_tensor(x[:batch])).numpy(),
            layer(paddle.to_tensor(x[:batch])).numpy(),
            rtol=1e-6,
        )


def test_hook_reading_a_forward_tensor_matches_eager(static_runner):
    def f(x):
        mask = (x > 0).astype(x.dtype)
        scale = paddle.exp(x)
        t = x * 3
        t.register_hook(lambda g: g * mask + scale)
        return t * t

    assert_same_as_eager(f, random_inputs([3, 4]), static_runner)


def test_hook_reading_a_forward_tensor_trains_like_eager():
    class MaskedGrad(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            keep = (h.abs() > 0.1).astype(h.dtype)
            h.register_hook(lambda g: g * keep)
            return paddle.tanh(h)

    paddle.seed(11)
    eager = MaskedGrad()
    static = MaskedGrad()
    static.set_state_dict(eager.state_dict())
    compiled = paddle.jit.to_static(static, full_graph=True)
    for a in random_inputs([6, 4], [6, 4], [6, 4], dtype="float32"):
        for _, fn in ((eager, eager), (static, compiled)):
            fn(paddle.to_tensor(a)).square().sum().backward()
        for p_static, p_eager in zip(static.parameters(), eager.parameters()):
            np.testing.assert_allclose(
                p_static.grad.numpy(),
                p_eager.grad.numpy(),
                rtol=1e-6,
                atol=1e-7,
            )


def test_hooks_are_freed_with_their_program():
    import gc
    import weakref

    from paddle.autograd import static_hooks

    class Payload:
        pass

    def trace_and_drop(n):
        payload = Payload()

        def f(x):
            t = x * 3
            t.register_hook(lambda g, payload=payload: g * 2)
            return t

        x = paddle.ones([n])
        x.stop_gradient = False
        paddle.jit.to_static(f, full_graph=True)(x).sum().backward()
        return weakref.ref(payload)

    gc.collect()
    before = len(static_hooks._tables)
    payloads = [trace_and_drop(i % 7 + 1) for i in range(1000)]
    gc.collect()
    assert len(static_hooks._tables) == before
    assert all(ref() is None for ref in payloads)


def _printing_hook_function():
    def f(x):
        t = x * 3
        t.register_hook(lambda g: print("hook sees", g))
        return t * t

    return f


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_print_in_hook_prints_the_gradient_at_every_backward(capfd, full_graph):
    f = paddle.jit.to_static(_printing_hook_function(), full_graph=full_graph)
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    for _ in range(3):
        f(x).sum().backward()
    c_stdio_flush()
    out, err = capfd.readouterr()
    printed = out + err
    # The hook runs at each backward (run_time_hooks) and prints the
    # gradient Tensor like eager: 2 * t.
    assert printed.count("hook sees") == 3, printed
    assert len(re.findall(r"\[6\.\s*,\s*12\.\]", printed)) == 3, printed


def test_print_in_hook_prints_at_every_run_of_a_static_program(capfd):
    f = _printing_hook_function()
    for _ in range(2):
        run_static_program(f, [np.array([1.0, 2.0], "float32")])
    c_stdio_flush()
    out, err = capfd.readouterr()
    assert (out + err).count("hook sees") == 2


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_retrace_with_new_shapes_matches_eager_each_time(full_graph):
    def f(x):
        t = paddle.tanh(x) * 2
        t.register_hook(lambda g: g * t)
        return t * x

    static_f = paddle.jit.to_static(f, full_graph=full_graph)
    for shape in ([3], [5, 2], [3], [5, 2], [7]):
        (a,) = random_inputs(shape)
        want = run_eager(f, [a])
        got = run_eager(static_f, [a])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-12)


def test_to_static_training_program_runs_no_hook_op():
    def f(x):
        t = paddle.tanh(x)
        t.register_hook(lambda g: g * 2)
        return t * x

    static_f = paddle.jit.to_static(f, full_graph=True)
    x = paddle.to_tensor(random_inputs([3])[0], stop_gradient=False)
    static_f(x).sum().backward()
    _, partial_program = static_f.get_concrete_program(x)
    runnable = partial_program.train_program
    for program in (runnable.forward_program, runnable.backward_program):
        names = [op.name() for op in program.global_block().ops]
        assert "pd_op.tanh" in names or "pd_op.tanh_grad" in names
        assert "pd_op.pylayer" not in names
    # The hook still acts on the gradient.
    x_eager = paddle.to_tensor(x.numpy(), stop_gradient=False)
    f(x_eager).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_to_static_input_may_read_inputs_of_the_function(full_graph):
    def f(x, w):
        x.register_hook(lambda g: g * w + x)
        return paddle.tanh(x) * w

    inputs = random_inputs([3], [3])
    assert_same_as_eager(
        f, inputs, lambda fn, a: run_to_static(fn, a, full_graph=full_graph)
    )


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_hook_on_to_static_input_without_gradient_does_not_run(full_graph):
    # Found by the fuzzer: to_static gave such an input a zero gradient and
    # ran the hook on it (x.grad = hook(0)); eager leaves x.grad None.
    def f(x0, x1):
        _ = x0 * 3.0
        x0.register_hook(lambda g: g + 1.0)
        return x1 * 2.0

    inputs = random_inputs([3], [3])
    assert_same_as_eager(
        f, inputs, lambda fn, a: run_to_static(fn, a, full_graph=full_graph)
    )


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_to_static_input_without_gradient_keeps_grad_none(full_graph):
    def f(x, y):
        return x * 2.0 + y.detach()

    inputs = random_inputs([3], [3])
    assert run_eager(f, inputs)[1][1] is None
    assert_same_as_eager(
        f, inputs, lambda fn, a: run_to_static(fn, a, full_graph=full_graph)
    )


def test_hook_on_to_static_input_inside_a_branch_raises():
    # Found by the fuzzer: the hook was registered on the eager input at
    # every call, also when the branch did not run.
    def f(x):
        if x.mean() > 0:
            x.register_hook(lambda g: g * 3.0)
            r = x * 2.0
        else:
            r = x * 0.5
        return r

    (x,) = random_inputs([4])
    for sign in (1.0, -1.0):
        with pytest.raises(NotImplementedError, match="control flow block"):
            run_to_static(f, [np.abs(x) * sign])


def test_hook_on_to_static_input_reading_a_traced_tensor_raises():
    def f(x):
        w = paddle.exp(x)
        x.register_hook(lambda g: g * w)
        return x * w

    with pytest.raises(NotImplementedError, match="input of the to_static"):
        run_to_static(f, random_inputs([3]))


def test_hook_on_unused_output_of_a_repeated_split(static_runner):
    # Found by the fuzzer (AST failed at run time).
    def f(x0):
        v1, v2 = paddle.split(x0, [1, 1], axis=0)
        v6, v7 = paddle.split(x0, [1, 1], axis=0)
        v7.register_hook(lambda g: g * 2.0)
        return paddle.matmul(v6, v2)

    assert_same_as_eager(f, [np.array([[0.5], [2.0]])], static_runner)


@pytest.mark.parametrize(
    "multi_output",
    [
        lambda x: paddle.split(x, [2, 1], axis=0),
        lambda x: paddle.unbind(x, axis=0),
        lambda x: paddle.chunk(x, 3, axis=0),
    ],
    ids=["split", "unbind", "chunk"],
)
def test_hook_on_unused_output_of_a_multi_output_op_sees_zeros_like_eager(
    static_runner, multi_output
):
    # Eager runs the hooks of the unused output on the zero gradient the
    # op's backward gives it: `g + 1` changes the input's gradient.
    def f(x):
        parts = multi_output(x * 2.0)
        parts[-1].register_hook(lambda g: g + 1.0)
        return parts[0] * 3.0

    assert_same_as_eager(f, random_inputs([3, 2]), static_runner)


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
@pytest.mark.parametrize("caller_uses_it", [False, True])
def test_hook_on_a_returned_half_of_a_split_runs_on_zeros_like_eager(
    full_graph, caller_uses_it
):
    # Found by the fuzzer. `a` is returned, and the caller may not
    # differentiate it; the function differentiates through `b`. Eager runs
    # `a`'s hook on the zeros the split's backward gives it: the hook stays
    # in the program (it used to be registered on the returned Tensor,
    # which gets no gradient, and did not run).
    def f(x):
        a, b = paddle.split(x * 1.0, 2, axis=1)
        a.register_hook(lambda g: g + 1.0)
        return b * 2.0, a

    def run(fn):
        x = paddle.to_tensor(random_inputs([2, 4])[0], stop_gradient=False)
        out, a = fn(x)
        loss = out.sum() + (a * 3.0).sum() if caller_uses_it else out.sum()
        loss.backward()
        return x.grad.numpy()

    want = run(f)
    got = run(paddle.jit.to_static(f, full_graph=full_graph))
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.usefixtures("sot_env")
def test_hook_after_a_graph_break_on_a_split_half_is_a_clear_error():
    # Found by the fuzzer: the split is compiled before the graph break
    # (the tensor `if`), and the hook registered after it would miss the
    # zeros eager runs it on.
    def f(x, y):
        a, b = paddle.split(x, 2, axis=0)
        if y.mean() > 0:
            y = y * 2.0
        a.register_hook(lambda g: g + 1.0)
        return b * 0.5 + y.sum()

    xs = [
        paddle.to_tensor(v, stop_gradient=False)
        for v in random_inputs([4], [3])
    ]
    with pytest.raises(RuntimeError, match="the other half of a `split`"):
        paddle.jit.to_static(f, full_graph=False)(*xs)


def test_hook_on_value_without_gradient_does_not_run(static_runner):
    def f(x):
        t = x * 2.0
        t.register_hook(lambda g: g + 1.0)
        return x * 3.0

    assert_same_as_eager(f, random_inputs([3]), static_runner)


def _hook_reading(t, v):
    t.register_hook(lambda g: g * v)


def test_hook_result_whose_static_shape_has_an_unknown_dimension():
    """A compiled hook ``g * v``, ``v`` a slice of an input with an unknown
    first dimension: its result's static shape is [-1, 4] for a gradient
    of [1, 4], the same at run time; eager's gradient at each batch size
    (it was refused when the backward was built)."""
    b = np.random.default_rng(2).standard_normal([1, 4])
    feeds = [np.random.default_rng(n).standard_normal([n, 4]) for n in (3, 5)]
    want = []
    for a in feeds:
        y = paddle.to_tensor(b, stop_gradient=False)
        t = paddle.tanh(y)
        _hook_reading(t, paddle.to_tensor(a)[1:2])
        (t * 2.0).sum().backward()
        want.append(y.grad.numpy())
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [-1, 4], "float64")
            y = paddle.static.data("y", [1, 4], "float64")
            y.stop_gradient = False
            t = paddle.tanh(y)
            _hook_reading(t, x[1:2])
            (gy,) = paddle.static.gradients([(t * 2.0).sum()], [y])
        exe = paddle.static.Executor(paddle.CPUPlace())
        got = [
            exe.run(main, feed={"x": a, "y": b}, fetch_list=[gy])[0]
            for a in feeds
        ]
    finally:
        paddle.disable_static()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
