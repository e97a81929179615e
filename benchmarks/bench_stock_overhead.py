"""Hook-free models: this wheel against stock Paddle 3.3.1.

    python benchmarks/bench_stock_overhead.py --stock-python STOCK_PYTHON \\
        [--rounds 5] [--steps 20] [--json out.json]

``STOCK_PYTHON`` is the Python of a venv with the stock 3.3.1 wheel. For each
model and mode, each round runs one fresh process of each wheel, in
alternating order, and reports in that process:

- the first call: ``to_static``, the trace, the compile and one training
  step (forward, backward, SGD);
- the median of ``--steps`` further steps.

Timings on a shared 2-core machine vary by more than the few percent the
comparison is about, so one more process of each wheel counts the Python
function calls (``cProfile``'s call count, C functions called from Python
included) of the first call and of a step: a count the wheels' Python code
decides, the same at every run.

Models: ``paddle.vision.models.resnet18`` (batch 4, 3x64x64), a
``TransformerEncoder`` of 4 layers (d_model 128, 4 heads, feed-forward 256;
batch 8, sequence 32) and ``linear``, one ``Linear(4, 4)`` and ``tanh``
(batch 2: a step that costs little besides what to_static adds to each
call), float32, no hook and no PyLayer. Modes: SOT (``to_static``) and AST
(``full_graph=True``). The table gives the medians over the rounds and the
median of the per-round ratios this / stock.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

MODELS = ("resnet18", "transformer", "linear")
MODES = ("sot", "ast")


def _model_and_input(name):
    import numpy as np
    import paddle

    paddle.seed(0)
    rng = np.random.default_rng(0)
    if name == "resnet18":
        model = paddle.vision.models.resnet18(num_classes=10)
        x = rng.standard_normal((4, 3, 64, 64)).astype("float32")
    elif name == "linear":
        # a call that costs little besides what to_static adds to every call
        model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.Tanh())
        x = rng.standard_normal((2, 4)).astype("float32")
    else:
        layer = paddle.nn.TransformerEncoderLayer(
            d_model=128, nhead=4, dim_feedforward=256, dropout=0.0
        )
        model = paddle.nn.TransformerEncoder(layer, num_layers=4)
        x = rng.standard_normal((8, 32, 128)).astype("float32")
    return model, paddle.to_tensor(x)


def _calls(profile) -> int:
    import pstats

    return sum(row[1] for row in pstats.Stats(profile).stats.values())


def child(name: str, mode: str, steps: int, count_calls: bool) -> dict:
    import paddle

    model, x = _model_and_input(name)
    opt = paddle.optimizer.SGD(0.01, parameters=model.parameters())

    def step(fn):
        loss = fn(x).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        return float(loss)

    if count_calls:
        import cProfile

        def first_call():
            fn = paddle.jit.to_static(model, full_graph=(mode == "ast"))
            step(fn)
            return fn

        first, later = cProfile.Profile(), cProfile.Profile()
        fn = first.runcall(first_call)
        for _ in range(3):
            step(fn)
        for _ in range(steps):
            later.runcall(step, fn)
        return {
            "first_calls": _calls(first),
            "step_calls": _calls(later) / steps,
        }
    start = time.perf_counter()
    fn = paddle.jit.to_static(model, full_graph=(mode == "ast"))
    step(fn)
    first = time.perf_counter() - start
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step(fn)
        times.append(time.perf_counter() - start)
    return {
        "first_ms": first * 1e3,
        "step_ms": statistics.median(times) * 1e3,
        "version": paddle.version.full_version
        + ("+patched" if _is_patched() else ""),
    }


def _is_patched() -> bool:
    import importlib.util

    return importlib.util.find_spec("paddle.autograd.static_hooks") is not None


def _run(
    python: str, name: str, mode: str, steps: int, count_calls: bool = False
) -> dict:
    count = ["--count-calls"] if count_calls else []
    proc = subprocess.run(
        [python, __file__, "--child", name, mode, "--steps", str(steps)]
        + count,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"{python} {name} {mode} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stock-python", required=False)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "MODE"))
    parser.add_argument("--count-calls", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.steps, args.count_calls)))
        return
    if not args.stock_python:
        parser.error("--stock-python is required")
    results = {}
    for name in MODELS:
        for mode in MODES:
            rows = {"this": [], "stock": []}
            for r in range(args.rounds):
                order = ("this", "stock") if r % 2 == 0 else ("stock", "this")
                for which in order:
                    python = (
                        sys.executable
                        if which == "this"
                        else (args.stock_python)
                    )
                    rows[which].append(_run(python, name, mode, args.steps))
            for which in ("this", "stock"):
                python = (
                    sys.executable if which == "this" else args.stock_python
                )
                rows[f"{which}_calls"] = _run(
                    python, name, mode, args.steps, count_calls=True
                )
            results[f"{name}/{mode}"] = rows
            print(f"{name}/{mode} done", file=sys.stderr, flush=True)

    def table(title, fields, cell):
        print(
            f"{title}| model/mode | first call (this / stock) | ratio "
            "| per step (this / stock) | ratio |\n|---|---:|---:|---:|---:|"
        )
        for key, rows in results.items():
            cells = [cell(rows, field) for field in fields]
            print(f"| {key} | {' | '.join(cells)} |")

    def time_cell(rows, field):
        this = [row[field] for row in rows["this"]]
        stock = [row[field] for row in rows["stock"]]
        ratios = [a / b for a, b in zip(this, stock)]
        return (
            f"{statistics.median(this):.1f} / {statistics.median(stock):.1f} "
            f"ms | {statistics.median(ratios):.3f}x "
            f"({min(ratios):.3f}-{max(ratios):.3f})"
        )

    def calls_cell(rows, field):
        this, stock = rows["this_calls"][field], rows["stock_calls"][field]
        return f"{this:.0f} / {stock:.0f} | {this / stock:.4f}x"

    table("", ("first_ms", "step_ms"), time_cell)
    table(
        "\nPython function calls (cProfile, one process of each wheel)\n\n",
        ("first_calls", "step_calls"),
        calls_cell,
    )
    versions = {
        which: rows[which][0]["version"]
        for rows in results.values()
        for which in ("this", "stock")
    }
    print(f"\nwheels: {versions}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
