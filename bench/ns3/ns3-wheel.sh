# Shared by the build scripts of ccsim's ns-3 programs (bench/ns3/build.sh,
# validation/ns3-wifi/build.sh). Source it, then call:
#
#   ns3_locate <who>                 # sets NS3_PREFIX_DIR NS3_INC NS3_LIBDIR NS3_DEFS
#   ns3_libs <who> core network ...  # sets NS3_LIBS: -l flags for those ns-3 modules
#   ns3_compile <who> <src> <out> <extra modules...>   # locate, up-to-date check, compile, smoke check
#
# <who> prefixes error messages. Uses the C++ headers and shared libraries shipped inside
# the PyPI `ns3` wheel (pinned below); no ns-3 source checkout or CMake is needed. The
# binary is rpath'd to the wheel's lib dir.
#
# Environment overrides:
#   PYTHON       python interpreter whose site-packages hold / receive ns3 (default: python3)
#   NS3_PREFIX   use an existing ns-3 install prefix (dir containing include/ and lib64/ or lib/)
#   CXX          C++ compiler (default: g++)
#   NS3_PIP_SPEC pip requirement (default: ns3==3.44.post0)
#   FORCE=1      recompile even if the binary is up to date
#   NS3_DEPS     (array, set by a build script) further files the program includes; it is
#                recompiled when one of them is newer than the binary

PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
NS3_PIP_SPEC="${NS3_PIP_SPEC:-ns3==3.44.post0}"
NS3_WANT_VERSION="${NS3_PIP_SPEC#*==}"

ns3_die() {
    echo "$1: ERROR: ${*:2}" >&2
    exit 1
}

# Print the ns3 wheel's package directory (…/site-packages/ns3) if the pinned
# version is installed for $PYTHON, else nothing.
ns3_find_wheel_prefix() {
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

ns3_locate() {
    local who="$1" d
    command -v "$CXX" >/dev/null 2>&1 || ns3_die "$who" "C++ compiler '$CXX' not found (apt-get install g++)"
    if [[ -n "${NS3_PREFIX:-}" ]]; then
        NS3_PREFIX_DIR="$NS3_PREFIX"
    else
        command -v "$PYTHON" >/dev/null 2>&1 || ns3_die "$who" "python interpreter '$PYTHON' not found"
        NS3_PREFIX_DIR="$(ns3_find_wheel_prefix)"
        if [[ -z "$NS3_PREFIX_DIR" ]]; then
            echo "$who: installing $NS3_PIP_SPEC for $("$PYTHON" -c 'import sys; print(sys.executable)') ..." >&2
            # --no-deps: the wheel's only dependency is cppyy (Python bindings);
            # ccsim's ns-3 programs use the C++ headers/libraries only.
            "$PYTHON" -m pip install --no-deps --disable-pip-version-check -q "$NS3_PIP_SPEC" \
                || ns3_die "$who" "pip install $NS3_PIP_SPEC failed (network? Python version? the wheel is manylinux x86_64, CPython 3.8-3.11+)"
            NS3_PREFIX_DIR="$(ns3_find_wheel_prefix)"
            [[ -n "$NS3_PREFIX_DIR" ]] || ns3_die "$who" "installed $NS3_PIP_SPEC but could not locate ns3/include/ns3/core-module.h in it"
        fi
    fi
    NS3_INC="$NS3_PREFIX_DIR/include"
    NS3_LIBDIR=""
    for d in "$NS3_PREFIX_DIR/lib64" "$NS3_PREFIX_DIR/lib"; do
        if ls "$d"/libns3*-core*.so >/dev/null 2>&1; then NS3_LIBDIR="$d"; break; fi
    done
    [[ -f "$NS3_INC/ns3/core-module.h" ]] || ns3_die "$who" "no ns-3 headers at $NS3_INC/ns3"
    [[ -n "$NS3_LIBDIR" ]] || ns3_die "$who" "no libns3*-core*.so under $NS3_PREFIX_DIR/lib64 or $NS3_PREFIX_DIR/lib"

    # Library names carry the version: libns3.44-core.so -> prefix "ns3.44-"
    local core_so
    core_so="$(basename "$(ls "$NS3_LIBDIR"/libns3*-core*.so | head -n1)")"
    NS3_LIBPFX="${core_so#lib}"
    NS3_LIBPFX="${NS3_LIBPFX%core*.so}"   # e.g. "ns3.44-"
    NS3_LIBSFX="${core_so##*core}"
    NS3_LIBSFX="${NS3_LIBSFX%.so}"        # "" (release) or "-default"/"-optimized"

    # Same preprocessor definitions the wheel's CMake targets export
    # (lib64/cmake/ns3/ns3Targets.cmake): release profile, logging/asserts compiled in.
    NS3_DEFS=(-DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -D__LINUX__)
    local ver="${NS3_LIBPFX#ns}"
    ver="${ver%-}"                        # "3.44"
    NS3_DEFS+=("-DNS3_LIB_VERSION=\"${ver}\"")
}

ns3_libs() {
    local who="$1" m
    shift
    NS3_LIBS=()
    for m in "$@"; do
        [[ -f "$NS3_LIBDIR/lib${NS3_LIBPFX}${m}${NS3_LIBSFX}.so" ]] || ns3_die "$who" "missing $NS3_LIBDIR/lib${NS3_LIBPFX}${m}${NS3_LIBSFX}.so"
        NS3_LIBS+=("-l${NS3_LIBPFX}${m}${NS3_LIBSFX}")
    done
}

# ns3_compile <who> <src> <out> <build-script> <modules...>
# Skips the compilation when <out> is newer than <src>, <build-script>, every file in
# NS3_DEPS and this file, and
# was built against the same ns-3 prefix (recorded in <out dir>/.prefix-<name>).
ns3_compile() {
    local who="$1" src="$2" out="$3" script="$4"
    shift 4
    ns3_locate "$who"
    ns3_libs "$who" "$@"
    local out_dir stamp
    out_dir="$(dirname "$out")"
    stamp="$out_dir/.prefix-$(basename "$out")"
    mkdir -p "$out_dir"
    local dep deps_older=1
    for dep in ${NS3_DEPS[@]+"${NS3_DEPS[@]}"}; do
        [[ "$out" -nt "$dep" ]] || deps_older=0
    done
    if [[ -z "${FORCE:-}" && -x "$out" && "$out" -nt "$src" && "$out" -nt "$script" && "$deps_older" == 1 \
          && "$out" -nt "${BASH_SOURCE[0]}" && -f "$stamp" && "$(cat "$stamp")" == "$NS3_PREFIX_DIR" ]]; then
        echo "$who: $out is up to date (ns-3 at $NS3_PREFIX_DIR)"
        return 0
    fi
    echo "$who: compiling $src against ns-3 at $NS3_PREFIX_DIR" >&2
    if ! "$CXX" -std=c++20 -O2 -DNDEBUG "${NS3_DEFS[@]}" -I"$NS3_INC" \
            -o "$out.tmp" "$src" \
            -L"$NS3_LIBDIR" -Wl,-rpath,"$NS3_LIBDIR" -Wl,--no-as-needed "${NS3_LIBS[@]}" -lpthread; then
        rm -f "$out.tmp"
        ns3_die "$who" "compilation of $src failed (compiler: $("$CXX" --version | head -n1))"
    fi
    mv -f "$out.tmp" "$out"
    echo "$NS3_PREFIX_DIR" >"$stamp"
    # Smoke check: the binary loads its shared libraries and parses arguments.
    if ! "$out" --PrintHelp >/dev/null 2>&1; then
        ns3_die "$who" "built $out but it does not start; try: $out --PrintHelp"
    fi
    echo "$who: built $out"
}
