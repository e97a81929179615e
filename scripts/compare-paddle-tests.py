"""Run Paddle's own test files with the stock wheel and with this wheel, and
list every test whose outcome differs.

    scripts/compare-paddle-tests.py --stock PYTHON [--patched PYTHON]
        [--timeout SECONDS] [--junit-dir DIR] TESTS_ROOT [FILE ...]

TESTS_ROOT holds test files in Paddle's layout (``test/<dir>/test_*.py``,
``test/ir/pir/test_*.py``, and the helper modules they import); FILEs (paths
under TESTS_ROOT) default to every ``test/**/test_*.py`` there.
``--stock`` is an interpreter with the stock ``paddlepaddle==3.3.1`` and
pytest, ``--patched`` one with this wheel (default
``.venv/bin/python``). Each file runs in its own process per wheel, from its
directory, with the environment Paddle's CMake gives that directory (as
``scripts/upstream.py`` does); outcomes come from pytest's JUnit XML.

This wheel runs the files with the diffs of ``test_edits`` in
upstream/manifest.toml applied (to a copy): the expectations the series
changes by design, as its PRs would change them in Paddle's tree. The stock
wheel runs the files as they are.

Prints one line per file (tests, passed with stock / with this wheel) and then
each regression (passes with stock, not with this wheel) and each test only
this wheel passes. Exits 1 when there is a regression, 2 on bad arguments.
Paddle's test files are not part of this repository: fetch them from
Paddle's source tree at the pinned commit.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from upstream import DIR_ENVS, edited_files, load_manifest  # noqa: E402


def die(msg):
    print(f"compare-paddle-tests: {msg}", file=sys.stderr)
    sys.exit(2)


def outcomes(python, test_file, timeout, junit):
    """{test id: "passed" | "failed" | "skipped"} for one file, or a single
    "<file>" entry saying why the file produced no results."""
    env = dict(os.environ, PYTHONPATH=str(test_file.parent))
    env.update(DIR_ENVS.get(test_file.parent.name, {}))
    cmd = [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        test_file.name,
    ]
    try:
        run = subprocess.run(
            cmd,
            cwd=test_file.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"<file>": f"timeout after {timeout}s"}
    if not Path(junit).is_file():
        tail = (run.stdout + run.stderr).strip().splitlines()[-1:] or [""]
        return {
            "<file>": f"no results (exit {run.returncode}): {tail[0][:160]}"
        }
    result = {}
    for case in ET.parse(junit).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            result[name] = "failed"
        elif case.find("skipped") is not None:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    if not result:
        result["<file>"] = f"no tests collected (exit {run.returncode})"
    return result


def edited_copy(root, rels, workdir):
    """A copy of ``root`` with the ``test_edits`` diffs that change any of
    ``rels`` applied, and the names of those diffs; ``root`` itself when
    none does."""
    edits = [
        ROOT / "upstream" / d
        for e in load_manifest().values()
        for d in e.get("test_edits", [])
    ]
    edits = [d for d in edits if set(edited_files(d.read_text())) & set(rels)]
    if not edits:
        return root, []
    copy = Path(workdir) / "edited"
    shutil.copytree(root, copy, symlinks=True)
    for d in edits:
        run = subprocess.run(
            ["git", "apply", str(d)], cwd=copy, capture_output=True, text=True
        )
        if run.returncode:
            die(
                f"{d.relative_to(ROOT)} does not apply to {root}: "
                f"{run.stderr.strip()} (are the files those of Paddle's "
                "pinned commit?)"
            )
    return copy, [d.name for d in edits]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stock", required=True)
    p.add_argument("--patched", default=str(ROOT / ".venv" / "bin" / "python"))
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--junit-dir", help="keep the JUnit XML files here")
    p.add_argument("root")
    p.add_argument("files", nargs="*")
    args = p.parse_args()
    root = Path(args.root).resolve()
    for python in (args.stock, args.patched):
        if not os.access(python, os.X_OK):
            die(f"{python} is no interpreter")
    files = (
        [root / f for f in args.files]
        if args.files
        else sorted(root.glob("test/**/test_*.py"))
    )
    if not files:
        die(f"no test/**/test_*.py under {root}")
    for f in files:
        if not f.is_file():
            die(f"{f} is no file")
    junit_dir = Path(args.junit_dir or tempfile.mkdtemp(prefix="cmp_paddle_"))
    junit_dir.mkdir(parents=True, exist_ok=True)
    rels = [str(f.relative_to(root)) for f in files]
    workdir = tempfile.mkdtemp(prefix="cmp_paddle_tree_")
    edited_root, edits = edited_copy(root, rels, workdir)
    for name in edits:
        print(f"this wheel runs with upstream/test-edits/{name} applied")
    regressions, fixes = [], []
    print(f"{'file':60} {'tests':>5} {'stock':>5} {'this':>5}")
    for f in files:
        rel = f.relative_to(root)
        tag = str(rel).replace("/", "_")
        stock = outcomes(
            args.stock, f, args.timeout, junit_dir / f"stock_{tag}.xml"
        )
        mine = outcomes(
            args.patched,
            edited_root / rel,
            args.timeout,
            junit_dir / f"this_{tag}.xml",
        )
        names = sorted(set(stock) | set(mine))
        n_stock = sum(v == "passed" for v in stock.values())
        n_mine = sum(v == "passed" for v in mine.values())
        print(f"{str(rel):60} {len(names):5} {n_stock:5} {n_mine:5}")
        for name in names:
            s, m = stock.get(name, "absent"), mine.get(name, "absent")
            if s == "passed" and m != "passed":
                regressions.append(f"{rel}::{name}: stock passed, this {m}")
            elif m == "passed" and s != "passed":
                fixes.append(f"{rel}::{name}: this passed, stock {s}")
        for which, res in (("stock", stock), ("this", mine)):
            if "<file>" in res:
                print(f"    {which}: {res['<file>']}")
    print(f"\n{len(regressions)} regression(s)")
    for line in regressions:
        print("  " + line)
    print(f"{len(fixes)} test(s) pass only with this wheel")
    for line in fixes:
        print("  " + line)
    shutil.rmtree(workdir)
    sys.exit(1 if regressions else 0)


if __name__ == "__main__":
    main()
