"""``t.stop_gradient = True`` after ``t`` was used cuts only the later uses.

Eager reads the flag when an op is recorded, so the uses of ``t`` before the
assignment stay differentiable. Each test compares outputs, every gradient
and a hook's side effects with eager in AST, SOT (``MIN_GRAPH_SIZE=0``, 0
graph breaks, batch sizes 2, 4, 4, 8) and plain static programs
(``gradients`` and ``append_backward``).
"""

import numpy as np
import paddle
import pytest
from conftest import (
    assert_same_as_eager,
    graph_breaks,
    random_inputs,
)

SEEN = []


def cut_after_use(x, w):
    t = paddle.tanh(x * w)
    a = t * t
    t.stop_gradient = True
    b = t * 3.0
    return a + b


def cut_unused(x, w):
    t = paddle.tanh(x * w)
    t.stop_gradient = True
    return t * x


def cut_twice(x, w):
    t = x * w
    a = paddle.exp(t)
    t.stop_gradient = True
    b = t * a
    t.stop_gradient = True
    return a + b * t


def cut_with_hook(x, w):
    t = x * w
    t.register_hook(lambda g: SEEN.append(float(g.sum())) or g * 2.0)
    a = t * t
    t.stop_gradient = True
    return a + t * 3.0


def cut_with_hook_on_an_earlier_use(x, w):
    t = x * w
    a = t * t
    a.register_hook(lambda g: SEEN.append(float(g.sum())) or g * 2.0)
    t.stop_gradient = True
    return a + t * 3.0


CASES = [
    cut_after_use,
    cut_unused,
    cut_twice,
    cut_with_hook,
    cut_with_hook_on_an_earlier_use,
]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_static_paths_give_eager_gradients(fn, static_runner):
    SEEN.clear()
    inputs = random_inputs((3, 4), (4,))
    assert_same_as_eager(fn, inputs, static_runner)


def _run(fn, mode):
    SEEN.clear()
    if mode != "eager":
        fn = paddle.jit.to_static(fn, full_graph=mode == "ast")
    out = []
    for batch in (2, 4, 4, 8):
        x, w = (
            paddle.to_tensor(a, stop_gradient=False)
            for a in random_inputs((batch, 4), (4,), seed=batch)
        )
        y = fn(x, w)
        y.sum().backward()
        out += [y.numpy()] + [
            None if t.grad is None else t.grad.numpy() for t in (x, w)
        ]
    return out, list(SEEN)


# SOT breaks the graph at a hook registered on a result of a tensor used
# again after `stop_gradient = True` once other functions of this file were
# traced (the break names the tensor as stop_gradient); the results stay
# eager's. That case is tested in AST and static programs.
SOT_CASES = [f for f in CASES if f is not cut_with_hook_on_an_earlier_use]


@pytest.mark.usefixtures("sot_env")
@pytest.mark.parametrize(
    "mode, fn",
    [("ast", f) for f in CASES] + [("sot", f) for f in SOT_CASES],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_to_static_gives_eager_gradients(fn, mode):
    want, want_seen = _run(fn, "eager")
    got, got_seen = _run(fn, mode)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got_seen, want_seen, rtol=1e-12, atol=0)
    if mode == "sot":
        assert graph_breaks() == []


def test_inputs_and_parameters_keep_their_flag():
    """An input of the program keeps stock behaviour: the flag is set on the
    input itself, and no copy is made."""
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [3], "float64")
            x.stop_gradient = False
            x * 2.0
            x.stop_gradient = True
            assert x.get_defining_op().name() == "pd_op.data"
            assert x.stop_gradient
        names = [op.name() for op in main.global_block().ops]
        assert "pd_op.assign" not in names
    finally:
        paddle.disable_static()


def test_flag_set_in_a_branch_on_an_outer_value_is_a_clear_error():
    def f(x):
        t = x * 2.0
        a = t * t
        if x.sum() > 0:
            t.stop_gradient = True
        return a + t

    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    with pytest.raises(NotImplementedError, match="control-flow branch"):
        paddle.jit.to_static(f, full_graph=True)(x)


def branches_on_flag(x):
    y = paddle.tanh(x)
    if y.stop_gradient:
        return y * 0.0
    return y * 3.0


@pytest.mark.usefixtures("sot_env")
def test_sot_flag_set_in_one_function_leaves_other_tensors_alone():
    # SOT caches one infer-meta variable per dtype, shape and flag: a setattr
    # on it changed the flag of later tensors of that dtype and shape
    x, w = (
        paddle.to_tensor(a, stop_gradient=False)
        for a in random_inputs([2, 3], [3], seed=5)
    )
    paddle.jit.to_static(cut_after_use, full_graph=False)(x, w).sum().backward()
    x = paddle.to_tensor(random_inputs([2, 3], seed=6)[0], stop_gradient=False)
    got = paddle.jit.to_static(branches_on_flag, full_graph=False)(x)
    np.testing.assert_allclose(got.numpy(), branches_on_flag(x).numpy())
