#!/usr/bin/env bash
# Proves that an installed zklock is usable: installs BUILD_DIR into PREFIX,
# configures the consumer project next to this script against PREFIX, builds
# it and runs it.
#
#   tests/consumer/run.sh BUILD_DIR PREFIX [CONSUMER_BUILD_DIR]
#
# PREFIX and CONSUMER_BUILD_DIR (default: PREFIX-build) are wiped first, but
# only if they are empty or were made by an earlier run (marker file).
# The consumer uses the build's C++ compiler and build type; if the build has
# ZKLOCK_SANITIZE=ON, the consumer is compiled and linked with the same
# sanitizers (an ASan/UBSan static library needs their runtimes at link time).
# Set CMAKE to use a cmake other than the one on PATH.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 BUILD_DIR PREFIX [CONSUMER_BUILD_DIR]" >&2
  exit 2
fi

cmake_cmd=${CMAKE:-cmake}
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_dir=$(cd "$1" && pwd)
prefix=$2
consumer_build=${3:-$2-build}
marker=.zklock-install-consumer

if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  echo "install_consumer: $build_dir is not a configured build directory" >&2
  exit 2
fi

# Wipes a directory we made before; refuses to touch anything else.
fresh_dir() {
  local dir=$1
  if [[ -e $dir ]]; then
    if [[ -f $dir/$marker || -z $(ls -A "$dir") ]]; then
      rm -rf -- "$dir"
    else
      echo "install_consumer: refusing to wipe $dir (not made by this script)" >&2
      exit 2
    fi
  fi
  mkdir -p -- "$dir"
  touch -- "$dir/$marker"
}

cache_value() {
  sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt" | head -n 1
}

fresh_dir "$prefix"
fresh_dir "$consumer_build"
prefix=$(cd "$prefix" && pwd)

echo "install_consumer: installing $build_dir into $prefix"
"$cmake_cmd" --install "$build_dir" --prefix "$prefix"

configure_args=(-S "$source_dir" -B "$consumer_build" "-DCMAKE_PREFIX_PATH=$prefix")
cxx=$(cache_value CMAKE_CXX_COMPILER)
[[ -n $cxx ]] && configure_args+=("-DCMAKE_CXX_COMPILER=$cxx")
build_type=$(cache_value CMAKE_BUILD_TYPE)
[[ -n $build_type ]] && configure_args+=("-DCMAKE_BUILD_TYPE=$build_type")
case $(cache_value ZKLOCK_SANITIZE) in
  ON | on | TRUE | true | 1 | YES | yes)
    configure_args+=(
      "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer"
      "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
    ;;
esac

echo "install_consumer: configuring the consumer project against $prefix"
"$cmake_cmd" "${configure_args[@]}"

# find_package must have found the copy we just installed, not another one.
found=$(sed -n 's/^zklock_DIR:[A-Z]*=//p' "$consumer_build/CMakeCache.txt")
if [[ $found != "$prefix"/* ]]; then
  echo "install_consumer: find_package(zklock) used '$found', not the install in $prefix" >&2
  exit 1
fi

echo "install_consumer: building the consumer"
"$cmake_cmd" --build "$consumer_build"

echo "install_consumer: running the consumer"
"$consumer_build/zklock_consumer"
echo "install_consumer: OK"
