# Runs Doxygen over the public headers and fails when it warns (an undocumented
# public member, a broken comment). -DDOXYGEN=... -DDOXYFILE=... -DWARNINGS=...
#
# Doxygen cannot open its WARN_LOGFILE in a directory that does not exist yet
# (a fresh build tree): it then says so on stderr, writes its warnings there,
# and exits 0. So the directory is made first, anything on stderr fails the
# check, and so does a run that left no warnings file behind.
get_filename_component(_dir "${WARNINGS}" DIRECTORY)
file(MAKE_DIRECTORY "${_dir}")
file(REMOVE "${WARNINGS}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen failed (${rc}): ${err}")
endif()
if(NOT EXISTS "${WARNINGS}")
  message(FATAL_ERROR "doxygen wrote no warnings file ${WARNINGS} (WARN_LOGFILE); it said:\n${err}")
endif()
file(READ "${WARNINGS}" text)
string(APPEND text "${err}")
if(NOT text STREQUAL "")
  message(FATAL_ERROR "the API reference has warnings (document every public member):\n${text}")
endif()
message(STATUS "the API reference built without a warning")
