# cmake -DBUILD_DIR=... -DWORK=... -DSOURCE=... [-DFLAGS=... -DLINK_FLAGS=...]
#       [-DCXX=... -DWITH_MPI=ON|OFF -DLIBDIR=lib -DBINDIR=bin -DLIBEXECDIR=libexec -DEXAMPLES=0|1] -P run.cmake
# Installs accel from BUILD_DIR into WORK/prefix, then, against that tree:
#  1. builds the consumer with find_package(accel) (with the same compiler and
#     linker flags, so that sanitizer builds stay consistent) and runs it;
#     with WITH_MPI, also consumer_mpi linking accel::mpi;
#  2. compiles and runs the consumer with the flags of `pkg-config --cflags
#     --libs accel` and nothing else, as README's line does (accel-mpi for
#     consumer_mpi with WITH_MPI): the program must start without
#     LD_LIBRARY_PATH;
#  3. runs the installed accel-conformance on the host backend;
#  4. runs an installed example (vector_add --quick) when the examples are built;
#  5. builds a backend outside the tree (TOY: the toy_backend project beside
#     SOURCE) against the install, installs it to its own folder, and checks
#     that through ACCEL_PLUGIN_PATH alone, with libaccel unchanged, it is
#     listed by accel-info, passes accel-conformance, runs in accel-bench; and
#     that the same plugin claiming a kernel it lacks fails accel-conformance.
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
  # pkg-config's flags alone, as README's line has it: accel.pc carries the run-time path.
  execute_process(COMMAND ${CXX} -std=c++17 ${extra} ${source} -o ${exe} ${flags} RESULT_VARIABLE rc)
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
if(EXAMPLES)  # built in this tree (ACCEL_BUILD_EXAMPLES)
  if(NOT EXISTS ${example})
    message(FATAL_ERROR "the examples are built but not installed (looked for ${example})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_BACKEND=host ${example} --quick RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the installed vector_add --quick failed (${rc}): ${err}")
  endif()
  # The installed mlp_train reads the installed data set, not the source tree's.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_BACKEND=host ACCEL_CACHE_DIR=${WORK}/cache
                          ${prefix}/${LIBEXECDIR}/accel/examples/mlp_train --quick --epochs 1
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "data ${prefix}/share/accel/breast_cancer.csv:")
    message(FATAL_ERROR "the installed mlp_train did not train on ${prefix}/share/accel/breast_cancer.csv "
                        "(${rc}):\n${out}${err}")
  endif()
endif()

# 5. a backend built outside the tree, found through ACCEL_PLUGIN_PATH
file(SHA256 ${prefix}/${LIBDIR}/libaccel.so libaccel_before)
function(build_toy folder)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/../toy_backend -B ${WORK}/${folder}-build
                          -DCMAKE_PREFIX_PATH=${prefix} "-DCMAKE_CXX_FLAGS=${FLAGS}"
                          "-DCMAKE_MODULE_LINKER_FLAGS=${LINK_FLAGS}" ${ARGN} RESULT_VARIABLE rc OUTPUT_QUIET)
  if(rc EQUAL 0)
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/${folder}-build RESULT_VARIABLE rc OUTPUT_QUIET)
  endif()
  if(rc EQUAL 0)
    execute_process(COMMAND ${CMAKE_COMMAND} --install ${WORK}/${folder}-build --prefix ${WORK}/${folder}
                    RESULT_VARIABLE rc OUTPUT_QUIET)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the outside backend into ${folder} failed (${rc})")
  endif()
endfunction()
build_toy(toy-plugins)
build_toy(toy-broken-plugins -DTOY_CLAIM_MISSING=ON)
set(toy_env ${CMAKE_COMMAND} -E env ACCEL_PLUGIN_PATH=${WORK}/toy-plugins ACCEL_MPI=0 ACCEL_CACHE_DIR=${WORK}/cache)
execute_process(COMMAND ${toy_env} ${prefix}/${BINDIR}/accel-info --wide OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
if(NOT out MATCHES "toy: available, 1 device" OR NOT out MATCHES "toy-plugins/libaccel-backend-toy.so")
  message(FATAL_ERROR "accel-info does not list the outside backend (${rc}):\n${out}")
endif()
# A program kernel in the outside backend's own language, which libaccel never heard of.
execute_process(COMMAND ${toy_env} ${WORK}/build/consumer toy-kernel OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "toy-scale kernel: [0-9]+ elements tripled")
  message(FATAL_ERROR "the outside backend did not build and run its own language's kernel (${rc}):\n${out}")
endif()
# Its own variable, declared by the plugin: listed, read, and a bad value the user's error naming it.
execute_process(COMMAND ${toy_env} ACCEL_TOY_MEMORY_GIB=2 ${prefix}/${BINDIR}/accel-info --wide OUTPUT_VARIABLE out
                ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "global memory 2.00 GiB" OR err MATCHES "ACCEL_TOY_MEMORY_GIB")
  message(FATAL_ERROR "accel-info did not read the outside backend's variable (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${toy_env} ${prefix}/${BINDIR}/accel-info --env --wide OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "ACCEL_TOY_MEMORY_GIB \\(unset\\)\n    read by the toy backend")
  message(FATAL_ERROR "accel-info --env does not list the outside backend's variable (${rc}):\n${out}")
endif()
execute_process(COMMAND ${toy_env} ACCEL_BACKEND=toy ACCEL_TOY_MEMORY_GIB=0 ${conformance} OUTPUT_VARIABLE out
                ERROR_VARIABLE out RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT out MATCHES "ACCEL_TOY_MEMORY_GIB='0' is outside 1..64")
  message(FATAL_ERROR "a bad value of the outside backend's variable was not an error (${rc}):\n${out}")
endif()
execute_process(COMMAND ${toy_env} ACCEL_BACKEND=toy ACCEL_TOY_MEMORY_GIBS=2 ${conformance} OUTPUT_VARIABLE out
                ERROR_VARIABLE out RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT out MATCHES "did you mean ACCEL_TOY_MEMORY_GIB[?]")
  message(FATAL_ERROR "a typo of the outside backend's variable was not an error naming it (${rc}):\n${out}")
endif()
execute_process(COMMAND ${toy_env} ACCEL_BACKEND=toy ${conformance} OUTPUT_VARIABLE out ERROR_VARIABLE out
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "conformance on toy")
  message(FATAL_ERROR "accel-conformance failed on the outside backend (${rc}):\n${out}")
endif()
# Its own op, defined by the plugin, was checked against its oracle.
if(NOT out MATCHES "checked on toy:0: [^\n]*toy_square f32 native")
  message(FATAL_ERROR "accel-conformance skipped the outside backend's own op toy_square:\n${out}")
endif()
execute_process(COMMAND ${toy_env} ${prefix}/${BINDIR}/accel-bench --backends toy --ops add,toy_square
                        --add-sizes 1000 --repeats 2 --min-time-ms 1 --format csv OUTPUT_VARIABLE out
                        ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "toy:0" OR NOT out MATCHES "toy_square")
  message(FATAL_ERROR "accel-bench did not run the outside backend and its op (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env ACCEL_PLUGIN_PATH=${WORK}/toy-broken-plugins ACCEL_MPI=0
                        ACCEL_CACHE_DIR=${WORK}/cache ACCEL_BACKEND=toy ${conformance}
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT out MATCHES "claims relu_backward in f32 on the native path but registered no kernel")
  message(FATAL_ERROR "accel-conformance passed a backend that claims a kernel it lacks (${rc}):\n${out}")
endif()
file(SHA256 ${prefix}/${LIBDIR}/libaccel.so libaccel_after)
if(NOT libaccel_before STREQUAL libaccel_after)
  message(FATAL_ERROR "libaccel changed while the outside backend was added")
endif()
message(STATUS "outside backend: found through ACCEL_PLUGIN_PATH, listed, conformant, benchmarked; a false claim fails")
