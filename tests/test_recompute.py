"""``paddle.distributed.fleet.utils.recompute`` of blocks holding a PyLayer
and hooks, under SOT and AST, against eager (bitwise: the same ops run).

Hooks: one registered eagerly on a parameter of each block (it counts its
calls), one in ``forward`` on each recomputed block's output, and, with
``use_reentrant=False``, one inside the block. Batch sizes change between
calls so that SOT re-traces with a dynamic batch dimension. SOT traces the
recomputed blocks into its graph (stock SOT broke the graph inside
``recompute`` and ran that part eagerly).

With ``use_reentrant=True`` eager runs the block's first forward without
gradient, so ``register_hook`` inside the block is eager's "stop gradient"
error; SOT and AST trace the block once, with gradient, and apply the hook
as documented (the gradient of the block's tensor, as without recompute).
"""

import numpy as np
import paddle
import pytest
from conftest import assert_steps_bitwise, graph_breaks
from data_parallel_worker import Square
from paddle.distributed.fleet.utils import recompute

BATCHES = (2, 4, 4, 8)
# the tests convert the same forward: each records its own graph breaks
pytestmark = pytest.mark.usefixtures("fresh_sot_cache")


class Block(paddle.nn.Layer):
    def __init__(self, inner_hook):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 4)
        self.inner_hook = inner_hook

    def forward(self, x):
        h = self.fc(x)
        if self.inner_hook:
            h.register_hook(lambda g: g * 0.5)
        return Square.apply(paddle.tanh(h)) + x


class Net(paddle.nn.Layer):
    def __init__(self, use_reentrant, recomputed=True, inner_hook=None):
        super().__init__()
        if inner_hook is None:
            inner_hook = not use_reentrant
        self.blocks = paddle.nn.LayerList([Block(inner_hook) for _ in range(2)])
        self.out = paddle.nn.Linear(4, 1)
        self.use_reentrant = use_reentrant
        self.recomputed = recomputed

    def forward(self, x):
        h = x
        for block in self.blocks:
            if self.recomputed:
                h = recompute(block, h, use_reentrant=self.use_reentrant)
            else:
                h = block(h)
            h.register_hook(lambda g: g - 0.25)
        return self.out(h).sum()


def train(mode, **net_args):
    """Loss, input gradient and parameter gradients at each batch size, and
    the number of calls of the parameter hooks."""
    paddle.seed(2026)
    net = Net(**net_args)
    calls = []
    for block in net.blocks:
        block.fc.weight.register_hook(lambda g: (calls.append(1), g * 3.0)[1])
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    rng = np.random.default_rng(0)
    results = []
    for n in BATCHES:
        x = paddle.to_tensor(rng.standard_normal((n, 4)), stop_gradient=False)
        loss = net(x)
        loss.backward()
        grads = [p.grad.numpy() for p in net.parameters()]
        results.append([loss.numpy(), x.grad.numpy(), *grads])
        net.clear_gradients()
    return results, len(calls)


def assert_bitwise(got, want):
    assert_steps_bitwise(got, want, [f"batch {n}" for n in BATCHES])


@pytest.fixture(autouse=True)
def float64():
    dtype = paddle.get_default_dtype()
    paddle.set_default_dtype("float64")
    yield
    paddle.set_default_dtype(dtype)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_ast(use_reentrant):
    want, want_calls = train("eager", use_reentrant=use_reentrant)
    got, calls = train("ast", use_reentrant=use_reentrant)
    assert_bitwise(got, want)
    assert calls == want_calls == 2 * len(BATCHES)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_sot(sot_env, use_reentrant):
    want, want_calls = train("eager", use_reentrant=use_reentrant)
    got, calls = train("sot", use_reentrant=use_reentrant)
    assert_bitwise(got, want)
    assert calls == want_calls == 2 * len(BATCHES)
    # SOT traces the block into the graph (stock SOT broke the graph in
    # recompute, at inspect.signature and at get_rng_state, and ran it
    # eagerly)
    assert not graph_breaks()


def test_reentrant_hook_inside_block_eager_error():
    with pytest.raises(RuntimeError, match="stop gradient"):
        train("eager", use_reentrant=True, inner_hook=True)


@pytest.mark.parametrize("mode", ["sot", "ast"])
def test_reentrant_hook_inside_block_static(sot_env, mode):
    """SOT and AST apply the hook: the results are eager's without
    recompute."""
    want, want_calls = train(
        "eager", use_reentrant=True, recomputed=False, inner_hook=True
    )
    got, calls = train(mode, use_reentrant=True, inner_hook=True)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert calls == want_calls


class TwoBlocks(paddle.nn.Layer):
    def __init__(self, use_reentrant):
        super().__init__()
        self.first = paddle.nn.Linear(4, 4)
        self.second = paddle.nn.Linear(4, 4)
        self.use_reentrant = use_reentrant

    def forward(self, x):
        h = recompute(self.first, x, use_reentrant=self.use_reentrant)
        h = recompute(self.second, h, use_reentrant=self.use_reentrant)
        return h.sum() + (self.second.weight * 2.0).sum()


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("mode", ["sot", "ast"])
def test_block_whose_inputs_need_no_gradient(sot_env, mode, use_reentrant):
    """The input data (stop_gradient=True) straight into a recomputed
    block. Eager's reentrant recompute is a PyLayer: its output needs no
    gradient either, and the block's parameters get none (eager warns);
    the non-reentrant one differentiates the parameters."""

    def run(mode):
        paddle.seed(5)
        net = TwoBlocks(use_reentrant)
        if mode != "eager":
            net = paddle.jit.to_static(net, full_graph=mode == "ast")
        results = []
        for n in BATCHES:
            x = paddle.to_tensor(
                np.random.default_rng(n).standard_normal((n, 4))
            )
            loss = net(x)
            loss.backward()
            results.append(
                [loss.numpy()]
                + [
                    None if p.grad is None else p.grad.numpy()
                    for p in net.parameters()
                ]
            )
            net.clear_gradients()
        return results

    want, got = run("eager"), run(mode)
    for w, g in zip(want, got):
        assert [a is None for a in g] == [a is None for a in w]
        for a, b in zip(g, w):
            if b is not None:
                np.testing.assert_array_equal(a, b)
    assert (want[0][1] is None) == use_reentrant
    assert not graph_breaks()
