#!/usr/bin/env bash
# Write one upstream PR bundle per patch of the series:
#   OUT/NNNN-<slug>/NNNN-<slug>.patch  the patch plus its tests under test/ (git am
#                                      onto Paddle's tree after the bundles before it)
#   OUT/NNNN-<slug>/PR.md              PR description in Paddle's PR template
#   OUT/NNNN-<slug>/test/...           the test files alone
#   OUT/NNNN-<slug>/test-edits/*.diff  its changes to Paddle's existing test files
#                                      (git apply in Paddle's tree; also in PR.md)
#   OUT/series                         the patches in order
# Tests and PR fields come from upstream/manifest.toml (see check-series.sh).
# usage: scripts/upstream-bundles.sh [OUT]   (default build/upstream)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ ${1:-} != -* ]] || { sed -n '2,10p' "$0"; exit 0; }
out=$(realpath -m "${1:-$ROOT/build/upstream}")
tree=$ROOT/build/upstream-src
py=${PYTHON:-$ROOT/.venv/bin/python}
[[ -x $py ]] || py=python3
up() { "$py" "$ROOT/scripts/upstream.py" "$@"; }
if [[ -e $out && -n $(ls -A "$out") && ! -f $out/series ]]; then
    die "$out exists, is not empty and holds no bundles (series file); give another OUT"
fi

series_load "${PATCHES_DIR:-$ROOT/patches}"
"$ROOT/scripts/dev-tree.sh" --force "$tree" >/dev/null
mapfile -t commits < <(git -C "$tree" rev-list --reverse base..HEAD)
subjects=()
for c in "${commits[@]}"; do subjects+=("$(git -C "$tree" log -1 --format=%s "$c")"); done
missing=$(printf '%s\n' "${subjects[@]}" | up missing)
[[ -z $missing ]] || die "no entry in upstream/manifest.toml for: $missing"

rm -rf -- "$out"
mkdir -p "$out"
: >"$out/series"  # also marks OUT as a bundle folder
git -C "$tree" checkout -q -b upstream base
prev=''
for k in "${!commits[@]}"; do
    n=$(printf %04d $((k + 1)))
    name=$(basename "${PATCHES[k]}" .patch)
    d=$out/$n-${name#[0-9][0-9][0-9][0-9]-}
    mkdir -p "$d"
    git -C "$tree" cherry-pick "${commits[k]}" >/dev/null
    while read -r t; do
        rel=${t#"$ROOT"/upstream/}
        mkdir -p "$tree/$(dirname "$rel")" "$d/$(dirname "$rel")"
        cp "$t" "$tree/$rel"
        cp "$t" "$d/$rel"
        git -C "$tree" add -f "$rel"
    done < <(up tests "${subjects[k]}")
    while read -r e; do
        mkdir -p "$d/test-edits"
        cp "$e" "$d/test-edits/"
    done < <(up test-edits "${subjects[k]}")
    git -C "$tree" commit -q --amend --no-edit
    git -C "$tree" format-patch -q --zero-commit --no-signature --keep-subject \
        --start-number $((k + 1)) -o "$d" -1
    git -C "$tree" log -1 --format=%B | up pr "${subjects[k]}" "$prev" >"$d/PR.md"
    (cd "$out" && ls "$n"-*/"$n"-*.patch) >>"$out/series"
    prev="$n ${subjects[k]}"
done

# The bundles apply in order with git am onto the pristine tree, to the same result.
git -C "$tree" checkout -q --detach base
while read -r p; do
    git -C "$tree" am -q --keep-non-patch "$out/$p" || {
        git -C "$tree" am --abort
        die "bundle does not apply with git am: $p"
    }
done <"$out/series"
git -C "$tree" diff --quiet upstream HEAD -- || die "applied bundles differ from the upstream branch in $tree"
echo "${#commits[@]} upstream bundles in $out (apply in order: git am --keep-non-patch \$(sed 's|^|$out/|' $out/series))"
