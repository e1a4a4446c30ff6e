# cmake -DSOURCE_DIR=... -DOUT=.../version.hpp -DBASE=x.y.z -DTEMPLATE=... -P Version.cmake
# Writes accel/version.hpp with BASE+`git describe` of SOURCE_DIR, rewriting
# the file only when the text changes (so nothing rebuilds needlessly).
set(ACCEL_GIT_DESCRIBE "${BASE}")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
                  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE _describe
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _describe)
    set(ACCEL_GIT_DESCRIBE "${BASE}+${_describe}")
  endif()
endif()
configure_file(${TEMPLATE} ${OUT}.tmp @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
