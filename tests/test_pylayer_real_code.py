"""PyLayers as Paddle's ecosystem writes them, under SOT, AST and static
programs, against eager:

- recomputation: ``backward`` re-runs its block under ``enable_grad`` on a
  detached copy of its input and calls ``paddle.grad`` (the copy has two
  uses: the gradient is their sum);
- the clipped straight-through estimator of binary networks: ``backward``
  masks its incoming gradient in place (``g[x >= 1] = 0``);
- LSQ+ fake quantization of the model input (a gradient for every input of
  ``apply``, the input needing none when the model predicts);
- PaddleNLP's ``AddAuxiliaryLoss``: ``paddle.ones([1])`` as the gradient of
  a 0-D loss.

Layers train a few steps with an optimizer, at batch sizes that make SOT
re-trace with a dynamic batch dimension.
"""

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    graph_breaks,
    paddle_inference,
    random_inputs,
    run_eager,
    run_to_static,
)
from paddle.autograd import PyLayer

BATCHES = (2, 3, 4)
MODES = ("sot", "ast")


def _block(a):
    """The recomputed block."""
    return paddle.tanh(a) * a


class Recompute(PyLayer):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _block(a)

    @staticmethod
    def backward(ctx, d):
        (a,) = ctx.saved_tensor()
        with paddle.enable_grad():
            a2 = a.detach()
            a2.stop_gradient = False
            (ga,) = paddle.grad([_block(a2)], [a2], [d])
        return ga


class RecomputeByBackward(Recompute):
    """Recomputation as ``RecomputeFunction`` does it: a backward pass
    (``paddle.autograd.backward``) that fills ``.grad``."""

    @staticmethod
    def backward(ctx, d):
        (a,) = ctx.saved_tensor()
        with paddle.enable_grad():
            a2 = a.detach()
            a2.stop_gradient = False
            paddle.autograd.backward([_block(a2)], [d])
        return a2.grad


class BinaryQuantizer(PyLayer):
    """BiBERT's clipped straight-through estimator."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.sign(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        g[x >= 1] = 0
        g[x <= -1] = 0
        return g.clone()


class LsqPlusAct(PyLayer):
    """LSQ+ fake quantization: a gradient for the input and the step."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.save_for_backward(x, alpha)
        return paddle.round(paddle.clip(x / alpha, -4, 3)) * alpha

    @staticmethod
    def backward(ctx, g):
        x, alpha = ctx.saved_tensor()
        r = x / alpha
        inside = ((r >= -4) & (r <= 3)).astype(g.dtype)
        q = paddle.round(paddle.clip(r, -4, 3))
        galpha = (g * (q - r * inside)).sum().reshape(alpha.shape)
        return g * inside, galpha


class AddAuxiliaryLoss(PyLayer):
    """PaddleNLP's MoE auxiliary loss: the loss gets gradient 1."""

    @staticmethod
    def forward(ctx, x, loss):
        ctx.dtype = loss.dtype
        ctx.required_aux_loss = not loss.stop_gradient
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        grad_loss = None
        if ctx.required_aux_loss:
            grad_loss = paddle.ones([1], dtype=ctx.dtype)
        return grad_output, grad_loss


class Net(paddle.nn.Layer):
    def __init__(self, body):
        super().__init__()
        self.fc1 = paddle.nn.Linear(4, 4)
        self.fc2 = paddle.nn.Linear(4, 2)
        self.body = body

    def forward(self, x):
        return self.fc2(self.body(self, self.fc1(x)))


def _train(body, mode, steps=BATCHES):
    paddle.seed(2024)
    net = Net(body)
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    rng = np.random.default_rng(7)
    out = []
    for batch in steps:
        x = paddle.to_tensor(rng.standard_normal([batch, 4]).astype("float32"))
        loss = net(x).square().mean()
        loss.backward()
        out.append([loss.numpy()] + [p.grad.numpy() for p in net.parameters()])
        opt.step()
        opt.clear_grad()
    return out


def _assert_close(got, want):
    for step, (g, w) in enumerate(zip(got, want)):
        for i, (a, b) in enumerate(zip(g, w)):
            np.testing.assert_allclose(
                a, b, rtol=1e-5, atol=1e-6, err_msg=f"step {step}, result {i}"
            )


def recompute_body(net, h):
    return Recompute.apply(h * 2.0) + h


def ste_body(net, h):
    return BinaryQuantizer.apply(h * 1.5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "body", [recompute_body, ste_body], ids=["recompute", "ste"]
)
def test_training_matches_eager(mode, body):
    _assert_close(_train(body, mode), _train(body, "eager"))


def _recompute(x):
    return Recompute.apply(x * 2.0) + x


def _recompute_by_backward(x):
    return RecomputeByBackward.apply(x * 2.0) + x


def test_recompute_paddle_grad(static_runner):
    assert_same_as_eager(_recompute, random_inputs([2, 3]), static_runner)


def test_recompute_paddle_grad_sot():
    assert_same_as_eager(
        _recompute,
        random_inputs([2, 3]),
        lambda fn, inputs: run_to_static(fn, inputs, full_graph=False),
    )


def _grad_of_detached_copy(x):
    """``paddle.grad`` with respect to a detached copy used twice (stock
    static graphs dropped all but one use's gradient)."""
    a = x.detach()
    a.stop_gradient = False
    y = paddle.tanh(a) * a
    (g,) = paddle.grad([y], [a])
    return g * x


def test_grad_of_detached_copy(static_runner):
    assert_same_as_eager(
        _grad_of_detached_copy, random_inputs([3]), static_runner
    )


def test_grad_of_detached_copy_sot():
    assert_same_as_eager(
        _grad_of_detached_copy,
        random_inputs([3]),
        lambda fn, inputs: run_to_static(fn, inputs, full_graph=False),
    )


def test_grad_of_detached_copy_in_a_hook():
    """``paddle.grad`` inside a hook, built into the backward program."""

    def f(x):
        h = x * 3.0

        def hook(g):
            a = h.detach()
            a.stop_gradient = False
            (ga,) = paddle.grad([a * a], [a])
            return g * ga

        h.register_hook(hook)
        return h * x

    for mode in MODES:
        assert_same_as_eager(
            f,
            random_inputs([3]),
            lambda fn, inputs, m=mode: run_to_static(
                fn, inputs, full_graph=m == "ast"
            ),
        )


def test_recompute_by_backward_pass_sot(sot_env):
    """A backward that runs a backward pass (``paddle.autograd.backward``,
    as ``RecomputeFunction`` does): SOT keeps the PyLayer in its graph and
    runs its ``backward`` at run time, with eager's gradients."""
    fn = _recompute_by_backward
    inputs = random_inputs([2, 3])
    want_out, want_grads = run_eager(fn, inputs)
    got_out, got_grads = run_to_static(fn, inputs, full_graph=False)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12)
    np.testing.assert_allclose(got_grads[0], want_grads[0], rtol=1e-12)
    assert graph_breaks() == []


def test_recompute_by_backward_pass(static_runner):
    """The same under AST and in static programs: the program runs
    ``backward`` at every backward in a run-time op, eager's gradients."""
    assert_same_as_eager(
        _recompute_by_backward, random_inputs([2, 3]), static_runner
    )


class _RecomputedMLP(paddle.nn.Layer):
    """A Layer whose hidden block is recomputed in backward by a backward
    pass, trained with SGD."""

    def __init__(self):
        super().__init__()
        self.inp = paddle.nn.Linear(3, 4)
        self.out = paddle.nn.Linear(4, 2)

    def forward(self, x):
        return self.out(RecomputeByBackward.apply(self.inp(x)))


def _train_recomputed(model, steps=(2, 3, 4)):
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    losses = []
    for batch in steps:
        x = paddle.to_tensor(
            np.random.default_rng(batch).standard_normal((batch, 3))
        )
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    return losses, [p.numpy() for p in model.parameters()]


def test_layer_recomputing_by_a_backward_pass_trains_as_in_eager():
    paddle.set_default_dtype("float64")
    try:
        paddle.seed(7)
        eager = _RecomputedMLP()
        paddle.seed(7)
        ast = paddle.jit.to_static(_RecomputedMLP(), full_graph=True)
        want = _train_recomputed(eager)
        got = _train_recomputed(ast)
    finally:
        paddle.set_default_dtype("float32")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_straight_through_estimator(static_runner):
    def f(x):
        return BinaryQuantizer.apply(x)

    x = np.array([-2.0, -0.5, 0.3, 1.5, 1.0, -1.0])
    assert_same_as_eager(f, [x], static_runner)
    # eager's result, for the record: the clipped region gets no gradient
    _, (grad,) = run_eager(f, [x])
    assert grad[0] == grad[3] == grad[4] == grad[5] == 0


class QuantNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.alpha = self.create_parameter(
            [1], default_initializer=paddle.nn.initializer.Constant(0.5)
        )
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(LsqPlusAct.apply(x, self.alpha))


def _train_and_predict_lsq(mode):
    paddle.seed(0)
    net = QuantNet()
    if mode != "eager":
        net = paddle.jit.to_static(net, full_graph=mode == "ast")
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    rng = np.random.default_rng(3)
    out = []
    for batch in BATCHES:
        x = paddle.to_tensor(rng.standard_normal([batch, 3]).astype("float32"))
        x.stop_gradient = False
        net(x).sum().backward()
        out.append([net.alpha.grad.numpy(), x.grad.numpy()])
        opt.step()
        opt.clear_grad()
    net.eval()
    for batch in BATCHES:
        x = paddle.to_tensor(rng.standard_normal([batch, 3]).astype("float32"))
        out.append([net(x).numpy()])
    return out


@pytest.mark.parametrize("mode", MODES)
def test_lsq_plus_trains_and_predicts(mode):
    """Prediction runs no backward: no rule of ``backward`` applies."""
    _assert_close(_train_and_predict_lsq(mode), _train_and_predict_lsq("eager"))


@pytest.mark.parametrize("mode", MODES)
def test_lsq_plus_backward_for_input_without_gradient(mode):
    """The backward runs with an input that needs no gradient: eager's
    error, when the backward runs (not when the call builds it)."""
    net = QuantNet()
    with pytest.raises(ValueError, match="should return None at 0"):
        net(paddle.rand([2, 3])).sum().backward()
    static_net = paddle.jit.to_static(QuantNet(), full_graph=mode == "ast")
    out = static_net(paddle.rand([2, 3]))  # builds the backward: no error
    with pytest.raises(OSError, match="should return None at position 0"):
        out.sum().backward()


def _round(x):
    """PaddleSlim's rounding (half away from zero)."""
    sign = paddle.sign(x)
    return sign * paddle.floor(paddle.abs(x) + 0.5)


class LsqPlusActFunc(PyLayer):
    """PaddleSlim's LSQ+ activation quantizer: a constant Tensor `g` in
    `ctx.other` (a tuple), and `backward` returns no gradient for `g`, the
    last input (eager allows leaving out those of trailing inputs that
    need none)."""

    @staticmethod
    def forward(ctx, x, alpha, beta, g, Qn, Qp):
        ctx.save_for_backward(x, alpha, beta)
        ctx.other = g, Qn, Qp
        quant_x = _round(paddle.divide((x - beta), alpha)).clip(Qn, Qp)
        return quant_x * alpha + beta

    @staticmethod
    def backward(ctx, grad_x):
        x, alpha, beta = ctx.saved_tensor()
        g, Qn, Qp = ctx.other
        q_x = (x - beta) / alpha
        lower_flag = paddle.cast((q_x < Qn), "float32")
        upper_flag = paddle.cast((q_x > Qp), "float32")
        middle_flag = 1.0 - lower_flag - upper_flag
        grad_alpha = (
            (
                (
                    lower_flag * Qn
                    + upper_flag * Qp
                    + middle_flag * _round(q_x)
                    - middle_flag * q_x
                )
                * grad_x
                * g
            )
            .sum()
            .unsqueeze(axis=0)[0]
        )
        grad_beta = (
            ((lower_flag + upper_flag) * grad_x * g).sum().unsqueeze(axis=0)[0]
        )
        grad_x = middle_flag * grad_x
        return grad_x, grad_alpha, grad_beta


class FakeQuantActLSQPlus(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.Qn, self.Qp = -8, 7
        self.s = self.create_parameter(
            [], default_initializer=paddle.nn.initializer.Constant(0.25)
        )
        self.beta = self.create_parameter(
            [], default_initializer=paddle.nn.initializer.Constant(0.125)
        )
        self.g = paddle.to_tensor(0.125)

    def forward(self, activation):
        activation.stop_gradient = False
        return LsqPlusActFunc.apply(
            activation, self.s, self.beta, self.g, self.Qn, self.Qp
        )


class PaddleSlimQuantNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.quant = FakeQuantActLSQPlus()
        self.fc = paddle.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(self.quant(x))


def _train_paddleslim_lsq(mode):
    paddle.seed(0)
    net = PaddleSlimQuantNet()
    static_net = net
    if mode != "eager":
        static_net = paddle.jit.to_static(net, full_graph=mode == "ast")
    opt = paddle.optimizer.SGD(0.1, parameters=net.parameters())
    rng = np.random.default_rng(5)
    out = []
    for batch in BATCHES:
        # `stop_gradient=True`: the quantizer's
        # `activation.stop_gradient = False` makes it differentiable
        x = paddle.to_tensor(rng.standard_normal([batch, 3]).astype("float32"))
        static_net(x).square().sum().backward()
        out.append(
            [
                x.grad.numpy(),
                net.quant.s.grad.numpy(),
                net.quant.beta.grad.numpy(),
            ]
        )
        opt.step()
        opt.clear_grad()
    return net, static_net, out


@pytest.mark.parametrize("mode", MODES)
def test_paddleslim_lsq_plus_trains(mode):
    """Stock AST: `Not found key in IRMapping` (the Tensor in `ctx.other`
    belonged to the traced program), and the missing gradient of `g` an
    error; the input the quantizer makes differentiable got no gradient
    (stock SOT: an error)."""
    _assert_close(
        _train_paddleslim_lsq(mode)[2], _train_paddleslim_lsq("eager")[2]
    )


def test_paddleslim_lsq_plus_default_export_predicts(tmp_path):
    """The default `jit.save` export (with its `pylayer` op) in Paddle
    Inference predicts eager's outputs."""
    from paddle.static import InputSpec

    net, static_net, _ = _train_paddleslim_lsq("sot")
    net.eval()
    prefix = str(tmp_path / "lsq")
    paddle.jit.save(
        static_net, prefix, input_spec=[InputSpec([-1, 3], "float32", "x")]
    )
    x = np.random.default_rng(9).standard_normal([5, 3]).astype("float32")
    got = paddle_inference(prefix)(x)[0]
    np.testing.assert_allclose(got, net(paddle.to_tensor(x)).numpy(), rtol=1e-6)


def _auxiliary_loss(x, w):
    aux = (w * w).sum()
    return AddAuxiliaryLoss.apply(x * w, aux)


def test_auxiliary_loss(static_runner):
    assert_same_as_eager(
        _auxiliary_loss, random_inputs([3], [3]), static_runner
    )


def test_auxiliary_loss_sot():
    assert_same_as_eager(
        _auxiliary_loss,
        random_inputs([3], [3]),
        lambda fn, inputs: run_to_static(fn, inputs, full_graph=False),
    )


class ScaleByConfig(PyLayer):
    """Takes a Tensor inside a dict: eager's `apply` does not count it as
    an input (no gradient through the PyLayer), `forward` reads it."""

    @staticmethod
    def forward(ctx, x, cfg):
        ctx.factor = cfg["factor"]
        return x * cfg["w"] * cfg["factor"]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor


def _dict_argument(x, w):
    return ScaleByConfig.apply(x, {"w": w, "factor": 2.0})


def test_tensor_in_a_dict_argument(static_runner):
    assert_same_as_eager(_dict_argument, random_inputs([3], [3]), static_runner)


def test_tensor_in_a_dict_argument_sot():
    assert_same_as_eager(
        _dict_argument,
        random_inputs([3], [3]),
        lambda fn, inputs: run_to_static(fn, inputs, full_graph=False),
    )


class ScaleInPlace(PyLayer):
    """``forward`` changes its input in place and returns it."""

    @staticmethod
    def forward(ctx, a):
        a.scale_(2.0)
        return a

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


def _forward_in_place(x):
    return ScaleInPlace.apply(x * 1.0) * x


def _forward_in_place_input_used_after(x):
    a = x * 1.0
    y = ScaleInPlace.apply(a)
    return y * a


def test_forward_changes_its_input_in_place(static_runner):
    assert_same_as_eager(_forward_in_place, random_inputs([3]), static_runner)


def test_forward_changes_its_input_in_place_sot():
    assert_same_as_eager(
        _forward_in_place,
        random_inputs([3]),
        lambda fn, inputs: run_to_static(fn, inputs, full_graph=False),
    )


@pytest.mark.parametrize("full_graph", [True, False])
def test_input_changed_in_place_used_after_apply_is_clear_error(full_graph):
    with pytest.raises(NotImplementedError, match="changes its input Tensor"):
        run_to_static(
            _forward_in_place_input_used_after, random_inputs([3]), full_graph
        )


class TwoOutputs(PyLayer):
    """``backward`` returns the gradient of its first output, which the
    caller does not use: the zeros eager fills it with."""

    @staticmethod
    def forward(ctx, a):
        t = paddle.cos(a)
        return t * t, t - 0.5

    @staticmethod
    def backward(ctx, d0, d1):
        return d0


class NoneGradients(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        return paddle.tanh(a) * b

    @staticmethod
    def backward(ctx, d):
        return None, None


def _zero_gradient_of_an_unused_output(x, y):
    # x's gradient is only the zeros TwoOutputs.backward returns (static
    # graphs pruned the op making them: a segfault, or None)
    out = paddle.square(NoneGradients.apply(x, y))
    return out + TwoOutputs.apply(x)[1].sum() + y


def test_gradient_that_is_the_zeros_of_an_unused_output(static_runner):
    assert_same_as_eager(
        _zero_gradient_of_an_unused_output,
        random_inputs([3], [3]),
        static_runner,
    )


def test_gradient_that_is_the_zeros_of_an_unused_output_sot():
    assert_same_as_eager(
        _zero_gradient_of_an_unused_output,
        random_inputs([3], [3]),
        lambda fn, inputs: run_to_static(fn, inputs, full_graph=False),
    )
