#!/usr/bin/env bash
# Create a git work tree (default build/src) whose python/paddle is the pinned
# base wheel's paddle/ (commit "base", tag base) with the series as commits on top.
# usage: scripts/dev-tree.sh [--force] [--base-wheel PATH] [DIR]   (env: PATCHES_DIR)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

force='' base_arg=${PADDLE_BASE_WHEEL:-} dir=''
while (($#)); do
    case $1 in
        --force) force=1; shift ;;
        --base-wheel) (($# >= 2)) || die "--base-wheel needs a path"; base_arg=$2; shift 2 ;;
        -h | --help) sed -n '2,4p' "$0"; exit 0 ;;
        -*) die "unknown option: $1" ;;
        *) [[ -z $dir ]] || die "more than one DIR given"; dir=$1; shift ;;
    esac
done
dir=$(realpath -m "${dir:-$ROOT/build/src}")
[[ $ROOT/ != "$dir"/* ]] || die "refusing to use $dir: it contains the project"
if [[ -e $dir && -n $(ls -A "$dir") ]]; then
    [[ -n $force ]] || die "$dir already exists and is not empty (--force deletes and recreates it)"
    rm -rf -- "$dir"
fi

pin_load
series_load "${PATCHES_DIR:-$ROOT/patches}"
base_wheel_get "$base_arg"
SECONDS=0

mkdir -p "$dir"
cleanup_add "$dir"  # until the base commit exists
unzip -q "$BASE_WHEEL" 'paddle/*' -d "$dir/python" || die "cannot unpack $BASE_WHEEL"
cd "$dir"
git init -q
printf '%s\n' '# track Python sources only' '*' '!*/' '!*.py' '!*.pyi' >>.git/info/exclude
git config user.name >/dev/null || git config user.name "paddle dev tree"
git config user.email >/dev/null || git config user.email "dev-tree@localhost"
git add -A
GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
    git commit -q -m "base: paddlepaddle ${PIN_REQ#*==} ($PIN_COMMIT)"
git tag base
cleanup_keep "$dir"

for p in "${PATCHES[@]}"; do
    git am -q --keep-non-patch "$p" || {
        git am --abort
        die "patch does not apply: $p (the dev tree $dir holds the patches before it)"
    }
done

cat <<EOF
dev tree ready in ${SECONDS}s: $dir (base + ${#PATCHES[@]} patches, git log base..HEAD)
  test against it:  PADDLE_DEV_TREE=$dir scripts/test.sh
  change patches:   edit under $dir/python/paddle, git commit / git commit --fixup / git rebase -i base
  write patches/:   scripts/export-patches.sh $dir   (then scripts/build.sh)
EOF
