"""Differential fuzzer: random programs with hooks/PyLayers, eager vs static.

    python tests/fuzz/run_fuzz.py --seed S --count N [--time SECONDS]
        [--modes ast,sot,static] [--out DIR] [--jobs J]

Program ``i`` of seed ``S`` is ``generator.generate(f"{S}-{i}")``. Each
program runs eagerly (the reference) and in every mode (or, with
``--modes-per-program K``, in K of them chosen deterministically); outputs and
all input gradients must match eager (float64, rtol 1e-9, atol 1e-12). Programs
run in worker subprocesses (batches of ``--batch``), so a segfault costs one
program, not the run. Every failure is printed as ``FAIL S-i mode: message``
and gets a standalone reproducer in ``--out``; the first failures of each kind
are minimized (statements deleted one by one while the failure persists).
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import generator  # noqa: E402

ALL_MODES = ("ast", "sot", "static", "saved")
MARK = "@@FUZZ "


def program_seed(seed, idx):
    return f"{seed}-{idx}"


def input_seed(seed, idx):
    return zlib.crc32(program_seed(seed, idx).encode())


def modes_for(idx, modes, per_program):
    """The modes program ``idx`` runs in. With ``per_program`` K > 0, the
    cheap ``static`` mode always runs and K of the to_static modes (ast,
    sot) are chosen in rotation."""
    if not per_program:
        return list(modes)
    jit = [m for m in modes if m != "static"]
    chosen = [
        jit[(idx + j) % len(jit)] for j in range(min(per_program, len(jit)))
    ]
    return (["static"] if "static" in modes else []) + chosen


# --------------------------------------------------------------- in worker
_load_counter = [0]


def load_source(source, tmpdir, tag="prog"):
    """Import ``source`` as a fresh module from a file (AST needs source)."""
    _load_counter[0] += 1
    name = f"fuzz_{tag}_{os.getpid()}_{_load_counter[0]}"
    path = os.path.join(tmpdir, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return vars(mod)


def inject_bug():
    """Deliberate bug for checking that the fuzzer can fail: static-graph
    hooks are registered as no-ops (skipped)."""
    import paddle.autograd.static_hooks as sh

    orig = sh.register_hook
    sh.register_hook = lambda value, hook: orig(value, lambda g: None)


def worker(args):
    import harness

    if args.inject_bug:
        inject_bug()
    tmpdir = tempfile.mkdtemp(prefix="fuzzw_")
    modes = args.modes.split(",")
    lo, hi = map(int, args.indices.split(":"))
    for idx in range(lo, hi):
        print(MARK + json.dumps({"start": idx}), flush=True)
        t0 = time.time()
        stamps = []
        try:
            prog = generator.generate(program_seed(args.seed, idx))
            ns = load_source(prog.source, tmpdir)
            res = harness.check(
                ns,
                modes_for(idx, modes, args.modes_per_program),
                input_seed(args.seed, idx),
                on_mode=lambda m, stamps=stamps, idx=idx: (
                    stamps.append((m, time.time()))
                    or print(
                        MARK + json.dumps({"start": idx, "mode": m}), flush=True
                    )
                ),
            )
        except Exception as e:  # noqa: BLE001
            res = {"load": ("error", f"{type(e).__name__}: {e}")}
        t1 = time.time()
        ends = [t for _, t in stamps[1:]] + [t1]
        mode_times = {m: e - t for (m, t), e in zip(stamps, ends)}
        print(
            MARK
            + json.dumps(
                {
                    "done": idx,
                    "res": res,
                    "time": t1 - t0,
                    "mode_times": mode_times,
                }
            ),
            flush=True,
        )


# ------------------------------------------------------------ minimization
def signature(status_msg):
    status, msg = status_msg
    if status == "error":
        # exception type and message, numbers and names stripped
        text = re.sub(r"[0-9]+|\b[vhbrx][0-9]+\b", "#", msg)
        return ("error", text[:80])
    return (status, "")


class _Stmts(ast.NodeVisitor):
    """All statement lists that may lose a statement."""

    def __init__(self):
        self.lists = []

    def visit_Module(self, node):
        self.lists.append(node.body)
        self.generic_visit(node)

    def _body(self, node):
        for field in ("body", "orelse"):
            lst = getattr(node, field, None)
            if lst:
                self.lists.append(lst)
        self.generic_visit(node)

    visit_FunctionDef = visit_If = visit_ClassDef = _body


_KEEP = (
    "INPUT_SHAPES",
    "EXPECT_ERROR",
    "HAS_IF",
    "LEAVES",
    "PARAM_SHAPES",
    "CALLS",
    "CALL",
    "HANDLES",
)


def _removable(stmt, lst, tree):
    if lst is tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return False
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "f":
            return False
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in _KEEP for t in stmt.targets
        ):
            return False
    if isinstance(stmt, ast.Return) and lst is not tree.body:
        return False
    if isinstance(stmt, ast.FunctionDef) and stmt.name in (
        "forward",
        "backward",
    ):
        return False
    return True


def _candidates(source):
    """Smaller variants of ``source``, largest cut first."""
    tree = ast.parse(source)
    v = _Stmts()
    v.visit(tree)
    n_lists = len(v.lists)
    for li in range(n_lists):
        tree = ast.parse(source)
        v = _Stmts()
        v.visit(tree)
        lst = v.lists[li]
        for si in range(len(lst)):
            tree = ast.parse(source)
            v = _Stmts()
            v.visit(tree)
            lst = v.lists[li]
            stmt = lst[si]
            if not _removable(stmt, lst, tree):
                continue
            # an `if`: also try keeping only one branch
            if isinstance(stmt, ast.If):
                for keep in (stmt.body, stmt.orelse):
                    t2 = ast.parse(source)
                    v2 = _Stmts()
                    v2.visit(t2)
                    l2 = v2.lists[li]
                    s2 = l2[si]
                    l2[si : si + 1] = (
                        s2.body if keep is stmt.body else s2.orelse
                    )
                    yield ast.unparse(t2)
            del lst[si]
            if not lst:
                lst.append(ast.Pass())
            yield ast.unparse(tree)
    # simplify `out = a + b.sum() + ...` to one of its names
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "out"
            and not isinstance(node.value, ast.Name)
        ):
            names = sorted(
                {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
                - {"paddle"}
            )
            for name in names:
                old = node.value
                node.value = ast.Name(name, ast.Load())
                yield ast.unparse(tree)
                node.value = old


def _header(source):
    return "".join(
        line + "\n" for line in source.splitlines() if line.startswith("# ")
    )


def minimize(source, mode, sig, in_seed, max_evals=400, log=None):
    import harness

    tmpdir = tempfile.mkdtemp(prefix="fuzzmin_")
    evals = 0

    def still_fails(src):
        nonlocal evals
        evals += 1
        try:
            ns = load_source(src, tmpdir, "min")
            res = harness.check(ns, [mode], in_seed)
        except Exception:  # noqa: BLE001
            return False
        if "eager" in res or mode not in res:
            return False
        return res[mode][0] != "pass" and signature(res[mode]) == sig

    header = _header(source)
    cur = ast.unparse(ast.parse(source))
    progress = True
    while progress and evals < max_evals:
        progress = False
        for cand in _candidates(cur):
            if evals >= max_evals:
                break
            if len(cand) >= len(cur):
                continue
            if still_fails(header + cand):
                cur = cand
                progress = True
                if log:
                    log(f"  minimize: {len(cur)} chars after {evals} runs")
                break
    return header + cur + "\n"


# ------------------------------------------------------------- reproducers
def repro_script(source, mode, seed_idx, in_seed, msg):
    with open(os.path.join(HERE, "harness.py")) as fh:
        harness_src = fh.read()
    return (
        f"# Fuzz reproducer: program {seed_idx}, mode {mode}\n"
        f"# failure: {msg}\n"
        "# run: PYTHONPATH=/tmp/src_fuzz/python python THIS_FILE\n"
        "# (exit status 1 = still fails; eager is the reference)\n"
        "import sys\n\n"
        "# ---- harness (tests/fuzz/harness.py) ----\n"
        + harness_src
        + "\n\n# ---- program ----\n"
        + source
        + "\n\nif __name__ == '__main__':\n"
        + f"    res = check(globals(), [{mode!r}], input_seed={in_seed}, verbose=True)\n"
        + "    print(res)\n"
        + f"    sys.exit(0 if res.get({mode!r}, ('',))[0] in ('pass', 'skip') else 1)\n"
    )


def minimize_main(args):
    """``--minimize``: minimize one failure in this process."""
    prog = generator.generate(program_seed(args.seed, args.index))
    sig = tuple(json.loads(args.sig))
    src = minimize(
        prog.source,
        args.mode,
        sig,
        input_seed(args.seed, args.index),
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    print(MARK + json.dumps({"minimized": src}), flush=True)


# ------------------------------------------------------------------ parent
def _worker_env():
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("GLOG_minloglevel", "2")
    env["MIN_GRAPH_SIZE"] = "0"
    env.setdefault("FLAGS_enable_pir_api", "1")
    return env


def _run_batch(args, lo, hi, on_result):
    """Run programs [lo, hi) in workers, restarting after a crash."""
    while lo < hi:
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--worker",
            "--seed",
            str(args.seed),
            "--indices",
            f"{lo}:{hi}",
            "--modes",
            args.modes,
            "--modes-per-program",
            str(args.modes_per_program),
        ] + (["--inject-bug"] if args.inject_bug else [])
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=_worker_env(),
        )
        started = None
        mode = "eager"
        for line in proc.stdout:
            if not line.startswith(MARK):
                continue
            msg = json.loads(line[len(MARK) :])
            if "start" in msg:
                started = msg["start"]
                mode = msg.get("mode", "eager")
            else:
                on_result(
                    msg["done"],
                    msg["res"],
                    msg["time"],
                    msg.get("mode_times", {}),
                )
                started = None
                lo = msg["done"] + 1
        rc = proc.wait()
        if started is not None:
            on_result(started, {mode: ("crash", f"worker died, rc={rc}")}, 0.0)
            lo = started + 1
        elif lo < hi:
            on_result(lo, {"eager": ("crash", f"worker exited rc={rc}")}, 0.0)
            lo += 1


def run(args, log=print):
    """Run the fuzz campaign; returns a summary dict."""
    os.makedirs(args.out, exist_ok=True)
    t_start = time.time()
    counts = collections.defaultdict(collections.Counter)
    failures = []
    times = []
    n_done = [0]

    mode_time = collections.Counter()

    def on_result(idx, res, dt, mode_times=None):
        n_done[0] += 1
        times.append(dt)
        mode_time.update(mode_times or {})
        for mode, (status, msg) in res.items():
            counts[mode][status] += 1
            if mode == "eager":
                # the reference itself failed (an upstream eager Paddle
                # issue or an invalid program): the program is skipped
                log(
                    f"EAGER-ERROR {program_seed(args.seed, idx)} (skipped): {msg}"
                )
                continue
            if status in ("mismatch", "error", "crash"):
                failures.append((idx, mode, status, msg))
                log(
                    f"FAIL {program_seed(args.seed, idx)} {mode}: {status}: {msg}"
                )

    batches = [
        (lo, min(lo + args.batch, args.start + args.count))
        for lo in range(args.start, args.start + args.count, args.batch)
    ]

    def do(b):
        if args.time and time.time() - t_start > args.time:
            return
        _run_batch(args, b[0], b[1], on_result)
        log(
            f"  ... {n_done[0]} programs, {len(failures)} failures, "
            f"{time.time() - t_start:.0f}s"
        )

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(do, batches))

    # reproducers: every failure gets one; the first of each kind is minimized
    minimized = collections.Counter()
    repros = []
    for idx, mode, status, msg in sorted(failures):
        sid = program_seed(args.seed, idx)
        prog = generator.generate(sid)
        in_seed = input_seed(args.seed, idx)
        src = prog.source
        sig = signature((status, msg))
        kind = (mode,) + sig
        if (
            args.minimize
            and mode in ALL_MODES
            and status != "crash"
            and not msg.startswith("expected")
            and minimized[kind] < args.minimize
        ):
            minimized[kind] += 1
            log(f"minimizing {sid} {mode} ...")
            p = subprocess.run(
                [
                    sys.executable,
                    os.path.abspath(__file__),
                    "--seed",
                    str(args.seed),
                    "--index",
                    str(idx),
                    "--mode",
                    mode,
                    "--sig",
                    json.dumps(sig),
                ]
                + (["--inject-bug"] if args.inject_bug else []),
                capture_output=True,
                text=True,
                env=_worker_env(),
            )
            for line in p.stdout.splitlines():
                if line.startswith(MARK):
                    src = json.loads(line[len(MARK) :])["minimized"]
        path = os.path.join(args.out, f"repro_{sid}_{mode}.py")
        with open(path, "w") as fh:
            fh.write(repro_script(src, mode, sid, in_seed, f"{status}: {msg}"))
        repros.append(path)
        log(f"reproducer: {path}")

    wall = time.time() - t_start
    n_fail_programs = len({f[0] for f in failures})
    summary = {
        "programs": n_done[0],
        "passed": n_done[0] - n_fail_programs,
        "failed": n_fail_programs,
        "failures": [
            (program_seed(args.seed, i), m, s, msg) for i, m, s, msg in failures
        ],
        "per_mode": {m: dict(c) for m, c in counts.items()},
        "wall_s": wall,
        "mean_program_s": sum(times) / max(len(times), 1),
        "repros": repros,
        "mean_mode_s": {
            m: mode_time[m]
            / max(
                counts[m]["pass"] + counts[m]["mismatch"] + counts[m]["error"],
                1,
            )
            for m in mode_time
        },
    }
    log(
        "per mode: "
        + ", ".join(f"{m}: {dict(c)}" for m, c in sorted(counts.items()))
    )
    log(
        "mean seconds per program and mode (in a worker): "
        + ", ".join(
            f"{m}: {t:.2f}" for m, t in sorted(summary["mean_mode_s"].items())
        )
    )
    log(
        f"{summary['passed']} passed, {summary['failed']} failed "
        f"({n_done[0]} programs in {wall:.0f}s; "
        f"{summary['mean_program_s']:.2f}s per program in a worker, "
        f"{wall / max(n_done[0], 1):.2f}s wall per program)"
    )
    return summary


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", default="0")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--start", type=int, default=0, help="first program index")
    p.add_argument(
        "--time",
        type=float,
        default=0,
        help="stop starting batches after SECONDS",
    )
    p.add_argument("--modes", default=",".join(ALL_MODES))
    p.add_argument(
        "--modes-per-program",
        type=int,
        default=0,
        help="run only K of the modes per program (0 = all)",
    )
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--batch", type=int, default=50)
    p.add_argument(
        "--minimize",
        type=int,
        default=3,
        help="minimize the first K failures of each kind (0 = none)",
    )
    p.add_argument(
        "--inject-bug",
        action="store_true",
        help="make static-graph hooks no-ops (self-test)",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--indices", help=argparse.SUPPRESS)
    p.add_argument("--index", type=int, help=argparse.SUPPRESS)
    p.add_argument("--mode", help=argparse.SUPPRESS)
    p.add_argument("--sig", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.modes = ",".join(m for m in args.modes.split(",") if m != "eager")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    if args.index is not None:
        if args.inject_bug:
            inject_bug()
        return minimize_main(args)
    summary = run(args)
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
