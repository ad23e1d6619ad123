# FindZooKeeperSt
# ---------------
# Finds the single-threaded ZooKeeper C client (Debian: libzookeeper-st-dev).
#
# Imported target:
#   ZooKeeperSt::ZooKeeperSt   the library libzookeeper_st; its include directory
#                              is the one holding zookeeper.h, so `#include <zookeeper.h>`
#                              works (on Debian: /usr/include/zookeeper).
#
# Result variables:
#   ZooKeeperSt_FOUND, ZooKeeperSt_VERSION (from ZOO_VERSION in zookeeper_version.h),
#   ZooKeeperSt_INCLUDE_DIRS, ZooKeeperSt_LIBRARIES
#
# Cache variables (set them to point at a non-standard install):
#   ZooKeeperSt_INCLUDE_DIR, ZooKeeperSt_LIBRARY
#
# The multi-threaded client (libzookeeper_mt) is deliberately not searched for:
# the st and mt libraries cannot be linked into one binary.

find_path(ZooKeeperSt_INCLUDE_DIR
  NAMES zookeeper.h
  PATH_SUFFIXES zookeeper
  DOC "Directory that holds zookeeper.h (single-threaded ZooKeeper C client)")

find_library(ZooKeeperSt_LIBRARY
  NAMES zookeeper_st
  DOC "The single-threaded ZooKeeper C client library")

if(ZooKeeperSt_INCLUDE_DIR AND EXISTS "${ZooKeeperSt_INCLUDE_DIR}/zookeeper_version.h")
  file(STRINGS "${ZooKeeperSt_INCLUDE_DIR}/zookeeper_version.h" _zookeeper_st_version_line
    REGEX "^#define[ \t]+ZOO_VERSION[ \t]+\"[^\"]*\"")
  if(_zookeeper_st_version_line MATCHES "\"([^\"]*)\"")
    set(ZooKeeperSt_VERSION "${CMAKE_MATCH_1}")
  endif()
  unset(_zookeeper_st_version_line)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ZooKeeperSt
  REQUIRED_VARS ZooKeeperSt_LIBRARY ZooKeeperSt_INCLUDE_DIR
  VERSION_VAR ZooKeeperSt_VERSION
  REASON_FAILURE_MESSAGE "On Debian/Ubuntu: apt-get install libzookeeper-st-dev (or run scripts/setup)")

if(ZooKeeperSt_FOUND)
  set(ZooKeeperSt_INCLUDE_DIRS "${ZooKeeperSt_INCLUDE_DIR}")
  set(ZooKeeperSt_LIBRARIES "${ZooKeeperSt_LIBRARY}")
  if(NOT TARGET ZooKeeperSt::ZooKeeperSt)
    add_library(ZooKeeperSt::ZooKeeperSt UNKNOWN IMPORTED)
    set_target_properties(ZooKeeperSt::ZooKeeperSt PROPERTIES
      IMPORTED_LOCATION "${ZooKeeperSt_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${ZooKeeperSt_INCLUDE_DIR}")
  endif()
endif()

mark_as_advanced(ZooKeeperSt_INCLUDE_DIR ZooKeeperSt_LIBRARY)
