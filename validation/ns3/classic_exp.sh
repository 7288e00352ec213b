#!/usr/bin/env bash
# Build the private experiment program validation/ns3/classic_exp.cc (the dumbbell with the
# EXP_* switches of docs/validation.md, "Causes (classic set)") into
# bench/ns3/build/classic_exp. Separate from bench/ns3/build.sh on purpose: the dumbbell
# binary, whose size and mtime key the ns-3 caches, is not touched.
#
#   PYTHON=/path/to/venv/bin/python bash validation/ns3/classic_exp.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NS3="$(cd "$HERE/../../bench/ns3" && pwd)"
# shellcheck source=../../bench/ns3/ns3-wheel.sh
source "$NS3/ns3-wheel.sh"
NS3_DEPS=("$NS3/ccsim-tcp.h" "$NS3/dumbbell.cc")
ns3_compile validation/ns3/classic_exp.sh "$HERE/classic_exp.cc" "$NS3/build/classic_exp" "$HERE/classic_exp.sh" \
    core network internet point-to-point applications traffic-control
