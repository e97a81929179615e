"""Values of block arguments own their handle.

Paddle binds ``Block.args``, ``Block.kwargs`` and ``WhileOp.block_arguments``
with pybind11's ``return_value_policy::reference``: each returned ``Value``
points into the block's argument storage and is registered by pybind11 at
that address. When Python keeps such a Value longer than the storage (the
block reallocates its arguments, or the program is freed while a reference
cycle still holds the Value), the Value reads freed memory, and pybind11
returns that stale object for any later Value cast at the same address
instead of a copy. Stock 3.3.1 does keep them: ``RunnableProgram``'s
``_get_program_all_values`` stores ``kwargs()`` Values in a list that a
recursive closure keeps in a reference cycle. A later to_static build then
got a stale object from ``call_vjp`` and crashed (SIGSEGV in ``add_n``,
``All the Values in the input must have the same data type``, or "we can
only get name of Value"). The patched accessors return owning copies.
"""

import os
import subprocess
import sys

import paddle
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def static_mode():
    paddle.enable_static()
    yield
    paddle.disable_static()


def _program_with_data():
    prog = paddle.static.Program()
    with paddle.static.program_guard(prog):
        x = paddle.static.data("x", [3], "float32")
    return prog, x


@pytest.mark.usefixtures("static_mode")
def test_args_stay_valid_when_the_block_adds_arguments():
    prog, x = _program_with_data()
    block = prog.global_block()
    block.add_arg(x.type())
    held = block.args()
    for _ in range(64):  # reallocates the block's argument vector
        block.add_arg(x.type())
    assert held[0].is_same(block.args()[0])


@pytest.mark.usefixtures("static_mode")
def test_while_block_arguments_stay_valid_when_the_body_adds_arguments():
    prog, x = _program_with_data()
    with paddle.static.program_guard(prog):
        i = paddle.zeros([1])
        paddle.static.nn.while_loop(
            lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), [i, x]
        )
    (while_op,) = [
        o for o in prog.global_block().ops if o.name() == "pd_op.while"
    ]
    loop = while_op.as_while_op()
    held = loop.block_arguments()
    for _ in range(64):
        loop.body().add_arg(x.type())
    assert len(held) == 2
    assert all(v.is_same(w) for v, w in zip(held, loop.block_arguments()))


@pytest.mark.usefixtures("static_mode")
def test_kwargs_values_are_not_aliases_of_the_block_storage():
    prog, x = _program_with_data()
    block = prog.global_block()
    block.add_kwarg("k", x.type())
    first, second = block.kwargs()["k"], block.kwargs()["k"]
    # One Value each call, both the same block argument.
    assert first is not second
    assert first.is_same(second)


def test_to_static_rebuilds_with_dropped_functions():
    # The stock reproducer: a new function converted per round and dropped,
    # the collector off. Stock 3.3.1 fails within about 10-70 rounds.
    run = subprocess.run(
        [
            sys.executable,
            os.path.join(HERE, "repro_rebuild_after_free.py"),
            "500",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
