# Runs Doxygen over the public headers and fails when it warns (an undocumented
# public member, a broken comment). -DDOXYGEN=... -DDOXYFILE=... -DWARNINGS=...
file(REMOVE "${WARNINGS}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen failed (${rc}): ${err}")
endif()
if(EXISTS "${WARNINGS}")
  file(READ "${WARNINGS}" text)
  if(NOT text STREQUAL "")
    message(FATAL_ERROR "the API reference has warnings (document every public member):\n${text}")
  endif()
endif()
message(STATUS "the API reference built without a warning")
