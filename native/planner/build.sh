#!/bin/sh
# Builds the planner's command-line tool (native/build-planner/planner-cli) from the planning
# core, the validator and cli/ (a file per mode): a build of its own, apart from the addon
# (cmake-js), so that benchmarks and tests can run the planner on instance files. Same flags as
# the addon: C++20, no C++ exceptions. Rebuilds only when a source is newer than the binary.
set -eu
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
out="$here/../build-planner"
bin="$out/planner-cli"
mkdir -p "$out"
sources="$here/planner.cc $here/pibt.cc $here/operations.cc $here/escape.cc $here/improvement.cc $here/flow_weights.cc $here/progress.cc
  $here/distance_tables.cc $here/one_shot.cc $here/validator.cc $here/instances.cc
  $here/cli/main.cc $here/cli/args.cc $here/cli/report.cc $here/cli/harness.cc
  $here/cli/movingai.cc $here/cli/lorr.cc $here/cli/random.cc $here/cli/check_plan.cc"
if [ -x "$bin" ] && [ "${1:-}" != "--force" ]; then
  stale=0
  for f in $sources "$here"/*.h "$here"/cli/*.h "$0"; do
    [ "$f" -nt "$bin" ] && stale=1
  done
  [ "$stale" = 0 ] && exit 0
fi
# a private temporary name, then an atomic rename: two builds at once (tests, bench) do not clash
tmp="$bin.tmp.$$"
${CXX:-c++} -std=c++20 -O2 -g -fno-exceptions -Wall -Wextra -o "$tmp" $sources
mv "$tmp" "$bin"
echo "built $bin" >&2
