#!/usr/bin/env bash
# Build ccsim's wired ns-3 programs: the ns-3 half of the speed benchmark and of the dumbbell
# validation (bench/ns3/dumbbell.cc), the same program with an address plan beyond 254 flows
# (bench/ns3/dumbbell_many.cc, for bench/scale_ns3.py), the parking-lot validation program
# (validation/ns3/parking_lot.cc) and the queue-discipline / ECN validation program
# (validation/ns3/qdisc.cc).
#
#   bash bench/ns3/build.sh            # install ns3 wheel if missing, compile
#   FORCE=1 bash bench/ns3/build.sh    # recompile even if up to date
#
# Uses the C++ headers and shared libraries shipped inside the PyPI `ns3`
# wheel (pinned in ns3-wheel.sh); no ns-3 source checkout or CMake is needed.
# Output: bench/ns3/build/dumbbell, dumbbell_many, parking_lot and qdisc (git-ignored), rpath'd to
# the wheel's lib dir. Each is recompiled only when it is out of date.
#
# Environment overrides (see ns3-wheel.sh):
#   PYTHON       python interpreter whose site-packages hold / receive ns3 (default: python3)
#   NS3_PREFIX   use an existing ns-3 install prefix (dir containing include/ and lib64/ or lib/)
#   CXX          C++ compiler (default: g++)
#   NS3_PIP_SPEC pip requirement (default: ns3==3.44.post0)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=ns3-wheel.sh
source "$HERE/ns3-wheel.sh"
NS3_DEPS=("$HERE/ccsim-tcp.h")
ns3_compile bench/ns3/build.sh "$HERE/dumbbell.cc" "$HERE/build/dumbbell" "$HERE/build.sh" \
    core network internet point-to-point applications traffic-control
NS3_DEPS=("$HERE/ccsim-tcp.h" "$HERE/dumbbell.cc") # dumbbell_many.cc is dumbbell.cc with DUMBBELL_MANY
ns3_compile bench/ns3/build.sh "$HERE/dumbbell_many.cc" "$HERE/build/dumbbell_many" "$HERE/build.sh" \
    core network internet point-to-point applications traffic-control
NS3_DEPS=("$HERE/ccsim-tcp.h")
VALIDATION="$(cd "$HERE/../../validation/ns3" && pwd)"
ns3_compile bench/ns3/build.sh "$VALIDATION/parking_lot.cc" "$HERE/build/parking_lot" "$HERE/build.sh" \
    core network internet point-to-point applications traffic-control
ns3_compile bench/ns3/build.sh "$VALIDATION/qdisc.cc" "$HERE/build/qdisc" "$HERE/build.sh" \
    core network internet point-to-point applications traffic-control
