#!/usr/bin/env bash
# zklock as a subproject, built without its Redis and PostgreSQL backends on a
# machine that looks like one without libhiredis-dev and libpq-dev, installed
# into absolute directories:
#   1. configures tests/consumer/subproject (a parent project with a `docs`
#      target of its own that adds zklock with add_subdirectory) with
#      ZKLOCK_BUILD_REDIS=OFF ZKLOCK_BUILD_POSTGRES=OFF ZKLOCK_BUILD_MEMCACHED=OFF,
#      an empty pkg-config search path (no hiredis or libmemcached module), CMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
#      and absolute CMAKE_INSTALL_LIBDIR/INCLUDEDIR/DATADIR (PREFIX/lib64,
#      PREFIX/inc, PREFIX/data), and builds it (zklock's libraries unoptimised,
#      one unity batch each); the parent's `docs` is its own;
#   2. installs it: with ZKLOCK_INSTALL left at its subproject default (OFF),
#      nothing is installed;
#   3. with ZKLOCK_INSTALL=ON, runs run.sh on it (cases core and pkgconfig:
#      find_package(zklock) without libpq or hiredis, and every installed .pc
#      file with --cflags --libs and --static --libs), then checks the install:
#      the absolute directories used, no Redis or PostgreSQL headers, libraries
#      or pkg-config modules, and no testing libraries (ZKLOCK_BUILD_TESTING_LIBRARY
#      and ZKLOCK_BUILD_TESTING_BACKENDS are off by default in a subproject).
#
#   tests/consumer/subproject.sh PARENT_BUILD_DIR WORK_DIR
#
# The build uses the C++ compiler, compiler launcher, generator and unity
# setting of PARENT_BUILD_DIR and is kept between runs (WORK_DIR/parent-build),
# so a later run rebuilds only what changed. Set CMAKE to use a cmake other
# than the one on PATH; CMAKE_BUILD_PARALLEL_LEVEL for build jobs (default 1).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/kept_build.sh" "$@"
build=$work/parent-build
prefix=$work/prefix
marker=.zklock-install-consumer

fail() {
  echo "install_consumer_subproject: $*" >&2
  exit 1
}

no_modules=$work/no-pkgconfig-modules
mkdir -p -- "$no_modules"

args=(-S "$here/subproject" -B "$build" "-DZKLOCK_SOURCE_DIR=$project_dir" -DCMAKE_BUILD_TYPE=
  -DZKLOCK_BUILD_REDIS=OFF -DZKLOCK_BUILD_POSTGRES=OFF -DZKLOCK_BUILD_MYSQL=OFF -DZKLOCK_BUILD_MEMCACHED=OFF
  -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
  "-DCMAKE_INSTALL_PREFIX=$prefix" "-DCMAKE_INSTALL_LIBDIR=$prefix/lib64"
  "-DCMAKE_INSTALL_INCLUDEDIR=$prefix/inc" "-DCMAKE_INSTALL_DATADIR=$prefix/data"
  # the kept build's cache must not hide a change of zklock's defaults
  -UZKLOCK_BUILD_TESTING_LIBRARY -UZKLOCK_BUILD_TESTING_BACKENDS -UZKLOCK_BUILD_TESTS -UZKLOCK_BUILD_TOOLS -UZKLOCK_BUILD_EXAMPLES)
like_parent "$build"
args+=("${parent_args[@]}")

# 1. Configure (ZKLOCK_INSTALL at its default) and build.
echo "install_consumer_subproject: configuring and building $build"
env "PKG_CONFIG_LIBDIR=$no_modules" "$cmake_cmd" "${args[@]}" -UZKLOCK_INSTALL >"$build.log" 2>&1 || {
  cat "$build.log"
  fail "configuring the parent project failed"
}
"$cmake_cmd" --build "$build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-1}" >>"$build.log" 2>&1 || {
  tail -n 100 "$build.log"
  fail "building the parent project failed"
}
docs_log=$("$cmake_cmd" --build "$build" --target docs 2>&1) || { echo "$docs_log"; fail "the parent's docs target failed"; }
grep -qF "zklock_parent: its own docs" <<<"$docs_log" || { echo "$docs_log"; fail "the parent's docs target is not its own"; }

# 2. A subproject installs nothing unless asked to.
if [[ -e $prefix ]]; then
  [[ -f $prefix/$marker || -z $(ls -A "$prefix") ]] || fail "refusing to wipe $prefix (not made by this script)"
  rm -rf -- "$prefix"
fi
mkdir -p -- "$prefix"
touch -- "$prefix/$marker"
"$cmake_cmd" --install "$build" --prefix "$prefix" >>"$build.log" 2>&1 || { tail -n 50 "$build.log"; fail "installing failed"; }
installed=$(find "$prefix" -mindepth 1 ! -name "$marker")
[[ -z $installed ]] || fail "with ZKLOCK_INSTALL at its subproject default, the install put files in $prefix:
$installed"

# 3. With ZKLOCK_INSTALL=ON: install, use, check.
env "PKG_CONFIG_LIBDIR=$no_modules" "$cmake_cmd" "${args[@]}" -DZKLOCK_INSTALL=ON >>"$build.log" 2>&1 || {
  cat "$build.log"
  fail "configuring the parent project with ZKLOCK_INSTALL=ON failed"
}
"$cmake_cmd" --build "$build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-1}" >>"$build.log" 2>&1 || {
  tail -n 100 "$build.log"
  fail "building the parent project failed"
}
CONSUMER_CASES="core pkgconfig" "$here/run.sh" "$build" "$prefix" "$work/consumers"

[[ -f $prefix/lib64/libzklock.a || -f $prefix/lib64/libzklock.so ]] || fail "no libzklock in the absolute libdir $prefix/lib64"
[[ -f $prefix/inc/zklock/version.hpp ]] || fail "no zklock/version.hpp in the absolute includedir $prefix/inc"
for relative in lib include "${prefix#/}"; do
  [[ ! -e $prefix/$relative ]] || fail "$prefix/$relative exists: an absolute install directory was taken as relative"
done
[[ $(PKG_CONFIG_PATH=$prefix/lib64/pkgconfig pkg-config --variable=libdir zklock) == "$prefix/lib64" ]] ||
  fail "zklock.pc's libdir is not $prefix/lib64"
[[ $(PKG_CONFIG_PATH=$prefix/lib64/pkgconfig pkg-config --variable=includedir zklock) == "$prefix/inc" ]] ||
  fail "zklock.pc's includedir is not $prefix/inc"
for absent in inc/zklock/redis inc/zklock/postgres inc/zklock/mysql inc/zklock/memcached \
    lib64/pkgconfig/zklock-memcached.pc lib64/libzklock_memcached.a \
    lib64/pkgconfig/zklock-redis.pc lib64/pkgconfig/zklock-postgres.pc lib64/libzklock_redis.a lib64/libzklock_postgres.a \
    lib64/pkgconfig/zklock-mysql.pc lib64/libzklock_mysql.a \
    inc/zklock/testing lib64/pkgconfig/zklock-testing.pc lib64/libzklock_testing.a \
    lib64/pkgconfig/zklock-testing-backends.pc lib64/libzklock_testing_backends.a; do
  [[ ! -e $prefix/$absent ]] || fail "$prefix/$absent is installed by a build without that backend or library"
done
for present in inc/zklock/detail/deadline.hpp inc/zklock/queue_lock.hpp lib64/pkgconfig/zklock-backends.pc; do
  [[ -e $prefix/$present ]] || fail "$prefix/$present is not installed"
done
echo "install_consumer_subproject: OK"
