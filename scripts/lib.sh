# shellcheck shell=bash
# Shared shell functions for scripts/*.sh (sourced, not run).
# Provides: ROOT, die, cleanup_add/cleanup_keep (removed on exit unless kept),
# pin_load, base_wheel_get (fetch + verify), series_load.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { echo "error: $*" >&2; exit 1; }

# Paths removed when the script exits (also on INT/TERM) unless cleanup_keep'd;
# first the script's own on_exit function runs, if it defines one.
_CLEANUP=()
cleanup_add() { _CLEANUP+=("$@"); }
cleanup_keep() {
    local p keep=()
    for p in "${_CLEANUP[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
    _CLEANUP=("${keep[@]}")
}
_cleanup() {
    local rc=$?
    if declare -F on_exit >/dev/null; then on_exit || ((rc)) || rc=1; fi
    if ((${#_CLEANUP[@]})); then rm -rf -- "${_CLEANUP[@]}"; fi
    exit "$rc"
}
trap _cleanup EXIT
trap 'echo "error: interrupted (SIGINT)" >&2; exit 130' INT
trap 'echo "error: terminated (SIGTERM)" >&2; exit 143' TERM

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# python_target [PYTHON] -> PYTHON (the interpreter the wheel and venv are for; default
# python3) and PY_TAG (its CPython wheel tag, e.g. cp311).
python_target() {
    PYTHON=${1:-python3}
    command -v "$PYTHON" >/dev/null || die "Python interpreter not found: $PYTHON"
    PYTHON=$(command -v "$PYTHON")
    PY_TAG=$("$PYTHON" -c 'import sys; print("cp%d%d" % sys.version_info[:2])') ||
        die "$PYTHON does not run"
}

# base.pin -> PIN_REQ, PIN_COMMIT, PIN_SHAS=("HASH FILENAME" ...)
pin_load() {
    local pin=$ROOT/base.pin key a b
    [[ -f $pin ]] || die "$pin not found"
    PIN_REQ='' PIN_COMMIT='' PIN_SHAS=()
    while read -r key a b _ || [[ -n $key ]]; do
        case $key in
            '' | '#'*) ;;
            requirement) PIN_REQ=$a ;;
            commit) PIN_COMMIT=$a ;;
            sha256) [[ $a =~ ^[0-9a-f]{64}$ && -n $b ]] || die "base.pin: bad line: sha256 $a $b"
                    PIN_SHAS+=("$a $b") ;;
            *) die "base.pin: unknown key '$key'" ;;
        esac
    done <"$pin"
    [[ -n $PIN_REQ && -n $PIN_COMMIT && ${#PIN_SHAS[@]} -gt 0 ]] ||
        die "base.pin needs a 'requirement', a 'commit' and at least one 'sha256' line"
}

# base_wheel_verify FILE [KNOWN_SHA] -> BASE_SHA; checks the hash and paddle.version.commit
base_wheel_verify() {
    local whl=$1 line ok='' commit
    BASE_SHA=${2:-$(sha256_of "$whl")}
    for line in "${PIN_SHAS[@]}"; do [[ ${line%% *} == "$BASE_SHA" ]] && ok=1; done
    [[ -n $ok ]] || die "base wheel $whl has sha256 $BASE_SHA, which base.pin does not list;" \
        "if it is a trusted build of commit $PIN_COMMIT, add 'sha256 $BASE_SHA $(basename "$whl")' to base.pin"
    commit=$(python3 - "$whl" <<'EOF'
import re, sys, zipfile
try:
    src = zipfile.ZipFile(sys.argv[1]).read("paddle/version/__init__.py").decode()
except Exception as e:
    sys.exit(f"error: cannot read paddle/version/__init__.py from {sys.argv[1]}: {e}")
m = re.search(r"^commit\s*=\s*'([0-9a-f]*)'", src, re.M)
print(m.group(1) if m else "(none)")
EOF
) || exit 1
    [[ $commit == "$PIN_COMMIT" ]] ||
        die "base wheel $whl is built from commit $commit, but base.pin pins commit $PIN_COMMIT"
    [[ $(basename "$whl") == *-"$PY_TAG"-"$PY_TAG"-* ]] ||
        die "base wheel $whl is not for $PY_TAG ($PYTHON); pass the $PY_TAG wheel or --python for its Python"
}

# base_wheel_get [PATH] -> BASE_WHEEL, BASE_SHA, for $PYTHON (python_target; default
# python3). PATH (or $PADDLE_BASE_WHEEL), else
# pip download $PADDLE_BASE_REQ (e.g. a GPU build; not cached), else .cache/base/<file>
# if its hash matches base.pin, else pip download base.pin's requirement into the cache.
base_wheel_get() {
    local given=${1:-${PADDLE_BASE_WHEEL:-}} req=${PADDLE_BASE_REQ:-} cache=$ROOT/.cache/base line tmp f
    [[ -n ${PY_TAG:-} ]] || python_target
    if [[ -n $given ]]; then
        [[ -f $given ]] || die "base wheel not found: $given"
        BASE_WHEEL=$(realpath "$given")
        base_wheel_verify "$BASE_WHEEL"
        return
    fi
    [[ -n $req ]] || for line in "${PIN_SHAS[@]}"; do
        f=$cache/${line#* }
        [[ -f $f && $f == *-"$PY_TAG"-* ]] || continue
        if [[ $(sha256_of "$f") == "${line%% *}" ]]; then
            BASE_WHEEL=$f
            base_wheel_verify "$f" "${line%% *}"
            return
        fi
        echo "warning: cached $f does not match its sha256 in base.pin (corrupt or tampered); downloading it again" >&2
    done
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.download.XXXXXX")
    cleanup_add "$tmp"
    echo "downloading ${req:-$PIN_REQ} ..."
    "$PYTHON" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "${req:-$PIN_REQ}" >&2 ||
        die "cannot download ${req:-$PIN_REQ} from the package index (or pass --base-wheel PATH)"
    f=$(find "$tmp" -maxdepth 1 -name '*.whl' -print -quit)
    [[ -n $f ]] || die "pip download of ${req:-$PIN_REQ} produced no wheel"
    base_wheel_verify "$f"
    if [[ -n $req ]]; then BASE_WHEEL=$f; return; fi  # removed on exit
    mv -f "$f" "$cache/"
    BASE_WHEEL=$cache/$(basename "$f")
}

# series_load DIR -> PATCHES=(absolute paths, in series order)
series_load() {
    local dir line
    dir=$(realpath -m "$1")
    [[ -f $dir/series ]] || die "no series file in $dir"
    PATCHES=()
    while read -r line || [[ -n $line ]]; do
        [[ -z $line || $line == '#'* ]] && continue
        [[ -f $dir/$line ]] || die "$dir/series lists $line, which does not exist"
        PATCHES+=("$dir/$line")
    done <"$dir/series"
}
