#!/usr/bin/env bash
# Build the ns-3 802.11 line program (validation/ns3-wifi/line.cc).
#
#   bash validation/ns3-wifi/build.sh          # install ns3 wheel if missing, compile
#   FORCE=1 bash validation/ns3-wifi/build.sh  # recompile even if up to date
#
# Same toolchain as bench/ns3/build.sh (shared logic in bench/ns3/ns3-wheel.sh): the C++
# headers and libraries of the PyPI wheel ns3==3.44.post0, g++ -std=c++20 -O2, no CMake.
# Output: validation/ns3-wifi/build/line (git-ignored), rpath'd to the wheel's lib dir.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../bench/ns3/ns3-wheel.sh
source "$HERE/../../bench/ns3/ns3-wheel.sh"
ns3_compile validation/ns3-wifi/build.sh "$HERE/line.cc" "$HERE/build/line" "$HERE/build.sh" \
    core network internet applications wifi mobility propagation traffic-control
