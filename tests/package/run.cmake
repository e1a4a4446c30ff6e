# cmake -DBUILD_DIR=... -DWORK=... -DSOURCE=... [-DFLAGS=... -DLINK_FLAGS=...]
#       [-DCXX=... -DWITH_MPI=ON|OFF -DLIBDIR=lib -DBINDIR=bin -DLIBEXECDIR=libexec] -P run.cmake
# Installs accel from BUILD_DIR into WORK/prefix, then, against that tree:
#  1. builds the consumer with find_package(accel) (with the same compiler and
#     linker flags, so that sanitizer builds stay consistent) and runs it;
#     with WITH_MPI, also consumer_mpi linking accel::mpi;
#  2. compiles and runs the consumer with the flags of `pkg-config --cflags
#     --libs accel` (accel-mpi for consumer_mpi with WITH_MPI);
#  3. runs the installed accel-conformance on the host backend;
#  4. runs an installed example (vector_add --quick) when the examples are built.
if(NOT LIBDIR)
  set(LIBDIR lib)
endif()
if(NOT BINDIR)
  set(BINDIR bin)
endif()
set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed (${rc})")
endif()

# 1. find_package(accel)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${prefix}
                "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}" -DWITH_MPI=${WITH_MPI}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer with find_package(accel) failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK}/build/consumer RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer failed (${rc})")
endif()
if(WITH_MPI)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_MPI=0 ${WORK}/build/consumer_mpi RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the consumer of accel::mpi failed (${rc})")
  endif()
endif()

# 2. pkg-config
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config not found: the accel.pc check cannot run (install pkg-config)")
endif()
if(NOT CXX)
  set(CXX c++)
endif()
function(pkg_config_build package source exe)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig
                          ${PKG_CONFIG} --cflags --libs ${package}
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs ${package} failed (${rc}): ${err}")
  endif()
  message(STATUS "pkg-config ${package}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  separate_arguments(extra UNIX_COMMAND "${FLAGS} ${LINK_FLAGS}")
  execute_process(COMMAND ${CXX} -std=c++17 ${extra} ${source} -o ${exe} ${flags}
                          -Wl,-rpath,${prefix}/${LIBDIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compiling ${source} with pkg-config's flags for ${package} failed (${rc})")
  endif()
endfunction()
pkg_config_build(accel ${SOURCE}/main.cpp ${WORK}/pkg-config-consumer)
execute_process(COMMAND ${WORK}/pkg-config-consumer RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer built with pkg-config failed (${rc})")
endif()
if(WITH_MPI)
  pkg_config_build(accel-mpi ${SOURCE}/mpi.cpp ${WORK}/pkg-config-consumer-mpi)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_MPI=0 ${WORK}/pkg-config-consumer-mpi RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the accel-mpi consumer built with pkg-config failed (${rc})")
  endif()
endif()

# 3. the certification program, from the install tree, on the host backend
set(conformance ${prefix}/${BINDIR}/accel-conformance)
if(NOT EXISTS ${conformance})
  message(FATAL_ERROR "accel-conformance is not installed (looked for ${conformance})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=ACCEL_PLUGIN_PATH ACCEL_BACKEND=host ACCEL_MPI=0
                        ACCEL_CACHE_DIR=${WORK}/cache ${conformance} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed accel-conformance failed on host (${rc}):\n${out}")
endif()
string(REGEX MATCH "conformance on host[^\n]*" line "${out}")
message(STATUS "installed accel-conformance: ${line}: passed")

# 4. an installed example, when the examples are built
if(NOT LIBEXECDIR)
  set(LIBEXECDIR libexec)
endif()
set(example ${prefix}/${LIBEXECDIR}/accel/examples/vector_add)
if(EXISTS ${BUILD_DIR}/bin/vector_add)
  if(NOT EXISTS ${example})
    message(FATAL_ERROR "the examples are built but not installed (looked for ${example})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_BACKEND=host ${example} --quick RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed vector_add --quick failed (${rc}): ${err}")
  endif()
endif()
