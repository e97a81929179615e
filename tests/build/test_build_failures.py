"""Failure modes of scripts/build.sh: bad input must fail clearly and leave no trace.

Each case runs the build in a throw-away clone of this checkout (its committed
files, plus uncommitted changes to scripts/ so edits to the build are tested
before they are committed), never in the checkout itself, and asserts: non-zero exit, an ``error:`` message naming the
cause, nothing new in ``dist/`` (no wheel, no temp files), ``.venv`` and
``.venvs/`` as before, no staging or download leftovers; then a rerun after
fixing the cause succeeds.

The fast cases share one clone holding a previous build (``prior_build``). It is
seeded from this checkout's own build (its ``dist/`` wheel and ``.venv``
build id) when that matches the clone, so the baseline run just says "up to
date" (CI builds first); otherwise they use the clone built by
``interrupted_build``. A rerun after a fix is then "up to date" again, which
also shows the failure left the previous wheel and venv intact.
``interrupted_build`` kills two builds midway and then does one full build in
a fresh clone (~3 min); its test also checks the result with ``pip check`` and
by verifying the wheel's RECORD.

The base wheel is never downloaded: the tests use the checkout's
``.cache/base`` copy (or ``$PADDLE_BASE_WHEEL``) and skip without one.
Run with ``scripts/test.sh tests/build`` (CI: ``-k "not full_build"``).
"""

import base64
import contextlib
import copy
import csv
import hashlib
import io
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 600  # a full build takes ~2 min here
FAST_TIMEOUT = 180  # a build that should stop early
VERSION_FILE = "paddle/version/__init__.py"


# --------------------------------------------------------------------- pin


# The wheel tag of the Python the builds run with (scripts/build.sh builds for
# python3, the Python of this venv's base).
PY_TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"


def read_pin():
    """base.pin's commit and its (sha256, file name) lines for this Python."""
    commit, shas = None, []
    for line in (ROOT / "base.pin").read_text().splitlines():
        parts = line.split()
        if parts[:1] == ["commit"]:
            commit = parts[1]
        elif parts[:1] == ["sha256"] and f"-{PY_TAG}-{PY_TAG}-" in parts[2]:
            shas.append((parts[1], parts[2]))
    return commit, shas


PIN_COMMIT, PIN_SHAS = read_pin()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@pytest.fixture(scope="module")
def base_wheel():
    """The pinned base wheel already on disk (never downloaded by the tests)."""
    candidates = [ROOT / ".cache" / "base" / name for _, name in PIN_SHAS]
    if os.environ.get("PADDLE_BASE_WHEEL"):
        candidates.insert(0, Path(os.environ["PADDLE_BASE_WHEEL"]))
    pinned = {sha for sha, _ in PIN_SHAS}
    for c in candidates:
        if c.is_file() and sha256_file(c) in pinned:
            return c
    pytest.skip(
        "no pinned base wheel in .cache/base (run scripts/build.sh once to download it)"
    )


# ------------------------------------------------------------ repo + build


def build_env(**extra):
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTHONPATH",
            "PYTHONHOME",
            "VIRTUAL_ENV",
            "PADDLE_BASE_WHEEL",
            "PADDLE_BASE_REQ",
            "PATCHES_DIR",
            "PADDLE_DEV_TREE",
        )
    }
    venv_bin = str(ROOT / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if p and os.path.realpath(p) != os.path.realpath(venv_bin)
    )
    env.update(extra)
    return env


def no_network_env(pip_cache):
    """pip sees no config, no local wheels and an index that refuses connections."""
    env = build_env()
    for k in list(env):
        if k.upper().startswith("PIP_") or k.lower() in (
            "http_proxy",
            "https_proxy",
            "all_proxy",
            "no_proxy",
        ):
            del env[k]
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL="http://127.0.0.1:9/simple",
        PIP_RETRIES="0",
        PIP_DEFAULT_TIMEOUT="5",
        PIP_CACHE_DIR=str(pip_cache),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def make_repo(dest, base_wheel):
    """Clone the checkout, apply uncommitted changes to scripts/, put the base wheel in the cache."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True)
    diff = subprocess.run(
        ["git", "-C", str(ROOT), "diff", "HEAD", "--binary", "--", "scripts"],
        check=True,
        capture_output=True,
    ).stdout
    if diff.strip():
        subprocess.run(
            ["git", "-C", str(dest), "apply", "--binary", "-"],
            input=diff,
            check=True,
        )
    cache = dest / ".cache" / "base"
    cache.mkdir(parents=True)
    shutil.copyfile(
        base_wheel, cache / pinned_name()
    )  # a copy: tests replace it
    return dest


def pinned_name():
    return PIN_SHAS[0][1]


def run_build(repo, *args, env=None, timeout=FAST_TIMEOUT):
    return subprocess.run(
        ["bash", "scripts/build.sh", *args],
        cwd=repo,
        env=env or build_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def describe(r):
    return f"exit {r.returncode}\n--- stdout\n{r.stdout[-4000:]}\n--- stderr\n{r.stderr[-4000:]}"


def dist_wheels(repo):
    return sorted(p.name for p in (repo / "dist").glob("*.whl"))


def snapshot(repo):
    """What a failed build must not touch."""

    def tree(d):
        if not d.is_dir():
            return None
        return {
            str(p.relative_to(d)): (
                p.lstat().st_ino,
                p.lstat().st_size,
                p.lstat().st_mtime_ns,
            )
            for p in sorted(d.rglob("*"))
        }

    venv = repo / ".venv"
    build_id = venv / ".build-id"
    return {
        "dist": tree(repo / "dist"),
        ".venv": os.readlink(venv)
        if venv.is_symlink()
        else ("dir" if venv.exists() else None),
        ".venv/.build-id": build_id.read_text() if build_id.is_file() else None,
        ".venvs": sorted(p.name for p in (repo / ".venvs").iterdir())
        if (repo / ".venvs").is_dir()
        else None,
    }


def leftovers(repo):
    pats = [
        "build/stage.*",
        "dist/.tmp.*",
        ".cache/base/.download.*",
        ".venv.new",
    ]
    return sorted(
        str(p.relative_to(repo)) for pat in pats for p in repo.glob(pat)
    )


def assert_failed_cleanly(repo, r, before, *messages):
    assert r.returncode != 0, describe(r)
    assert "error:" in r.stderr, describe(r)
    for m in messages:
        assert m in r.stderr, f"expected {m!r} in stderr\n{describe(r)}"
    assert leftovers(repo) == [], describe(r)
    assert snapshot(repo) == before, describe(r)


def assert_up_to_date(repo, *args, env=None):
    r = run_build(repo, *args, env=env)
    assert r.returncode == 0, describe(r)
    assert r.stdout.startswith("up to date: dist/"), describe(r)
    assert leftovers(repo) == []


def seed_from_checkout(repo):
    """Give the clone this checkout's build as its previous build (if it has one).

    The venv is only its .build-id (the fast cases never run it); the wheel is
    hard-linked (the build only renames and deletes wheels, never writes into one).
    """
    link = ROOT / ".venv"
    if not link.is_symlink() or not (link / ".build-id").is_file():
        return False
    target = os.readlink(link)
    if not target.startswith(".venvs/") or "/" in target[len(".venvs/") :]:
        return False
    (repo / target).mkdir(parents=True)
    shutil.copyfile(link / ".build-id", repo / target / ".build-id")
    os.symlink(target, repo / ".venv")
    (repo / "dist").mkdir(exist_ok=True)
    for whl in (ROOT / "dist").glob("paddlepaddle-*.whl"):
        try:
            os.link(whl, repo / "dist" / whl.name)
        except OSError:
            shutil.copyfile(whl, repo / "dist" / whl.name)
    return True


def says_up_to_date(repo):
    """Run the build until its first line: "up to date" (True) or "building" (stopped, False)."""
    p = subprocess.Popen(
        ["bash", "scripts/build.sh"],
        cwd=repo,
        env=build_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    first = p.stdout.readline()
    if not first.startswith("up to date"):
        os.killpg(p.pid, signal.SIGTERM)
    p.communicate(timeout=120)
    return first.startswith("up to date") and p.returncode == 0


@pytest.fixture(scope="module")
def prior_build(request, tmp_path_factory, base_wheel):
    """A clone with a previous, current build: `scripts/build.sh` there says "up to date"."""
    own = tmp_path_factory.mktemp("prior")
    repo = make_repo(own / "repo", base_wheel)
    if not (seed_from_checkout(repo) and says_up_to_date(repo)):
        shutil.rmtree(
            repo
        )  # this checkout's build does not match: use a real one
        repo = request.getfixturevalue("interrupted_build")["repo"]
    assert (
        len(dist_wheels(repo)) == 1 and (repo / ".venv" / ".build-id").is_file()
    )
    assert_up_to_date(repo)
    yield repo
    shutil.rmtree(
        own, ignore_errors=True
    )  # GBs; not left to pytest's tmp retention


@contextlib.contextmanager
def restored(*paths):
    """Put the files back as they were, whatever the test did to them."""
    saved = {p: p.read_bytes() for p in paths}
    try:
        yield
    finally:
        for p, data in saved.items():
            tmp = p.with_name(p.name + ".restore")
            tmp.write_bytes(data)
            os.replace(tmp, p)  # a new inode: never write into a hard link


# ---------------------------------------------------------------- wheels


def copy_wheel_with(src, dst, name, transform):
    """Copy a wheel, replacing member `name` by transform(its bytes).

    Every other member is copied compressed, byte for byte (a full re-deflate of
    the 195 MB base wheel takes ~30 s).
    """
    with (
        zipfile.ZipFile(src) as zin,
        open(src, "rb") as raw,
        zipfile.ZipFile(dst, "w") as zout,
    ):
        for info in zin.infolist():
            if info.filename == name:
                zout.writestr(info, transform(zin.read(info)))
                continue
            raw.seek(info.header_offset)
            n, m = struct.unpack("<HH", raw.read(30)[26:30])
            raw.seek(info.header_offset + 30 + n + m)
            new = copy.copy(info)
            new.flag_bits &= (
                ~0x08
            )  # sizes and CRC in the local header, no data descriptor
            new.header_offset = zout.fp.tell()
            zout.fp.write(new.FileHeader())
            left = info.compress_size
            while left:
                chunk = raw.read(min(left, 1 << 20))
                assert chunk, f"truncated member {info.filename} in {src}"
                zout.fp.write(chunk)
                left -= len(chunk)
            zout.filelist.append(new)
            zout.NameToInfo[new.filename] = new
            zout.start_dir = zout.fp.tell()
            zout._didModify = True
    return dst


def b64_sha256(data_iter):
    h = hashlib.sha256()
    for chunk in data_iter:
        h.update(chunk)
    return (
        "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()
    )


def verify_record(whl):
    """Every file in the wheel is in RECORD with its sha256 and size, and vice versa."""
    with zipfile.ZipFile(whl) as zf:
        names = [i.filename for i in zf.infolist() if not i.is_dir()]
        assert len(names) == len(set(names)), "duplicate members"
        records = [n for n in names if n.endswith(".dist-info/RECORD")]
        assert len(records) == 1, records
        record = records[0]
        rows = list(csv.reader(io.StringIO(zf.read(record).decode())))
        listed = {row[0]: row for row in rows}
        assert len(listed) == len(rows), "duplicate RECORD rows"
        assert set(listed) == set(names), (
            f"in the wheel, not in RECORD: {sorted(set(names) - set(listed))[:5]}; "
            f"in RECORD, not in the wheel: {sorted(set(listed) - set(names))[:5]}"
        )
        assert listed[record][1:] == ["", ""]
        bad = []
        for name in names:
            if name == record:
                continue
            _, digest, size = listed[name]
            with zf.open(name) as f:
                got = b64_sha256(iter(lambda: f.read(1 << 20), b""))
            if got != digest or int(size) != zf.getinfo(name).file_size:
                bad.append(name)
        assert not bad, f"{len(bad)} RECORD mismatches, e.g. {bad[:5]}"
        return len(names)


# ------------------------------------------------------------ fast cases


def test_python_option(prior_build, base_wheel, tmp_path):
    """--python names the interpreter to build for: a missing one is a clear
    error, and a base wheel for another Python is refused."""
    repo = prior_build
    before = snapshot(repo)
    r = run_build(repo, "--python", str(tmp_path / "no-python3"))
    assert_failed_cleanly(repo, r, before, "Python interpreter not found")

    other = "cp39" if PY_TAG != "cp39" else "cp310"
    renamed = tmp_path / pinned_name().replace(PY_TAG, other)
    shutil.copyfile(base_wheel, renamed)
    pin = repo / "base.pin"
    with restored(pin):
        with open(pin, "a") as f:
            f.write(f"sha256 {sha256_file(renamed)} {renamed.name}\n")
        r = run_build(repo, "--base-wheel", str(renamed))
        assert_failed_cleanly(
            repo, r, before, f"is not for {PY_TAG}", "--python for its Python"
        )
    assert_up_to_date(repo, "--python", "python3")


def test_wrong_commit_base_wheel(prior_build, base_wheel, tmp_path):
    """A base wheel of another paddle.version.commit is refused, even if base.pin lists its hash."""
    repo = prior_build
    other = "0" * 40
    wrong = copy_wheel_with(
        base_wheel,
        tmp_path / pinned_name(),
        VERSION_FILE,
        lambda src: src.replace(PIN_COMMIT.encode(), other.encode()),
    )
    with zipfile.ZipFile(wrong) as zf:
        assert f"commit           = '{other}'" in zf.read(VERSION_FILE).decode()
    pin = repo / "base.pin"
    before = snapshot(repo)
    with restored(pin):
        with open(
            pin, "a"
        ) as f:  # as README says for another build of the pinned commit
            f.write(f"sha256 {sha256_file(wrong)} {pinned_name()}\n")
        r = run_build(repo, "--base-wheel", str(wrong))
        assert_failed_cleanly(
            repo,
            r,
            before,
            f"is built from commit {other}",
            f"base.pin pins commit {PIN_COMMIT}",
        )
    assert_up_to_date(repo)  # fixed: the pinned wheel again


def test_tampered_base_wheel(prior_build, base_wheel, tmp_path):
    """A wheel whose sha256 is not in base.pin is refused; a corrupt cached copy is not used."""
    repo = prior_build
    tampered = tmp_path / pinned_name()
    shutil.copyfile(base_wheel, tampered)
    with open(tampered, "r+b") as f:  # flip one byte in the middle
        f.seek(tampered.stat().st_size // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0xFF]))
    sha = sha256_file(tampered)
    before = snapshot(repo)

    r = run_build(repo, "--base-wheel", str(tampered))
    assert_failed_cleanly(
        repo, r, before, f"has sha256 {sha}, which base.pin does not list"
    )
    assert_up_to_date(
        repo, "--base-wheel", str(repo / ".cache" / "base" / pinned_name())
    )

    # The same corruption in the cache: not used, re-downloaded (here: no network).
    cached = repo / ".cache" / "base" / pinned_name()
    good = tmp_path / "good.whl"
    os.replace(cached, good)
    shutil.copyfile(tampered, cached)
    try:
        r = run_build(repo, env=no_network_env(tmp_path / "pip-cache"))
        assert_failed_cleanly(
            repo,
            r,
            before,
            "does not match its sha256 in base.pin",
            "cannot download paddlepaddle==",
        )
    finally:
        os.replace(good, cached)
    assert_up_to_date(repo)


def test_no_network(prior_build, tmp_path):
    """No cached base wheel and no package index: a clear download error."""
    repo = prior_build
    cached = repo / ".cache" / "base" / pinned_name()
    away = tmp_path / cached.name
    before = snapshot(repo)
    os.replace(cached, away)
    try:
        t0 = time.monotonic()
        r = run_build(repo, env=no_network_env(tmp_path / "pip-cache"))
        assert_failed_cleanly(
            repo,
            r,
            before,
            "cannot download paddlepaddle==",
            "or pass --base-wheel PATH",
        )
        assert time.monotonic() - t0 < 60, "no network should fail fast"
        assert not cached.exists() and list(cached.parent.iterdir()) == []
    finally:
        os.replace(away, cached)
    assert_up_to_date(repo)  # fixed: the wheel is back in the cache


def test_base_req_skips_the_cache(prior_build, tmp_path):
    """--base-req REQ (e.g. a GPU build) downloads REQ, never the cached pinned wheel."""
    repo = prior_build
    before = snapshot(repo)
    r = run_build(
        repo,
        "--base-req",
        "paddlepaddle-gpu==3.3.1",
        env=no_network_env(tmp_path / "pip-cache"),
    )
    assert_failed_cleanly(
        repo, r, before, "cannot download paddlepaddle-gpu==3.3.1"
    )
    assert_up_to_date(repo)


def break_patch(patch):
    """Change one context line of the first hunk, as if upstream had changed it."""
    lines = patch.read_text().splitlines(keepends=True)
    in_hunk = False
    for i, line in enumerate(lines):
        if line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith(" ") and line.strip():
            lines[i] = line.rstrip("\n") + "  # changed upstream\n"
            patch.write_text("".join(lines))
            return line.strip()
    raise AssertionError(f"no context line in {patch}")


def test_patch_does_not_apply(prior_build):
    repo = prior_build
    series = [
        line
        for line in (repo / "patches" / "series").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    patch = repo / "patches" / series[len(series) // 2]
    before = snapshot(repo)
    with restored(patch):
        break_patch(patch)
        r = run_build(repo)
        assert_failed_cleanly(
            repo, r, before, f"patch does not apply to the pinned base: {patch}"
        )
    assert_up_to_date(repo)


@contextlib.contextmanager
def replaced_dir(repo, name, kind):
    """Swap repo/name for an empty read-only ("ro") or 1 MiB ("full") directory.

    The previous contents are moved aside (and back afterwards), so the build
    has to write there. Root ignores file modes, so as root the directory is a
    tmpfs mount; as another user "ro" is chmod 555 and "full" is skipped.
    """
    d, saved = repo / name, repo / f"{name}.saved"
    d.rename(saved)
    d.mkdir()
    mounted = False
    try:
        if os.geteuid() == 0:
            opts = "ro,size=1m" if kind == "ro" else "size=1m"
            m = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(d)],
                capture_output=True,
                text=True,
            )
            if m.returncode:
                pytest.skip(f"cannot mount a tmpfs here: {m.stderr.strip()}")
            mounted = True
        elif kind == "ro":
            d.chmod(0o555)
        else:
            pytest.skip("a full filesystem needs root (tmpfs mount)")
        yield d
    finally:
        if mounted:
            subprocess.run(["umount", str(d)], check=True)
        d.chmod(0o755)
        shutil.rmtree(d)
        saved.rename(d)


@pytest.mark.parametrize("name", ["dist", ".venvs"])
def test_read_only_output_dir(prior_build, name):
    repo = prior_build
    before = snapshot(repo)
    with replaced_dir(repo, name, "ro") as d:
        t0 = time.monotonic()
        r = run_build(repo)
        assert r.returncode != 0, describe(r)
        assert f"error: cannot write to {repo}/{name}" in r.stderr, describe(r)
        assert time.monotonic() - t0 < 30, (
            "should fail before unpacking the base wheel"
        )
        assert list(d.iterdir()) == [], describe(r)
        assert leftovers(repo) == [], describe(r)
    assert snapshot(repo) == before, describe(r)
    assert_up_to_date(repo)


def test_full_dist(prior_build):
    """dist/ fills up while the wheel is written: the partial wheel is removed."""
    repo = prior_build
    before = snapshot(repo)
    with replaced_dir(repo, "dist", "full") as d:
        r = run_build(repo)
        assert r.returncode != 0, describe(r)
        assert "No space left on device" in r.stderr, describe(r)
        assert "error: repacking the wheel failed" in r.stderr, describe(r)
        assert "Traceback" not in r.stderr, describe(r)
        assert list(d.iterdir()) == [], describe(r)
        assert leftovers(repo) == [], describe(r)
    assert snapshot(repo) == before, describe(r)
    assert_up_to_date(repo)


# ------------------------------------------------------- full build (slow)


def start_build(repo, log_dir, tag):
    out = open(log_dir / f"{tag}.out", "w")
    err = open(log_dir / f"{tag}.err", "w")
    p = subprocess.Popen(
        ["bash", "scripts/build.sh"],
        cwd=repo,
        env=build_env(),
        stdout=out,
        stderr=err,
        start_new_session=True,
    )
    return p, log_dir / f"{tag}.out", log_dir / f"{tag}.err"


def kill_when(p, cond, sig, what, timeout=300):
    """Send sig to the build's process group once cond() holds; return its exit status."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert p.poll() is None, f"build exited ({p.returncode}) before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    os.killpg(p.pid, sig)
    return p.wait(timeout=120)


@pytest.fixture(scope="module")
def interrupted_build(tmp_path_factory, base_wheel):
    """A fresh clone: kill -9 while the wheel is written, SIGTERM while pip installs, rebuild.

    Returns what each step left, for test_full_build_interrupted_then_rerun.
    """
    tmp_path = tmp_path_factory.mktemp("interrupted")
    repo = make_repo(tmp_path / "repo", base_wheel)
    seen = {"repo": repo}

    def partial_wheel_over(size):
        return any(
            f.stat().st_size > size for f in repo.glob("dist/.tmp.*/*.whl")
        )

    def state():
        return {
            "wheels": dist_wheels(repo),
            ".venv": (repo / ".venv").is_symlink(),
            "leftovers": leftovers(repo),
            ".venvs": sorted(p.name for p in (repo / ".venvs").iterdir()),
        }

    # 1. SIGKILL mid-repack: no cleanup can run; the wheel must not be at its final path.
    p, out, err = start_build(repo, tmp_path, "kill9")
    seen["kill9 rc"] = kill_when(
        p, lambda: partial_wheel_over(20 << 20), signal.SIGKILL, "repacking"
    )
    seen["kill9"] = state()

    # 2. SIGTERM while pip installs into the new venv: the trap removes everything.
    def pip_running():
        venvs = list(repo.glob(".venvs/*/bin/python"))
        return (
            venvs
            and not list(repo.glob("build/stage.*"))
            and any(repo.glob("dist/.tmp.*/*.whl"))
        )

    p, out, err = start_build(repo, tmp_path, "term")
    seen["term rc"] = kill_when(p, pip_running, signal.SIGTERM, "pip install")
    seen["term stderr"] = err.read_text()
    seen["term"] = state()

    # 3. Rerun: a complete build.
    r = run_build(repo, timeout=BUILD_TIMEOUT)
    assert r.returncode == 0, describe(r)
    seen["rerun"] = r
    yield seen
    shutil.rmtree(
        tmp_path, ignore_errors=True
    )  # GBs; not left to pytest's tmp retention


def test_full_build_interrupted_then_rerun(interrupted_build):
    seen = interrupted_build
    repo = seen["repo"]
    assert seen["kill9 rc"] == -signal.SIGKILL
    assert seen["kill9"]["wheels"] == [] and not seen["kill9"][".venv"], seen[
        "kill9"
    ]

    assert seen["term rc"] == 143, seen["term stderr"]
    assert "error: terminated (SIGTERM)" in seen["term stderr"]
    # nothing left, also of what the SIGKILLed run left
    assert seen["term"] == {
        "wheels": [],
        ".venv": False,
        "leftovers": [],
        ".venvs": [],
    }, seen

    r = seen["rerun"]
    assert "built dist/" in r.stdout, describe(r)
    wheels = dist_wheels(repo)
    assert len(wheels) == 1 and "+patched." in wheels[0], wheels
    assert leftovers(repo) == []
    venvs = sorted(p.name for p in (repo / ".venvs").iterdir())
    assert [os.readlink(repo / ".venv")] == [f".venvs/{v}" for v in venvs]
    check = subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-m", "pip", "check"],
        capture_output=True,
        text=True,
        env=build_env(),
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert verify_record(repo / "dist" / wheels[0]) > 1000
    assert_up_to_date(repo)
