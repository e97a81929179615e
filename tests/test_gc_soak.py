"""Garbage collection during backward builds.

Collections used to decide when stale block-argument views (see
``test_block_argument_values.py``) crashed a later build, so this file
keeps two guards:

- Every build leaves no backward ``State`` to the collector: the build
  breaks the reference cycles of ``append_backward_ops``' recursive
  closures when it ends.
- A soak run: 2,000 builds (static programs with a hook, ``cond``,
  ``while_loop`` and a PyLayer; AST and SOT functions with compiled and
  run-time hooks, an ``if`` and a PyLayer) in one process, with the
  collector set to collect every 20 allocations, so that collections
  happen inside builds. A crash fails the test.
"""

import gc
import os
import subprocess
import sys

import paddle
from paddle.autograd.backward_utils import State

HERE = os.path.dirname(os.path.abspath(__file__))


def _live_states():
    return [o for o in gc.get_objects() if isinstance(o, State)]


def test_backward_build_leaves_no_state_to_the_collector():
    gc.collect()
    gc.disable()
    try:
        before = len(_live_states())
        paddle.enable_static()
        try:
            with paddle.static.program_guard(paddle.static.Program()):
                x = paddle.static.data("x", [3], "float32")
                x.stop_gradient = False
                y = paddle.concat([paddle.tanh(x), x * 2.0]).sum()
                paddle.static.gradients([y], [x])
        finally:
            paddle.disable_static()
        assert len(_live_states()) == before
    finally:
        gc.enable()


def test_soak_builds_with_frequent_collections():
    run = subprocess.run(
        [sys.executable, os.path.join(HERE, "soak_builds.py"), "2000"],
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ, MIN_GRAPH_SIZE="0"),
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
    assert "soak: 2001 builds" in run.stdout, run.stdout[-2000:]
