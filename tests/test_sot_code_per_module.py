"""SOT runs a function with the globals of its own module when another
module has the same function (code objects that compare equal).

Code objects compare by value and not by file, so SOT's translation cache
gave the second module the code translated for the first, which refers to
names SOT put in the first module's globals: a NameError, or the first
module's values. Translations are now kept per code and globals. Each
module here defines the same helper at the same line, with a PyLayer, a
hook and a graph break, and reads its own global; each gives eager's
output and gradient under SOT (``MIN_GRAPH_SIZE=0``).
"""

import importlib.util
import textwrap

import numpy as np
import paddle
import pytest

MODULE = textwrap.dedent(
    """
    import paddle

    SCALE = {scale}


    class Twice(paddle.autograd.PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * SCALE


    def helper(x):
        y = Twice.apply(x)
        y.register_hook(lambda g: g * SCALE)
        i = paddle.zeros([], "int64")
        while i < 2:  # a graph break
            y = y * SCALE
            i += 1
        return y
    """
)


def _load(tmp_path, k, scale):
    path = tmp_path / f"same_code_{k}.py"
    path.write_text(MODULE.format(scale=scale))
    spec = importlib.util.spec_from_file_location(f"same_code_{k}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(fn):
    x = paddle.to_tensor([1.0, -2.0, 0.5], dtype="float64", stop_gradient=False)
    y = fn(x)
    y.sum().backward()
    return y.numpy(), x.grad.numpy()


@pytest.mark.usefixtures("sot_env")
def test_same_function_in_two_modules_runs_with_its_own_globals(tmp_path):
    modules = [_load(tmp_path, k, s) for k, s in enumerate((2.0, 0.5))]
    assert modules[0].helper.__code__ == modules[1].helper.__code__
    static = [paddle.jit.to_static(m.helper, full_graph=False) for m in modules]
    for module, fn in list(zip(modules, static)) * 2:
        for got, want in zip(_run(fn), _run(module.helper)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
