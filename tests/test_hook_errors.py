"""Hooks that eager Paddle mishandles or that to_static used to reject.

- An eager hook's result replaces the gradient: a non-Tensor killed the
  process (SIGSEGV / ``std::bad_alloc``) and a Tensor of another shape was
  taken silently. Both are clear errors naming the hook now (the documented
  meaning of ``register_hook``: the result is the new gradient). Each case
  runs in its own process, so that a crash fails one test.
- A hook on a to_static input that reads a variable assigned after
  ``register_hook`` (late binding) works as in eager, in AST and SOT.
"""

import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
from conftest import graph_breaks


def _backward_in_subprocess(hook_source):
    code = textwrap.dedent(
        f"""
        import paddle
        x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        y = x * 3
        y.register_hook({hook_source})
        try:
            y.sum().backward()
            print("grad", x.grad.numpy().tolist())
        except Exception as e:
            print("raised", type(e).__name__, e)
        """
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "hook, message",
    [
        ("lambda g: 1.0", "returned float; a hook must return a Tensor"),
        ("lambda g: (g * 2.0,)", "returned tuple; a hook must return a Tensor"),
        ("lambda g: g.sum()", "returned a gradient of shape [] and dtype"),
        (
            "lambda g: g.astype('float64')",
            "must not change the shape or dtype",
        ),
    ],
)
def test_eager_hook_with_a_wrong_result_is_a_clear_error(hook, message):
    run = _backward_in_subprocess(hook)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "raised" in run.stdout and message in run.stdout, run.stdout
    assert "<lambda>" in run.stdout  # names the hook


def test_eager_hook_with_a_right_result_is_used():
    run = _backward_in_subprocess("lambda g: g * 2")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "grad [6.0, 6.0]" in run.stdout


def _late_bound(x):
    x.register_hook(lambda g: g * s)
    s = 2.0
    return paddle.tanh(x)


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_input_hook_reading_a_variable_assigned_later_matches_eager(full_graph):
    def grad(f):
        x = paddle.to_tensor(np.array([0.5, -1.0]), stop_gradient=False)
        f(x).sum().backward()
        return x.grad.numpy()

    want = grad(_late_bound)
    got = grad(paddle.jit.to_static(_late_bound, full_graph=full_graph))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    if not full_graph:
        assert graph_breaks() == []


def _build_hook_error(hook):
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [2], "float32")
            x.stop_gradient = False
            y = x * 3.0
            y.register_hook(hook)
            with pytest.raises(Exception) as info:
                paddle.static.gradients([y.sum()], [x])
        return info.value
    finally:
        paddle.disable_static()


def compiled_hook_that_raises(g):
    return paddle.reshape(g, [7])  # pure math: built, and fails, at build time


def test_error_of_a_compiled_hook_names_the_hook():
    error = _build_hook_error(compiled_hook_that_raises)
    notes = "\n".join(getattr(error, "__notes__", []))
    assert "raised by gradient hook" in notes
    assert "compiled_hook_that_raises" in notes


def test_note_without_add_note_goes_into_the_message(monkeypatch):
    """Python 3.9 and 3.10 have no ``BaseException.add_note``: the note is
    appended to the message instead of raising AttributeError."""
    from paddle.autograd.hook_closures import add_note

    class OldStyleError(Exception):
        def __getattribute__(self, name):
            if name == "add_note":
                raise AttributeError(name)
            return super().__getattribute__(name)

    error = OldStyleError("bad gradient")
    add_note(error, "raised by gradient hook h")
    assert str(error) == "bad gradient\nraised by gradient hook h"
