#!/usr/bin/env bash
# Build the ns-3 half of the ccsim speed benchmark.
#
#   bash bench/ns3/build.sh            # install ns3 wheel if missing, compile
#   FORCE=1 bash bench/ns3/build.sh    # recompile even if up to date
#
# Uses the C++ headers and shared libraries shipped inside the PyPI `ns3`
# wheel (pinned below); no ns-3 source checkout or CMake is needed.
# Output: bench/ns3/build/dumbbell (git-ignored), rpath'd to the wheel's lib dir.
#
# Environment overrides:
#   PYTHON       python interpreter whose site-packages hold / receive ns3 (default: python3)
#   NS3_PREFIX   use an existing ns-3 install prefix (dir containing include/ and lib64/ or lib/)
#   CXX          C++ compiler (default: g++)
#   NS3_PIP_SPEC pip requirement (default: ns3==3.44.post0)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/dumbbell.cc"
OUT_DIR="$HERE/build"
OUT="$OUT_DIR/dumbbell"
PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
NS3_PIP_SPEC="${NS3_PIP_SPEC:-ns3==3.44.post0}"
NS3_WANT_VERSION="${NS3_PIP_SPEC#*==}"

die() {
    echo "bench/ns3/build.sh: ERROR: $*" >&2
    exit 1
}

# Print the ns3 wheel's package directory (…/site-packages/ns3) if the pinned
# version is installed for $PYTHON, else nothing.
find_wheel_prefix() {
    "$PYTHON" - "$NS3_WANT_VERSION" <<'EOF' 2>/dev/null || true
import sys, importlib.metadata as md, pathlib
want = sys.argv[1]
try:
    dist = md.distribution("ns3")
except md.PackageNotFoundError:
    sys.exit(0)
if dist.version != want:
    sys.exit(0)
p = pathlib.Path(dist.locate_file("ns3")).resolve()
if (p / "include" / "ns3" / "core-module.h").is_file():
    print(p)
EOF
}

command -v "$CXX" >/dev/null 2>&1 || die "C++ compiler '$CXX' not found (apt-get install g++)"

if [[ -n "${NS3_PREFIX:-}" ]]; then
    PREFIX="$NS3_PREFIX"
else
    command -v "$PYTHON" >/dev/null 2>&1 || die "python interpreter '$PYTHON' not found"
    PREFIX="$(find_wheel_prefix)"
    if [[ -z "$PREFIX" ]]; then
        echo "bench/ns3/build.sh: installing $NS3_PIP_SPEC for $("$PYTHON" -c 'import sys; print(sys.executable)') ..." >&2
        # --no-deps: the wheel's only dependency is cppyy (Python bindings);
        # the benchmark uses the C++ headers/libraries only.
        "$PYTHON" -m pip install --no-deps --disable-pip-version-check -q "$NS3_PIP_SPEC" \
            || die "pip install $NS3_PIP_SPEC failed (network? Python version? the wheel is manylinux x86_64, CPython 3.8-3.11+)"
        PREFIX="$(find_wheel_prefix)"
        [[ -n "$PREFIX" ]] || die "installed $NS3_PIP_SPEC but could not locate ns3/include/ns3/core-module.h in it"
    fi
fi

INC="$PREFIX/include"
LIBDIR=""
for d in "$PREFIX/lib64" "$PREFIX/lib"; do
    if ls "$d"/libns3*-core*.so >/dev/null 2>&1; then LIBDIR="$d"; break; fi
done
[[ -f "$INC/ns3/core-module.h" ]] || die "no ns-3 headers at $INC/ns3"
[[ -n "$LIBDIR" ]] || die "no libns3*-core*.so under $PREFIX/lib64 or $PREFIX/lib"

# Library names carry the version: libns3.44-core.so -> prefix "ns3.44-"
CORE_SO="$(basename "$(ls "$LIBDIR"/libns3*-core*.so | head -n1)")"
LIBPFX="${CORE_SO#lib}"
LIBPFX="${LIBPFX%core*.so}"           # e.g. "ns3.44-"
LIBSFX="${CORE_SO##*core}"
LIBSFX="${LIBSFX%.so}"                # "" (release) or "-default"/"-optimized"
LIBS=()
for m in core network internet point-to-point applications traffic-control; do
    [[ -f "$LIBDIR/lib${LIBPFX}${m}${LIBSFX}.so" ]] || die "missing $LIBDIR/lib${LIBPFX}${m}${LIBSFX}.so"
    LIBS+=("-l${LIBPFX}${m}${LIBSFX}")
done

mkdir -p "$OUT_DIR"
if [[ -z "${FORCE:-}" && -x "$OUT" && "$OUT" -nt "$SRC" && "$OUT" -nt "$HERE/build.sh" \
      && -f "$OUT_DIR/.prefix" && "$(cat "$OUT_DIR/.prefix")" == "$PREFIX" ]]; then
    echo "bench/ns3/build.sh: $OUT is up to date (ns-3 at $PREFIX)"
    exit 0
fi

# Same preprocessor definitions the wheel's CMake targets export
# (lib64/cmake/ns3/ns3Targets.cmake): release profile, logging/asserts compiled in.
DEFS=(-DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -D__LINUX__)
NS3_VER="${LIBPFX#ns}"
NS3_VER="${NS3_VER%-}"                # "3.44"
DEFS+=("-DNS3_LIB_VERSION=\"${NS3_VER}\"")

echo "bench/ns3/build.sh: compiling $SRC against ns-3 at $PREFIX" >&2
if ! "$CXX" -std=c++20 -O2 -DNDEBUG "${DEFS[@]}" -I"$INC" \
        -o "$OUT.tmp" "$SRC" \
        -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -Wl,--no-as-needed "${LIBS[@]}" -lpthread; then
    rm -f "$OUT.tmp"
    die "compilation of $SRC failed (compiler: $("$CXX" --version | head -n1))"
fi
mv -f "$OUT.tmp" "$OUT"
echo "$PREFIX" >"$OUT_DIR/.prefix"

# Smoke check: the binary loads its shared libraries and parses arguments.
if ! "$OUT" --PrintHelp >/dev/null 2>&1; then
    die "built $OUT but it does not start; try: $OUT --PrintHelp"
fi
echo "bench/ns3/build.sh: built $OUT"
