# cmake -DFILES="a;b" [-DMUST_HAVE="c"] -P no_mpi.cmake
# Fails when any of FILES depends on an MPI library (libmpi*, libopen-pal,
# libopen-rte, libpmix), directly or through what it loads (ldd). MUST_HAVE
# lists files that must depend on libmpi (accel_mpi): proof that the check
# would see MPI where it is.
find_program(LDD ldd REQUIRED)
function(mpi_deps file out)
  execute_process(COMMAND ${LDD} ${file} OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ldd ${file} failed")
  endif()
  string(REGEX MATCHALL "(libmpi[^ \t\n]*|libopen-pal[^ \t\n]*|libopen-rte[^ \t\n]*|libpmix[^ \t\n]*)" found "${deps}")
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
foreach(f IN LISTS FILES)
  mpi_deps(${f} found)
  if(found)
    message(FATAL_ERROR "${f} depends on MPI (${found}); only accel_mpi and the programs using it may")
  endif()
  message(STATUS "${f}: no MPI library among its dependencies")
endforeach()
foreach(f IN LISTS MUST_HAVE)
  mpi_deps(${f} found)
  if(NOT found)
    message(FATAL_ERROR "${f} should depend on libmpi but ldd shows none: the check cannot see MPI")
  endif()
  message(STATUS "${f}: depends on ${found}, as it should")
endforeach()
