# Shared build helpers for accel's targets.

# Warnings used on every accel target (-Wall -Wextra, optionally -Werror).
function(accel_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
    if(ACCEL_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
endfunction()

# accel_add_backend(NAME src...): the plugin libaccel-backend-NAME.so, beside
# libaccel in the build tree and on install.
function(accel_add_backend name)
  add_library(accel-backend-${name} MODULE ${ARGN})
  target_link_libraries(accel-backend-${name} PRIVATE accel)
  target_include_directories(accel-backend-${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(accel-backend-${name} PROPERTIES PREFIX "lib" CXX_VISIBILITY_PRESET hidden
                        INSTALL_RPATH "$ORIGIN")
  accel_warnings(accel-backend-${name})
  install(TARGETS accel-backend-${name} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set_property(GLOBAL APPEND PROPERTY ACCEL_BACKENDS_BUILT ${name})  # read by the tests
endfunction()

# accel_embed_text(OUT_CPP SYMBOL FILE): generates OUT_CPP defining
# `extern const char SYMBOL[]` with FILE's bytes (rebuilt when FILE changes).
function(accel_embed_text out_cpp symbol file)
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out_cpp} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedText.cmake
    DEPENDS ${file} ${PROJECT_SOURCE_DIR}/cmake/EmbedText.cmake
    COMMENT "Embedding ${file}")
endfunction()

# accel_backend_unavailable(NAME WHY): called by a backend's CMakeLists when
# its toolkit is missing. ACCEL_WITH_<NAME>=ON makes that an error; AUTO
# reports WHY, and the caller then return()s without building the plugin.
function(accel_backend_unavailable name why)
  string(TOUPPER ${name} up)
  if(ACCEL_WITH_${up} STREQUAL "ON")
    message(FATAL_ERROR "ACCEL_WITH_${up}=ON but ${why}")
  endif()
  message(STATUS "${name} backend not built: ${why}")
endfunction()

# accel_emulated_gpu_plugin(TARGET BACKEND SOURCES...): a GPU backend's
# plugin built as host C++ for the tests (the CUDA and the HIP emulation):
# its sources (the .cu kernel files among them, compiled as C++; the caller
# gives them the LANGUAGE CXX property, which is per directory) with
# ACCEL_CUDA_EMULATION, written as emulated-plugins/libaccel-backend-BACKEND.so,
# never installed. The caller adds its include folders.
function(accel_emulated_gpu_plugin target backend)
  add_library(${target} MODULE ${ARGN})
  target_compile_definitions(${target} PRIVATE ACCEL_CUDA_EMULATION
                             "ACCEL_GPU_ARCHS=\"none, the accel ${backend} emulation runs the kernels on the CPU\"")
  string(TOLOWER ${backend} name)
  # Eigen: the f16/bf16 bit conversions of the emulated cuda_fp16.h / cuda_bf16.h.
  target_link_libraries(${target} PRIVATE accel Threads::Threads Eigen3::Eigen)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME accel-backend-${name} PREFIX "lib"
                        CXX_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/emulated-plugins)
  accel_warnings(${target})
  # The kernels' `#pragma unroll` is nvcc's and hipcc's; GCC does not know it.
  target_compile_options(${target} PRIVATE -Wno-unknown-pragmas)
endfunction()
