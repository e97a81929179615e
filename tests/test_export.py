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
import onnxruntime
import paddle
import pytest
from paddle.autograd import PyLayer
from paddle.static import InputSpec

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
        # Not `y.mean()`: paddle2onnx 2.1.0 aborts on a mean over all axes
        # ("Can not get input 'axis(dim)' value"), PyLayer or not.
        if y.mean(axis=[0, 1]) > 0:
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
    config = paddle.inference.Config(prefix + ".json", prefix + ".pdiparams")
    config.disable_gpu()
    config.disable_glog_info()
    predictor = paddle.inference.create_predictor(config)
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.reshape(x.shape)
    handle.copy_from_cpu(x)
    predictor.run()
    return [
        predictor.get_output_handle(n).copy_to_cpu()
        for n in predictor.get_output_names()
    ]


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


@pytest.mark.parametrize("model_name, bias", EXPORT_CASES)
def test_paddle_inference_equals_eager(model_name, bias, tmp_path):
    net = _model(model_name, bias)
    prefix = str(tmp_path / "m")
    paddle.jit.save(net, prefix, input_spec=SPEC, inline_pylayer=True)
    for batch in BATCH_SIZES:
        x = _inputs(batch)
        want = _eager(net, x)
        got = _predict(prefix, x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


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
