"""Shared harness: run one function eagerly and in each static path.

Each runner takes ``fn(*inputs) -> Tensor`` and numpy inputs, seeds the
backward with a fixed random cotangent, and returns ``(output, grads)`` as
numpy arrays, ``grads`` holding the gradient of every input (None when it
gets none). Eager Paddle is the reference for the others.
"""

import ctypes
import os

os.environ.setdefault("FLAGS_enable_pir_api", "1")
# SOT runs subgraphs under 10 ops eagerly by default, which hides bugs.
os.environ.setdefault("MIN_GRAPH_SIZE", "0")

import numpy as np
import paddle
import pytest
from paddle.jit.sot.opcode_translator.executor.executor_cache import (
    OpcodeExecutorCache,
)
from paddle.jit.sot.utils.info_collector import InfoCollector, InfoType

RTOL = {"float64": 1e-12, "float32": 1e-6}


class Square(paddle.autograd.PyLayer):
    """``x * x`` with a hand-written backward that saves its input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensor()
        return g * 2.0 * x


def tensor_while(cond, body, loop_vars):
    """``while cond(*v): v = body(*v)``: a Python loop in eager mode, a
    ``while_loop`` op in a static program (AST converts a Python loop
    itself)."""
    if paddle.in_dynamic_mode():
        while cond(*loop_vars):
            loop_vars = body(*loop_vars)
        return list(loop_vars)
    return paddle.static.nn.while_loop(cond, body, list(loop_vars))


def _cotangent(shape, dtype):
    rng = np.random.default_rng(1234)
    return rng.standard_normal(shape).astype(dtype)


def random_inputs(*shapes, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _grad_or_none(t):
    return None if t.grad is None else t.grad.numpy()


def run_eager(fn, inputs):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in inputs]
    out = fn(*xs)
    cot = paddle.to_tensor(_cotangent(out.shape, inputs[0].dtype))
    (out * cot).sum().backward()
    return out.numpy(), [_grad_or_none(x) for x in xs]


def run_to_static(fn, inputs, full_graph=True):
    static_fn = paddle.jit.to_static(fn, full_graph=full_graph)
    return run_eager(static_fn, inputs)


def run_static_program(fn, inputs, use_append_backward=False):
    """Build ``fn`` as a plain ``paddle.static`` program and run it."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            xs = []
            for i, a in enumerate(inputs):
                x = paddle.static.data(f"x{i}", list(a.shape), str(a.dtype))
                x.stop_gradient = False
                xs.append(x)
            out = fn(*xs)
            cot = paddle.static.data(
                "cot", list(out.shape), str(inputs[0].dtype)
            )
            loss = (out * cot).sum()
            if use_append_backward:
                pairs = paddle.static.append_backward(loss, parameter_list=xs)
                grads = [g for _, g in pairs]
            else:
                grads = paddle.static.gradients([loss], xs)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed = {f"x{i}": a for i, a in enumerate(inputs)}
        feed["cot"] = _cotangent(out.shape, inputs[0].dtype)
        fetch = [out] + [g for g in grads if g is not None]
        res = exe.run(main, feed=feed, fetch_list=fetch)
        it = iter(res[1:])
        return res[0], [None if g is None else next(it) for g in grads]
    finally:
        paddle.disable_static()


STATIC_RUNNERS = {
    "ast": run_to_static,
    "static_gradients": run_static_program,
    "static_append_backward": lambda fn, inputs: run_static_program(
        fn, inputs, use_append_backward=True
    ),
}


@pytest.fixture(params=sorted(STATIC_RUNNERS))
def static_runner(request):
    """Each static path that the feature under test claims."""
    return STATIC_RUNNERS[request.param]


def assert_same_as_eager(fn, inputs, runner):
    """``fn`` gives eager's output and every input gradient under ``runner``."""
    want_out, want_grads = run_eager(fn, inputs)
    got_out, got_grads = runner(fn, inputs)
    rtol = RTOL[str(inputs[0].dtype)]
    np.testing.assert_allclose(got_out, want_out, rtol=rtol, atol=0)
    assert len(got_grads) == len(want_grads)
    for i, (got, want) in enumerate(zip(got_grads, want_grads)):
        assert (got is None) == (want is None), f"grad of input {i}"
        if want is not None:
            np.testing.assert_allclose(
                got, want, rtol=rtol, atol=0, err_msg=f"grad of input {i}"
            )


def paddle_inference(prefix, *, onednn=True):
    """A CPU predictor of the model ``paddle.jit.save`` wrote at ``prefix``,
    as a function of one input array to the list of output arrays."""
    config = paddle.inference.Config(prefix + ".json", prefix + ".pdiparams")
    config.disable_gpu()
    config.disable_glog_info()
    if not onednn:
        config.disable_mkldnn()
    predictor = paddle.inference.create_predictor(config)

    def predict(x):
        handle = predictor.get_input_handle(predictor.get_input_names()[0])
        handle.reshape(x.shape)
        handle.copy_from_cpu(x)
        predictor.run()
        return [
            predictor.get_output_handle(name).copy_to_cpu()
            for name in predictor.get_output_names()
        ]

    return predict


def assert_steps_bitwise(got, want, steps):
    """``got`` and ``want``: for each of ``steps`` (labels), a list of arrays
    (loss, gradients, parameters...); the same dtypes and the same bits."""
    assert len(got) == len(want) == len(steps)
    for step, g, w in zip(steps, got, want):
        assert [a.dtype for a in g] == [b.dtype for b in w], step
        for i, (a, b) in enumerate(zip(g, w)):
            np.testing.assert_array_equal(a, b, err_msg=f"{step}, result {i}")


@pytest.fixture
def sot_env(monkeypatch):
    """SOT compiles every subgraph, however small, and records graph-break
    reasons, compiles and compiled programs (it reads these at each use)."""
    monkeypatch.setenv("MIN_GRAPH_SIZE", "0")
    monkeypatch.setenv(
        "SOT_COLLECT_INFO", "breakgraph_reason,compile_count,subgraph_info"
    )
    InfoCollector().clear()
    yield
    InfoCollector().clear()


@pytest.fixture
def fresh_sot_cache():
    """Drop SOT's translations before and after the test, so that a function
    traced by an earlier test is translated (and its graph breaks recorded)
    again."""
    OpcodeExecutorCache().clear()
    yield
    OpcodeExecutorCache().clear()


def graph_breaks():
    """The SOT graph-break reasons recorded since the last clear."""
    infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
    return [str(i.reason) for i in infos.get("BreakGraphReasonInfo", [])]


def compiles():
    infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
    return len(infos.get("CompileCountInfo", []))


def compiled_programs():
    """The programs compiled by the last ``to_static`` call."""
    infos = InfoCollector().get_info_dict(InfoType.STEP_INFO)
    return [i.graph for i in infos.get("SubGraphInfo", [])]


def c_stdio_flush():
    """The print op writes with C++ streams: flush C stdio before reading capfd
    (the output is block-buffered unless PYTHONUNBUFFERED is set)."""
    ctypes.CDLL(None).fflush(None)


@pytest.fixture(autouse=True, scope="module")
def _drop_cached_interpreters():
    """Paddle caches the interpreters of every to_static program that ran,
    with their threads, until the process exits, also after the function is
    gone (docs/upstream-bugs.md): the suite's process would gather thousands
    of threads and slow down. Drop the cache after each test file; a program
    that runs again builds its interpreters again."""
    yield
    paddle.base.core.clear_executor_cache()
