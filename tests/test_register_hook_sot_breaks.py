"""SOT: ``Tensor.register_hook`` after a graph break is never silently wrong.

When SOT breaks the graph, the code before the break is compiled into its own
program. A hook registered after the break on a tensor that this program
computed *and used* cannot see the gradient of those uses (their backward is
inside the program), so SOT raises a clear error at ``register_hook`` instead
of giving a gradient different from eager. A tensor the program only computed,
or only read, still gets its hook registered eagerly, with eager's result.
"""

import functools

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    graph_breaks,
    random_inputs,
    run_to_static,
)

ERROR = "computed and used before a graph break"


pytestmark = pytest.mark.usefixtures("sot_env")


def run_sot(fn, inputs):
    return run_to_static(fn, inputs, full_graph=False)


def scale_by(w, g):
    return g * w


class Scale:
    def __init__(self, w):
        self.w = w

    def __call__(self, g):
        return g * self.w


def test_partial_over_tensor_after_use_raises_instead_of_wrong_grad():
    # Creating the partial over ``w`` breaks the graph after ``u = t * x``.
    def f(x):
        w = paddle.exp(x)
        t = paddle.tanh(x)
        u = t * x
        t.register_hook(functools.partial(scale_by, w))
        return u + t

    with pytest.raises(RuntimeError, match=ERROR):
        run_sot(f, random_inputs([2, 3]))


def test_class_instance_over_tensor_after_use_raises_instead_of_wrong_grad():
    def f(x):
        w = paddle.exp(x)
        t = paddle.tanh(x)
        u = t * x
        t.register_hook(Scale(w))
        return u + t

    with pytest.raises(RuntimeError, match=ERROR):
        run_sot(f, random_inputs([2, 3]))


def test_hook_after_explicit_break_on_used_tensor_raises():
    def f(x):
        t = paddle.tanh(x)
        u = t * x
        print(t.numpy())
        t.register_hook(lambda g: g * 2)
        return u + t

    with pytest.raises(RuntimeError, match=ERROR) as info:
        run_sot(f, random_inputs([2, 3]))
    assert "full_graph=True" in str(info.value)


def test_hook_capturing_a_tensor_after_use_matches_eager():
    # The hook cannot be captured (it reads the tensor ``w``), and a frame
    # with closure cells cannot break its graph: SOT runs it eagerly.
    def f(x, w):
        t = paddle.tanh(x)
        u = t * x
        t.register_hook(lambda g: g * w)
        return u + t

    assert_same_as_eager(f, random_inputs([4], [4]), run_sot)


def test_hook_after_break_on_tensor_not_used_before_matches_eager():
    def f(x):
        t = paddle.tanh(x)
        print(t.numpy())
        t.register_hook(lambda g: g * 2)
        return t * x + t

    assert_same_as_eager(f, random_inputs([2, 3]), run_sot)
    assert len(graph_breaks()) >= 1


def test_hook_after_break_on_input_used_before_matches_eager():
    # ``x`` was only read by the graph before the break: the hook, registered
    # eagerly on ``x`` instead of in the graph after the break, sees its
    # total gradient.
    def f(x):
        u = paddle.tanh(x) * x
        print(u.numpy())
        x.register_hook(lambda g: g * 3)
        return u + x * x

    assert_same_as_eager(f, random_inputs([2, 3]), run_sot)


def test_hook_before_break_on_used_tensor_matches_eager():
    def f(x):
        t = paddle.tanh(x)
        t.register_hook(lambda g: g * 2)
        u = t * x
        print(u.numpy())
        return u + t

    assert_same_as_eager(f, random_inputs([2, 3]), run_sot)


def test_second_call_also_raises():
    def f(x):
        t = paddle.tanh(x)
        u = t * x
        print(t.numpy())
        t.register_hook(lambda g: g * 2)
        return u + t

    static_f = paddle.jit.to_static(f, full_graph=False)
    for _ in range(2):
        x = paddle.to_tensor(np.ones([3]), stop_gradient=False)
        with pytest.raises(RuntimeError, match=ERROR):
            static_f(x)


# A tensor-dependent `if` breaks SOT's graph; the branch runs after the break.


def test_value_defined_and_hooked_in_a_branch_matches_eager():
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
        assert_same_as_eager(f, [np.abs(x) * sign], run_sot)


def test_hook_in_a_branch_on_a_value_used_before_the_if_raises():
    def f(x):
        t = x * 2
        u = t * x
        if x.mean() > 0:
            t.register_hook(lambda g: g * 3)
        return u + t

    (x,) = random_inputs([4])
    with pytest.raises(Exception, match=ERROR):
        run_sot(f, [np.abs(x)])


def test_hooks_before_and_after_a_break_on_an_unused_tensor_run_in_order():
    # Fuzzer s3-1549: the hook before the break ran in the backward of the
    # graph before the break, so after the one registered after it.
    def f(x):
        t = x * 2.0
        t.register_hook(lambda g: g * 0.25)
        print(t.numpy())
        t.register_hook(lambda g: paddle.sin(g))
        return t.mean() + x.sum()

    assert_same_as_eager(f, random_inputs([2, 3]), run_sot)
    assert len(graph_breaks()) >= 1


def test_hook_defined_in_exec_code_breaks_the_graph_and_matches_eager():
    # Code run by exec() with a namespace of its own has no module whose
    # globals a captured hook could use: SOT breaks the graph (it raised
    # KeyError: None) and runs the registration eagerly.
    namespace = {"paddle": paddle}
    exec(
        "def f(x):\n"
        "    t = paddle.tanh(x)\n"
        "    t.register_hook(lambda g: g * 2.0)\n"
        "    return t * x\n",
        namespace,
    )
    assert_same_as_eager(namespace["f"], random_inputs([3]), run_sot)
    assert any("not in a module" in r for r in graph_breaks())
