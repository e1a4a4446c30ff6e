# Install-time script of python/prebuilt.cmake (ACCEL_PYTHON_USE): copies an
# accel built already into the package folder as the package's own build
# installs it: lib/ libaccel (as its SONAME, what the extension module
# needs), every backend plugin beside it and libaccel_mpi where accel-bench
# links it; bin/accel-bench. Runtime paths as that build sets them:
# $ORIGIN for the libraries, $ORIGIN/../lib for accel-bench (not the build
# tree's absolute paths). The folder of libaccel is read now, so that a
# plugin built since configuring is bundled too.
# In: ACCEL_BUNDLE_LIBACCEL (the library file), ACCEL_BUNDLE_SONAME, ACCEL_BUNDLE_BENCH.

set(_prefix "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
file(MAKE_DIRECTORY "${_prefix}/lib" "${_prefix}/bin")
get_filename_component(_libdir "${ACCEL_BUNDLE_LIBACCEL}" DIRECTORY)
file(GLOB _plugins "${_libdir}/libaccel-backend-*.so")
file(GLOB _mpi "${_libdir}/libaccel_mpi.so.[0-9]")

# Copies `from` to `to` (a symlink's target: a SONAME link becomes a file of
# its own) and sets its runtime path, where it has one, to `rpath`.
function(_bundle from to rpath)
  message(STATUS "Installing: ${to}")
  file(COPY_FILE "${from}" "${to}")
  file(READ_ELF "${to}" RUNPATH _runpath RPATH _rpath)
  if(_runpath OR _rpath)
    file(RPATH_SET FILE "${to}" NEW_RPATH "${rpath}")
  endif()
endfunction()

_bundle("${ACCEL_BUNDLE_LIBACCEL}" "${_prefix}/lib/${ACCEL_BUNDLE_SONAME}" "$ORIGIN")
foreach(_lib ${_plugins} ${_mpi})
  get_filename_component(_name "${_lib}" NAME)
  _bundle("${_lib}" "${_prefix}/lib/${_name}" "$ORIGIN")
endforeach()
_bundle("${ACCEL_BUNDLE_BENCH}" "${_prefix}/bin/accel-bench" "$ORIGIN/../lib")
file(CHMOD "${_prefix}/bin/accel-bench" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
     WORLD_READ WORLD_EXECUTE)
