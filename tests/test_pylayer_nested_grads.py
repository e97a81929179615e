"""``PyLayer.backward`` returns its gradients in the structure of the
inputs of ``forward`` (``[dx0, dx1], dy`` for ``forward(ctx, [x0, x1], y)``,
``None`` inside for an input without gradient), as eager reads them: every
mode gives eager's gradients (SOT with ``MIN_GRAPH_SIZE=0``, 0 breaks)."""

import numpy as np
import paddle
import pytest
from conftest import graph_breaks
from paddle.autograd import PyLayer


class Nested(PyLayer):
    @staticmethod
    def forward(ctx, xs, y):
        return xs[0] * 2.0 + paddle.sin(xs[1]) + y * 4.0

    @staticmethod
    def backward(ctx, dz):
        return [dz * 2.0, dz * 3.0], dz * 4.0


class NestedWithNone(Nested):
    @staticmethod
    def backward(ctx, dz):
        return [dz * 2.0, None], dz * 4.0


def _fn(layer):
    def f(a, b, c):
        return layer.apply([a, b], c)

    return f


INPUTS = [np.array([0.5, -1.0]), np.array([2.0, 0.25]), np.array([1.5, 3.0])]


def _grads(f):
    ts = [paddle.to_tensor(a, stop_gradient=False) for a in INPUTS]
    out = f(*ts)
    (out * paddle.to_tensor([0.3, -0.7], dtype="float64")).sum().backward()
    return [out.numpy()] + [
        None if t.grad is None else t.grad.numpy() for t in ts
    ]


def _static_grads(f):
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            xs = []
            for i in range(3):
                x = paddle.static.data(f"x{i}", [2], "float64")
                x.stop_gradient = False
                xs.append(x)
            out = f(*xs)
            cot = paddle.static.data("cot", [2], "float64")
            grads = paddle.static.gradients([(out * cot).sum()], xs)
        exe = paddle.static.Executor(paddle.CPUPlace())
        fetch = [out] + [g for g in grads if g is not None]
        res = iter(
            exe.run(
                main,
                feed={
                    "cot": np.array([0.3, -0.7]),
                    **{f"x{i}": a for i, a in enumerate(INPUTS)},
                },
                fetch_list=fetch,
            )
        )
        return [next(res)] + [None if g is None else next(res) for g in grads]
    finally:
        paddle.disable_static()


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize("layer", [Nested, NestedWithNone])
@pytest.mark.parametrize("mode", ["ast", "sot", "static"])
def test_nested_gradient_structure_matches_eager(mode, layer):
    f = _fn(layer)
    want = _grads(f)
    if mode == "static":
        got = _static_grads(f)
    else:
        got = _grads(paddle.jit.to_static(f, full_graph=mode == "ast"))
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    if mode == "sot":
        assert graph_breaks() == []
