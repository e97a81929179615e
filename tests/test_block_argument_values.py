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

HERE = os.path.dirname(os.path.abspath(__file__))


def _program_with_data():
    prog = paddle.static.Program()
    with paddle.static.program_guard(prog):
        x = paddle.static.data("x", [3], "float32")
    return prog, x


def test_args_stay_valid_when_the_block_adds_arguments():
    paddle.enable_static()
    try:
        prog, x = _program_with_data()
        block = prog.global_block()
        block.add_arg(x.type())
        held = block.args()
        for _ in range(64):  # reallocates the block's argument vector
            block.add_arg(x.type())
        assert held[0].is_same(block.args()[0])
    finally:
        paddle.disable_static()


def test_while_block_arguments_stay_valid_when_the_body_adds_arguments():
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program()):
            x = paddle.static.data("x", [3], "float32")
            i = paddle.zeros([1])
            paddle.static.nn.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), [i, x]
            )
            block = paddle.static.default_main_program().global_block()
            (while_op,) = [o for o in block.ops if o.name() == "pd_op.while"]
            loop = while_op.as_while_op()
            held = loop.block_arguments()
            for _ in range(64):
                loop.body().add_arg(x.type())
            assert [
                v.is_same(w) for v, w in zip(held, loop.block_arguments())
            ] == [
                True,
                True,
            ]
    finally:
        paddle.disable_static()


def test_kwargs_values_are_not_aliases_of_the_block_storage():
    paddle.enable_static()
    try:
        prog, x = _program_with_data()
        block = prog.global_block()
        block.add_kwarg("k", x.type())
        first, second = block.kwargs()["k"], block.kwargs()["k"]
        # One Value each call, both the same block argument.
        assert first is not second
        assert first.is_same(second)
        del prog, block
        # The handle stays readable after its program is freed (it is not a
        # view of freed storage); it is never dereferenced here.
        assert first.hash() == second.hash()
    finally:
        paddle.disable_static()


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
