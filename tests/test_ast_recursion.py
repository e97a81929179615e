"""A recursive function converted by AST reads its module's globals.

The converted function calls itself through the original module global, so
the other module-level names it uses (a helper, a constant, a PyLayer) are
found at every depth. Output and gradients are compared with eager in AST
and SOT (``MIN_GRAPH_SIZE=0``, 0 graph breaks).
"""

import numpy as np
import paddle
import pytest
from conftest import Square, graph_breaks

SCALE = 1.5


def helper(x):
    return Square.apply(x) * SCALE


def recurse(x, n):
    if n == 0:
        return helper(x)
    return recurse(paddle.tanh(x) + 1.0, n - 1)


def f(x):
    return recurse(x, 3)


def _run(fn):
    x = paddle.to_tensor(
        np.random.default_rng(9).standard_normal((2, 3)), stop_gradient=False
    )
    out = fn(x)
    out.sum().backward()
    return out.numpy(), x.grad.numpy()


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("mode", ["ast", "sot"])
def test_recursive_function_reads_module_globals(mode):
    want = _run(f)
    got = _run(paddle.jit.to_static(f, full_graph=mode == "ast"))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    if mode == "sot":
        assert graph_breaks() == []
