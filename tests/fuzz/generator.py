"""Seeded generator of small random Paddle programs, as Python source text.

``generate(seed)`` returns a :class:`Program` whose ``source`` is a
standalone module: imports, module-level ``PyLayer`` classes and hook
helpers, ``INPUT_SHAPES``, ``EXPECT_ERROR`` and ``def f(x0, x1, ...)``.
``f`` returns one float64 tensor built from a random DAG of differentiable
ops, ``PyLayer.apply`` calls and ``register_hook`` calls (with some handles
removed), and optionally a tensor-dependent ``if``. Some programs (each
feature drawn from its own Random, so the rest of a program stays as it
was) also return leaves they create (``LEAVES``), which the caller
differentiates; add a gradient penalty (``paddle.grad`` with
``create_graph=True``) through a PyLayer whose ``backward`` may compute
under ``paddle.no_grad()``; pass the output through PaddleNLP's
``AddAuxiliaryLoss`` (the gradient ``paddle.ones([1])`` for a 0-D loss); or take parameters (``PARAM_SHAPES``), which
the harness holds in a Layer called three times with inputs of growing
batch size (``CALLS``) without clearing gradients, with hooks on them
registered in the first call and removed in the third (``CALL``,
``HANDLES``).

Eager Paddle is the reference, so PyLayer backwards need not be the true
gradient; they only have to return gradients of the right shapes.

Things the generator avoids on purpose, because docs/status.md lists them as
differences by design, or docs/upstream-bugs.md as stock bugs not fixed:
- reading a tensor after its ``detach()`` copy was used (a recomputing
  ``backward`` detaches a copy of its saved tensor);
- hooks on outputs of a PyLayer (eager ignores them, static paths apply them);
- hooks on parameters (there are none);
- hooks inside a ``while`` loop.
A hook registered inside an ``if`` branch on a value defined outside it is a
clear error by design in AST mode: it is generated rarely, and then
``EXPECT_ERROR = {"ast": "NotImplementedError"}``.
"""

from __future__ import annotations

import dataclasses
import random
import re

import numpy as np

MAX_NUMEL = 48
MAX_RANK = 3


@dataclasses.dataclass
class Program:
    seed: object
    source: str
    input_shapes: list
    has_if: bool
    expect_error: dict


@dataclasses.dataclass
class Val:
    name: str
    shape: tuple
    nograd: bool = False  # stop_gradient=True (non-differentiable)
    hookable: bool = True  # False for PyLayer outputs (eager ignores hooks)
    input_alias: bool = False  # a full slice of an input: the input itself


# docs/status.md gap: under SOT, a value of the graph compiled before the `if`
# (or a tensor `while`, which breaks the graph too) whose uses all feed outputs
# that only the branch not taken (the loop whose result is unused) uses gets
# zeros (the graph's backward fills the outputs' missing gradients) where eager
# gives no gradient, and a hook that changes zeros (`g + 1`) changes it.
def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _is_input(v):
    return v.name[0] == "x" and v.name[1:].isdigit()


def _is_input_tensor(v):
    """An input, or a full slice of one (eager and static graphs give the
    input itself for it)."""
    return _is_input(v) or v.input_alias


def _bcast(a, b):
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        return None


def _fmt_shape(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


class _PyLayerSpec:
    def __init__(self, name, n_in, n_out, has_k, nondiff):
        self.name = name
        self.n_in = n_in
        self.n_out = n_out
        self.has_k = has_k
        self.nondiff = nondiff  # index of the output marked non-diff, or None
        self.none_pos = set()  # inputs whose backward gradient is None


UNARY = [
    "paddle.tanh({a})",
    "paddle.sin({a})",
    "paddle.square({a})",
    "paddle.exp(paddle.clip({a}, -3.0, 3.0))",
    "({a} * {c})",
    "paddle.cos({a})",
]
BINARY = [
    "({a} + {b})",
    "({a} - {b})",
    "({a} * {b})",
    "({a} / (paddle.square({b}) + 1.0))",
]


class Generator:
    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        self.counter = 0
        self.handles = []  # names of live hook handles
        self.hook_reads = None  # the tensor the last hook_expr reads
        self.expect_error = {}
        self.has_if = False
        self.pylayers = []
        self.module_lines = []
        self.dup_prob = 0.1  # chance of passing one tensor twice to a PyLayer
        # Some programs read a module global ``G`` where they read constants,
        # which the harness changes between calls (``GLOBAL_VALUES``); some
        # use a Python ``while`` (not in a plain static program). Their own
        # Random: the rest of a program is drawn as without them.
        self.varying = random.Random(f"{seed!r}-varying").random() < 0.25
        # Some programs are also differentiated twice (``paddle.grad`` with
        # ``create_graph=True``, then a backward of the gradients' squares);
        # some of their PyLayers compute a gradient term under
        # ``paddle.no_grad()`` (the ``once_differentiable`` pattern), which
        # the second backward does not differentiate.
        self.double_r = random.Random(f"{seed!r}-double")
        self.double = self.double_r.random() < 0.2
        self.skip_modes = {}
        # a tensor `while` SOT breaks the graph at (the gap of the `if`)
        self.sot_breaks = False

    # ----------------------------------------------------------- helpers
    def fresh(self, prefix="v"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self):
        c = self.r.choice(["0.5", "2.0", "-1.5", "3.0", "0.25", "-0.75"])
        if self.varying and c == "3.0":
            return "G"
        return c

    def unary_expr(self, a):
        return self.r.choice(UNARY).format(a=a, c=self.const())

    def binary_expr(self, a, b):
        return self.r.choice(BINARY).format(a=a, b=b)

    # ---------------------------------------------------------- PyLayers
    def gen_elementwise_chain(self, names, n_steps, out, indent, prefix):
        """Lines computing ``n_steps`` elementwise values of the same shape
        from ``names``; returns the new local names."""
        pool = list(names)
        new = []
        for _ in range(n_steps):
            t = f"{prefix}{len(new)}"
            if len(pool) > 1 and self.r.random() < 0.6:
                a, b = self.r.sample(pool, 2)
                expr = self.binary_expr(a, b)
            else:
                expr = self.unary_expr(self.r.choice(pool))
            out.append(f"{indent}{t} = {expr}")
            pool.append(t)
            new.append(t)
        return new

    def gen_pylayer(self):
        idx = len(self.pylayers)
        name = f"PL{idx}"
        n_in = self.r.choice([1, 1, 2, 2, 3])
        n_out = self.r.choice([1, 1, 2])
        has_k = self.r.random() < 0.3
        nondiff = (
            self.r.randrange(n_out)
            if n_out == 2 and self.r.random() < 0.15
            else None
        )
        spec = _PyLayerSpec(name, n_in, n_out, has_k, nondiff)
        ins = [f"a{i}" for i in range(n_in)]
        L = [f"class {name}(PyLayer):", "    @staticmethod"]
        sig = ", ".join(["ctx"] + ins + (["k=1.5"] if has_k else []))
        L.append(f"    def forward({sig}):")
        body = []
        locs = self.gen_elementwise_chain(
            ins, self.r.randint(1, 3), body, "        ", "t"
        )
        pool = ins + locs
        # nest a previously defined PyLayer inside this forward
        if self.pylayers and self.r.random() < 0.4:
            inner = self.r.choice(self.pylayers)
            args = [self.r.choice(pool) for _ in range(inner.n_in)]
            if inner.has_k and self.r.random() < 0.5:
                args.append(self.const())
            outs = [f"n{i}" for i in range(inner.n_out)]
            lhs = outs[0] if inner.n_out == 1 else ", ".join(outs)
            body.append(
                f"        {lhs} = {inner.name}.apply({', '.join(args)})"
            )
            # a non-differentiable output of the inner layer is still a value
            pool += outs
            locs += outs
        if has_k:
            body.append("        ctx.k = k")
        outs = []
        for i in range(n_out):
            src = self.r.choice(locs) if locs else self.r.choice(pool)
            o = f"o{i}"
            if self.r.random() < 0.5:
                body.append(f"        {o} = {self.unary_expr(src)}")
            else:
                other = self.r.choice(pool)
                body.append(f"        {o} = {self.binary_expr(src, other)}")
            if has_k and self.r.random() < 0.5:
                body[-1] += " * k"
            outs.append(o)
        saved = []
        if self.r.random() < 0.85:
            cands = pool + outs
            saved = self.r.sample(cands, min(len(cands), self.r.randint(1, 3)))
            body.append(f"        ctx.save_for_backward({', '.join(saved)})")
        if nondiff is not None:
            body.append(f"        ctx.mark_non_differentiable(o{nondiff})")
        body.append(f"        return {', '.join(outs)}")
        L += body
        douts = [f"d{i}" for i in range(n_out)]
        L += [
            "",
            "    @staticmethod",
            f"    def backward(ctx, {', '.join(douts)}):",
        ]
        ss = [f"s{i}" for i in range(len(saved))]
        if saved:
            lhs = ss[0] + "," if len(ss) == 1 else ", ".join(ss)
            L.append(f"        {lhs} = ctx.saved_tensor()")
        # Some backward functions have Python effects, which eager runs at
        # every backward: a store (logged, compared with eager's) or, for a
        # recomputation, a backward pass (`RecomputeFunction`'s way); static
        # graphs run them at run time, SOT eagerly. Not in programs
        # differentiated twice (a run-time backward cannot be). Their own
        # Random: the rest of a program is drawn as without them.
        effects = random.Random(f"{self.seed!r}-pylayer-effects-{name}")
        effectful = not self.double and effects.random() < 0.3
        if effectful:
            L.append(f'        LOG.append(("sum", float({douts[0]}.sum())))')
            # SOT breaks the graph at the layer and runs it eagerly
            self.sot_breaks = True
        grads = []
        for i in range(n_in):
            if n_in > 1 and self.r.random() < 0.2 or self.r.random() < 0.05:
                grads.append("None")
                spec.none_pos.add(i)
                continue
            terms = []
            for d in self.r.sample(douts, self.r.randint(1, n_out)):
                factor = self.r.choice(
                    ["", "s", "s", "cos", "sq", "c", "tanh", "mask", "re"]
                    if ss
                    else ["", "c", "tanh", "mask"]
                )
                s = self.r.choice(ss) if ss else None
                if factor == "mask":
                    # a straight-through estimator: a copy of the incoming
                    # gradient, masked in place
                    m = f"m{len(L)}"
                    # (a mask on a 0-D tensor is a stock error in static
                    # graphs, as `setitem_hook` skips it)
                    L.append(f"        {m} = {d}.clone()")
                    L.append(f"        if {m}.ndim:")
                    L.append(f"            {m}[paddle.abs({d}) > 1.0] = 0.0")
                    terms.append(m)
                elif factor == "re" and effectful and effects.random() < 0.5:
                    # recomputation by a backward pass into `.grad`
                    q = f"q{len(L)}"
                    L += [
                        "        with paddle.enable_grad():",
                        f"            {q}a = ({s} * 1.0).detach()",
                        f"            {q}a.stop_gradient = False",
                        f"            {q}y = paddle.tanh({q}a) * {q}a",
                        f"            paddle.autograd.backward([{q}y], [{d}])",
                        f"        {q} = {q}a.grad",
                    ]
                    terms.append(q)
                elif factor == "re":
                    # recomputation: `backward` runs autograd on a detached
                    # copy of a saved tensor, used twice (of a copy of it:
                    # reading a tensor after its `detach()` is a stock bug,
                    # tests/fuzz/repros/stock_detach_then_read_source.py)
                    q = f"q{len(L)}"
                    L += [
                        "        with paddle.enable_grad():",
                        f"            {q}a = ({s} * 1.0).detach()",
                        f"            {q}a.stop_gradient = False",
                        f"            {q}y = paddle.tanh({q}a) * {q}a",
                        f"            ({q},) = paddle.grad([{q}y], [{q}a], [{d}])",
                    ]
                    terms.append(q)
                elif factor == "":
                    terms.append(d)
                elif factor == "s" and self.double_r.random() < 0.4:
                    q = f"q{len(L)}"
                    L += [
                        "        with paddle.no_grad():",
                        f"            {q} = {d} * {s}",
                    ]
                    terms.append(q)
                elif factor == "s":
                    terms.append(f"{d} * {s}")
                elif factor == "cos":
                    terms.append(f"{d} * paddle.cos({s})")
                elif factor == "sq":
                    terms.append(
                        f"{d} * (1.0 - paddle.square(paddle.tanh({s})))"
                    )
                elif factor == "c":
                    terms.append(f"{d} * {self.const()}")
                else:
                    terms.append(f"paddle.tanh({d})")
            g = " + ".join(terms)
            if has_k and self.r.random() < 0.5:
                g = f"({g}) * ctx.k"
            if g in grads:
                # One Tensor returned for two inputs: eager (stock 3.3.1)
                # may accumulate another gradient into it in place, which
                # changes the other input's gradient (docs/upstream-bugs.md).
                g = f"{g} * 1.0"
            grads.append(g)
        L.append(f"        return {', '.join(grads)}")
        self.module_lines += L + ["", ""]
        self.pylayers.append(spec)
        return spec

    # ------------------------------------------------------------- hooks
    def hook_expr(self, v, visible):
        """A hook for value ``v`` (shape-preserving), as an expression."""
        kind = self.r.choice(
            [
                "none",
                "scale",
                "scale",
                "tanh",
                "fwd",
                "fwd",
                "plus",
                "partial",
                "def",
                "run_time",
            ]
        )
        if kind == "none":
            return "lambda g: None"
        if kind == "scale":
            return f"lambda g: g * {self.const()}"
        if kind == "tanh":
            return self.r.choice(
                ["lambda g: paddle.tanh(g)", "lambda g: g.tanh()"]
            )
        if kind == "plus":
            return "lambda g: g + 1.0"
        if kind == "partial":
            return f"functools.partial(scale_hook, c={self.const()})"
        if kind == "def":
            return self.r.choice(["observe_hook", "sin_hook"])
        if kind == "run_time":  # not pure math: runs at run time
            return self.r.choice(
                [
                    "branch_hook",
                    "inplace_hook",
                    "setitem_hook",
                    "item_hook",
                    "log_hook",
                    "shape_hook",
                ]
            )
        # g * t, t a forward tensor broadcasting into v's shape
        ts = [t for t in visible if _bcast(t.shape, v.shape) == tuple(v.shape)]
        if not ts:
            return f"lambda g: g * {self.const()}"
        t = self.r.choice(ts)
        self.hook_reads = t
        if self.r.random() < 0.3:
            return f"lambda g: g * paddle.tanh({t.name})"
        return f"lambda g: g * {t.name}"

    def maybe_hooks(self, body, indent, visible, hookable, prob=0.35):
        while hookable and self.r.random() < prob:
            v = self.r.choice(hookable)
            self.hook_reads = None
            expr = self.hook_expr(v, visible)
            if (
                _is_input_tensor(v)
                and self.hook_reads
                and not _is_input_tensor(self.hook_reads)
            ):
                # docs/status.md: a hook on a to_static input runs eagerly, where a
                # tensor computed in the function does not exist (AST: clear
                # error; SOT runs that frame eagerly).
                self.expect_error["ast"] = "NotImplementedError"
            if self.r.random() < 0.3:
                h = self.fresh("h")
                body.append(f"{indent}{h} = {v.name}.register_hook({expr})")
                self.handles.append(h)
            else:
                body.append(f"{indent}{v.name}.register_hook({expr})")
            prob *= 0.6

    def maybe_remove(self, body, indent, prob=0.3):
        if self.handles and self.r.random() < prob:
            h = self.handles.pop(self.r.randrange(len(self.handles)))
            body.append(f"{indent}{h}.remove()")

    def pick(self, vals):
        # prefer recent values, so that the DAG gets deep
        if len(vals) > 3 and self.r.random() < 0.6:
            return self.r.choice(vals[-3:])
        return self.r.choice(vals)

    # ------------------------------------------------------------- ops
    def gen_op(self, vals, body, indent):
        """Append one op statement; return the new Vals."""
        r = self.r
        a = self.pick(vals)
        kind = r.choices(
            [
                "unary",
                "binary",
                "matmul",
                "reduce",
                "reshape",
                "transpose",
                "concat",
                "split",
                "slice",
                "pylayer",
                "inplace",
                "loop",
            ],
            weights=[18, 22, 8, 8, 5, 5, 5, 5, 6, 10, 6, 3],
        )[0]
        shape = tuple(a.shape)
        rank = len(shape)
        nograd = a.nograd
        name = self.fresh()
        if kind == "unary":
            body.append(f"{indent}{name} = {self.unary_expr(a.name)}")
            return [Val(name, shape, nograd)]
        if kind == "binary":
            cands = [
                b
                for b in vals
                if (s := _bcast(b.shape, shape)) is not None
                and len(s) <= MAX_RANK
                and _numel(s) <= MAX_NUMEL
            ]
            b = r.choice(cands or [a])
            out = _bcast(b.shape, shape)
            if r.random() < 0.5:
                expr = self.binary_expr(a.name, b.name)
            else:
                expr = self.binary_expr(b.name, a.name)
            body.append(f"{indent}{name} = {expr}")
            return [Val(name, out, a.nograd and b.nograd)]
        if kind == "matmul" and rank >= 2:
            k = shape[-1]
            opts = []
            for b in vals:
                if len(b.shape) == 2 and b.shape[0] == k:
                    opts.append((b, False, shape[:-1] + (b.shape[1],)))
                if len(b.shape) == 2 and b.shape[1] == k:
                    opts.append((b, True, shape[:-1] + (b.shape[0],)))
            opts = [o for o in opts if _numel(o[2]) <= MAX_NUMEL]
            if opts and r.random() < 0.8:
                b, ty, out = r.choice(opts)
                ty_s = ", transpose_y=True" if ty else ""
                body.append(
                    f"{indent}{name} = paddle.matmul({a.name}, {b.name}{ty_s})"
                )
                return [Val(name, out, a.nograd and b.nograd)]
            if rank == 2:
                body.append(
                    f"{indent}{name} = paddle.matmul({a.name}, {a.name}, transpose_y=True)"
                )
                return [Val(name, (shape[0], shape[0]), nograd)]
            kind = "reduce"
        if kind == "reduce":
            if rank == 0:
                body.append(f"{indent}{name} = {a.name} * {self.const()}")
                return [Val(name, shape, nograd)]
            ax = r.randrange(rank)
            kd = r.random() < 0.5 or rank == 1 and r.random() < 0.8
            fn = r.choice(["sum", "mean"])
            if r.random() < 0.5:
                expr = f"paddle.{fn}({a.name}, axis={ax}, keepdim={kd})"
            else:
                expr = f"{a.name}.{fn}(axis={ax}, keepdim={kd})"
            out = list(shape)
            if kd:
                out[ax] = 1
            else:
                del out[ax]
            body.append(f"{indent}{name} = {expr}")
            return [Val(name, tuple(out), nograd)]
        if kind == "reshape":
            n = _numel(shape)
            opts = [(n,), (1, n)]
            if rank == 2:
                opts.append((shape[1], shape[0]))
            if rank >= 2:
                opts.append((shape[0], n // shape[0]))
            if rank == 1 and n % 2 == 0 and n > 2:
                opts.append((2, n // 2))
            # a reshape to the same shape aliases its input in eager (a hook
            # on it lands on the input): not what static graphs model
            opts = [o for o in opts if tuple(o) != shape] or [(1,) + shape]
            out = r.choice(opts)
            tgt = list(out)
            if r.random() < 0.4:
                tgt[r.randrange(len(tgt))] = -1
            body.append(f"{indent}{name} = paddle.reshape({a.name}, {tgt})")
            return [Val(name, tuple(out), nograd)]
        if kind == "transpose" and rank >= 2:
            perm = list(range(rank))
            while perm == list(range(rank)):
                r.shuffle(perm)
            out = tuple(shape[p] for p in perm)
            body.append(
                f"{indent}{name} = paddle.transpose({a.name}, perm={perm})"
            )
            return [Val(name, out, nograd)]
        if kind == "concat" and rank >= 1:
            ax = r.randrange(rank)
            cands = [
                b
                for b in vals
                if len(b.shape) == rank
                and all(b.shape[i] == shape[i] for i in range(rank) if i != ax)
            ]
            b = r.choice(cands)
            out = list(shape)
            out[ax] += b.shape[ax]
            if _numel(out) <= MAX_NUMEL:
                body.append(
                    f"{indent}{name} = paddle.concat([{a.name}, {b.name}], axis={ax})"
                )
                return [Val(name, tuple(out), a.nograd and b.nograd)]
        if kind == "split" and rank >= 1:
            axes = [i for i in range(rank) if shape[i] >= 2]
            if axes:
                ax = r.choice(axes)
                d = shape[ax]
                k = r.randint(1, d - 1)
                n2 = self.fresh()
                if d % 2 == 0 and r.random() < 0.4:
                    k = d // 2
                    body.append(
                        f"{indent}{name}, {n2} = paddle.split({a.name}, 2, axis={ax})"
                    )
                else:
                    body.append(
                        f"{indent}{name}, {n2} = paddle.split({a.name}, [{k}, {d - k}], axis={ax})"
                    )
                if r.random() < 0.25:
                    # a logging hook on each output: eager runs them in
                    # output order, and so must the static paths
                    body.append(f"{indent}{name}.register_hook(log_hook)")
                    body.append(f"{indent}{n2}.register_hook(log_hook)")
                s1, s2 = list(shape), list(shape)
                s1[ax], s2[ax] = k, d - k
                return [
                    Val(name, tuple(s1), nograd),
                    Val(n2, tuple(s2), nograd),
                ]
        if kind == "inplace":
            # an in-place op on a fresh intermediate (a scale saves nothing
            # for its backward, so eager allows it): its later uses read the
            # new value
            body.append(f"{indent}{name} = {a.name} * {self.const()}")
            same = [b for b in vals if _bcast(b.shape, shape) == shape]
            op = r.choice(["add_", "multiply_", "scale_", "tanh_", "setitem"])
            if op in ("add_", "multiply_") and same:
                b = r.choice(same)
                body.append(f"{indent}{name}.{op}({b.name})")
                return [Val(name, shape, nograd and b.nograd)]
            if op == "setitem" and rank >= 1:
                body.append(f"{indent}{name}[0] = {self.const()}")
            elif op == "tanh_":
                body.append(f"{indent}{name}.tanh_()")
            else:
                body.append(f"{indent}{name}.scale_({self.const()})")
            return [Val(name, shape, nograd)]
        if kind == "loop":
            # in-place ops on a fresh intermediate in a tensor-dependent
            # loop: a Python `while` (AST converts it) or `tensor_while`
            # (a `while_loop` in a static graph)
            same = [
                b
                for b in vals
                if _bcast(b.shape, shape) == shape and b is not a
            ]
            b = r.choice(same) if same else None
            n = r.randint(1, 3)
            steps = [f"scale_({r.choice(['0.5', '-0.75', '2.0'])})"]
            if b is not None:
                steps.insert(r.randrange(2), f"add_({b.name})")
            body.append(f"{indent}{name} = {a.name} * 1.0")
            if r.random() < 0.5:
                self.skip_modes["static"] = "a Python while on a tensor"
                self.sot_breaks = True
                i = self.fresh("i")
                body.append(f"{indent}{i} = paddle.zeros([], 'int64')")
                body.append(f"{indent}while {i} < {n}:")
                body += [f"{indent}    {name}.{step}" for step in steps]
                body.append(f"{indent}    {i} += 1")
            else:
                fn = self.fresh("body")
                body.append(f"{indent}def {fn}(i, t):")
                body += [f"{indent}    t.{step}" for step in steps]
                body.append(f"{indent}    return i + 1, t")
                body.append(
                    f"{indent}_, {name} = tensor_while(lambda i, t: i < {n}, "
                    f"{fn}, [paddle.zeros([], 'int64'), {name}])"
                )
            return [Val(name, shape, nograd and (b is None or b.nograd))]
        if kind == "slice" and rank >= 1:
            axes = [i for i in range(rank) if shape[i] >= 2]
            if axes:
                ax = r.choice(axes)
                d = shape[ax]
                lo = r.randint(0, d - 1)
                hi = r.randint(lo + 1, d)
                idx = [":"] * ax + [f"{lo}:{hi}"]
                body.append(f"{indent}{name} = {a.name}[{', '.join(idx)}]")
                out = list(shape)
                out[ax] = hi - lo
                # Eager returns the tensor itself for a full slice: a full
                # slice of a PyLayer output is that output (not hookable).
                full = lo == 0 and hi == d
                return [
                    Val(
                        name,
                        tuple(out),
                        nograd,
                        a.hookable or not full,
                        full and _is_input_tensor(a),
                    )
                ]
        if kind == "pylayer":
            if not self.pylayers or (
                len(self.pylayers) < 3 and r.random() < 0.5
            ):
                spec = self.gen_pylayer()
            else:
                spec = r.choice(self.pylayers)
            # Eager Paddle segfaults when a None gradient from backward
            # reaches some grad nodes (e.g. scale), so None-gradient inputs
            # get leaf inputs (x*) only.
            same = [b for b in vals if tuple(b.shape) == shape]
            leaves = [b for b in same if b.name.startswith("x")]
            if (
                spec.none_pos
                and not leaves
                or (
                    len(spec.none_pos) > len(leaves)
                    and r.random() > self.dup_prob
                )
            ):
                spec = None
            if spec is None:
                body.append(f"{indent}{name} = {self.unary_expr(a.name)}")
                return [Val(name, shape, nograd)]
            args = []
            for i in range(spec.n_in):
                if i in spec.none_pos:
                    fresh = [b.name for b in leaves if b.name not in args]
                    if fresh and r.random() > self.dup_prob:
                        args.append(r.choice(fresh))
                    else:
                        args.append(r.choice(leaves).name)
                elif i == 0 and (a.name not in args or not leaves):
                    args.append(a.name)
                elif r.random() < 0.75:
                    # sometimes the same tensor twice
                    others = [b.name for b in same if b.name not in args]
                    if others and r.random() > self.dup_prob:
                        args.append(r.choice(others))
                    elif r.random() < self.dup_prob:
                        args.append(r.choice(same).name)
                    else:
                        args.append(self.unary_expr(r.choice(same).name))
                else:
                    args.append(self.unary_expr(r.choice(same).name))
            if spec.has_k and r.random() < 0.6:
                args.append(
                    self.const() if r.random() < 0.5 else f"k={self.const()}"
                )
            outs = [name] + [self.fresh() for _ in range(spec.n_out - 1)]
            lhs = outs[0] if spec.n_out == 1 else ", ".join(outs)
            body.append(f"{indent}{lhs} = {spec.name}.apply({', '.join(args)})")
            res = []
            for i, o in enumerate(outs):
                res.append(
                    Val(o, shape, nograd=(spec.nondiff == i), hookable=False)
                )
            return res
        # fallback
        body.append(f"{indent}{name} = {self.unary_expr(a.name)}")
        return [Val(name, shape, nograd)]

    def gen_aux_loss(self, vals, body, last, out_expr):
        """PaddleNLP's ``AddAuxiliaryLoss``: a PyLayer passing the output
        through and giving a 0-D auxiliary loss the gradient
        ``paddle.ones([1])`` (shape ``[1]``, which eager takes for a 0-D
        input). Drawn from its own Random. Returns the output expression."""
        r = random.Random(f"{self.seed!r}-aux-loss")
        if r.random() >= 0.15:
            return out_expr
        self.module_lines += [
            "class AddAuxiliaryLoss(PyLayer):",
            "    @staticmethod",
            "    def forward(ctx, x, loss):",
            "        ctx.dtype = loss.dtype",
            "        return x",
            "",
            "    @staticmethod",
            "    def backward(ctx, grad):",
            "        return grad, paddle.ones([1], dtype=ctx.dtype)",
            "",
            "",
        ]
        src = r.choice([v for v in vals if not v.nograd])
        body.append(f"    aux = ({src.name} * {src.name}).mean()")
        # (of a new tensor: `forward` returns its input, which must not be
        # used after `apply`, as eager changes it in place)
        return f"AddAuxiliaryLoss.apply(({out_expr}) * 1.0, aux)"

    def gen_penalty(self, inputs, body):
        """A gradient penalty through a PyLayer whose ``backward`` may
        compute its gradient under ``paddle.no_grad()`` (then the caller's
        backward, differentiating the penalty, gets no gradient through
        it): ``paddle.grad(..., create_graph=True)`` in the function, its
        square added to the output. Returns the term to add."""
        r = self.double_r
        nograd = r.random() < 0.6
        c = r.choice(["3.0", "-0.5"])
        grad = f"d * {c} * a * a"
        lines = [
            "class PLD(PyLayer):",
            "    @staticmethod",
            "    def forward(ctx, a):",
            "        ctx.save_for_backward(a)",
            "        return a * a * a",
            "",
            "    @staticmethod",
            "    def backward(ctx, d):",
            "        (a,) = ctx.saved_tensor()",
        ]
        if nograd:
            lines += [
                "        with paddle.no_grad():",
                f"            g = {grad}",
            ]
        else:
            lines.append(f"        g = {grad}")
        self.module_lines += lines + ["        return g", "", ""]
        x = r.choice(inputs).name
        pre = r.choice(["paddle.tanh({x})", "{x} * 0.5", "paddle.sin({x})"])
        body.append(f"    pa = {pre.format(x=x)}")
        if r.random() < 0.3:
            body.append("    pa.register_hook(lambda g: g * 0.5)")
        body += [
            "    pb = PLD.apply(pa)",
            f"    (gp,) = paddle.grad([pb.sum()], [{x}], create_graph=True)",
        ]
        return " + (gp * gp).sum()"

    def gen_params(self, vals, body, dims):
        """Parameters (the last arguments of ``f``): the harness calls ``f``
        three times from a Layer holding them, with inputs whose dimension
        ``m`` grows (a new program per call in to_static), without
        clearing their gradients, which accumulate; a hook on a parameter
        registered in the first call and removed in the third, or
        registered at every call. Drawn from their own Random, in programs
        without ``G``. Returns [(name, name of a value it is multiplied
        with in the output)]."""
        r = random.Random(f"{self.seed!r}-calls")
        self.param_shapes = []
        if self.varying or r.random() >= 0.3:
            return []
        m, n, k = dims
        params = []
        hooks = []
        for i in range(r.randint(1, 2)):
            shape = r.choice([(n,), (1, n), (n, k)])
            name = f"p{i}"
            partners = [
                v.name
                for v in vals
                if not v.nograd
                and (s := _bcast(v.shape, shape)) is not None
                and _numel(s) <= MAX_NUMEL
            ]
            self.param_shapes.append(shape)
            params.append((name, r.choice(partners) if partners else "1.0"))
            kind = r.choice(["removed", "removed", "each", "none"])
            if kind == "removed":
                c = r.choice(["2.0", "-0.5"])
                hooks += [
                    "    if CALL[0] == 0:",
                    f"        HANDLES.append({name}.register_hook("
                    f"lambda g: g * {c}))",
                    "    if CALL[0] == 2:",
                    "        HANDLES.pop(0).remove()",
                ]
            elif kind == "each":
                hooks.append(f"    {name}.register_hook(log_hook)")
        body[:0] = hooks
        return params

    def gen_leaves(self, vals, body):
        """Leaf Tensors the function creates and returns (the caller
        differentiates them; eager fills their ``grad``): a detached copy of
        a value, or a constant, made differentiable; most also feed the
        output. Drawn from their own Random: the rest of the program stays
        as it was. Returns [(leaf name, name of the value it is multiplied
        with in the output, or None)]."""
        r = random.Random(f"{self.seed!r}-leaves")
        leaves = []
        if r.random() >= 0.25:
            return leaves
        for _ in range(r.randint(1, 2)):
            src = r.choice(vals)
            shape = tuple(src.shape)
            name = self.fresh("l")
            if r.random() < 0.5:
                # of a copy: reading a tensor after its detach() was used is
                # a stock bug (repros/stock_detach_then_read_source.py)
                body.append(f"    {name} = ({src.name} * 1.0).detach().clone()")
            else:
                c = r.choice(["0.5", "2.0", "-1.5"])
                body.append(
                    f"    {name} = paddle.full({list(shape)}, {c}, 'float64')"
                )
            body.append(f"    {name}.stop_gradient = False")
            if r.random() < 0.3:
                hook = r.choice(
                    ["lambda g: g * 0.5", "lambda g: g + 1.0", "log_hook"]
                )
                body.append(f"    {name}.register_hook({hook})")
            partners = [
                v
                for v in vals
                if not v.nograd
                and (s := _bcast(v.shape, shape)) is not None
                and _numel(s) <= MAX_NUMEL
            ]
            partner = (
                r.choice(partners).name
                if partners and r.random() < 0.75
                else None
            )
            leaves.append((name, partner))
        return leaves

    # ------------------------------------------------------------ branch
    def gen_if(self, vals, body):
        """A tensor-dependent ``if`` defining one value ``rN`` used later."""
        self.has_if = True
        cands = [v for v in vals if not v.nograd]
        a = self.r.choice(cands)
        shape = tuple(a.shape)
        partners = [v for v in vals if _bcast(v.shape, shape) == shape]
        rname = self.fresh("r")
        cond_in = self.r.choice([v for v in vals if v.name.startswith("x")])
        body.append(f"    if {cond_in.name}.mean() > 0:")
        outer_hook = self.r.random() < 0.15
        # a branch may return a value unchanged: ``a`` (defined before the
        # `if`; eager then makes ``rN`` that Tensor) or its last value
        unchanged = self.r.choice([None, None, None, 0, 1])
        saved_handles = self.handles
        for branch in range(2):
            if branch == 1:
                body.append("    else:")
            ind = "        "
            # a handle made in a branch is removed in the same branch or never
            self.handles = []
            local = [a]
            for _ in range(self.r.randint(1, 3)):
                name = self.fresh("b")
                if self.r.random() < 0.5:
                    expr = self.binary_expr(
                        self.r.choice(local).name, self.r.choice(partners).name
                    )
                else:
                    expr = self.unary_expr(self.r.choice(local).name)
                body.append(f"{ind}{name} = {expr}")
                local.append(Val(name, shape))
                self.maybe_hooks(
                    body, ind, vals + local[1:], local[1:], prob=0.5
                )
            if outer_hook and branch == 0:
                hv = self.r.choice(
                    [v for v in vals if v.hookable and not v.nograd]
                )
                body.append(
                    f"{ind}{hv.name}.register_hook({self.hook_expr(hv, vals)})"
                )
                self.expect_error["ast"] = "NotImplementedError"
            self.maybe_remove(body, ind, prob=0.6)
            if unchanged == branch:
                returned = self.r.choice([a, local[-1]])
                body.append(f"{ind}{rname} = {returned.name}")
            else:
                body.append(f"{ind}{rname} = {local[-1].name} * {self.const()}")
        self.handles = saved_handles
        # a hook on ``rN`` when it may be a hooked value is a clear error in
        # AST (eager hooks that value itself): not generated
        return [Val(rname, shape, hookable=unchanged is None)]

    # ------------------------------------------------------------- main
    def generate(self) -> Program:
        r = self.r
        dims = [r.randint(2, 4) for _ in range(3)]
        m, n, k = dims
        shape_pool = [
            (m, n),
            (m, n),
            (n,),
            (1, n),
            (m, 1),
            (n, k),
            (k, m, n),
            (m,),
        ]
        # the same pool with the dimensions named (``calls_of``)
        templates = [
            ("m", "n"),
            ("m", "n"),
            ("n",),
            (1, "n"),
            ("m", 1),
            ("n", "k"),
            ("k", "m", "n"),
            ("m",),
        ]
        n_inputs = r.randint(1, 3)
        picks = [r.choice(range(len(shape_pool))) for _ in range(n_inputs)]
        shapes = [shape_pool[i] for i in picks]
        vals = [Val(f"x{i}", s) for i, s in enumerate(shapes)]
        body = []
        n_ops = r.randint(4, 14)
        if_at = r.randrange(n_ops) if r.random() < 0.2 else None
        self.maybe_hooks(body, "    ", vals, vals, prob=0.3)
        for i in range(n_ops):
            if i == if_at:
                new = self.gen_if(vals, body)
            else:
                new = self.gen_op(vals, body, "    ")
            vals += new
            hookable = [v for v in vals if v.hookable and not v.nograd]
            self.maybe_hooks(body, "    ", vals, hookable)
            self.maybe_remove(body, "    ")
        # the output: the last value plus a few others, reduced
        last = vals[-1]
        if last.nograd:
            diff = [v for v in vals if not v.nograd]
            last = diff[-1]
        out_expr = last.name
        text = "\n".join(body)
        others = [
            v
            for v in vals[n_inputs:]
            if v is not last
            and not v.nograd
            and len(re.findall(rf"\b{v.name}\b", text)) < 2
        ]
        # most dangling values feed the output; some stay dead
        others = [v for v in others if r.random() < 0.8][:4]
        for v in others:
            out_expr += f" + {v.name}.{r.choice(['sum', 'mean'])}()"
        leaves = self.gen_leaves(vals, body)
        for leaf, partner in leaves:
            if partner is not None:
                out_expr += f" + ({leaf} * {partner}).sum()"
        if self.double:
            out_expr += self.gen_penalty(vals[:n_inputs], body)
        out_expr = self.gen_aux_loss(vals, body, last, out_expr)
        params = self.gen_params(vals, body, dims)
        for p, partner in params:
            out_expr += f" + ({p} * {partner}).sum()"
        body.append(f"    out = {out_expr}")
        if (
            (out_expr != last.name or last.hookable)
            and r.random() < 0.3
            # (eager ignores hooks on a PyLayer output)
            and not out_expr.startswith("AddAuxiliaryLoss")
        ):
            outv = Val("out", last.shape)
            expr = self.hook_expr(outv, vals)
            body.append(f"    out.register_hook({expr})")
        while self.handles and r.random() < 0.5:
            self.maybe_remove(body, "    ", prob=1.0)
        # Sometimes also return a value the caller does not differentiate
        # (its own Random: the rest of the program stays as it was): an
        # intermediate, itself (other ops may read it) or a copy of it.
        extra = random.Random(f"{self.seed!r}-extra-output")
        candidates = [v for v in vals[n_inputs:] if not v.nograd]
        returned = ["out"]
        if candidates and extra.random() < 0.3:
            aux = extra.choice(candidates).name
            copy = " * 1.0" if extra.random() < 0.5 else ""
            returned.append(f"{aux}{copy}")
        returned += [leaf for leaf, _ in leaves]
        body.append(f"    return {', '.join(returned)}")

        args = ", ".join(
            [v.name for v in vals[:n_inputs]] + [p for p, _ in params]
        )
        multi_call = []
        if params:
            calls = [
                [
                    [
                        {"m": m + i, "n": n, "k": k}.get(d, d)
                        for d in templates[j]
                    ]
                    for j in picks
                ]
                for i in range(3)
            ]
            multi_call = [
                f"PARAM_SHAPES = {[list(s) for s in self.param_shapes]!r}",
                f"CALLS = {calls!r}  # INPUT_SHAPES of each call",
                "CALL = [0]  # the index of the call running",
                "HANDLES = []",
            ]
        header = [
            f"# fuzz program, seed={self.seed!r}",
            "import functools",
            "",
            "import paddle",
            "from paddle.autograd import PyLayer",
            "",
            f"INPUT_SHAPES = {[list(s) for s in shapes]!r}",
            f"EXPECT_ERROR = {self.expect_error!r}",
            "LOG = []  # what the hooks saw, compared with eager's",
            f"HAS_IF = {self.has_if!r}",
            f"SKIP_MODES = {self.skip_modes!r}",
            f"SOT_BREAKS = {self.sot_breaks!r}",
            f"LEAVES = {len(leaves)}  # the last outputs: leaves f creates",
            *multi_call,
            *(
                ["G = 3.0", "GLOBAL_VALUES = [3.0, -0.5, 2.0]"]
                if self.varying
                else []
            ),
            "",
            "",
            "def tensor_while(cond, body, loop_vars):",
            "    if paddle.in_dynamic_mode():",
            "        while cond(*loop_vars):",
            "            loop_vars = body(*loop_vars)",
            "        return list(loop_vars)",
            "    return paddle.static.nn.while_loop(cond, body, list(loop_vars))",
            "",
            "",
            "def scale_hook(g, c):",
            "    return g * c",
            "",
            "",
            "def observe_hook(g):",
            "    _ = g.sum()",
            "",
            "",
            "def sin_hook(g):",
            "    return paddle.sin(g)",
            "",
            "",
            "def branch_hook(g):",
            "    if float(g.abs().max()) > 1.0:",
            "        return g * 0.5",
            "    return None",
            "",
            "",
            "def inplace_hook(g):",
            "    g.detach().scale_(0.5)",
            "",
            "",
            "def setitem_hook(g):",
            "    g = g.clone()",
            "    if g.ndim:",
            "        g[0] = 0.0",
            "    return g",
            "",
            "",
            "def item_hook(g):",
            "    return g * (1.0 + 0.0 * g.abs().max().item())",
            "",
            "",
            "def log_hook(g):",
            '    LOG.append(("sum", float(g.sum())))',
            "",
            "",
            "def shape_hook(g):",
            '    LOG.append(("shape", tuple(g.shape)))',
            "",
            "",
        ]
        src = (
            "\n".join(header + self.module_lines + [f"def f({args}):"] + body)
            + "\n"
        )
        return Program(self.seed, src, shapes, self.has_if, self.expect_error)


def generate(seed) -> Program:
    return Generator(seed).generate()


if __name__ == "__main__":
    import sys

    print(generate(sys.argv[1] if len(sys.argv) > 1 else 0).source)
