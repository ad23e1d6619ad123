#!/usr/bin/env bash
# zklock as a subproject, its libraries shared, built once and configured two
# ways in one build kept between runs (WORK_DIR/parent-build):
#   1. configures tests/consumer/subproject (a parent project with a `docs`
#      target of its own that adds zklock with add_subdirectory) with
#      BUILD_SHARED_LIBS=ON, every backend but etcd and both testing libraries (off by
#      default in a subproject: asked for here), absolute
#      CMAKE_INSTALL_LIBDIR/INCLUDEDIR/DATADIR (PREFIX/lib64, PREFIX/inc,
#      PREFIX/data), and builds it (unoptimised, one unity batch per library);
#      the parent's `docs` is its own;
#   2. installs it: with ZKLOCK_INSTALL left at its subproject default (OFF),
#      nothing is installed;
#   3. with ZKLOCK_INSTALL=ON, installs it and runs run.sh on it: the cases a
#      shared build can break (core: zklock alone without libpq; testing: the
#      ZooKeeper fixtures without hiredis or libpq; all: every component;
#      pkgconfig), the soname and the exported symbols of every library; then
#      checks the absolute directories used;
#   4. configures the same tree as on a machine without libhiredis-dev,
#      libpq-dev, libmariadb-dev and libmemcached-dev: ZKLOCK_BUILD_REDIS,
#      _POSTGRES, _MYSQL and _MEMCACHED off, an empty pkg-config search path,
#      CMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON, what steps 1-3 found of those
#      packages taken out of the cache, the testing libraries at their
#      subproject default; builds it (only zklock_backends is compiled again),
#      installs it into an emptied PREFIX and runs run.sh's core and pkgconfig
#      cases (the backends module offers flock alone); checks that no Redis,
#      PostgreSQL, MySQL, memcached or testing header, library or pkg-config
#      module is installed.
# The cases about the package's component logic (redis, postgres, mysql,
# memcached, testing-backends, local, readme) run once, on the test build's
# static install, in install_consumer.
#
#   tests/consumer/subproject.sh PARENT_BUILD_DIR WORK_DIR
#
# The build uses the C++ compiler, compiler launcher, generator and unity
# setting of PARENT_BUILD_DIR; a later run rebuilds only what changed. Set
# CMAKE to use a cmake other than the one on PATH; CMAKE_BUILD_PARALLEL_LEVEL
# for build jobs (default: one per core; the test runs at nice 19, beside the
# others, and alone at the end of the run).
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

# Empties PREFIX (made by an earlier run, or empty) and marks it as ours.
fresh_prefix() {
  if [[ -e $prefix ]]; then
    [[ -f $prefix/$marker || -z $(ls -A "$prefix") ]] || fail "refusing to wipe $prefix (not made by this script)"
    rm -rf -- "$prefix"
  fi
  mkdir -p -- "$prefix"
  touch -- "$prefix/$marker"
}

# configure WHAT [CMAKE_ARGS...]: configures the parent project, in the
# environment configure_env adds (VAR=VALUE...).
configure_env=()
configure() {
  local what=$1
  shift
  env "${configure_env[@]}" "$cmake_cmd" "${args[@]}" "$@" >>"$build.log" 2>&1 || {
    cat "$build.log"
    fail "configuring the parent project ($what) failed"
  }
}

build_it() {
  "$cmake_cmd" --build "$build" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" >>"$build.log" 2>&1 || {
    tail -n 100 "$build.log"
    fail "building the parent project failed"
  }
}

args=(-S "$here/subproject" -B "$build" "-DZKLOCK_SOURCE_DIR=$project_dir" -DCMAKE_BUILD_TYPE=
  -DBUILD_SHARED_LIBS=ON
  "-DCMAKE_INSTALL_PREFIX=$prefix" "-DCMAKE_INSTALL_LIBDIR=$prefix/lib64"
  "-DCMAKE_INSTALL_INCLUDEDIR=$prefix/inc" "-DCMAKE_INSTALL_DATADIR=$prefix/data"
  # the kept build's cache must not hide a change of zklock's defaults
  -UZKLOCK_BUILD_TESTS -UZKLOCK_BUILD_TOOLS -UZKLOCK_BUILD_EXAMPLES)
like_parent "$build"
args+=("${parent_args[@]}")
: >"$build.log"

# 1. Every library but etcd's, shared (ZKLOCK_INSTALL at its default); build.
echo "install_consumer_subproject: configuring and building $build (shared, every library)"
# etcd's backend is left out: its generated gRPC and protobuf code built again,
# shared, was a third of this test's CPU in a run whose time budget it
# decides; the static install (install_consumer) has its component.
every_library=(-DZKLOCK_BUILD_REDIS=ON -DZKLOCK_BUILD_POSTGRES=ON -DZKLOCK_BUILD_MYSQL=ON -DZKLOCK_BUILD_MEMCACHED=ON
  -DZKLOCK_BUILD_ETCD=OFF
  -DZKLOCK_BUILD_TESTING_LIBRARY=ON -DZKLOCK_BUILD_TESTING_BACKENDS=ON -DPARENT_EXPECT_TESTING=ON
  -UCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL)
configure "every library" "${every_library[@]}" -UZKLOCK_INSTALL
build_it
docs_log=$("$cmake_cmd" --build "$build" --target docs 2>&1) || { echo "$docs_log"; fail "the parent's docs target failed"; }
grep -qF "zklock_parent: its own docs" <<<"$docs_log" || { echo "$docs_log"; fail "the parent's docs target is not its own"; }

# 2. A subproject installs nothing unless asked to.
fresh_prefix
"$cmake_cmd" --install "$build" --prefix "$prefix" >>"$build.log" 2>&1 || { tail -n 50 "$build.log"; fail "installing failed"; }
installed=$(find "$prefix" -mindepth 1 ! -name "$marker")
[[ -z $installed ]] || fail "with ZKLOCK_INSTALL at its subproject default, the install put files in $prefix:
$installed"

# 3. With ZKLOCK_INSTALL=ON: install, use, check.
configure "every library, ZKLOCK_INSTALL=ON" "${every_library[@]}" -DZKLOCK_INSTALL=ON
build_it
CONSUMER_CASES="core testing all pkgconfig" CONSUMER_PC_MODULES="zklock zklock-backends" \
  "$here/run.sh" "$build" "$prefix" "$work/consumers"

soname=$(readelf -d "$prefix/lib64/libzklock.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ -n $soname && -f $prefix/lib64/$soname ]] || fail "no libzklock.so with its soname in the absolute libdir $prefix/lib64"
[[ -f $prefix/inc/zklock/version.hpp ]] || fail "no zklock/version.hpp in the absolute includedir $prefix/inc"
for relative in lib include "${prefix#/}"; do
  [[ ! -e $prefix/$relative ]] || fail "$prefix/$relative exists: an absolute install directory was taken as relative"
done
[[ $(PKG_CONFIG_PATH=$prefix/lib64/pkgconfig pkg-config --variable=libdir zklock) == "$prefix/lib64" ]] ||
  fail "zklock.pc's libdir is not $prefix/lib64"
[[ $(PKG_CONFIG_PATH=$prefix/lib64/pkgconfig pkg-config --variable=includedir zklock) == "$prefix/inc" ]] ||
  fail "zklock.pc's includedir is not $prefix/inc"

# 4. The backends off, on what looks like a machine without their client
# libraries' -dev packages: configure (what was found of them is forgotten),
# build, install into an emptied prefix, use, check.
echo "install_consumer_subproject: configuring and building $build (the backends off, no hiredis, libpq, libmariadb, libmemcached or gRPC)"
fresh_prefix
configure_env=("PKG_CONFIG_LIBDIR=$no_modules")
configure "the backends off" \
  -DZKLOCK_BUILD_REDIS=OFF -DZKLOCK_BUILD_POSTGRES=OFF -DZKLOCK_BUILD_MYSQL=OFF -DZKLOCK_BUILD_MEMCACHED=OFF \
  -DZKLOCK_BUILD_ETCD=OFF -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON -DPARENT_EXPECT_TESTING=OFF -DZKLOCK_INSTALL=ON \
  -UZKLOCK_BUILD_TESTING_LIBRARY -UZKLOCK_BUILD_TESTING_BACKENDS \
  '-U*hiredis*' '-U*libmariadb*' '-U*libmemcached*' '-U*grpcpp*' '-UPostgreSQL_*'
build_it
CONSUMER_CASES="core pkgconfig" CONSUMER_PC_MODULES="zklock zklock-backends" \
  "$here/run.sh" "$build" "$prefix" "$work/consumers"
for absent in inc/zklock/redis inc/zklock/postgres inc/zklock/mysql inc/zklock/memcached inc/zklock/etcd \
    inc/zklock/testing lib64/pkgconfig/zklock-{redis,postgres,mysql,memcached,etcd,testing,testing-backends}.pc \
    lib64/libzklock_{redis,postgres,mysql,memcached,etcd,testing,testing_backends}.{so,a}; do
  [[ ! -e $prefix/$absent ]] || fail "$prefix/$absent is installed by a build without that backend or library"
done
for present in inc/zklock/detail/deadline.hpp inc/zklock/queue_lock.hpp lib64/pkgconfig/zklock-backends.pc lib64/libzklock.so; do
  [[ -e $prefix/$present ]] || fail "$prefix/$present is not installed"
done
echo "install_consumer_subproject: OK"
