#!/usr/bin/env bash
# Build the ns-3 802.11s mesh line program (validation/ns3-mesh/mesh.cc).
#
#   PYTHON=/path/to/venv/bin/python bash validation/ns3-mesh/build.sh
#   FORCE=1 bash validation/ns3-mesh/build.sh   # recompile even if up to date
#
# Same toolchain as validation/ns3-wifi/build.sh (bench/ns3/ns3-wheel.sh): the PyPI wheel
# ns3==3.44.post0's headers and libraries, g++ -std=c++20 -O2.
# Output: validation/ns3-mesh/build/mesh (git-ignored).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../bench/ns3/ns3-wheel.sh
source "$HERE/../../bench/ns3/ns3-wheel.sh"
ns3_compile validation/ns3-mesh/build.sh "$HERE/mesh.cc" "$HERE/build/mesh" "$HERE/build.sh" \
    core network internet applications wifi mesh mobility propagation traffic-control
