"""``SOT_COLLECT_INFO=hook_decision``: for each gradient hook and PyLayer of
a to_static function (SOT and AST) or static program, whether it was
compiled into the program, runs at run time or broke the graph, and the
construct that decided it."""

import numpy as np
import paddle
import pytest
from paddle.autograd import PyLayer
from paddle.jit.sot.opcode_translator.executor.executor_cache import (
    OpcodeExecutorCache,
)
from paddle.jit.sot.utils.info_collector import (
    HookDecisionInfo,
    InfoCollector,
    InfoType,
)

LOG = []


class Doubles(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


class LogsGradient(PyLayer):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        LOG.append(float(dy.sum()))
        return dy * 2.0


def halve(g):
    return g * 0.5


def log_shape(g):
    LOG.append(g.shape)


def fn(x):
    y = Doubles.apply(x) * 1.5
    y.register_hook(halve)
    z = LogsGradient.apply(y) + 1.0
    z.register_hook(log_shape)
    return z.sum()


@pytest.fixture
def collect(monkeypatch):
    monkeypatch.setenv("SOT_COLLECT_INFO", "hook_decision")
    monkeypatch.setenv("MIN_GRAPH_SIZE", "0")
    InfoCollector().clear()
    OpcodeExecutorCache().clear()
    yield
    InfoCollector().clear()
    OpcodeExecutorCache().clear()


def _decisions():
    infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
    return {
        (i.kind, i.what.split(" on ")[0].split(".")[-1], i.decision, i.why)
        for i in infos.get("HookDecisionInfo", [])
    }


def _run(f):
    LOG.clear()
    x = paddle.to_tensor(np.ones((2, 3)), stop_gradient=False)
    f(x).backward()
    return x.grad.numpy(), list(LOG)


# What each static path reports for ``fn``: the logging layer's
# ``backward`` runs at run time, also under SOT, whose graph keeps it.
FN_DECISIONS = {
    ("hook", "halve", "compiled into the program", "pure tensor math"),
    ("hook", "log_shape", "runs at run time", "it reads the global `LOG`"),
    ("PyLayer", "backward", "compiled into the program", "no Python effect"),
    ("PyLayer", "backward", "runs at run time", "it calls `LOG.append`"),
}


@pytest.mark.parametrize("full_graph", [True, False])
def test_each_hook_and_pylayer_is_reported(collect, full_graph):
    want = _run(fn)
    got = _run(paddle.jit.to_static(fn, full_graph=full_graph))
    np.testing.assert_allclose(got[0], want[0])
    assert got[1] == want[1]
    assert _decisions() == FN_DECISIONS


class LogsForward(PyLayer):
    @staticmethod
    def forward(ctx, x):
        LOG.append(x.shape)
        return x * 2.0

    @staticmethod
    def backward(ctx, dy):
        return dy * 2.0


def fn_logging_forward(x):
    y = Doubles.apply(x) * 1.5
    y.register_hook(halve)
    z = LogsForward.apply(y) + 1.0
    z.register_hook(log_shape)
    return z.sum()


def test_sot_reports_its_graph_break_and_the_rest(collect):
    want = _run(fn_logging_forward)
    got = _run(paddle.jit.to_static(fn_logging_forward))
    np.testing.assert_allclose(got[0], want[0])
    assert got[1] == want[1]
    decisions = _decisions()
    breaks = [d for d in decisions if d[2] == "breaks the graph"]
    assert len(breaks) == 1
    assert breaks[0][0] == "PyLayer"
    assert "`LogsForward.forward` calls `LOG.append`" in breaks[0][3]
    assert (
        "PyLayer",
        "backward",
        "compiled into the program",
        "no Python effect",
    ) in decisions
    # `halve`'s value is an output of the graph before the break
    assert any(
        d[1] == "halve" and d[2] == "runs at run time" for d in decisions
    )
    assert (
        "hook",
        "log_shape",
        "runs at run time",
        "it reads the global `LOG`",
    ) in decisions


def test_report_lists_each_decision_once(collect):
    f = paddle.jit.to_static(fn, full_graph=True)
    _run(f)
    _run(f)
    infos = InfoCollector().get_info_dict(InfoType.E2E_INFO)
    report = HookDecisionInfo.summary(infos["HookDecisionInfo"])
    assert report.count("log_shape") == 1
    assert "halve on Value" in report


def test_static_program_reports_its_hooks(collect):
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [2, 3], "float32")
            x.stop_gradient = False
            y = paddle.tanh(x)
            y.register_hook(halve)
            y.register_hook(log_shape)
            paddle.static.gradients([y.sum()], [x])
    finally:
        paddle.disable_static()
    assert _decisions() == {
        (
            "hook",
            "halve",
            "runs at run time",
            "another hook on the value runs at run time, and they run in "
            "one op",
        ),
        ("hook", "log_shape", "runs at run time", "it reads the global `LOG`"),
    }


def test_nothing_is_collected_without_the_switch(monkeypatch):
    monkeypatch.delenv("SOT_COLLECT_INFO", raising=False)
    InfoCollector().clear()
    _run(paddle.jit.to_static(fn, full_graph=True))
    assert not InfoCollector().get_info_dict(InfoType.E2E_INFO)
