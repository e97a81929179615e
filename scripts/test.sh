#!/usr/bin/env bash
# Run pytest in .venv from the repo root: scripts/test.sh [pytest args...] (default: tests).
# env PADDLE_DEV_TREE=DIR imports paddle from DIR/python (a scripts/dev-tree.sh tree).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -x $ROOT/.venv/bin/python ]] || die "$ROOT/.venv is missing; run scripts/build.sh first"
if [[ -n ${PADDLE_DEV_TREE:-} ]]; then
    dev=$(realpath -m "$PADDLE_DEV_TREE")
    [[ -f $dev/python/paddle/__init__.py ]] ||
        die "PADDLE_DEV_TREE=$PADDLE_DEV_TREE has no python/paddle (create it with scripts/dev-tree.sh)"
    export PYTHONPATH=$dev/python${PYTHONPATH:+:$PYTHONPATH}
    echo "test.sh: importing paddle from the dev tree $dev/python (PADDLE_DEV_TREE)"
fi
cd "$ROOT"
(($#)) || set -- tests
rc=0
.venv/bin/python -m pytest "$@" || rc=$?
if ((rc == 5)); then die "pytest collected no tests (exit 5)"; fi
exit "$rc"
