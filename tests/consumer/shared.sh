#!/usr/bin/env bash
# Builds zklock's libraries shared (BUILD_SHARED_LIBS=ON; no tests, tool or
# examples, no optimisation) in WORK_DIR/zklock-build, then runs run.sh on that
# build: the installed shared libraries, their soname and exported symbols, and
# the consumer cases a shared build can break (core: zklock alone without
# libpq; testing: the ZooKeeper fixtures without hiredis or libpq; all: every
# component; pkgconfig). The cases that test the package's component logic
# (redis, postgres, testing-backends, local) run once, in install_consumer.
#
#   tests/consumer/shared.sh PARENT_BUILD_DIR WORK_DIR
#
# The shared build uses the C++ compiler, compiler launcher (e.g. ccache),
# generator and unity setting of PARENT_BUILD_DIR and is kept between runs, so a later run
# rebuilds only what changed. Set CMAKE to use a cmake other than the one on PATH.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/kept_build.sh" "$@"

args=(-S "$project_dir" -B "$work/zklock-build" -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=
  -DZKLOCK_BUILD_TESTS=OFF -DZKLOCK_BUILD_TOOLS=OFF -DZKLOCK_BUILD_EXAMPLES=OFF -DZKLOCK_SANITIZE=OFF)
like_parent "$work/zklock-build"
args+=("${parent_args[@]}")

echo "install_consumer_shared: building zklock's shared libraries in $work/zklock-build"
"$cmake_cmd" "${args[@]}" >"$work/zklock-build.log" 2>&1 || {
  cat "$work/zklock-build.log"
  exit 1
}
"$cmake_cmd" --build "$work/zklock-build" -j 2 >>"$work/zklock-build.log" 2>&1 || {
  tail -n 100 "$work/zklock-build.log"
  exit 1
}
export CONSUMER_CASES=${CONSUMER_CASES:-core testing all pkgconfig}
export CONSUMER_PC_MODULES=${CONSUMER_PC_MODULES:-zklock zklock-backends}
exec "$here/run.sh" "$work/zklock-build" "$work/prefix" "$work/consumers"
