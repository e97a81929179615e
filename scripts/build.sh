#!/usr/bin/env bash
# Build the patched wheel into dist/ and the test venv .venv (-> .venvs/<dir>).
# usage: scripts/build.sh [--python PYTHON] [--base-wheel PATH | --base-req REQ]
#   (env: PADDLE_BASE_WHEEL, PADDLE_BASE_REQ, PATCHES_DIR); --python: the interpreter the
#   wheel and .venv are for (default: python3, the one running this script)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

base_arg=${PADDLE_BASE_WHEEL:-} python_arg=''
while (($#)); do
    case $1 in
        --python) (($# >= 2)) || die "--python needs an interpreter"; python_arg=$2; shift 2 ;;
        --python=*) python_arg=${1#*=}; shift ;;
        --base-wheel) (($# >= 2)) || die "--base-wheel needs a path"; base_arg=$2; shift 2 ;;
        --base-wheel=*) base_arg=${1#*=}; shift ;;
        --base-req) (($# >= 2)) || die "--base-req needs a requirement"; export PADDLE_BASE_REQ=$2; shift 2 ;;
        --base-req=*) export PADDLE_BASE_REQ=${1#*=}; shift ;;
        -h | --help) sed -n '2,5p' "$0"; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
done
[[ -z $base_arg ]] || base_arg=$(realpath "$base_arg")
patches_dir=$(realpath -m "${PATCHES_DIR:-$ROOT/patches}")
SECONDS=0
cd "$ROOT"

# One build at a time; then clear what killed runs left behind.
mkdir -p build dist .venvs
exec 9>build/.lock
flock -n 9 || die "another scripts/build.sh is running in $ROOT"
[[ ! -e .venv || -L .venv ]] || die ".venv is not a symlink made by scripts/build.sh; remove it first"
current=$(readlink .venv || true)
for d in .venvs/*; do [[ ! -e $d || $d == "$current" ]] || rm -rf -- "$d"; done
rm -rf -- build/stage.* dist/.tmp.* .venv.new .cache/base/.download.*

python_target "$python_arg"
pin_load
series_load "$patches_dir"
base_wheel_get "$base_arg"

# Version label and build id.
whl_name=$(basename "$BASE_WHEEL" .whl)
IFS=- read -r dist base_version tags <<<"$whl_name"
patch_hash=$({ printf '%s\n' "$BASE_SHA"; for p in "${PATCHES[@]}"; do cat "$p"; done; } | sha256sum | cut -c1-10)
version=$base_version+patched.$patch_hash
out=dist/$dist-$version-$tags.whl
tool_hash=$(cat scripts/build.sh scripts/lib.sh scripts/repack_wheel.py requirements-test.txt | sha256sum | cut -c1-16)
build_id="$version $tool_hash $PY_TAG $PYTHON"
if [[ -f .venv/.build-id && $(<.venv/.build-id) == "$build_id" && -f $out ]]; then
    echo "up to date: $out"
    exit 0
fi
echo "building $out (${#PATCHES[@]} patches from $patches_dir)"

# Temp dirs for the outputs first: an unwritable dist/ or .venvs/ fails here, not minutes later.
tmp=$(mktemp -d dist/.tmp.XXXXXX) || die "cannot write to $ROOT/dist"
cleanup_add "$ROOT/$tmp"
venv=$(mktemp -d ".venvs/$version.XXXXXX") || die "cannot write to $ROOT/.venvs"
cleanup_add "$ROOT/$venv"
chmod 755 "$venv"

# Stage, patch, repack.
stage=$(mktemp -d build/stage.XXXXXX) || die "cannot write to $ROOT/build"
cleanup_add "$ROOT/$stage"
unzip -q "$BASE_WHEEL" -d "$stage" || die "cannot unpack $BASE_WHEEL"
export GIT_CEILING_DIRECTORIES=$ROOT/build  # git apply must not see the project repo
for p in "${PATCHES[@]}"; do
    (cd "$stage" && git apply -p2 --check "$p" && git apply -p2 "$p") ||
        die "patch does not apply to the pinned base: $p"
done
# paddle.version.series: which series this wheel carries.
python3 - "$stage/paddle/version/series.py" "$version" "$PIN_COMMIT" "${PATCHES[@]}" <<'EOF' ||
import email, sys
out, version, commit, *patches = sys.argv[1:]
subjects = []
for path in patches:
    with open(path, encoding="utf-8") as f:
        subjects.append(" ".join(email.message_from_file(f)["Subject"].split()))
with open(out, "w", encoding="utf-8") as f:
    f.write(
        "# Written by scripts/build.sh of the hooks and PyLayer patch series.\n"
        '"""The patch series this wheel carries on top of Paddle `base_commit`."""\n\n'
        f"version = {version!r}\nbase_commit = {commit!r}\npatches = (\n"
        + "".join(f"    {s!r},\n" for s in subjects)
        + ")\n"
    )
EOF
    die "writing paddle/version/series.py failed"
python3 scripts/repack_wheel.py "$stage" "$version" "$tmp/$(basename "$out")" || die "repacking the wheel failed"
rm -rf -- "$stage"

# Venv at .venvs/<dir>; .venv is switched only once it passed the smoke check.
"$PYTHON" -m venv "$venv" || die "$PYTHON -m venv $venv failed"
"$venv/bin/python" -m pip install -q "$tmp/$(basename "$out")" -r requirements-test.txt ||
    die "pip install of the wheel and requirements-test.txt into $venv failed"
"$venv/bin/python" -m pip check >/dev/null || { "$venv/bin/python" -m pip check >&2; die "pip check failed"; }
(cd / && PYTHONWARNINGS=ignore "$ROOT/$venv/bin/python" -c '
import importlib.metadata, sys, paddle
pin, version, dist = sys.argv[1:]
assert paddle.version.commit == pin, f"paddle.version.commit is {paddle.version.commit}, expected {pin}"
got = importlib.metadata.version(dist)
assert got == version, f"installed {dist} is {got}, expected {version}"
' "$PIN_COMMIT" "$version" "$dist") || die "smoke check of the new venv failed"
echo "$build_id" >"$venv/.build-id"

# Commit: wheel, then venv symlink; then drop the old ones.
mv -f "$tmp/$(basename "$out")" "$out"
ln -s "$venv" .venv.new
mv -T .venv.new .venv
cleanup_keep "$ROOT/$venv"
for f in dist/paddlepaddle*-"$PY_TAG"-*.whl; do [[ $f == "$out" ]] || rm -f -- "$f"; done
for d in .venvs/*; do [[ $d == "$venv" ]] || rm -rf -- "$d"; done

echo "built $out ($(du -h "$out" | cut -f1)) in ${SECONDS}s"
echo "venv: .venv -> $venv; use it with: source .venv/bin/activate"
