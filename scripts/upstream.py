"""Helpers for scripts/check-series.sh and scripts/upstream-bundles.sh.

upstream/manifest.toml maps each patch of patches/series, by the subject of
its commit, to its upstream tests (paths under upstream/, which are the
paths in Paddle's source tree) and the PR template fields.

  upstream.py missing                 subjects on stdin -> those without an entry
  upstream.py tests SUBJECT           that patch's test files (absolute paths)
  upstream.py test-edits [SUBJECT]    the diffs that patch (default: every patch,
                                      in manifest order) makes to Paddle's own
                                      test files (absolute paths)
  upstream.py pr SUBJECT PREV         commit message on stdin -> PR.md on stdout
  upstream.py run FILE...             run unittest files in this process
  upstream.py red FILE...             each file in its own process: every test
                                      must fail (run against the parent commit)
"""

import ast
import importlib.util
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

import tomllib

UPSTREAM = Path(__file__).resolve().parent.parent / "upstream"
MANIFEST = UPSTREAM / "manifest.toml"
REQUIRED = {"subject", "category", "type", "change", "tests"}
# test_edits: diffs (upstream/test-edits/*.diff, paths a/test/... b/test/...)
# of Paddle's own test files at the pinned commit, for expectations the patch
# changes by design (an op count): part of its PR, not of the series patch.
KEYS = REQUIRED | {"precision", "test_edits"}
# From Paddle's .github/PULL_REQUEST_TEMPLATE.md (develop).
CATEGORIES = (
    "User Experience|Execute Infrastructure|Operator Mechanism|CINN|"
    "Custom Device|Performance Optimization|Distributed Strategy|"
    "Parameter Server|Communication Library|Auto Parallel|Inference|"
    "Environment Adaptation"
).split("|")
TYPES = (
    "New features|Bug fixes|Improvements|Performance|BC Breaking|"
    "Deprecations|Docs|Devs|Not User Facing|Security|Others"
).split("|")


def die(msg):
    sys.exit(f"error: {msg}")


def load_manifest():
    with MANIFEST.open("rb") as f:
        entries = tomllib.load(f).get("patch", [])
    by_subject = {}
    for i, e in enumerate(entries, 1):
        where = f"{MANIFEST}: [[patch]] #{i} ({e.get('subject', '?')!r})"
        if set(e) - KEYS or not REQUIRED <= set(e):
            die(
                f"{where}: keys: {sorted(REQUIRED)}, optional "
                f"{sorted(KEYS - REQUIRED)}"
            )
        if e["category"] not in CATEGORIES:
            die(f"{where}: category must be one of {CATEGORIES}")
        if e["type"] not in TYPES:
            die(f"{where}: type must be one of {TYPES}")
        if not e["tests"]:
            die(
                f"{where}: no tests (each patch needs a test failing without it)"
            )
        for t in e["tests"]:
            p = UPSTREAM / t
            if not (
                t.startswith("test/")
                and p.name.startswith("test_")
                and p.is_file()
            ):
                die(f"{where}: {t} is no file upstream/test/<dir>/test_*.py")
        for d in e.get("test_edits", []):
            p = UPSTREAM / d
            if not (
                d.startswith("test-edits/")
                and p.suffix == ".diff"
                and p.is_file()
            ):
                die(f"{where}: {d} is no file upstream/test-edits/*.diff")
        if e["subject"] in by_subject:
            die(f"{where}: a second entry for this subject")
        by_subject[e["subject"]] = e
    return by_subject


def entry(subject):
    m = load_manifest()
    if subject not in m:
        die(f"no entry in {MANIFEST} for subject {subject!r}")
    return m[subject]


def cmd_missing():
    m = load_manifest()
    subjects = [s for s in sys.stdin.read().splitlines() if s.strip()]
    for s in subjects:
        if s not in m:
            print(s)
    for s in sorted(m.keys() - set(subjects)):
        print(
            f"warning: {MANIFEST.name}: no patch has subject {s!r}",
            file=sys.stderr,
        )


def cmd_tests(subject):
    for t in entry(subject)["tests"]:
        print(UPSTREAM / t)


def cmd_test_edits(subject=None):
    entries = [entry(subject)] if subject else load_manifest().values()
    for e in entries:
        for d in e.get("test_edits", []):
            print(UPSTREAM / d)


def edited_files(diff):
    """Paths (``test/...``) a diff of ``test_edits`` changes."""
    return [
        line.split(maxsplit=1)[1].removeprefix("b/")
        for line in diff.splitlines()
        if line.startswith("+++ ")
    ]


def test_list(path):
    """`Class.test_method`: first docstring line, for the PR description."""
    tree = ast.parse((UPSTREAM / path).read_text())
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test"):
                doc = (ast.get_docstring(fn) or "").split("\n\n")[0]
                doc = " ".join(doc.split())
                yield f"{cls.name}.{fn.name}" + (f": {doc}" if doc else "")


def strip_template(body, e):
    """A commit message written in the PR template (``### PR Category``,
    ``### PR Types``, ``### Description``): its description alone, the
    manifest's category and type being the PR's. Warns where they differ."""
    lines = body.splitlines()
    if not lines or lines[0].strip() != "### PR Category":
        return body
    sections, name = {}, None
    for i, line in enumerate(lines):
        if line.startswith("### "):
            name = line[4:].strip()
            if name == "Description":
                body = "\n".join(lines[i + 1 :]).strip()
                break
            sections[name] = []
        elif name is not None and line.strip():
            sections[name].append(line.strip())
    else:
        die(f"{e['subject']!r}: the commit message has no ### Description")
    for key, field in (("PR Category", "category"), ("PR Types", "type")):
        if sections.get(key, [e[field]]) != [e[field]]:
            print(
                f"warning: {e['subject']!r}: {key} {sections[key]} in the "
                f"commit message, {e[field]!r} in {MANIFEST.name}",
                file=sys.stderr,
            )
    return body


def cmd_pr(subject, prev):
    e = entry(subject)
    body = strip_template(sys.stdin.read().split("\n", 1)[1].strip(), e)
    # The template check wants no level-3 (or higher) headings in Description.
    body = "\n".join(
        "####" + line.lstrip("#")
        if line.startswith("#") and line.lstrip("#").startswith(" ")
        else line
        for line in body.splitlines()
    )
    out = [
        f"<!-- PR title: {subject} -->",
        "### PR Category",
        e["category"],
        "",
    ]
    out += ["### PR Types", e["type"], "", "### Description", body, ""]
    out += ["#### User-visible change", " ".join(e["change"].split()), ""]
    out += [
        "#### Tests",
        "New unittest files (collected by the directory's CMakeLists glob):",
    ]
    for t in e["tests"]:
        out.append(f"- `{t}`")
        out += [f"  - `{x}`" for x in test_list(t)]
    out += ["", "Each test fails without this change and passes with it."]
    for d in e.get("test_edits", []):
        diff = (UPSTREAM / d).read_text()
        files = ", ".join(f"`{f}`" for f in edited_files(diff))
        out += [
            "",
            f"Changes the expectation of an existing test ({files}), "
            "which this change alters by design:",
            "",
            "```diff",
            diff.rstrip("\n"),
            "```",
        ]
    if prev:
        out += ["", f"Depends on the previous PR of the series: {prev}."]
    out += ["", "### 是否引起精度变化", e.get("precision", "否")]
    print("\n".join(out))


# The environment that Paddle's CMakeLists.txt gives the tests of a directory.
DIR_ENVS = {
    "sot": dict(
        SOT_LOG_LEVEL="0",
        COST_MODEL="False",
        MIN_GRAPH_SIZE="0",
        STRICT_MODE="True",
    ),
    "dygraph_to_static": dict(
        SOT_LOG_LEVEL="0",
        COST_MODEL="False",
        MIN_GRAPH_SIZE="0",
        STRICT_MODE="False",
    ),
}


class EnvSuite(unittest.TestSuite):
    """Runs its tests with ``env`` set in os.environ."""

    def __init__(self, tests, env):
        super().__init__(tests)
        self.env = env

    def run(self, result, debug=False):
        old = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        try:
            return super().run(result, debug)
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


# Stand-ins for helper modules of Paddle's test directories (not in the
# wheel), last on sys.path so that in Paddle's tree the real ones win.
SHIMS = Path(__file__).resolve().parent / "upstream_shims"


def load_tests(files):
    if str(SHIMS) not in sys.path:
        sys.path.append(str(SHIMS))
    suite = unittest.TestSuite()
    for i, f in enumerate(files):
        spec = importlib.util.spec_from_file_location(
            f"upstream_test_{i}_{Path(f).stem}", f
        )
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        sys.path.insert(0, str(Path(f).parent))
        spec.loader.exec_module(mod)
        tests = unittest.defaultTestLoader.loadTestsFromModule(mod)
        suite.addTest(EnvSuite(tests, DIR_ENVS.get(Path(f).parent.name, {})))
    return suite


class _Report(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        print(f"@@PASSED {test.id()}", file=sys.__stdout__, flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        self._bad(test, err)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._bad(test, err)

    def _bad(self, test, err):
        msg = [ln.strip() for ln in str(err[1]).splitlines() if ln.strip()]
        why = f"{err[0].__name__}: {msg[0][:100] if msg else ''}"
        print(f"@@FAILED {test.id()} {why}", file=sys.__stdout__, flush=True)


def cmd_run(files):
    import paddle  # noqa: F401  (the tree must import before any test)

    suite = load_tests(files)
    runner = unittest.TextTestRunner(
        verbosity=2, resultclass=_Report, stream=sys.stdout
    )
    ok = runner.run(suite).wasSuccessful()
    sys.exit(0 if ok else 1)


def cmd_red(files):
    bad = []
    for f in files:
        try:
            r = subprocess.run(
                [sys.executable, __file__, "run", f],
                capture_output=True,
                text=True,
                timeout=600,
            )
            out, rc = r.stdout + r.stderr, r.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = str(e.stdout or "") + str(e.stderr or ""), "timeout"
        lines = out.splitlines()
        passed = [ln.split()[1] for ln in lines if ln.startswith("@@PASSED ")]
        failed = [
            ln.split(None, 1)[1] for ln in lines if ln.startswith("@@FAILED ")
        ]
        how = "crashed" if isinstance(rc, int) and rc < 0 else f"exit {rc}"
        print(
            f"  {Path(f).name}: {how}, {len(failed)} failed, {len(passed)} passed"
        )
        for line in failed:
            test_id, why = line.split(" ", 1)
            print(f"    fails: {test_id.rsplit('.', 1)[-1]} ({why})")
        if not failed:
            print(f"    last output: {lines[-1] if lines else ''}")
        # Dy2StTestBase runs a test method once per to_static mode (ids
        # ``<method>__<mode>``): the method is red when one of its modes fails
        # (a mode in which stock already works may pass).
        red = {_method(ln.split(" ", 1)[0]) for ln in failed}
        bad += [t for t in passed if _method(t) not in red]
    if bad:
        die(f"{len(bad)} test(s) pass without their patch: {', '.join(bad)}")


def _method(test_id):
    return re.sub(r"__(ast|sot|sot_mgs10)_pir$", "", test_id)


def main(argv):
    if len(argv) < 1:
        die(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "missing":
        cmd_missing()
    elif cmd == "tests" and len(args) == 1:
        cmd_tests(args[0])
    elif cmd == "test-edits" and len(args) <= 1:
        cmd_test_edits(*args)
    elif cmd == "pr" and len(args) == 2:
        cmd_pr(*args)
    elif cmd == "run":
        cmd_run(args)
    elif cmd == "red":
        cmd_red(args)
    else:
        die(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
