#!/usr/bin/env bash
# Check that the series is bisectable: it applies with `git am` onto a source-
# layout tree (python/paddle from the pinned wheel, scripts/dev-tree.sh), every
# patch has an entry in upstream/manifest.toml, and after each patch k
# `import paddle` works and patch k's upstream tests pass; at the top of the
# series all upstream tests pass. --red also runs patch k's tests at patch k-1,
# where each of them must fail.
# usage: scripts/check-series.sh [--red] [DIR]   (default DIR build/check-series; env: PYTHON)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

red='' dir=''
while (($#)); do
    case $1 in
        --red) red=1; shift ;;
        -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
        -*) die "unknown option: $1" ;;
        *) [[ -z $dir ]] || die "more than one DIR given"; dir=$1; shift ;;
    esac
done
dir=$(realpath -m "${dir:-$ROOT/build/check-series}")
py=${PYTHON:-$ROOT/.venv/bin/python}
[[ -x $py ]] || die "no Python at $py (run scripts/build.sh, or set PYTHON)"
up() { "$py" "$ROOT/scripts/upstream.py" "$@"; }
SECONDS=0

series_load "${PATCHES_DIR:-$ROOT/patches}"
"$ROOT/scripts/dev-tree.sh" --force "$dir" >/dev/null
mapfile -t commits < <(git -C "$dir" rev-list --reverse base..HEAD)
((${#commits[@]} == ${#PATCHES[@]})) ||
    die "${#PATCHES[@]} patches gave ${#commits[@]} commits in $dir (an empty patch?)"
subjects=()
for c in "${commits[@]}"; do subjects+=("$(git -C "$dir" log -1 --format=%s "$c")"); done

missing=$(printf '%s\n' "${subjects[@]}" | up missing)
if [[ -n $missing ]]; then
    for k in "${!subjects[@]}"; do
        if grep -qxF -- "${subjects[k]}" <<<"$missing"; then
            echo "error: $(basename "${PATCHES[k]}") has no [[patch]] entry in upstream/manifest.toml;" \
                "add one with subject = \"${subjects[k]//\"/\\\"}\"" >&2
        fi
    done
    exit 1
fi

export PYTHONPATH=$dir/python FLAGS_enable_pir_api=1
log=$dir.log
all_tests=()
for k in "${!commits[@]}"; do
    name=$(basename "${PATCHES[k]}")
    mapfile -t tests < <(up tests "${subjects[k]}")
    all_tests+=("${tests[@]}")
    if [[ -n $red ]]; then
        git -C "$dir" checkout -q --detach "${commits[k]}~1"
        echo "[$name] its tests at the commit before it (each must fail):"
        up red "${tests[@]}" || die "$name: a test passes without the patch (see above)"
    fi
    git -C "$dir" checkout -q --detach "${commits[k]}"
    if up run "${tests[@]}" >"$log" 2>&1; then
        echo "ok  $name ($(grep -c '^@@PASSED' "$log") tests, ${SECONDS}s)"
    else
        tail -n 40 "$log" >&2
        die "first bad patch: $name: import paddle or its upstream tests fail after it (log: $log)"
    fi
done
if up run "${all_tests[@]}" >"$log" 2>&1; then
    echo "ok  all ${#all_tests[@]} upstream test files at the top of the series"
else
    tail -n 40 "$log" >&2
    die "an upstream test fails at the top of the series, though it passed after its own patch (log: $log)"
fi
echo "series ok: ${#PATCHES[@]} patches apply with git am and each passes its tests (${SECONDS}s)"
