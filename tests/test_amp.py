"""``paddle.amp`` with hooks and a PyLayer under SOT and AST, against eager
(bitwise), on CPU.

On CPU eager ``auto_cast`` warns and makes no effect, ``decorate`` at O2
keeps float32 parameters and ``GradScaler`` scales the loss and unscales the
gradients. A converted model must do exactly the same, whether
``auto_cast`` is around the call or inside ``forward``.
"""

import warnings

import numpy as np
import paddle
import pytest
from conftest import assert_steps_bitwise, graph_breaks
from data_parallel_worker import Square

pytestmark = [
    pytest.mark.skipif(
        paddle.is_compiled_with_cuda() or paddle.is_compiled_with_xpu(),
        reason="these are eager's CPU semantics",
    ),
    # the tests convert the same forward: each records its own graph breaks
    pytest.mark.usefixtures("fresh_sot_cache"),
]

CASTS = [(level, dtype) for level in ("O1", "O2") for dtype in ("float16", "bfloat16")]  # fmt: skip
STEPS = 3


class Net(paddle.nn.Layer):
    def __init__(self, inner_cast=None):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 1)
        self.inner_cast = inner_cast

    def body(self, x):
        h = self.fc1(x)
        h.register_hook(lambda g: g * 0.5)
        return self.fc2(Square.apply(paddle.tanh(h))).mean()

    def forward(self, x):
        if self.inner_cast is None:
            return self.body(x)
        level, dtype = self.inner_cast
        with paddle.amp.auto_cast(level=level, dtype=dtype):
            return self.body(x)


def train(mode, level, dtype, where, decorate=False, scaler=False):
    """Loss, input gradient and parameters after each SGD step."""
    paddle.seed(2026)
    net = Net((level, dtype) if where == "inside" else None)
    net.fc1.weight.register_hook(lambda g: g * 3.0)
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    if decorate:
        net, opt = paddle.amp.decorate(net, opt, level=level, dtype=dtype)
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    rng = np.random.default_rng(0)
    results = []
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "AmpScaler can only be enabled")
        grad_scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0)
        warnings.filterwarnings("ignore", "amp_guard can only be enabled")
        for n in (2, 4, 8)[:STEPS]:
            x = paddle.to_tensor(
                rng.standard_normal((n, 4)).astype("float32"),
                stop_gradient=False,
            )
            if where == "around":
                with paddle.amp.auto_cast(level=level, dtype=dtype):
                    loss = net(x)
            else:
                loss = net(x)
            if scaler:
                grad_scaler.scale(loss).backward()
                grad_scaler.step(opt)
                grad_scaler.update()
            else:
                loss.backward()
                opt.step()
            opt.clear_grad()
            params = [p.numpy() for p in net.parameters()]
            results.append([loss.numpy(), x.grad.numpy(), *params])
    return results


def assert_bitwise(got, want):
    assert_steps_bitwise(got, want, [f"step {i}" for i in range(STEPS)])


@pytest.mark.parametrize("where", ["around", "inside"])
@pytest.mark.parametrize(("level", "dtype"), CASTS)
def test_ast(level, dtype, where):
    want = train("eager", level, dtype, where)
    assert_bitwise(train("ast", level, dtype, where), want)


@pytest.mark.parametrize("where", ["around", "inside"])
@pytest.mark.parametrize(("level", "dtype"), CASTS)
def test_sot(sot_env, level, dtype, where):
    want = train("eager", level, dtype, where)
    assert_bitwise(train("sot", level, dtype, where), want)
    if where == "around":
        assert graph_breaks() == []


@pytest.mark.parametrize("mode", ["ast", "sot"])
@pytest.mark.parametrize(("level", "dtype"), CASTS)
def test_decorate_and_grad_scaler(sot_env, mode, level, dtype):
    args = dict(where="around", decorate=True, scaler=True)
    want = train("eager", level, dtype, **args)
    assert_bitwise(train(mode, level, dtype, **args), want)


def test_inside_warns_as_eager():
    net = paddle.jit.to_static(Net(("O1", "bfloat16")), full_graph=True)
    x = paddle.ones([2, 4])
    with pytest.warns(UserWarning, match="so it makes no effect"):
        net(x)
