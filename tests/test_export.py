"""Export of models with PyLayers and hooks: Paddle Inference and ONNX.

Each model is saved with ``paddle.jit.save(..., inline_pylayer=True)`` and
run with Paddle Inference, and exported with ``paddle.onnx.export`` and run
with onnxruntime; both must give eager's outputs. Models return their
per-row outputs (no ``mean``): a scalar would hide a wrong row or a wrong
batch size.
"""

import os
import subprocess
import sys
import textwrap

import conftest  # noqa: F401  (sets FLAGS_enable_pir_api before paddle)
import numpy as np
import paddle
import pytest
from conftest import paddle_inference
from paddle.autograd import PyLayer
from paddle.static import InputSpec

# paddle2onnx 2.1.0 and the onnx it needs have no CPython 3.13 wheel
# (requirements-test.txt): ONNX export is tested on 3.9 to 3.12 only.
ONNX_TESTED = sys.version_info < (3, 13)
needs_onnx = pytest.mark.skipif(
    not ONNX_TESTED, reason="paddle2onnx 2.1.0 has no CPython 3.13 wheel"
)
if ONNX_TESTED:
    import onnxruntime

BATCH_SIZES = (1, 3, 7)
SPEC = [InputSpec([-1, 4], "float32", "x")]


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x, func1, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


class TwoOut(PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return paddle.tanh(x), x * 3.0

    @staticmethod
    def backward(ctx, da, db):
        (x,) = ctx.saved_tensor()
        return da * (1 - paddle.tanh(x) ** 2) + db * 3.0


class Inner(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.exp(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


class Outer(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = Inner.apply(x * 0.5)
        ctx.save_for_backward(y)
        return y + 1.0

    @staticmethod
    def backward(ctx, dy):
        return dy


class WithLgamma(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.lgamma(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


class SimpleNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        return cus_tanh.apply(self.linear(x), func1=paddle.tanh)


class TwoOutNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        a, b = TwoOut.apply(self.linear(x))
        return a, b


class NestedNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        return Outer.apply(self.linear(x))


class IfNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        y = self.linear(x)
        if y.mean() > 0:
            out = cus_tanh.apply(y, func1=paddle.tanh)
        else:
            out = cus_tanh.apply(y, func1=paddle.sin)
        return out


class HookNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear1 = paddle.nn.Linear(4, 8)
        self.linear2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        h = paddle.tanh(self.linear1(x))
        h.register_hook(lambda g: g * 2)
        return self.linear2(h)


MODELS = {
    "simple": SimpleNet,
    "two_outputs": TwoOutNet,
    "nested": NestedNet,
    "in_if": IfNet,
    "hook": HookNet,
}


def _inputs(batch):
    rng = np.random.default_rng(batch)
    return rng.standard_normal((batch, 4)).astype("float32")


def _eager(net, x):
    out = net(paddle.to_tensor(x))
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [o.numpy() for o in outs]


def _pylayer_ops(program):
    def walk(block):
        for op in block.ops:
            if op.name() == "pd_op.pylayer":
                yield op
            for sub in op.blocks():
                yield from walk(sub)

    return list(walk(program.global_block()))


def _model(name, bias=0.0):
    paddle.seed(2024)
    net = MODELS[name]()
    if bias:  # push the `if` of IfNet into its other branch
        net.linear.bias.set_value(net.linear.bias + bias)
    net.eval()
    return net


@pytest.fixture(params=sorted(MODELS))
def model_name(request):
    return request.param


def _predict(prefix, x):
    return paddle_inference(prefix)(x)


def test_inlined_program_has_no_pylayer(model_name, tmp_path):
    net = _model(model_name)
    prefix = str(tmp_path / "m")
    paddle.jit.save(net, prefix, input_spec=SPEC, inline_pylayer=True)
    assert not _pylayer_ops(paddle.jit.load(prefix).program())


@pytest.mark.parametrize("pylayer_model", sorted(set(MODELS) - {"hook"}))
def test_plain_save_keeps_pylayer(pylayer_model, tmp_path):
    net = _model(pylayer_model)
    prefix = str(tmp_path / "m")
    paddle.jit.save(net, prefix, input_spec=SPEC)
    assert _pylayer_ops(paddle.jit.load(prefix).program())


# (model, bias): the `if` model also with each branch forced.
EXPORT_CASES = [(name, 0.0) for name in sorted(MODELS)] + [
    ("in_if", -50.0),
    ("in_if", 50.0),
]


@pytest.mark.parametrize("inline", [True, False], ids=["inlined", "default"])
@pytest.mark.parametrize("model_name, bias", EXPORT_CASES)
def test_paddle_inference_equals_eager(model_name, bias, inline, tmp_path):
    """The predictor runs the inlined export and the default one, whose
    `pylayer` ops run their forward block."""
    net = _model(model_name, bias)
    prefix = str(tmp_path / "m")
    paddle.jit.save(net, prefix, input_spec=SPEC, inline_pylayer=inline)
    for batch in BATCH_SIZES:
        x = _inputs(batch)
        want = _eager(net, x)
        got = _predict(prefix, x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@needs_onnx
@pytest.mark.parametrize("model_name, bias", EXPORT_CASES)
def test_onnx_equals_eager(model_name, bias, tmp_path):
    net = _model(model_name, bias)
    path = str(tmp_path / "m")
    paddle.onnx.export(net, path, input_spec=SPEC, opset_version=11)
    session = onnxruntime.InferenceSession(path + ".onnx")
    for batch in BATCH_SIZES:
        x = _inputs(batch)
        want = _eager(net, x)
        got = session.run(None, {session.get_inputs()[0].name: x})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@needs_onnx
def test_unsupported_op_in_pylayer_is_a_clear_error(tmp_path):
    script = textwrap.dedent(
        f"""
        import paddle
        from paddle.autograd import PyLayer

        class WithLgamma(PyLayer):
            @staticmethod
            def forward(ctx, x):
                return paddle.lgamma(x)

            @staticmethod
            def backward(ctx, dy):
                return dy

        class Net(paddle.nn.Layer):
            def __init__(self):
                super().__init__()
                self.linear = paddle.nn.Linear(4, 8)

            def forward(self, x):
                return WithLgamma.apply(self.linear(x))

        spec = [paddle.static.InputSpec([-1, 4], "float32", "x")]
        try:
            paddle.onnx.export(Net(), {str(tmp_path / "m")!r}, input_spec=spec)
        except ValueError as e:
            print("ERROR:", e)
            raise SystemExit(3)
        """
    )
    file = tmp_path / "export_lgamma.py"
    file.write_text(script)
    env = dict(os.environ, FLAGS_enable_pir_api="1")
    proc = subprocess.run(
        [sys.executable, str(file)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "pd_op.lgamma" in proc.stdout
    assert "WithLgamma" in proc.stdout


# Fine-tuning a `jit.load`ed model through its PyLayers' custom backward.
# Each backward below differs from the true derivative of its forward, so
# a gradient taken from the forward ops (or no gradient) would show.
_FINETUNE_MODELS = '''
import paddle
from paddle.autograd import PyLayer


class DoubleTanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        return 2 * dy


class SavedScale(PyLayer):
    @staticmethod
    def forward(ctx, x, scale, func=paddle.tanh):
        ctx.scale = scale
        y = func(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensor()
        return dy * (ctx.scale - y) + 0.5 * x


class Net(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear1 = paddle.nn.Linear(4, 8)
        self.linear2 = paddle.nn.Linear(8, 3)

    def forward(self, x):
        h = DoubleTanh.apply(self.linear1(x))
        return SavedScale.apply(self.linear2(h), 3.0, func=paddle.sin)
'''

_FINETUNE_CYCLES = '''
import gc
import sys

import numpy as np
import paddle
from finetune_models import Net
from paddle.static import InputSpec

SPEC = [InputSpec([-1, 4], "float32", "x")]
x_np = np.random.default_rng(0).standard_normal((5, 4)).astype("float32")


def grads_and_next_output(net, params):
    x = paddle.to_tensor(x_np, stop_gradient=False)
    net(x).sum().backward()
    grads = [x.grad.numpy()] + [p.grad.numpy() for p in params]
    opt = paddle.optimizer.SGD(0.1, parameters=params)
    opt.step()
    opt.clear_grad()
    return grads, net(paddle.to_tensor(x_np)).numpy()


for cycle in range(int(sys.argv[2])):
    paddle.seed(cycle)
    net = Net()
    prefix = f"{sys.argv[1]}/m{cycle}"
    paddle.jit.save(
        paddle.jit.to_static(net, full_graph=True), prefix, input_spec=SPEC
    )
    want = grads_and_next_output(net, net.parameters())
    del net
    gc.collect()  # frees the trace program
    loaded = paddle.jit.load(prefix)
    loaded.train()
    # The parameters of `Net` have distinct shapes: match them by shape.
    by_shape = {tuple(p.shape): p for p in loaded.parameters()}
    params = [by_shape[tuple(p.shape)] for p in Net().parameters()]
    got = grads_and_next_output(loaded, params)
    for g, w in zip(got[0], want[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    del loaded
    gc.collect()
print("cycles ok")
'''


def _run_python(tmp_path, name, code, *args):
    (tmp_path / "finetune_models.py").write_text(_FINETUNE_MODELS)
    file = tmp_path / name
    file.write_text(code)
    env = dict(
        os.environ,
        FLAGS_enable_pir_api="1",
        PYTHONPATH=os.pathsep.join(
            [str(tmp_path), os.environ.get("PYTHONPATH", "")]
        ),
    )
    return subprocess.run(
        [sys.executable, str(file), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_finetune_loaded_pylayer_in_the_saving_process(tmp_path):
    """20 save / free / load / train cycles in one process: no crash (the
    backward function used to read the freed trace program), and the
    gradients and the next output equal eager's, custom backward and all."""
    proc = _run_python(tmp_path, "cycles.py", _FINETUNE_CYCLES, tmp_path, 20)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "cycles ok" in proc.stdout


_FRESH_PROCESS = '''
import sys

import numpy as np
import paddle
from finetune_models import Net

# Register backward functions in this process first: the loaded op's
# backward_function_id then names one of them, not the saved one.
for _ in range(40):
    x = paddle.to_tensor(np.ones((2, 4), "float32"), stop_gradient=False)
    paddle.jit.to_static(Net(), full_graph=True)(x).sum().backward()

loaded = paddle.jit.load(sys.argv[1])
x_np = np.random.default_rng(1).standard_normal((3, 4)).astype("float32")
loaded.eval()
print("predict", list(loaded(paddle.to_tensor(x_np)).shape))
loaded.train()
x = paddle.to_tensor(x_np, stop_gradient=False)
loaded(x).sum().backward()
paddle.seed(0)
eager = Net()
x_eager = paddle.to_tensor(x_np, stop_gradient=False)
eager(x_eager).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), x_eager.grad.numpy(), rtol=1e-5)
print("trained as eager")
'''


def test_finetune_loaded_pylayer_in_a_fresh_process(tmp_path):
    """In another process that imports the module of its PyLayers, the
    loaded model finds their classes and trains with eager's gradients;
    the backward functions that process registered itself are not
    mistaken for the saved ones."""
    proc = _run_python(tmp_path, "save.py", _FINETUNE_CYCLES, tmp_path, 1)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    proc = _run_python(tmp_path, "fresh.py", _FRESH_PROCESS, tmp_path / "m0")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "predict [3, 3]" in proc.stdout
    assert "trained as eager" in proc.stdout


@pytest.mark.parametrize("pylayer_model", sorted(set(MODELS) - {"hook"}))
def test_finetune_loaded_model_equals_eager(pylayer_model, tmp_path):
    """The export models, saved with their `pylayer` ops and loaded: the
    gradients of the input and the parameters equal eager's."""
    net = _model(pylayer_model)
    net.train()
    prefix = str(tmp_path / "m")
    paddle.jit.save(net, prefix, input_spec=SPEC)
    loaded = paddle.jit.load(prefix)
    loaded.train()
    x_np = _inputs(3)

    def grads(layer):
        x = paddle.to_tensor(x_np, stop_gradient=False)
        out = layer(x)
        outs = out if isinstance(out, (list, tuple)) else [out]
        sum((o * (i + 1)).sum() for i, o in enumerate(outs)).backward()
        # Parameters of distinct shapes: the linear layer's weight and bias.
        params = sorted(layer.parameters(), key=lambda p: len(p.shape))
        return [x.grad.numpy()] + [p.grad.numpy() for p in params]

    for got, want in zip(grads(loaded), grads(net)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# Reductions over all axes. paddle2onnx 2.1.0 aborts the process on a
# `mean` over all axes ("Can not get input 'axis(dim)' value") unless the
# export writes the axes out.
class MeanCenter(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x - x.mean()

    @staticmethod
    def backward(ctx, dy):
        return dy


REDUCE_ALL = {
    "mean": lambda y: y.mean(),
    "paddle_mean_keepdim": lambda y: paddle.mean(y, keepdim=True),
    "mean_axis_empty": lambda y: paddle.mean(y, axis=[]),
    "mean_3d": lambda y: y.reshape([-1, 2, 4]).mean(),
    "mean_of_0d": lambda y: y.mean().mean(),
    "mean_in_pylayer": lambda y: MeanCenter.apply(y),
    "mse_loss": lambda y: paddle.nn.functional.mse_loss(y, y * 0.5),
    "sum": lambda y: y.sum(),
    "sum_keepdim": lambda y: y.sum(keepdim=True),
    "max": lambda y: y.max(),
    "min_max_mean": lambda y: y.min() + y.max() + y.mean(),
}


class ReduceAllNet(paddle.nn.Layer):
    def __init__(self, reduce):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)
        self.reduce = reduce

    def forward(self, x):
        y = self.linear(x)
        return y * 2.0 + self.reduce(y)


class MeanOutNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)

    def forward(self, x):
        return self.linear(x).mean()


@needs_onnx
@pytest.mark.parametrize("reduce", sorted(REDUCE_ALL))
def test_onnx_reduce_over_all_axes_equals_eager(reduce, tmp_path):
    paddle.seed(2024)
    net = ReduceAllNet(REDUCE_ALL[reduce])
    net.eval()
    path = str(tmp_path / "m")
    paddle.onnx.export(net, path, input_spec=SPEC, opset_version=11)
    session = onnxruntime.InferenceSession(path + ".onnx")
    for batch in BATCH_SIZES:
        x = _inputs(batch)
        (want,) = _eager(net, x)
        (got,) = session.run(None, {session.get_inputs()[0].name: x})
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@needs_onnx
def test_onnx_mean_output_equals_eager(tmp_path):
    """A model whose output is a mean over all axes. paddle2onnx gives a
    reduction over all axes the shape [1] (eager: [])."""
    paddle.seed(2024)
    net = MeanOutNet()
    net.eval()
    path = str(tmp_path / "m")
    paddle.onnx.export(net, path, input_spec=SPEC, opset_version=11)
    session = onnxruntime.InferenceSession(path + ".onnx")
    for batch in BATCH_SIZES:
        x = _inputs(batch)
        (want,) = _eager(net, x)
        (got,) = session.run(None, {session.get_inputs()[0].name: x})
        assert got.shape == (1,) and want.shape == ()
        np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)


_OUTER = {}


class SaveOuter(PyLayer):
    """Saves a tensor that is neither an input of forward nor computed by
    it: jit.save cannot keep it for the backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(_OUTER["w"])
        return paddle.tanh(x)

    @staticmethod
    def backward(ctx, dy):
        (w,) = ctx.saved_tensor()
        return dy * w


class SaveOuterNet(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.linear = paddle.nn.Linear(4, 8)
        self.w = self.create_parameter([8])

    def forward(self, x):
        _OUTER["w"] = self.w * 1.0
        return SaveOuter.apply(self.linear(x))


def test_finetune_loaded_pylayer_that_saved_an_outer_tensor_is_clear_error(
    tmp_path,
):
    prefix = str(tmp_path / "m")
    paddle.jit.save(
        paddle.jit.to_static(SaveOuterNet(), full_graph=True),
        prefix,
        input_spec=SPEC,
    )
    loaded = paddle.jit.load(prefix)
    x = paddle.to_tensor(_inputs(3))
    loaded.eval()
    assert loaded(x).shape == [3, 8]
    loaded.train()
    with pytest.raises(RuntimeError, match="PyLayer `SaveOuter`.*neither"):
        loaded(x).sum().backward()


def _ops_named(program, name):
    def walk(block):
        for op in block.ops:
            if op.name() == name:
                yield op
            for sub in op.blocks():
                yield from walk(sub)

    return list(walk(program.global_block()))


def test_loaded_model_predicts_then_fine_tunes(tmp_path):
    """`eval()` runs a forward-only program without the pushes of
    `ctx.save_for_backward` (nothing pops them: every run kept its saved
    tensors alive); `train()` afterwards still has them and equals eager."""
    net = _model("simple")  # cus_tanh saves its output for backward
    prefix = str(tmp_path / "m")
    paddle.jit.save(net, prefix, input_spec=SPEC)
    loaded = paddle.jit.load(prefix)
    x_np = _inputs(3)
    loaded.eval()
    for _ in range(3):
        got = loaded(paddle.to_tensor(x_np)).numpy()
        np.testing.assert_allclose(got, _eager(net, x_np)[0], rtol=1e-6)
    layer = loaded._get_partial_program_layer("forward")
    assert not _ops_named(layer.infer_program.program, "cf.tuple_push")
    assert _ops_named(layer.train_program.program, "cf.tuple_push")
    loaded.train()
    net.train()
    x = paddle.to_tensor(x_np, stop_gradient=False)
    loaded(x).sum().backward()
    y = paddle.to_tensor(x_np, stop_gradient=False)
    net(y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5)
