# Installation and the CMake package config: after `cmake --install`, a consumer
# does `find_package(zklock)` and links zklock::zklock (and zklock::testing).
# Included at the end of the top-level CMakeLists.txt, so every target exists.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ZKLOCK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/zklock"
  CACHE STRING "Where the zklock CMake package files are installed (relative to the prefix)")
mark_as_advanced(ZKLOCK_INSTALL_CMAKEDIR)

# Libraries: the two that always exist, then any backend library that has been
# added to the build (they join the same export set, so one config finds all).
set(_zklock_export_targets zklock zklock_testing)
foreach(_zklock_optional IN ITEMS zklock_redis zklock_postgres zklock_local zklock_backends)
  if(TARGET ${_zklock_optional})
    list(APPEND _zklock_export_targets ${_zklock_optional})
  endif()
endforeach()

install(TARGETS ${_zklock_export_targets}
  EXPORT zklockTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
unset(_zklock_export_targets)
unset(_zklock_optional)

# The command-line tool (its target cannot be called `zklock`: the library is).
foreach(_zklock_cli IN ITEMS zklock_cli zklock_tool)
  if(TARGET ${_zklock_cli})
    install(TARGETS ${_zklock_cli} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
unset(_zklock_cli)

# Public headers: the whole include/zklock tree (detail/ included: the public
# headers include it).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/zklock"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.ipp")

install(EXPORT zklockTargets
  NAMESPACE zklock::
  FILE zklockTargets.cmake
  DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/zklockConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/zklockConfig.cmake"
  INSTALL_DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})

write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/zklockConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)

# FindZooKeeperSt.cmake goes next to the config: zklock links the ZooKeeper C
# client PRIVATE, but the export still names ZooKeeperSt::ZooKeeperSt (as
# $<LINK_ONLY:...> for a static zklock), so a consumer must be able to find it.
install(FILES
  "${PROJECT_BINARY_DIR}/zklockConfig.cmake"
  "${PROJECT_BINARY_DIR}/zklockConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/FindZooKeeperSt.cmake"
  DESTINATION ${ZKLOCK_INSTALL_CMAKEDIR})
