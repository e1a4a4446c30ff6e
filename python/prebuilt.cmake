# The Python package against an accel built already: ACCEL_PYTHON_USE names
# a build tree of this repository (e.g. build/release) or an install prefix
# (cmake --install's), of this version. Included by python/CMakeLists.txt;
# defines the imported target accel::accel and accel_python_bundle(), which
# installs that build's libaccel, backend plugins, libaccel_mpi and
# accel-bench into the wheel as the package's own build would
# (bundle-prebuilt.cmake).
#
# A build tree is brought up to date first (cmake --build TREE: nothing to do
# when it is built), so that its libaccel matches the headers the extension
# module compiles against. A relative path is taken from the repository root.

get_filename_component(_use "${ACCEL_PYTHON_USE}" ABSOLUTE BASE_DIR "${PROJECT_SOURCE_DIR}")
if(NOT IS_DIRECTORY "${_use}")
  message(FATAL_ERROR "ACCEL_PYTHON_USE=${ACCEL_PYTHON_USE}: no such folder (${_use}); name an accel build tree "
                      "(e.g. build/release) or install prefix, or leave it empty to build accel with the package")
endif()
if(EXISTS "${_use}/CMakeCache.txt")
  message(STATUS "accel Python package: bringing the build tree ${_use} up to date")
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${_use}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "ACCEL_PYTHON_USE=${_use}: building that tree failed (${_rc}; see above)")
  endif()
endif()
find_package(accel ${PROJECT_VERSION} EXACT CONFIG NO_DEFAULT_PATH PATHS "${_use}")
if(NOT accel_FOUND)
  message(FATAL_ERROR "ACCEL_PYTHON_USE=${_use} holds no accel ${PROJECT_VERSION} (considered: "
                      "${accel_CONSIDERED_CONFIGS} ${accel_CONSIDERED_VERSIONS}): name a build tree of this "
                      "repository (configured again if it predates its accelTargets.cmake) or an install "
                      "prefix of this version")
endif()
get_target_property(_libaccel accel::accel LOCATION)
get_filename_component(_libdir "${_libaccel}" DIRECTORY)
find_program(_bench accel-bench NO_CACHE NO_DEFAULT_PATH PATHS "${_use}/bin" "${_libdir}/../bin" "${_libdir}/../../bin")
if(NOT _bench)
  message(FATAL_ERROR "ACCEL_PYTHON_USE=${_use} has no accel-bench (looked in ${_use}/bin): the package bundles "
                      "it (accel.bench); build that accel with ACCEL_BUILD_TOOLS=ON")
endif()
file(GLOB _plugins "${_libdir}/libaccel-backend-*.so")
if(NOT _plugins)
  message(FATAL_ERROR "ACCEL_PYTHON_USE=${_use}: no backend plugin beside ${_libaccel}")
endif()
message(STATUS "accel Python package: the extension module against ${_libaccel}; bundles its plugins and "
               "${_bench}")

# The wheel's copies, made at install time (component python) by bundle-prebuilt.cmake.
function(accel_python_bundle)
  install(CODE "set(ACCEL_BUNDLE_LIBACCEL \"${_libaccel}\")
    set(ACCEL_BUNDLE_SONAME \"$<TARGET_SONAME_FILE_NAME:accel::accel>\")
    set(ACCEL_BUNDLE_BENCH \"${_bench}\")
    include(\"${CMAKE_CURRENT_FUNCTION_LIST_DIR}/bundle-prebuilt.cmake\")"
    COMPONENT python EXCLUDE_FROM_ALL)
endfunction()
