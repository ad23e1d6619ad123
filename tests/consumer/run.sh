#!/usr/bin/env bash
# Proves that an installed zklock is usable: installs BUILD_DIR into PREFIX,
# then configures, builds and runs the consumer project next to this script
# against PREFIX once per case:
#   core      find_package(zklock) alone, with CMAKE_DISABLE_FIND_PACKAGE_PostgreSQL
#             and no pkg-config module (a machine without libpq-dev or libhiredis-dev)
#   redis     COMPONENTS redis, without PostgreSQL
#   postgres  COMPONENTS postgres, with no pkg-config module (so without hiredis,
#             libmariadb or libmemcached)
#   mysql     COMPONENTS mysql, without PostgreSQL (needs libmariadb's pkg-config module)
#   memcached COMPONENTS memcached, without PostgreSQL
#   testing   COMPONENTS testing, without PostgreSQL and with no pkg-config module
#             (the ZooKeeper fixtures need neither libpq nor hiredis)
#   testing-backends  COMPONENTS testing-backends (loads testing; needs hiredis and libpq)
#   all       COMPONENTS testing testing-backends backends (backends loads redis,
#             postgres, mysql and memcached)
#   local     COMPONENTS local must fail to configure, saying why
#   readme    the README's first program as installed beside the README
#             (DOCDIR/examples/readme/first_lock), built with its own CMakeLists.txt
#   pkgconfig every installed module (zklock, zklock-testing, ...) read by
#             pkg-config, and the same program compiled with
#             `pkg-config --cflags --libs M`, linked again with
#             `pkg-config --static --libs M` and run, for M in CONSUMER_PC_MODULES
#             (default: zklock, zklock-backends and zklock-testing-backends,
#             whose Requires reach every other module), each using its component
#
#   tests/consumer/run.sh BUILD_DIR PREFIX [CONSUMER_BUILD_DIR]
#
# CONSUMER_CASES (environment; default: every case) names the cases to run,
# e.g. "core all pkgconfig": subproject.sh runs the ones a shared build can break.
#
# PREFIX and CONSUMER_BUILD_DIR (default: PREFIX-build; one subdirectory per
# case) are wiped first, but only if they are empty or were made by an earlier
# run (marker file).
# The consumer uses the build's C++ compiler, compiler launcher, build type and
# that type's flags; if the build has ZKLOCK_SANITIZE=ON, the consumer is compiled and linked with
# the same sanitizers (an ASan/UBSan static library needs their runtimes at link
# time). A shared build (BUILD_SHARED_LIBS=ON) is checked for its soname and for
# the symbols it exports. Set CMAKE to use a cmake other than the one on PATH.
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

# The installed headers are what users call: of detail/, only deadline.hpp
# (the timed acquires' templates use it) and session_seam.hpp (what
# zklock::testing's faults reach a Session through); none of zklock's own
# harness.
internal_headers=$(cd "$prefix" && find include/zklock/detail include/zklock/testing -name '*.hpp' 2>/dev/null |
  grep -vE '^include/zklock/detail/(deadline|session_seam)\.hpp$|^include/zklock/testing/' || true)
harness_headers=$(cd "$prefix" && find include/zklock/testing -name 'chaos.hpp' -o -name 'safety_ledger.hpp' \
  -o -name 'internals.hpp' 2>/dev/null || true)
if [[ -n $internal_headers$harness_headers ]]; then
  echo "install_consumer: internal headers are installed:" $internal_headers $harness_headers >&2
  exit 1
fi

# No installed text file (headers, CMake package, pkg-config files, man page,
# completion, docs, scripts) names the machine that built it: neither the
# source tree nor the build tree. The prefix itself may lie inside the build
# tree here, and a packager's absolute install directories name it: those
# paths are taken out before looking.
project_dir=$(cd "$source_dir/../.." && pwd)
named=
while IFS= read -r file; do
  text=$(<"$file")
  text=${text//"$prefix"/}
  if [[ $text == *"$project_dir"* || $text == *"$build_dir"* ]]; then
    named+=" $file"
  fi
done < <(grep -rIlF -e "$project_dir" -e "$build_dir" "$prefix" || true)
if [[ -n $named ]]; then
  echo "install_consumer: installed files name the source or build tree:" $named >&2
  exit 1
fi

# zklock's own build flags stay its own: the installed package and pkg-config
# files impose none on a consumer's code (they carry cxx_std_20, a requirement
# of the headers, as a compile feature).
leaked=$(grep -rl 'BOOST_ASIO_NO_DEPRECATED' "$prefix" --include='*.cmake' --include='*.pc' || true)
if [[ -n $leaked ]]; then
  echo "install_consumer: zklock's BOOST_ASIO_NO_DEPRECATED is imposed on consumers by:" $leaked >&2
  exit 1
fi

# The installed zklock links neither hiredis nor libpq (bench and chaos are
# zklock-bench's, installed beside it); zklock-bench finds its Curator harness
# in the prefix's share/zklock. zklock's man page and bash completion are where
# man and bash-completion look.
if [[ -x $prefix/bin/zklock ]]; then
  linked=$(ldd "$prefix/bin/zklock")
  if grep -E 'lib(pq|hiredis|mariadb|memcached|grpc\+\+)\.' <<<"$linked"; then
    echo "install_consumer: the installed zklock links a Redis, PostgreSQL, MySQL, memcached or etcd client library" >&2
    exit 1
  fi
  case $(cache_value ZKLOCK_BUILD_TESTING_BACKENDS) in
    ON | on | TRUE | true | 1 | YES | yes)
      [[ -x $prefix/bin/zklock-bench ]] || { echo "install_consumer: no zklock-bench beside zklock in $prefix/bin" >&2; exit 1; }
      script=$prefix/share/zklock/bench/curator/run.sh
      [[ -x $script ]] || { echo "install_consumer: $script is not installed" >&2; exit 1; }
      # The help describes the scripts' defaults and names no directory of the
      # machine that built it (the man page is made from it).
      # The top help and a scenario's, which lists the harness options.
      bench_help=$("$prefix/bin/zklock" bench --help)  # whole: grep -q would close the pipe early (pipefail)
      bench_help+=$'\n'$("$prefix/bin/zklock" bench contended --help)
      for tree in "$(cd "$source_dir/../.." && pwd)" "$build_dir"; do
        if grep -qF -- "$tree" <<<"$bench_help"; then
          echo "install_consumer: the installed zklock's bench --help names $tree" >&2
          exit 1
        fi
      done
      grep -qF -- "bench/curator/run.sh in share/zklock of the installation" <<<"$bench_help" ||
        { echo "install_consumer: bench --help does not say where --curator-script's default is" >&2; exit 1; }
      ;;
  esac
  [[ -s $prefix/share/bash-completion/completions/zklock ]] ||
    { echo "install_consumer: no bash completion in $prefix/share/bash-completion/completions" >&2; exit 1; }
  if [[ -n $(cache_value ZKLOCK_HELP2MAN) && $(cache_value ZKLOCK_HELP2MAN) != *NOTFOUND ]]; then
    [[ -s $prefix/share/man/man1/zklock.1 ]] || { echo "install_consumer: no zklock.1 in $prefix/share/man/man1" >&2; exit 1; }
  fi
fi

# The installed libraries' directory: CMAKE_INSTALL_LIBDIR under the prefix,
# or as it is when absolute (then the build's CMAKE_INSTALL_PREFIX must be
# PREFIX), where find_package looks when told (LIBDIR/cmake/zklock).
libdir=$(cache_value CMAKE_INSTALL_LIBDIR)
libdir=${libdir:-lib}
search_path=$prefix
if [[ $libdir == /* ]]; then
  search_path+=";$libdir/cmake"
else
  libdir=$prefix/$libdir
fi

common_args=("-DCMAKE_PREFIX_PATH=$search_path")
cxx=$(cache_value CMAKE_CXX_COMPILER)
[[ -n $cxx ]] && common_args+=("-DCMAKE_CXX_COMPILER=$cxx")
launcher=$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)
[[ -n $launcher ]] && common_args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher")
build_type=$(cache_value CMAKE_BUILD_TYPE)
if [[ -n $build_type ]]; then
  common_args+=("-DCMAKE_BUILD_TYPE=$build_type")
  # The build type's flags as the build has them (the test build's -g1, not
  # CMake's -g: the consumer compiles a quarter faster).
  build_type_flags=$(cache_value "CMAKE_CXX_FLAGS_${build_type^^}")
  [[ -n $build_type_flags ]] && common_args+=("-DCMAKE_CXX_FLAGS_${build_type^^}=$build_type_flags")
fi
# A sanitized zklock needs the sanitizers' runtimes at link time; the
# consumer's own code is compiled without them (what it checks is that it
# compiles and links, and a sanitized compile of Asio costs half as much again).
sanitize_flags=()
case $(cache_value ZKLOCK_SANITIZE) in
  ON | on | TRUE | true | 1 | YES | yes)
    sanitize_flags=(-fsanitize=address,undefined)
    common_args+=("-DCMAKE_EXE_LINKER_FLAGS=${sanitize_flags[*]}")
    ;;
esac

# An empty pkg-config search path: no module is found, as on a machine
# without the -dev packages that install them (libhiredis-dev, libpq-dev, ...).
no_modules=$consumer_build/no-pkgconfig-modules
mkdir -p -- "$no_modules"

# consumer CASE COMPONENTS PKG_CONFIG_LIBDIR [CMAKE_ARGS...]: configure (with
# PKG_CONFIG_LIBDIR when not empty), build and run one case.
consumer() {
  local name=$1 components=$2 pc_libdir=$3
  shift 3
  local dir=$consumer_build/$name
  local with_env=()
  [[ -n $pc_libdir ]] && with_env=(env "PKG_CONFIG_LIBDIR=$pc_libdir")
  echo "install_consumer: [$name] find_package(zklock${components:+ COMPONENTS $components}) ${with_env[*]} $*"
  "${with_env[@]}" "$cmake_cmd" -S "$source_dir" -B "$dir" "${common_args[@]}" \
    "-DZKLOCK_CONSUMER_COMPONENTS=${components// /;}" "$@" >"$dir.log" 2>&1 || {
    cat "$dir.log"
    echo "install_consumer: [$name] configuring failed" >&2
    exit 1
  }
  # find_package must have found the copy we just installed, not another one.
  local found
  found=$(sed -n 's/^zklock_DIR:[A-Z]*=//p' "$dir/CMakeCache.txt")
  if [[ $found != "$prefix"/* ]]; then
    echo "install_consumer: [$name] find_package(zklock) used '$found', not the install in $prefix" >&2
    exit 1
  fi
  "$cmake_cmd" --build "$dir" >>"$dir.log" 2>&1 || {
    cat "$dir.log"
    echo "install_consumer: [$name] building failed" >&2
    exit 1
  }
  "$dir/zklock_consumer"
}

all_cases="core redis postgres mysql memcached testing testing-backends all local readme pkgconfig"
cases=${CONSUMER_CASES:-$all_cases}
for c in $cases; do
  if [[ " $all_cases " != *" $c "* ]]; then
    echo "install_consumer: CONSUMER_CASES names '$c'; the cases are: $all_cases" >&2
    exit 2
  fi
done
wanted() {
  [[ " $cases " == *" $1 "* ]]
}

wanted core && consumer core "" "$no_modules" -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
wanted redis && consumer redis "redis" "" -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
wanted postgres && consumer postgres "postgres" "$no_modules"
wanted memcached && consumer memcached "memcached" "" -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
wanted mysql && consumer mysql "mysql" "" -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
wanted testing && consumer testing "testing" "$no_modules" -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON
wanted testing-backends && consumer testing-backends "testing-backends" ""
wanted all && consumer all "testing testing-backends backends" ""

if wanted local; then
  echo "install_consumer: [local] find_package(zklock COMPONENTS local) must fail"
  if "$cmake_cmd" -S "$source_dir" -B "$consumer_build/local" "${common_args[@]}" \
      -DZKLOCK_CONSUMER_COMPONENTS=local >"$consumer_build/local.log" 2>&1; then
    echo "install_consumer: [local] COMPONENTS local configured; it names no library" >&2
    exit 1
  fi
  local_log=$(tr -s ' \n' '  ' <"$consumer_build/local.log")  # whole: grep -q would close the pipe early (pipefail)
  if ! grep -q "zklock has no component 'local'" <<<"$local_log"; then
    cat "$consumer_build/local.log"
    echo "install_consumer: [local] the failure does not say why" >&2
    exit 1
  fi
fi

if wanted readme; then
  # The README's first program, from the install (it needs a server to run:
  # example_readme_zookeeper runs it); built as the README says, with the
  # prefix on CMAKE_PREFIX_PATH.
  docdir=$(cache_value CMAKE_INSTALL_DOCDIR)
  docdir=${docdir:-share/doc/zklock}
  [[ $docdir == /* ]] || docdir=$prefix/$docdir
  first_lock=$docdir/examples/readme/first_lock
  if [[ ! -f $first_lock/CMakeLists.txt || ! -f $first_lock/first_lock.cpp ]]; then
    echo "install_consumer: [readme] no first_lock/CMakeLists.txt and first_lock.cpp in $docdir/examples/readme" >&2
    exit 1
  fi
  echo "install_consumer: [readme] $first_lock"
  "$cmake_cmd" -S "$first_lock" -B "$consumer_build/readme" "${common_args[@]}" >"$consumer_build/readme.log" 2>&1 &&
    "$cmake_cmd" --build "$consumer_build/readme" >>"$consumer_build/readme.log" 2>&1 || {
    cat "$consumer_build/readme.log"
    echo "install_consumer: [readme] the README's first program did not build against $prefix" >&2
    exit 1
  }
  [[ -x $consumer_build/readme/first_lock ]] ||
    { echo "install_consumer: [readme] no first_lock program in $consumer_build/readme" >&2; exit 1; }
fi

shared_library=$(find "$libdir" -maxdepth 1 -name 'libzklock.so*' -print -quit)
if wanted pkgconfig; then
  # Every installed module is read whole by pkg-config (its Requires too);
  # the program is compiled and linked through the modules whose link lines
  # reach every other one's: zklock alone, zklock-backends (Requires every
  # backend's module) and zklock-testing-backends (Requires zklock-testing),
  # each with the component it names. No other module brings a backend's
  # client library (hiredis, libpq, libmariadb, libmemcached) into those
  # links, so each backend module's own line is what links it. The backends
  # module of a build without Redis and PostgreSQL offers flock alone.
  # CONSUMER_PC_MODULES names other modules to build with.
  pc_modules=${CONSUMER_PC_MODULES:-zklock zklock-backends zklock-testing-backends}
  modules=()
  installed=()
  for pc in "$libdir"/pkgconfig/*.pc; do
    [[ -e $pc ]] || continue
    module=$(basename "$pc" .pc)
    installed+=("$module")
    [[ " $pc_modules " == *" $module "* ]] && modules+=("$module")
  done
  if [[ " ${installed[*]} " != *" zklock "* ]]; then
    echo "install_consumer: [pkgconfig] no zklock.pc in $libdir/pkgconfig" >&2
    exit 1
  fi
  only_flock=()
  [[ " ${installed[*]} " != *" zklock-redis "* && " ${installed[*]} " != *" zklock-postgres "* ]] &&
    only_flock=(-DZKLOCK_CONSUMER_ONLY_FLOCK)
  pc() {
    PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} pkg-config "$@"
  }
  for module in "${installed[@]}"; do
    pc --exists --print-errors "$module" && pc --cflags --libs --static "$module" >/dev/null || {
      echo "install_consumer: [pkgconfig] pkg-config cannot read $module" >&2
      exit 1
    }
  done
  echo "install_consumer: [pkgconfig] every module read: ${installed[*]}"
  for module in "${modules[@]}"; do
    component=${module#zklock}
    component=${component#-}
    component=${component//-/_}  # testing-backends: ZKLOCK_CONSUMER_TESTING_BACKENDS
    defines=()
    [[ -n $component ]] && defines=("-DZKLOCK_CONSUMER_${component^^}" "${only_flock[@]}")
    echo "install_consumer: [pkgconfig] $module: --cflags --libs, and --static --libs"
    # Assigned first: a failing pkg-config then stops the script (set -e).
    cflags=$(pc --cflags "$module")
    libs=$(pc --libs "$module")
    static_libs=$(pc --static --libs "$module")
    read -r -a cflags_array <<<"$cflags"
    read -r -a libs_array <<<"$libs"
    read -r -a static_libs_array <<<"$static_libs"
    object=$consumer_build/pkgconfig-$module.o
    "${cxx:-c++}" -std=c++20 "${defines[@]}" "${cflags_array[@]}" \
      -c "$source_dir/main.cpp" -o "$object"
    "${cxx:-c++}" "${sanitize_flags[@]}" "$object" -o "$consumer_build/pkgconfig-$module" "${libs_array[@]}"
    "${cxx:-c++}" "${sanitize_flags[@]}" "$object" -o "$consumer_build/pkgconfig-$module-static" "${static_libs_array[@]}"
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$consumer_build/pkgconfig-$module" >/dev/null
    LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$consumer_build/pkgconfig-$module-static"
  done
fi

if [[ -n $shared_library ]]; then
  echo "install_consumer: [shared] soname and exported symbols of $shared_library"
  soname=$(readelf -d "$shared_library" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  if [[ $soname != libzklock.so.* ]]; then
    echo "install_consumer: [shared] libzklock has soname '$soname', not libzklock.so.VERSION" >&2
    exit 1
  fi
  symbols=$(nm -DC --defined-only "$libdir/$soname")
  if ! grep -q 'zklock::Mutex::Mutex(' <<<"$symbols"; then
    echo "install_consumer: [shared] $soname does not export zklock::Mutex" >&2
    exit 1
  fi
  # What is exported is what a user can name: no symbol of zklock's (a
  # function, a member, a class's vtable or typeinfo) that is internal
  # (zklock::detail, the project's lab) or takes an internal type, from any of
  # the libraries. (The instantiations of Boost's and the standard library's
  # templates over zklock's internal types are theirs, not zklock's API.)
  for library in "$libdir"/libzklock*.so; do
    internals=$(nm -DC --defined-only "$library" |
      grep -E '^[0-9a-f]+ [A-Za-z] ((typeinfo name|typeinfo|vtable|VTT) for )?zklock::' |
      grep -E 'zklock::(detail|lab)::' || true)
    if [[ -n $internals ]]; then
      echo "install_consumer: [shared] $(basename "$library") exports internals:" >&2
      head -n 20 <<<"$internals" >&2
      exit 1
    fi
  done
  echo "install_consumer: [shared] no library exports zklock::detail or zklock::lab symbols"
  # Each library exports only what its installed headers declare: libzklock
  # nothing of zklock::testing's (its headers may not be installed), a
  # backend nothing its folder and the core do not name.
  includedir=$(cache_value CMAKE_INSTALL_INCLUDEDIR)
  includedir=${includedir:-include}
  [[ $includedir == /* ]] || includedir=$prefix/$includedir
  python3 "$source_dir/check_exports.py" "$includedir" "$libdir"/libzklock*.so
fi
echo "install_consumer: OK"
