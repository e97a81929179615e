#!/usr/bin/env bash
# Regenerate patches/*.patch and patches/series from a dev tree's commits base..HEAD.
# usage: scripts/export-patches.sh [DIR]   (default build/src; env: PATCHES_DIR)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

(($# <= 1)) || die "usage: scripts/export-patches.sh [DIR]"
dir=$(realpath -m "${1:-$ROOT/build/src}")
out=$(realpath -m "${PATCHES_DIR:-$ROOT/patches}")
[[ -d $dir ]] || die "no dev tree at $dir (create one with scripts/dev-tree.sh)"
top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null || true)
if [[ $top != "$dir" ]] || ! git -C "$dir" rev-parse -q --verify refs/tags/base >/dev/null; then
    die "$dir is not a dev tree (no git repo with a 'base' tag; create one with scripts/dev-tree.sh)"
fi
gitdir=$(git -C "$dir" rev-parse --absolute-git-dir)
[[ ! -d $gitdir/rebase-apply && ! -d $gitdir/rebase-merge ]] ||
    die "$dir has a git am/rebase in progress; finish or abort it first"
git -C "$dir" update-index -q --refresh || true
git -C "$dir" diff-index --quiet HEAD -- ||
    die "$dir has uncommitted changes to tracked files; commit or stash them first"
untracked=$(git -C "$dir" ls-files --others --exclude-standard)
[[ -z $untracked ]] || printf 'warning: untracked files in %s are not exported:\n%s\n' "$dir" "$untracked" >&2

mkdir -p "$ROOT/build" "$out"
tmp=$(mktemp -d "$ROOT/build/export.XXXXXX")
cleanup_add "$tmp"
git -C "$dir" -c diff.noprefix=false -c diff.mnemonicPrefix=false -c diff.relative=false \
    format-patch -q --zero-commit --no-signature -N --keep-subject -o "$tmp" base..HEAD ||
    die "git format-patch base..HEAD failed in $dir"
names=()
for f in "$tmp"/*.patch; do [[ -e $f ]] && names+=("$(basename "$f")"); done
if ((${#names[@]})); then printf '%s\n' "${names[@]}" >"$tmp/series"; else : >"$tmp/series"; fi

# New patches first, then the series, then drop patches the series no longer names.
for n in "${names[@]}"; do mv -f "$tmp/$n" "$out/$n"; done
mv -f "$tmp/series" "$out/series"
for f in "$out"/*.patch; do
    [[ -e $f ]] || continue
    grep -qxF "$(basename "$f")" "$out/series" || rm -f -- "$f"
done
echo "exported ${#names[@]} patches from $dir to $out"
