"""Tiny shared runner for the reproducers: eager vs a static path."""

import os
import sys

os.environ.setdefault("FLAGS_enable_pir_api", "1")
os.environ["MIN_GRAPH_SIZE"] = "0"
os.environ.setdefault("GLOG_minloglevel", "2")

import warnings  # noqa: E402

import numpy as np  # noqa: E402
import paddle  # noqa: E402

warnings.filterwarnings("ignore")


def grads(fn, arrays):
    xs = [paddle.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*xs)
    out.sum().backward()
    return [None if x.grad is None else x.grad.numpy() for x in xs]


def compare(f, arrays, modes=("ast",)):
    """Exit 1 when some mode fails or differs from eager."""
    want = grads(f, arrays)
    print("eager:", want)
    bad = False
    for mode in modes:
        try:
            got = grads(
                paddle.jit.to_static(f, full_graph=(mode == "ast")), arrays
            )
        except Exception as e:  # noqa: BLE001
            print(
                f"{mode}: ERROR {type(e).__name__}: "
                f"{str(e).strip().splitlines()[-1][:300]}"
            )
            bad = True
            continue
        ok = all(
            (g is None) == (w is None)
            and (w is None or np.allclose(g, w, rtol=1e-9, atol=1e-12))
            for g, w in zip(got, want)
        )
        print(f"{mode}: {got} {'OK' if ok else 'WRONG GRADIENT'}")
        bad |= not ok
    sys.exit(1 if bad else 0)
