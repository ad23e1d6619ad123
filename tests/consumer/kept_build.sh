# Sourced by subproject.sh, which builds zklock again, in a build kept between
# runs under WORK_DIR, with the compiler, compiler launcher,
# generator and unity setting of the build that runs the test.
#
#   source kept_build.sh "$@"    (the caller's arguments: PARENT_BUILD_DIR WORK_DIR)
#
# Sets cmake_cmd (CMAKE, or cmake), here (tests/consumer), project_dir, parent
# and work (absolute, made), and defines cache_value NAME (PARENT's cache
# entry) and like_parent BUILD_DIR, which sets the array parent_args to
# PARENT's settings and removes BUILD_DIR when it was kept from a run with
# another generator (CMake cannot switch a build to another one).

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

like_parent() {
  local build=$1 value kept
  parent_args=()
  value=$(cache_value CMAKE_CXX_COMPILER)
  [[ -n $value ]] && parent_args+=("-DCMAKE_CXX_COMPILER=$value")
  value=$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)
  [[ -n $value ]] && parent_args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=$value")
  value=$(cache_value CMAKE_GENERATOR)
  [[ -n $value ]] && parent_args+=(-G "$value")
  if [[ -f $build/CMakeCache.txt ]]; then
    kept=$(sed -n 's/^CMAKE_GENERATOR:[A-Z]*=//p' "$build/CMakeCache.txt" | head -n 1)
    if [[ $kept != "$value" ]]; then rm -rf -- "$build"; fi
  fi
  # A unity build here puts each library in one batch: unoptimised, its
  # compile is mostly the shared headers, so one batch per library takes a
  # third less CPU than batches of eight (63 s against 93 s) while the tests
  # beside it want the other core anyway.
  value=$(cache_value CMAKE_UNITY_BUILD)
  [[ -n $value ]] && parent_args+=("-DCMAKE_UNITY_BUILD=$value" -DCMAKE_UNITY_BUILD_BATCH_SIZE=0)
  return 0
}
