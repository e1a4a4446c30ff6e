# cmake -DLIB=<libaccel file> -DTEST_EXE=<accel-unit-tests> -DWORK=<dir> -P missing.cmake
# Runs the registry's missing-plugin test against a copy of libaccel that sits
# in a folder without plugins (LD_LIBRARY_PATH comes before the RUNPATH).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
get_filename_component(dir ${LIB} DIRECTORY)
file(GLOB libs ${dir}/libaccel.so*)
file(COPY ${libs} DESTINATION ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${WORK} ACCEL_TEST_NO_PLUGINS=1 ACCEL_ENV_ALLOW=ACCEL_TEST_NO_PLUGINS ACCEL_PLUGIN_PATH=
                ${TEST_EXE} "--test-case=a missing plugin file*" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "missing-plugin test failed (${rc})")
endif()
