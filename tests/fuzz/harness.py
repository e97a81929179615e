"""Runners and comparison for fuzz programs (also pasted into reproducers).

A program module defines ``f``, ``INPUT_SHAPES`` and ``EXPECT_ERROR``.
``check(ns, modes, input_seed)`` runs ``f`` eagerly (the reference) and in
each mode (``ast``: ``to_static(full_graph=True)``, ``sot``:
``to_static(full_graph=False)`` with ``MIN_GRAPH_SIZE=0``, ``static``: a plain
``paddle.static`` program differentiated with ``paddle.static.gradients``,
``saved``: the AST program through ``paddle.jit.save`` and ``jit.load``)
and returns ``{mode: (status, message)}``, status one of ``pass``,
``mismatch``, ``error`` (unexpected exception), ``skip``. The last
``LEAVES`` outputs are differentiated too, and their ``grad`` compared; a
program with ``PARAM_SHAPES`` runs through ``check_calls``.
"""

import os

os.environ.setdefault("FLAGS_enable_pir_api", "1")
os.environ["MIN_GRAPH_SIZE"] = "0"
os.environ.setdefault("GLOG_minloglevel", "2")

import functools  # noqa: E402
import re  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import paddle  # noqa: E402

warnings.filterwarnings("ignore")

RTOL = 1e-9
ATOL = 1e-12


def make_inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float64") for s in shapes]


def _cotangent(shape, k=0):
    rng = np.random.default_rng(1234 + k)
    return rng.standard_normal(shape).astype("float64")


def _grad_or_none(t):
    return None if t.grad is None else t.grad.numpy()


def _outputs(out):
    """``f`` returns the output, or (output, extra outputs...) of which
    only the output is differentiated (the caller ignores the others)."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _differentiated(outs, leaves):
    """The output, then the ``leaves`` last outputs (leaves ``f``
    creates), which the caller differentiates, each with its cotangent."""
    return [outs[0], *outs[len(outs) - leaves :]] if leaves else outs[:1]


def run_eager(fn, inputs, leaves=0):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in inputs]
    outs = _outputs(fn(*xs))
    diff = _differentiated(outs, leaves)
    loss = 0.0
    for k, o in enumerate(diff):
        loss = (o * paddle.to_tensor(_cotangent(o.shape, k))).sum() + loss
    loss.backward()
    return [o.numpy() for o in outs], [_grad_or_none(x) for x in xs + diff[1:]]


def run_ast(fn, inputs, leaves=0):
    return run_eager(paddle.jit.to_static(fn, full_graph=True), inputs, leaves)


def run_sot(fn, inputs, leaves=0):
    return run_eager(paddle.jit.to_static(fn, full_graph=False), inputs, leaves)


def run_static(fn, inputs, leaves=0):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            xs = []
            for i, a in enumerate(inputs):
                x = paddle.static.data(f"x{i}", list(a.shape), str(a.dtype))
                x.stop_gradient = False
                xs.append(x)
            outs = _outputs(fn(*xs))
            diff = _differentiated(outs, leaves)
            loss = 0.0
            feed = {}
            for k, o in enumerate(diff):
                cot = paddle.static.data(f"cot{k}", list(o.shape), "float64")
                feed[f"cot{k}"] = _cotangent(tuple(o.shape), k)
                loss = (o * cot).sum() + loss
            grads = paddle.static.gradients([loss], xs + diff[1:])
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed.update({f"x{i}": a for i, a in enumerate(inputs)})
        fetch = outs + [g for g in grads if g is not None]
        res = exe.run(main, feed=feed, fetch_list=fetch)
        it = iter(res[len(outs) :])
        return res[: len(outs)], [
            None if g is None else next(it) for g in grads
        ]
    finally:
        paddle.disable_static()


RUNNERS = {"ast": run_ast, "sot": run_sot, "static": run_static}

# How each mode prepares ``f`` once, and runs the prepared function at each
# value of the program's global ``G`` (``GLOBAL_VALUES``): a to_static
# function is called again after ``G`` changed, as a training loop calls a
# model whose attributes change between steps.
PREPARE = {
    "ast": lambda f: paddle.jit.to_static(f, full_graph=True),
    "sot": lambda f: paddle.jit.to_static(f, full_graph=False),
    "static": lambda f: f,
}
RUN_PREPARED = {
    "ast": run_eager,
    "sot": run_eager,
    "static": run_static,
    "saved": run_eager,
}


def _save_and_load(f, ns):
    """``f`` through ``paddle.jit.save`` (AST, the input shapes as specs)
    and ``paddle.jit.load``, in train mode: its PyLayers and hooks are those
    of this process. The saved program holds ``G`` as it was (the first of
    ``GLOBAL_VALUES``): the loaded function is compared at that value."""
    import tempfile

    specs = [
        paddle.static.InputSpec(list(shape), "float64", f"x{i}")
        for i, shape in enumerate(ns["INPUT_SHAPES"])
    ]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f")
        paddle.jit.save(
            paddle.jit.to_static(f, full_graph=True), path, input_spec=specs
        )
        loaded = paddle.jit.load(path)
    loaded.train()
    return loaded


def run_predict(fn, inputs):
    """``fn``'s outputs for inputs that need no gradient (prediction)."""
    xs = [paddle.to_tensor(a) for a in inputs]
    return [o.numpy() for o in _outputs(fn(*xs))]


_PREDICT_HOOK_IN_BRANCH = "Cannot register hook on a tensor that stop gradient"
_PREDICT_GRAD_UNUSED = "Expected allow_unused == true"


class _ByDesign(str):
    """A difference docs/status.md lists (reported as "by-design")."""


def _eager_predict(f, inputs):
    """``f``'s eager prediction (``run_predict``), or the error it raised
    (eager refuses a hook on a tensor that stops gradient)."""
    try:
        return run_predict(f, inputs)
    except Exception as e:  # noqa: BLE001
        return e


def _same_error(e, want):
    """Whether ``e`` is eager's error ``want``: the same type, or (SOT,
    stock) an ``InnerError`` whose message ends with that type's."""
    if type(e) is type(want):
        return True
    last = str(e).strip().splitlines()[-1].strip() if str(e).strip() else ""
    return type(e).__name__ == "InnerError" and last.startswith(
        f"{type(want).__name__}:"
    )


def _check_predict(want, prepared, inputs, has_if):
    """None when ``prepared`` predicts (inputs without gradients) as eager
    did (``want``, from ``_eager_predict``): the same outputs, or the same
    type of error."""
    try:
        got = run_predict(prepared, inputs)
    except Exception as e:  # noqa: BLE001
        if isinstance(want, Exception) and _same_error(e, want):
            return None
        if _PREDICT_HOOK_IN_BRANCH in str(e) and has_if:
            # docs/status.md: AST traces both branches, eager runs one
            return _ByDesign(f"predicting without gradients: {_exc(e)}")
        return f"predicting without gradients: {_exc(e)}"
    if isinstance(want, Exception):
        return f"predicting without gradients: no error, eager {_exc(want)}"
    msg = compare((want, []), (got, []), "predict")
    return None if msg is None else f"predicting without gradients: {msg}"


def _at_each_value(ns, call):
    """``call()`` at each value of ``ns['GLOBAL_VALUES']`` given to the
    global ``G`` (once when the program has none)."""
    values = ns.get("GLOBAL_VALUES") or [None]
    results = []
    try:
        for v in values:
            if v is not None:
                ns["G"] = v
            results.append(call())
    finally:
        if values[0] is not None:
            ns["G"] = values[0]
    return results


def compare(ref, got, mode, has_if=False):
    """None when ``got`` matches ``ref``, else a description."""
    (want_outs, want_grads), (got_outs, got_grads) = ref, got
    if len(want_outs) != len(got_outs):
        return f"{len(got_outs)} outputs, eager {len(want_outs)}"
    for j, (want_out, got_out) in enumerate(zip(want_outs, got_outs)):
        want_out, got_out = np.asarray(want_out), np.asarray(got_out)
        if want_out.shape != got_out.shape:
            return f"output {j} shape {got_out.shape} != eager {want_out.shape}"
        if not np.allclose(got_out, want_out, rtol=RTOL, atol=ATOL):
            diff = np.abs(got_out - want_out).max()
            return f"output {j} differs: max abs diff {diff:.3e}"
    if len(got_grads) != len(want_grads):
        return "number of gradients differs"
    for i, (g, w) in enumerate(zip(got_grads, want_grads)):
        if w is None and g is None:
            continue
        if w is None:
            if (has_if or len(want_outs) > 1) and not np.any(g):
                # An input used only in the branch not taken, or only by an
                # output the caller does not differentiate: eager gives it no
                # gradient, a static graph zeros (stock: the program has
                # both branches, and its backward fills the missing output
                # gradients with zeros). A hook on it must not see those.
                continue
            return (
                f"grad of x{i}: eager None, got {np.asarray(g).ravel()[:4]}..."
            )
        if g is None:
            return (
                f"grad of x{i}: got None, eager {np.asarray(w).ravel()[:4]}..."
            )
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"grad of x{i}: shape {g.shape} != eager {w.shape}"
        if not np.allclose(g, w, rtol=RTOL, atol=ATOL):
            return (
                f"grad of x{i} differs: max abs diff {np.abs(g - w).max():.3e}"
                f" (eager {w.ravel()[:3]}, got {g.ravel()[:3]})"
            )
    return None


# Clear errors the patch set raises on purpose where it cannot give eager's
# gradient (docs/status.md, "Known differences"): reported as "by-design", not as
# failures. (modes, substrings of the error)
BY_DESIGN_ERRORS = [
    # SOT: a hook registered after a graph break on a tensor the graph
    # compiled before the break computed and used.
    (("sot",), ("computed and used before a graph break",)),
    # A hook on a non-leaf input of a to_static program (under SOT, a
    # tensor computed before a graph break) that a backward may not reach,
    # computed by an op that cannot take 'no gradient' (docs/status.md).
    (("ast", "sot"), ("so the hooks cannot be skipped",)),
    # SOT: a hook registered after a graph break on a tensor the graph
    # compiled before the break returned and also used, or one half of a
    # `split` whose other half it used (eager runs its hooks on zeros).
    (("sot",), ("compiled before a graph break) cannot give the same",)),
    # jit.save: stock refuses an input no output needs.
    (("saved",), ("is not involved in the target_vars calculation",)),
    # jit.load: a hook reading a tensor of the traced program (docs/deploying.md).
    (("saved",), ("they read tensors of the program they were registered in",)),
    # jit.load: a hook reading a variable an AST `if` branch defines and the
    # other does not holds an `UndefinedVar` (docs/status.md).
    (("saved",), ("but got UndefinedVar",)),
    # A run-time hook or PyLayer backward in a to_static program that gives
    # no input or parameter a gradient: no backward program runs
    # (docs/status.md).
    (("ast", "sot", "saved"), ("would never run under to_static",)),
]


def compare_logs(want, got):
    """None when the hooks logged in a mode (``LOG``: ``("sum", float)`` or
    ``("shape", tuple)`` per call) what they logged eagerly, in any order
    (the backward of independent branches may run in another order), else
    a description."""
    if len(got) != len(want):
        return f"hooks logged {len(got)} calls, eager {len(want)}"

    def order(entry):
        kind, value = entry
        return (kind, value) if kind == "shape" else (kind, (round(value, 6),))

    for (wk, wv), (gk, gv) in zip(
        sorted(want, key=order), sorted(got, key=order)
    ):
        if wk != gk or (
            wv != gv
            if wk == "shape"
            else not np.isclose(gv, wv, rtol=RTOL, atol=ATOL)
        ):
            return f"hook log {gk} {gv}, eager {wk} {wv}"
    return None


def _exc(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"[
        :300
    ]


class _Model(paddle.nn.Layer):
    """``f`` of a program with ``PARAM_SHAPES``, its last arguments held as
    the parameters of a Layer."""

    def __init__(self, f, arrays):
        super().__init__()
        self.f = f
        self.ps = []
        for i, a in enumerate(arrays):
            p = self.create_parameter(
                list(a.shape),
                dtype="float64",
                default_initializer=paddle.nn.initializer.Assign(a),
            )
            self.add_parameter(f"p{i}", p)
            self.ps.append(p)

    def forward(self, xs):
        if len(self.ps) == 1:
            return self.f(*xs, self.p0)
        return self.f(*xs, self.p0, self.p1)


def _param_arrays(ns):
    rng = np.random.default_rng(99)
    return [rng.standard_normal(s) for s in ns["PARAM_SHAPES"]]


def _run_calls(ns, model, params, call_inputs, leaves):
    """Each call of ``model`` (``CALL`` set to its index), gradients not
    cleared in between: [(outputs, input gradients + the parameters'
    accumulated gradients, what the hooks logged)]."""
    log = ns.get("LOG", [])
    results = []
    for i, inputs in enumerate(call_inputs):
        ns["CALL"][0] = i
        log.clear()
        outs, grads = run_eager(lambda *xs: model(list(xs)), inputs, leaves)
        grads += [_grad_or_none(p) for p in params]
        results.append((outs, grads, list(log)))
    return results


def _reset_calls(ns):
    ns["CALL"][0] = 0
    ns["HANDLES"].clear()


def _skip_reason(ns, mode):
    """Why the program does not run in ``mode``, or None."""
    if mode == "static" and ns.get("HAS_IF"):
        return "tensor-dependent if"
    return ns.get("SKIP_MODES", {}).get(mode)


def _classify_error(e, mode, as_mode, want_exc):
    """The status of an error ``e`` in ``mode`` (``as_mode``: the mode
    whose expected errors apply): expected, by design, or an error."""
    if want_exc and type(e).__name__ == want_exc:
        return ("pass", f"expected {want_exc}")
    if any(
        (mode in ms or as_mode in ms) and all(p in str(e) for p in parts)
        for ms, parts in BY_DESIGN_ERRORS
    ):
        return ("by-design", _exc(e))
    return ("error", _exc(e))


def check_calls(ns, modes, input_seed=0, verbose=False, on_mode=None):
    """``check`` of a program with parameters (``PARAM_SHAPES``): three
    calls with inputs of ``CALLS``' shapes (a new program per call under
    to_static) whose parameter gradients accumulate, compared call by
    call (a program whose eager run fails at a new shape is called three
    times at its first shapes). A static program runs the first call."""
    f = ns["f"]
    expect = ns.get("EXPECT_ERROR", {})
    leaves = ns.get("LEAVES", 0)
    arrays = _param_arrays(ns)
    shapes = ns["CALLS"]
    refs = None
    for shapes in (ns["CALLS"], [ns["CALLS"][0]] * 3):
        call_inputs = [
            make_inputs(s, input_seed + i) for i, s in enumerate(shapes)
        ]
        _reset_calls(ns)
        try:
            model = _Model(f, arrays)
            refs = _run_calls(ns, model, model.ps, call_inputs, leaves)
            break
        except Exception as e:  # noqa: BLE001
            if verbose:
                traceback.print_exc()
            if shapes is not ns["CALLS"]:
                return {"eager": ("error", _exc(e))}
    res = {}
    for mode in modes:
        skip = _skip_reason(ns, mode)
        if skip is None and mode not in ("ast", "sot", "static"):
            skip = "a program called three times"
        if skip is not None:
            res[mode] = ("skip", skip)
            continue
        if on_mode:
            on_mode(mode)
        want_exc = expect.get(mode)
        _reset_calls(ns)
        try:
            if mode == "static":
                ns.get("LOG", []).clear()
                nx = len(call_inputs[0])
                outs, grads = run_static(
                    lambda *xs: f(*xs),
                    call_inputs[0] + arrays,
                    leaves,
                )
                # the leaves' gradients come last, after the parameters'
                k = len(grads) - leaves
                grads = grads[:nx] + grads[k:] + grads[nx:k]
                log = list(ns.get("LOG", []))
                gots = [(outs, grads, log)]
            else:
                model = _Model(f, arrays)
                gots = _run_calls(
                    ns,
                    paddle.jit.to_static(model, full_graph=mode == "ast"),
                    model.ps,
                    call_inputs,
                    leaves,
                )
        except Exception as e:  # noqa: BLE001
            if verbose:
                traceback.print_exc()
            res[mode] = _classify_error(e, mode, mode, want_exc)
            continue
        if want_exc:
            res[mode] = ("error", f"expected {want_exc}, got no error")
            continue
        msg = None
        for i, ((*ref, want_log), (*got, got_log)) in enumerate(
            zip(refs, gots)
        ):
            msg = compare(
                ref,
                got,
                mode,
                bool(ns.get("HAS_IF"))
                or (mode == "sot" and bool(ns.get("SOT_BREAKS"))),
            ) or compare_logs(want_log, got_log)
            if msg is not None:
                msg = f"call {i}: {msg}"
                break
        res[mode] = ("pass", "") if msg is None else ("mismatch", msg)
    _reset_calls(ns)
    return res


def check(ns, modes, input_seed=0, verbose=False, on_mode=None):
    """Run ``ns['f']`` eagerly and in ``modes``; ``{mode: (status, msg)}``.

    ``eager`` is reported as ``error`` when the reference itself fails
    (a fuzzer bug)."""
    if ns.get("PARAM_SHAPES"):
        return check_calls(ns, modes, input_seed, verbose, on_mode)
    f = ns["f"]
    expect = ns.get("EXPECT_ERROR", {})
    inputs = make_inputs(ns["INPUT_SHAPES"], input_seed)
    log = ns.get("LOG", [])
    leaves = ns.get("LEAVES", 0)
    res = {}
    eager_predict = None
    try:
        log.clear()
        refs = _at_each_value(ns, lambda: run_eager(f, inputs, leaves))
        want_log = list(log)
    except Exception as e:  # noqa: BLE001
        if verbose:
            traceback.print_exc()
        return {"eager": ("error", _exc(e))}
    for mode in modes:
        skip = _skip_reason(ns, mode)
        if skip is not None:
            res[mode] = ("skip", skip)
            continue
        if on_mode:
            on_mode(mode)
        # `saved` runs the AST program: AST's expected errors are its own
        as_mode = "ast" if mode == "saved" else mode
        want_exc = expect.get(as_mode)
        try:
            log.clear()
            mode_want_log = want_log
            if mode == "saved":
                # the hooks' calls of eager's run at the first `G` only
                run_eager(f, inputs, leaves)
                mode_want_log = list(log)
                prepared = _save_and_load(f, ns)
                log.clear()
                gots = [run_eager(prepared, inputs, leaves)]
            else:
                prepared = PREPARE[mode](f)
                gots = _at_each_value(
                    ns,
                    functools.partial(
                        RUN_PREPARED[mode], prepared, inputs, leaves
                    ),
                )
            got_log = list(log)
        except Exception as e:  # noqa: BLE001
            if verbose:
                traceback.print_exc()
            res[mode] = _classify_error(e, mode, as_mode, want_exc)
            continue
        if want_exc:
            res[mode] = ("error", f"expected {want_exc}, got no error")
            continue
        msg = None
        for k, (ref, got) in enumerate(zip(refs, gots)):
            msg = compare(
                ref,
                got,
                mode,
                bool(ns.get("HAS_IF"))
                or (mode == "sot" and bool(ns.get("SOT_BREAKS"))),
            )
            if msg is not None:
                if len(refs) > 1:
                    msg = f"at G = {ns['GLOBAL_VALUES'][k]}: {msg}"
                break
        if (
            mode == "saved"
            and msg
            and re.search(r"(^|: )1 outputs, eager \d+$", msg)
        ):
            # stock jit.save writes a Value returned twice once (docs/status.md)
            msg = _ByDesign(msg)
        if msg is None:
            msg = compare_logs(mode_want_log, got_log)
        if msg is None and mode != "static":
            if eager_predict is None:  # once for all modes
                eager_predict = [_eager_predict(f, inputs)]
            msg = _check_predict(
                eager_predict[0], prepared, inputs, bool(ns.get("HAS_IF"))
            )
            if (
                mode == "saved"
                and msg
                and "no error, eager" in msg
                and _PREDICT_GRAD_UNUSED in msg
            ):
                # docs/status.md: a loaded model's program computes the
                # `paddle.grad` it traced, whatever its inputs need
                msg = _ByDesign(msg)
            if mode == "saved" and msg and _PREDICT_HOOK_IN_BRANCH in msg:
                # docs/status.md: a loaded model registered its hooks when
                # loaded; eager's forward refuses one on a tensor that stops
                # gradient
                msg = _ByDesign(msg)
        if msg is None:
            res[mode] = ("pass", "")
        elif isinstance(msg, _ByDesign):
            res[mode] = ("by-design", str(msg))
        else:
            res[mode] = ("mismatch", msg)
    return res
