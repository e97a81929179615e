"""Backward through `if`/`while` ops: two stock 3.3.1 bugs, no hook needed.

- Stock asks a C++ binding for the values an `if` op uses from outside; when
  many programs are built in one process it sometimes returns a null or
  dangling value, which gives all-zero gradients or a segfault after some
  dozens of to_static traces. The patch set computes them in Python.
- With nested `if`s, the gradient of a value of the outer branch read in the
  inner `if` was dropped (zeros).
"""

import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    random_inputs,
    run_eager,
    run_static_program,
    run_to_static,
    tensor_while,
)
from paddle.autograd import backward_utils, ir_backward


def _program_with_if_and_while():
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        x = paddle.static.data("x", [4], "float32")
        w = paddle.static.data("w", [4], "float32")
        x.stop_gradient = False
        out = paddle.static.nn.cond(
            x.mean() > 0, lambda: x * 2 + w, lambda: x * w
        )
        i = paddle.zeros([1], "int64")
        paddle.static.nn.while_loop(
            lambda i, o: i < 3, lambda i, o: [i + 1, o * w], [i, out]
        )
    return main, x, w


def _op(main, name):
    return next(op for op in main.global_block().ops if op.name() == name)


def test_backward_uses_the_python_walk_for_external_values():
    assert (
        ir_backward.get_used_external_value
        is backward_utils.get_used_external_value
    )


def test_if_op_external_values_are_its_condition_then_first_uses():
    paddle.enable_static()
    try:
        main, x, w = _program_with_if_and_while()
        if_op = _op(main, "pd_op.if")
        got = backward_utils.get_used_external_value(if_op)
        want = [if_op.operand_source(0), x, w]
        assert len(got) == len(want)
        assert all(g.is_same(v) for g, v in zip(got, want))
    finally:
        paddle.disable_static()


def test_while_body_external_values_exclude_block_arguments():
    paddle.enable_static()
    try:
        main, x, w = _program_with_if_and_while()
        body = _op(main, "pd_op.while").as_while_op().body()
        got = backward_utils.get_used_external_value(body)
        assert len(got) == 1 and got[0].is_same(w)
    finally:
        paddle.disable_static()


CHURN = textwrap.dedent(
    """
    import numpy as np
    import paddle

    def plain(x):
        if x.mean() > 0:
            y = (x * 2) * x
        else:
            y = x * x
        return y

    def hooked(x):
        if x.mean() > 0:
            t = x * 2
            t.register_hook(lambda g: g * 3)
            y = t * x
        else:
            y = x * x
        return y

    def grads(fn, a):
        x = paddle.to_tensor(a, stop_gradient=False)
        fn(x).sum().backward()
        return x.grad.numpy()

    x = np.random.default_rng(0).standard_normal(4)
    for i in range({steps}):
        for f in (plain, hooked):
            for sign in (1.0, -1.0):
                a = np.abs(x) * sign
                want = grads(f, a)
                got = grads(paddle.jit.to_static(f, full_graph=True), a)
                np.testing.assert_allclose(got, want, rtol=1e-12,
                                           err_msg=f"step {{i}} {{f.__name__}}")
    print("ok")
    """
)


def test_many_traced_if_programs_keep_eager_gradients(tmp_path):
    # Stock 3.3.1 crashes or returns zeros in about half of the runs of 60
    # steps of `plain` alone; this runs 60 steps of each function.
    script = tmp_path / "churn.py"  # to_static reads the functions' source
    script.write_text(CHURN.format(steps=60))
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), (
        proc.stdout[-2000:] + proc.stderr[-4000:]
    )


def nested_if(x):
    if x.mean() > 0:
        a = paddle.tanh(x)
        if x.sum() > 1:
            y = a * x * 2.0
        else:
            y = a
    else:
        y = x * 0.5
    return y


def test_nested_if_gradients_match_eager_for_every_branch_pair():
    (x,) = random_inputs([4])
    for scale in (1.0, 0.01, -1.0):  # both taken, inner not taken, none
        assert_same_as_eager(nested_if, [np.abs(x) * scale], run_to_static)


def nested_cond(x):
    def outer_true():
        a = paddle.tanh(x)
        return paddle.static.nn.cond(
            x.sum() > 1, lambda: a * x * 2.0, lambda: a
        )

    return paddle.static.nn.cond(x.mean() > 0, outer_true, lambda: x * 0.5)


def test_nested_cond_in_static_program_gradients_match_eager():
    (x,) = random_inputs([4])
    for scale in (1.0, 0.01, -1.0):
        a = [np.abs(x) * scale]
        want_out, want_grads = run_eager(nested_if, a)
        for use_append_backward in (False, True):
            out, grads = run_static_program(nested_cond, a, use_append_backward)
            np.testing.assert_allclose(out, want_out, rtol=1e-12)
            np.testing.assert_allclose(grads[0], want_grads[0], rtol=1e-12)


def branch_yields_outer_value_unchanged(x1, x2):
    t = paddle.sin(x2)
    if x1.mean() > 0:
        r = t
    else:
        r = t * 3.0
    return t * paddle.cos(x1) + r


def test_value_a_branch_yields_unchanged_keeps_its_other_gradients():
    # Fuzzer s8-252 (stock 3.3.1): the gradient of ``t * cos(x1)`` was
    # dropped from ``t``'s when the branch returning ``t`` ran.
    x1, x2 = random_inputs([3], [3])
    for sign in (1.0, -1.0):
        inputs = [np.abs(x1) * sign, x2]
        assert_same_as_eager(
            branch_yields_outer_value_unchanged, inputs, run_to_static
        )


def branch_yields_inner_value_also_used_in_it(x):
    def true_fn():
        a = paddle.sin(x)
        return a, a * 2.0

    def false_fn():
        return x * 1.0, x * 3.0

    o1, o2 = paddle.static.nn.cond(x.mean() > 0, true_fn, false_fn)
    return o1 + o2


def eager_branch_yields_inner_value_also_used_in_it(x):
    if x.mean() > 0:
        a = paddle.sin(x)
        return a + a * 2.0
    return x * 1.0 + x * 3.0


def test_value_a_static_cond_branch_yields_and_uses_keeps_both_gradients():
    (x,) = random_inputs([4])
    for sign in (1.0, -1.0):
        a = [np.abs(x) * sign]
        want_out, want_grads = run_eager(
            eager_branch_yields_inner_value_also_used_in_it, a
        )
        for use_append_backward in (False, True):
            out, grads = run_static_program(
                branch_yields_inner_value_also_used_in_it,
                a,
                use_append_backward,
            )
            np.testing.assert_allclose(out, want_out, rtol=1e-12)
            np.testing.assert_allclose(grads[0], want_grads[0], rtol=1e-12)


def branch_returns_input_unchanged(x1, x2):
    y = x2 * x1
    if x1.mean() > 0:
        r = x2
    else:
        r = x2 * 3.0
    return r + y


def branch_returns_input_then_ops_written_in_place(x):
    if x.mean() > 0:
        r = x
    else:
        r = x * 2.0
    z = paddle.exp(r) + 1.0
    return z * 2.0 + x


@pytest.mark.parametrize(
    "f",
    [
        branch_returns_input_unchanged,
        branch_returns_input_then_ops_written_in_place,
    ],
)
def test_if_result_returned_unchanged_is_not_overwritten_in_place(f):
    # Stock 3.3.1: the `if` result shared the input's buffer and the
    # inplace pass let the op after the `if` overwrite the input (wrong
    # output and gradients).
    inputs = random_inputs(*[[3]] * f.__code__.co_argcount, seed=3)
    for sign in (1.0, -1.0):
        signed = [np.abs(inputs[0]) * sign] + inputs[1:]
        assert_same_as_eager(f, signed, run_to_static)


def test_static_cond_result_returned_unchanged_is_not_overwritten_in_place():
    def f(x):
        r = paddle.static.nn.cond(x.mean() > 0, lambda: x, lambda: x * 2.0)
        return paddle.exp(r) + x

    def eager_f(x):
        r = x if x.mean() > 0 else x * 2.0
        return paddle.exp(r) + x

    (x,) = random_inputs([3])
    for sign in (1.0, -1.0):
        a = [np.abs(x) * sign]
        want_out, want_grads = run_eager(eager_f, a)
        for use_append_backward in (False, True):
            out, grads = run_static_program(f, a, use_append_backward)
            np.testing.assert_allclose(out, want_out, rtol=1e-12)
            np.testing.assert_allclose(grads[0], want_grads[0], rtol=1e-12)


def _loop_reads_value_with_other_gradients(x, y):
    """``v`` is read in the loop body and by ops after the loop, whose
    gradients the backward reaches before the loop's."""
    v = paddle.exp(x)
    s = v * 1.0
    _, t = tensor_while(
        lambda i, t: i < 2,
        lambda i, t: (i + 1, t + v),
        [paddle.zeros([], "int64"), y * 1.0],
    )
    return (
        (paddle.square(t) * -1.5).sum()
        + (paddle.square(v) * s).sum()
        + (v * 0.5).sum()
    )


def test_while_body_value_with_earlier_gradients_equals_eager(static_runner):
    """The gradients of ``v`` from the ops after the loop are summed before
    the loop's backward starts from them (stock: the loop started from the
    first and added the others at every iteration, silently)."""
    assert_same_as_eager(
        _loop_reads_value_with_other_gradients,
        random_inputs((3,), (3,)),
        static_runner,
    )


class _DropSecond(paddle.autograd.PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return a * 2.0 + b

    @staticmethod
    def backward(ctx, d):
        return d * 2.0, None


def _loop_reads_value_whose_gradient_is_none(x, y):
    """The only gradient of ``x`` the backward reaches before the loop's
    is a PyLayer's ``None``."""
    _, t = tensor_while(
        lambda i, t: i < 2,
        lambda i, t: (i + 1, t + x),
        [paddle.zeros([], "int64"), y * 1.0],
    )
    return _DropSecond.apply(t, x) * t


def test_while_body_value_whose_other_gradient_is_none_equals_eager(
    static_runner,
):
    """The loop's backward starts ``x``'s gradient from zeros (stock: a
    TypeError from `call_vjp` when building the backward)."""
    assert_same_as_eager(
        _loop_reads_value_whose_gradient_is_none,
        random_inputs((3,), (3,)),
        static_runner,
    )
