#!/usr/bin/env bash
# Builds zklock's libraries shared (BUILD_SHARED_LIBS=ON; no tests, tool or
# examples, no optimisation) in WORK_DIR/zklock-build, then runs run.sh on that
# build: the installed shared libraries, their soname and exported symbols, and
# the consumer cases a shared build can break (core: zklock alone without
# libpq; all: every component; pkgconfig). The cases that test the package's
# component logic (redis, postgres, local) run once, in install_consumer.
#
#   tests/consumer/shared.sh PARENT_BUILD_DIR WORK_DIR
#
# The shared build uses the C++ compiler, compiler launcher (e.g. ccache),
# generator and unity setting of PARENT_BUILD_DIR and is kept between runs, so a later run
# rebuilds only what changed. Set CMAKE to use a cmake other than the one on PATH.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 PARENT_BUILD_DIR WORK_DIR" >&2
  exit 2
fi

cmake_cmd=${CMAKE:-cmake}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
project_dir=$(cd "$here/../.." && pwd)
parent=$(cd "$1" && pwd)
work=$2
mkdir -p -- "$work"
work=$(cd "$work" && pwd)

cache_value() {
  sed -n "s/^$1:[A-Z]*=//p" "$parent/CMakeCache.txt" | head -n 1
}

args=(-S "$project_dir" -B "$work/zklock-build" -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=
  -DZKLOCK_BUILD_TESTS=OFF -DZKLOCK_BUILD_TOOLS=OFF -DZKLOCK_BUILD_EXAMPLES=OFF -DZKLOCK_SANITIZE=OFF)
cxx=$(cache_value CMAKE_CXX_COMPILER)
[[ -n $cxx ]] && args+=("-DCMAKE_CXX_COMPILER=$cxx")
launcher=$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)
[[ -n $launcher ]] && args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher")
generator=$(cache_value CMAKE_GENERATOR)
[[ -n $generator ]] && args+=(-G "$generator")
# CMake cannot switch an existing build to another generator: one kept from a
# run with the other one is made anew.
if [[ -f $work/zklock-build/CMakeCache.txt ]]; then
  kept=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$work/zklock-build/CMakeCache.txt" | head -n 1)
  if [[ $kept != "$generator" ]]; then rm -rf -- "$work/zklock-build"; fi
fi
# A unity build here puts each library in one batch: unoptimised, its
# compile is mostly the shared headers, so one batch per library takes a third
# less CPU than batches of eight (63 s against 93 s) while the tests beside it
# want the other core anyway.
unity=$(cache_value CMAKE_UNITY_BUILD)
[[ -n $unity ]] && args+=("-DCMAKE_UNITY_BUILD=$unity" -DCMAKE_UNITY_BUILD_BATCH_SIZE=0)

echo "install_consumer_shared: building zklock's shared libraries in $work/zklock-build"
"$cmake_cmd" "${args[@]}" >"$work/zklock-build.log" 2>&1 || {
  cat "$work/zklock-build.log"
  exit 1
}
"$cmake_cmd" --build "$work/zklock-build" -j 2 >>"$work/zklock-build.log" 2>&1 || {
  tail -n 100 "$work/zklock-build.log"
  exit 1
}
export CONSUMER_CASES=${CONSUMER_CASES:-core all pkgconfig}
exec "$here/run.sh" "$work/zklock-build" "$work/prefix" "$work/consumers"
