"""Gradient hooks of a model through ``paddle.jit.save`` / ``paddle.jit.load``.

A hook registered in ``forward`` (on an activation, an input or a
parameter) is Python code. The loaded model of the process that saved it
runs the same hooks, as the traced model did: its gradients and the hooks'
calls equal eager's at every step. In another process, and for a hook that
reads tensors of the traced program, training the loaded model is a clear
error when a gradient reaches the hooked value; prediction works. Paddle
Inference runs a saved model with hooks (each hooked value is marked by an
identity op).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import paddle
import pytest
from conftest import paddle_inference
from paddle.static import InputSpec

SPEC = [InputSpec([-1, 4], "float64", "x")]
LOG = []


class Net(paddle.nn.Layer):
    """``kind`` says where ``forward`` registers which hook."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.fc1 = paddle.nn.Linear(4, 8)
        self.fc2 = paddle.nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        if self.kind == "scale_activation":
            h.register_hook(lambda g: g * 2.0)
        elif self.kind == "log_activation":
            h.register_hook(lambda g: LOG.append(float(g.abs().max())))
        elif self.kind == "scale_input":
            x.register_hook(lambda g: g * 3.0)
        elif self.kind == "log_parameter":
            self.fc2.weight.register_hook(lambda g: LOG.append(list(g.shape)))
        elif self.kind == "mask_activation":
            keep = (h > 0).astype(h.dtype)
            h.register_hook(lambda g: g * keep)
        return self.fc2(paddle.tanh(h)).sum()


KINDS = ["scale_activation", "log_activation", "scale_input", "log_parameter"]


def _net(kind):
    paddle.seed(11)
    paddle.set_default_dtype("float64")
    try:
        return Net(kind)
    finally:
        paddle.set_default_dtype("float32")


def _steps(model, params):
    """Three SGD steps at batch sizes 2, 3, 5: the input gradients, the
    parameters after each step and the hook calls."""
    opt = paddle.optimizer.SGD(0.1, parameters=params)
    # The loaded model lists its parameters in another order.
    params = sorted(params, key=lambda p: (p.shape, p.numpy().ravel().tolist()))
    results = []
    LOG.clear()
    for batch in (2, 3, 5):
        x = paddle.to_tensor(
            np.random.default_rng(batch).standard_normal((batch, 4)),
            stop_gradient=False,
        )
        model(x).backward()
        results.append(x.grad.numpy())
        opt.step()
        opt.clear_grad()
        results += [p.numpy() for p in params]
    return results, list(LOG)


def _save(kind, path):
    net = _net(kind)
    paddle.jit.save(
        paddle.jit.to_static(net, full_graph=True), path, input_spec=SPEC
    )
    return net


def _assert_same(got, want):
    (got_arrays, got_log), (want_arrays, want_log) = got, want
    assert len(got_arrays) == len(want_arrays)
    for g, w in zip(got_arrays, want_arrays):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert np.allclose(got_log, want_log, rtol=1e-12, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_loaded_model_runs_its_hooks_in_the_saving_process(kind, tmp_path):
    path = str(tmp_path / "m")
    _save(kind, path)
    eager = _net(kind)
    want = _steps(eager, eager.parameters())
    loaded = paddle.jit.load(path)
    loaded.train()
    got = _steps(loaded, loaded.parameters())
    _assert_same(got, want)


def test_loaded_model_saved_again_keeps_its_hooks(tmp_path):
    path = str(tmp_path / "m")
    _save("scale_activation", path)
    loaded = paddle.jit.load(path)
    paddle.jit.save(loaded, str(tmp_path / "again"), input_spec=SPEC)
    again = paddle.jit.load(str(tmp_path / "again"))
    again.train()
    eager = _net("scale_activation")
    _assert_same(
        _steps(again, again.parameters()), _steps(eager, eager.parameters())
    )


def test_saving_again_replaces_the_hooks_a_file_kept(tmp_path):
    """The process keeps the hooks of a saved file, for a ``jit.load`` in
    it at any time, until the file is saved again: a checkpoint saved 20
    times to one path keeps one set of hooks, and the last save loads with
    its hooks (each save kept one more set)."""
    from paddle.jit import tensor_hooks_saved

    path = str(tmp_path / "m")
    _save("log_activation", path)
    kept = len(tensor_hooks_saved._saved_hooks)
    for _ in range(20):
        _save("log_activation", path)
    assert len(tensor_hooks_saved._saved_hooks) == kept
    loaded = paddle.jit.load(path)
    loaded.train()
    eager = _net("log_activation")
    _assert_same(
        _steps(loaded, loaded.parameters()), _steps(eager, eager.parameters())
    )


def _predictions(model):
    x = np.random.default_rng(3).standard_normal((3, 4))
    # stop_gradient=False: eager raises for a hook on an input that stops
    # gradient, and so does the model.
    return model(paddle.to_tensor(x, stop_gradient=False)).numpy()


def test_hook_reading_a_traced_tensor_is_a_clear_error_after_load(tmp_path):
    path = str(tmp_path / "m")
    net = _save("mask_activation", path)
    loaded = paddle.jit.load(path)
    loaded.eval()
    np.testing.assert_allclose(
        _predictions(loaded), _predictions(net), rtol=1e-12
    )
    loaded.train()
    x = paddle.to_tensor(np.ones((2, 4)), stop_gradient=False)
    with pytest.raises(RuntimeError, match="read tensors of the program"):
        loaded(x).backward()


_SAVE_SCRIPT = textwrap.dedent(
    """
    import sys
    import paddle
    from test_jit_load_hooks import _save
    _save(sys.argv[1], sys.argv[2])
    """
)


@pytest.mark.parametrize("kind", ["scale_activation", "scale_input"])
def test_model_saved_by_another_process_is_a_clear_error_to_train(
    kind, tmp_path
):
    path = str(tmp_path / "m")
    script = tmp_path / "save.py"
    script.write_text(_SAVE_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, str(script), kind, path],
        capture_output=True,
        text=True,
        env=env,
        cwd=os.path.dirname(__file__),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = paddle.jit.load(path)
    loaded.eval()
    np.testing.assert_allclose(
        _predictions(loaded), _predictions(_net(kind)), rtol=1e-12
    )
    loaded.train()
    x = paddle.to_tensor(np.ones((2, 4)), stop_gradient=False)
    # the error of a hook on an eager input reaches the caller as eager
    # Paddle gives it: an OSError for a hook on an eager Tensor
    with pytest.raises(
        (RuntimeError, OSError), match="saved by another process"
    ):
        loaded(x).backward()


def test_paddle_inference_runs_a_saved_model_with_hooks(tmp_path):
    path = str(tmp_path / "m")
    net = _save("scale_activation", path)
    # Stock 3.3.1's oneDNN kernels give this float64 model other outputs,
    # with or without hooks (docs/upstream-bugs.md).
    predict = paddle_inference(path, onednn=False)
    for batch in (1, 3, 7):
        x = np.random.default_rng(batch).standard_normal((batch, 4))
        np.testing.assert_allclose(
            predict(x)[0], net(paddle.to_tensor(x)).numpy(), rtol=1e-12
        )


class HookOnReturned(paddle.nn.Layer):
    """A hook on the Tensor ``forward`` returns (eager: the caller's
    gradient goes through it)."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 3)

    def forward(self, x):
        out = paddle.tanh(self.fc(x))
        out.register_hook(lambda g: g * 2.0)
        out.register_hook(lambda g: LOG.append(float(g.abs().sum())))
        return out


def test_hook_on_the_returned_tensor_is_kept(tmp_path):
    """The writer keeps only what the outputs need: the mark of a hooked
    output is the output (it was dropped, and the loaded model trained
    with half of eager's gradients, silently)."""
    paddle.seed(5)
    paddle.set_default_dtype("float64")
    try:
        net = HookOnReturned()
    finally:
        paddle.set_default_dtype("float32")
    path = str(tmp_path / "m")
    paddle.jit.save(
        paddle.jit.to_static(net, full_graph=True), path, input_spec=SPEC
    )
    loaded = paddle.jit.load(path)
    loaded.train()

    def grads(model):
        LOG.clear()
        x = paddle.to_tensor(
            np.random.default_rng(2).standard_normal((3, 4)),
            stop_gradient=False,
        )
        (model(x) * paddle.arange(3, dtype="float64")).sum().backward()
        return x.grad.numpy(), list(LOG)

    (got, got_log), (want, want_log) = grads(loaded), grads(net)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_log, want_log, rtol=1e-12)
    assert len(got_log) == 1
    x = np.random.default_rng(4).standard_normal((5, 4))
    np.testing.assert_allclose(
        paddle_inference(path, onednn=False)(x)[0],
        net(paddle.to_tensor(x)).numpy(),
        rtol=1e-12,
    )


def _split_with_hooked_unused_half(x):
    a, b = paddle.split(paddle.tanh(x), 2, axis=1)
    b.register_hook(lambda g: g + 1.0)
    b.register_hook(lambda g: LOG.append(float(g.abs().sum())))
    return (a * 3.0).sum()


def test_hooks_on_an_unused_result_of_split_are_kept(tmp_path):
    """Eager runs the hooks of the unused half of a `split` on the zeros
    its backward gives it (here: +1 reaches x); the writer dropped their
    mark, which no output needs (loaded: no +1, no log, silently)."""
    path = str(tmp_path / "m")
    paddle.jit.save(
        paddle.jit.to_static(_split_with_hooked_unused_half, full_graph=True),
        path,
        input_spec=SPEC,
    )
    loaded = paddle.jit.load(path)
    loaded.train()

    def grads(fn):
        LOG.clear()
        x = paddle.to_tensor(
            np.random.default_rng(6).standard_normal((3, 4)),
            stop_gradient=False,
        )
        fn(x).backward()
        return x.grad.numpy(), list(LOG)

    (got, got_log), (want, want_log) = (
        grads(loaded),
        grads(_split_with_hooked_unused_half),
    )
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_log, want_log, rtol=1e-12)
    assert len(got_log) == 1


class HookedInInit(paddle.nn.Layer):
    """A parameter hook registered eagerly, in ``__init__``: it belongs to
    the parameter Tensor, which a loaded model does not have."""

    def __init__(self):
        super().__init__()
        self.fc = paddle.nn.Linear(4, 2)
        self.fc.weight.register_hook(lambda g: g * 0.5)

    def forward(self, x):
        return self.fc(x)


def test_save_warns_about_eager_parameter_hooks(tmp_path):
    net = HookedInInit()
    spec = [InputSpec([-1, 4], "float32", "x")]
    static_net = paddle.jit.to_static(net, input_spec=spec, full_graph=True)
    with pytest.warns(UserWarning, match="`fc.weight`") as record:
        paddle.jit.save(static_net, str(tmp_path / "m"))
    said = [w for w in record if "does not save the gradient" in str(w.message)]
    assert len(said) == 1
    # what the warning says: the loaded model trains without the hook
    x = paddle.ones([2, 4])
    net(x).sum().backward()
    loaded = paddle.jit.load(str(tmp_path / "m"))
    loaded.train()
    loaded(x).sum().backward()
    (weight,) = [p for p in loaded.parameters() if p.shape == [4, 2]]
    np.testing.assert_allclose(
        weight.grad.numpy(), net.fc.weight.grad.numpy() * 2.0
    )


def test_save_does_not_warn_without_eager_hooks(tmp_path, recwarn):
    net = paddle.jit.to_static(
        Net("scale_input"), input_spec=SPEC, full_graph=True
    )
    paddle.jit.save(net, str(tmp_path / "m"))
    assert not any("gradient hooks" in str(w.message) for w in recwarn)
