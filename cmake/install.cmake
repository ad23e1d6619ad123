# Installation: libraries, headers, the zklock tool, the CMake package config,
# pkg-config files and the documentation (with the README's example programs). After `cmake --install`, a consumer
# does `find_package(zklock COMPONENTS ...)` or `pkg-config zklock-...`.
# Included at the end of the top-level CMakeLists.txt, so every target exists.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ZKLOCK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/zklock"
  CACHE STRING "Where the zklock CMake package files are installed (relative to the prefix, or absolute)")
mark_as_advanced(ZKLOCK_INSTALL_CMAKEDIR)

# Components: one library and one export set each, so that the package config
# loads (and finds the dependencies of) only the components asked for.
#   component         target                   pkg-config module
#   zklock            zklock                   zklock            (always loaded; holds the flock backend too)
#   testing           zklock_testing           zklock-testing
#   testing-backends  zklock_testing_backends  zklock-testing-backends (ZKLOCK_BUILD_TESTING_BACKENDS)
#   redis             zklock_redis             zklock-redis      (ZKLOCK_BUILD_REDIS)
#   postgres          zklock_postgres          zklock-postgres   (ZKLOCK_BUILD_POSTGRES)
#   mysql             zklock_mysql             zklock-mysql      (ZKLOCK_BUILD_MYSQL)
#   memcached         zklock_memcached         zklock-memcached  (ZKLOCK_BUILD_MEMCACHED)
#   etcd              zklock_etcd              zklock-etcd       (ZKLOCK_BUILD_ETCD)
#   backends          zklock_backends          zklock-backends
set(ZKLOCK_INSTALLED_COMPONENTS)
foreach(_zklock_component IN ITEMS zklock testing testing-backends redis postgres mysql memcached etcd backends)
  if(_zklock_component STREQUAL "zklock")
    set(_zklock_target zklock)
  else()
    string(REPLACE "-" "_" _zklock_target "zklock_${_zklock_component}")
  endif()
  if(NOT TARGET ${_zklock_target})
    continue()
  endif()
  list(APPEND ZKLOCK_INSTALLED_COMPONENTS ${_zklock_component})
  install(TARGETS ${_zklock_target}
    EXPORT zklock-${_zklock_component}-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT zklock-${_zklock_component}-targets
    NAMESPACE zklock::
    FILE zklock-${_zklock_component}-targets.cmake
    DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})
endforeach()
unset(_zklock_component)
unset(_zklock_target)

# zklock::backends links every backend library that was built: the config
# loads those components before it.
# (src/CMakeLists.txt's zklock_backend_library() lists them.)
get_property(ZKLOCK_BACKENDS_NEEDS GLOBAL PROPERTY ZKLOCK_BACKEND_LIBRARIES)

# A static library's export names its private dependencies ($<LINK_ONLY:...>),
# so the config must find them too; a shared library's does not.
get_target_property(_zklock_type zklock TYPE)
if(_zklock_type STREQUAL "STATIC_LIBRARY")
  set(ZKLOCK_STATIC_LIBRARIES TRUE)
else()
  set(ZKLOCK_STATIC_LIBRARIES FALSE)
endif()
unset(_zklock_type)

# The PostgreSQL fence's schema, for DBAs who create it themselves.
if(TARGET zklock_postgres)
  install(FILES "${PROJECT_SOURCE_DIR}/src/backends/postgres/zklock_fence.sql" DESTINATION ${CMAKE_INSTALL_DATADIR}/zklock)
endif()

# The command-line tools: zklock (its target cannot be called `zklock`: the
# library is), with its man page and bash completion where man and
# bash-completion look, and zklock-bench beside it in bin/ (`zklock bench` and
# `zklock chaos` run the zklock-bench found next to zklock). The bench's
# harnesses (Curator's for bench --curator, Curator's and kazoo's for
# --scenario mixed) go to share/zklock, where the installed zklock-bench looks
# for them.
if(TARGET zklock_cli)
  install(TARGETS zklock_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES "${PROJECT_SOURCE_DIR}/tools/zklock/zklock.bash"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME zklock)
  if(ZKLOCK_MAN_PAGE)
    install(FILES "${ZKLOCK_MAN_PAGE}" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endif()
if(TARGET zklock-bench)
  install(TARGETS zklock-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(PROGRAMS "${PROJECT_SOURCE_DIR}/bench/curator/run.sh"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zklock/bench/curator)
  install(FILES "${PROJECT_SOURCE_DIR}/bench/curator/CuratorBench.java"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zklock/bench/curator)
  install(PROGRAMS "${PROJECT_SOURCE_DIR}/bench/kazoo/kazoo_bench.py"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zklock/bench/kazoo)
  install(PROGRAMS "${PROJECT_SOURCE_DIR}/bench/etcd/run.sh"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zklock/bench/etcd)
  install(FILES "${PROJECT_SOURCE_DIR}/bench/etcd/EtcdMutexBench.go"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zklock/bench/etcd)
endif()

# Public headers: the include/zklock tree (detail/deadline.hpp included: the
# timed acquires' templates use it), then the generated version and export
# headers. A backend's headers only with the backend, the fixtures' only with
# their library (the Redis and PostgreSQL ones with zklock::testing_backends).
# Everything else zklock's code shares stays in src/.
set(_zklock_header_excludes)
if(NOT TARGET zklock_redis)
  list(APPEND _zklock_header_excludes PATTERN "redis" EXCLUDE)
endif()
if(NOT TARGET zklock_postgres)
  list(APPEND _zklock_header_excludes PATTERN "postgres" EXCLUDE)
endif()
if(NOT TARGET zklock_memcached)
  list(APPEND _zklock_header_excludes PATTERN "memcached" EXCLUDE)
endif()
if(NOT TARGET zklock_mysql)
  list(APPEND _zklock_header_excludes PATTERN "mysql" EXCLUDE)
endif()
if(NOT TARGET zklock_etcd)
  list(APPEND _zklock_header_excludes PATTERN "etcd" EXCLUDE)
endif()
if(NOT TARGET zklock_testing)
  list(APPEND _zklock_header_excludes PATTERN "testing" EXCLUDE)
elseif(NOT TARGET zklock_testing_backends)
  foreach(_zklock_header IN ITEMS redis_server.hpp postgres_server.hpp mariadb_server.hpp memcached_server.hpp etcd_server.hpp backend_servers.hpp)
    list(APPEND _zklock_header_excludes PATTERN "${_zklock_header}" EXCLUDE)
  endforeach()
  unset(_zklock_header)
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/zklock"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.ipp" ${_zklock_header_excludes})
# The same excludes: a build configured again without a backend still holds
# the export header generated for it.
install(DIRECTORY "${ZKLOCK_GENERATED_INCLUDE_DIR}/zklock"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" ${_zklock_header_excludes})
unset(_zklock_header_excludes)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/zklockConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/zklockConfig.cmake"
  INSTALL_DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})

# Before 1.0 a minor release may break the API, so 0.9 accepts 0.9.x only.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_zklock_compatibility SameMinorVersion)
else()
  set(_zklock_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/zklockConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${_zklock_compatibility})
unset(_zklock_compatibility)

# FindZooKeeperSt.cmake goes next to the config: a static zklock's export names
# ZooKeeperSt::ZooKeeperSt (as $<LINK_ONLY:...>), so a consumer must find it.
install(FILES
  "${PROJECT_BINARY_DIR}/zklockConfig.cmake"
  "${PROJECT_BINARY_DIR}/zklockConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/FindZooKeeperSt.cmake"
  DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})

# pkg-config files, one per library. With a relative CMAKE_INSTALL_LIBDIR,
# `prefix` is found from the file's own place (${pcfiledir}), so the files stay
# right under `cmake --install --prefix`. An absolute LIBDIR (e.g. /opt/x/lib)
# or INCLUDEDIR is written as it is; `prefix` is then CMAKE_INSTALL_PREFIX.
set(ZKLOCK_PKGCONFIG_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${ZKLOCK_PKGCONFIG_DIR}")
  set(ZKLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _zklock_up "/prefix/${ZKLOCK_PKGCONFIG_DIR}" "/prefix")
  string(REGEX REPLACE "/$" "" _zklock_up "${_zklock_up}")
  set(ZKLOCK_PC_PREFIX "\${pcfiledir}/${_zklock_up}")
  unset(_zklock_up)
endif()
foreach(_zklock_dir IN ITEMS LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_zklock_dir}}")
    set(ZKLOCK_PC_${_zklock_dir} "${CMAKE_INSTALL_${_zklock_dir}}")
  else()
    set(ZKLOCK_PC_${_zklock_dir} "\${prefix}/${CMAKE_INSTALL_${_zklock_dir}}")
  endif()
endforeach()
unset(_zklock_dir)

# zklock_pkgconfig(COMPONENT DESCRIPTION REQUIRES STATIC_REQUIRES STATIC_LIBS)
# STATIC_*: what a static library's users also link (a shared one records it
# in its own DT_NEEDED entries). An install has either static or shared
# libraries, never both: with static ones these go in Requires and Libs, so
# that `pkg-config --libs` links as well as `pkg-config --static --libs`.
function(zklock_pkgconfig component description requires static_requires static_libs)
  if(component STREQUAL "zklock")
    set(ZKLOCK_PC_NAME zklock)
    set(ZKLOCK_PC_LIBRARY zklock)
  else()
    set(ZKLOCK_PC_NAME zklock-${component})
    string(REPLACE "-" "_" ZKLOCK_PC_LIBRARY "zklock_${component}")
  endif()
  if(NOT TARGET ${ZKLOCK_PC_LIBRARY})
    return()
  endif()
  set(ZKLOCK_PC_DESCRIPTION "${description}")
  set(ZKLOCK_PC_REQUIRES "${requires}")
  set(ZKLOCK_PC_LIBS "")
  if(ZKLOCK_STATIC_LIBRARIES)
    if(static_requires)
      if(ZKLOCK_PC_REQUIRES)
        string(APPEND ZKLOCK_PC_REQUIRES ", ")
      endif()
      string(APPEND ZKLOCK_PC_REQUIRES "${static_requires}")
    endif()
    if(static_libs)
      set(ZKLOCK_PC_LIBS " ${static_libs}")
    endif()
  endif()
  configure_file("${PROJECT_SOURCE_DIR}/cmake/zklock.pc.in"
    "${PROJECT_BINARY_DIR}/pkgconfig/${ZKLOCK_PC_NAME}.pc" @ONLY)
  install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/${ZKLOCK_PC_NAME}.pc" DESTINATION ${ZKLOCK_PKGCONFIG_DIR})
endfunction()

# Boost and Threads have no pkg-config module: the core's Cflags and Libs say
# -pthread, and the Boost headers are expected on the include path.
zklock_pkgconfig(zklock "Distributed locks on ZooKeeper" "" "libssl, libcrypto" "-lzookeeper_st")
zklock_pkgconfig(testing "zklock's real-server test fixtures (ZooKeeper) and fault kit"
  "zklock = ${PROJECT_VERSION}" "" "-lzookeeper_st")
zklock_pkgconfig(testing-backends "zklock's Redis, PostgreSQL and MariaDB test fixtures"
  "zklock-testing = ${PROJECT_VERSION}" "hiredis, libmariadb" "-lpq")
zklock_pkgconfig(redis "zklock's Redis and Redlock lock backends" "zklock = ${PROJECT_VERSION}" "hiredis" "")
# libpq (here and for testing-backends above): -lpq, not the module libpq (Debian's libpq.pc names, for --static,
# libpgcommon, libpgport, libgssapi_krb5 and libldap, whose libraries to link
# Debian's libpq-dev does not bring: `pkg-config --static` would give flags
# that cannot link).
# zklock_postgres links the shared libpq, which carries its own dependencies.
zklock_pkgconfig(postgres "zklock's PostgreSQL lock backends" "zklock = ${PROJECT_VERSION}" "" "-lpq")
zklock_pkgconfig(memcached "zklock's memcached lock backend" "zklock = ${PROJECT_VERSION}" "libmemcached" "")
# zklock_mysql links MariaDB Connector/C (pkg-config module libmariadb, Debian libmariadb-dev).
zklock_pkgconfig(mysql "zklock's MySQL/MariaDB lock backends" "zklock = ${PROJECT_VERSION}" "libmariadb" "")
# zklock_etcd links gRPC++ and protobuf (pkg-config modules grpc++ and protobuf).
zklock_pkgconfig(etcd "zklock's etcd lock backend" "zklock = ${PROJECT_VERSION}" "grpc++, protobuf" "")
set(_zklock_backends_requires "zklock = ${PROJECT_VERSION}")
foreach(_zklock_backend IN LISTS ZKLOCK_BACKENDS_NEEDS)
  string(APPEND _zklock_backends_requires ", zklock-${_zklock_backend} = ${PROJECT_VERSION}")
endforeach()
zklock_pkgconfig(backends "zklock's open_lock_service(name) over every backend built" "${_zklock_backends_requires}" "" "")
unset(_zklock_backends_requires)
unset(_zklock_backend)

# The documentation directory: the license, the README and, beside it, the
# programs its snippets are taken from (examples/readme/: first_lock/ builds on
# its own against this install).
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" "${PROJECT_SOURCE_DIR}/README.md"
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/examples/readme/"
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/readme)
