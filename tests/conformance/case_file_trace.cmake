# cmake -DMLP=mlp_train -DCONFORMANCE=accel-conformance -DWORK=dir -P case_file_trace.cmake
# The trace the --case-file tests run: mlp_train (30 -> 10 -> 1, batch 40)
# for one epoch on host with ACCEL_TRACE, the vendor path forced, so that the
# trace holds every kind of composed call (dense and matmul composed from
# gemm and bias_activation, dense_backward around them, bce_with_logits_loss)
# with their kernels inside. Then --write-case-file: the case file must hold
# the program's own calls, none of the kernels inside them, and read back as
# the same cases.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(ENV{ACCEL_TRACE} ${WORK}/mlp.json)
set(ENV{ACCEL_OP_PATH} vendor)
execute_process(COMMAND ${MLP} --backends host --epochs 1 OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
unset(ENV{ACCEL_TRACE})
unset(ENV{ACCEL_OP_PATH})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mlp_train exited ${rc}:\n${out}\n${err}")
endif()

execute_process(COMMAND ${CONFORMANCE} --case-file ${WORK}/mlp.json --write-case-file ${WORK}/mlp.cases
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "wrote [0-9]+ case\\(s\\), the distinct calls of [0-9]+ call\\(s\\) in .* \\([1-9][0-9]* kernel call\\(s\\) inside composed calls left out\\)")
  message(FATAL_ERROR "--write-case-file exited ${rc}")
endif()
file(STRINGS ${WORK}/mlp.cases lines REGEX "^[^#]")
string(REGEX REPLACE " *#[^;]*" "" cases "${lines}")  # the cases without their comments
string(REPLACE ";" "\n" listing "${cases}")
message("the cases:\n${listing}")
# The model's calls, once each ...
foreach(want
    "dense f32 x[40,30] w[10,30] bias[10] -> y[40,10] activation=relu"
    "dense f32 x[40,10] w[1,10] bias[1] -> y[40,1] activation=none"
    "bce_with_logits_loss f32 z[40] t[40] -> loss[]"
    "bce_with_logits_backward f32 z[40] t[40] -> dz[40]"
    "dense_backward f32 x[40,10] w[1,10] y[40,1] dy[40,1] -> dx[40,10] dw[1,10] db[1] activation=none"
    "dense_backward f32 x[40,30] w[10,30] y[40,10] dy[40,10] -> dw[10,30] db[10] activation=relu"
    "adam_step f32 p[300] grad[300] m[300] v[300] -> p[300] m[300] v[300]")
  list(FIND cases "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the case file lacks '${want}'")
  endif()
endforeach()
# ... and none of the kernels the front-end composes them from.
foreach(kernel gemm bias_activation matmul column_sum relu_backward bce_with_logits)
  foreach(c IN LISTS cases)
    if(c MATCHES "^${kernel} ")
      message(FATAL_ERROR "'${c}' is a kernel inside a composed call, checked a second time as a case of its own")
    endif()
  endforeach()
endforeach()

# The case file reads back as the same cases.
execute_process(COMMAND ${CONFORMANCE} --case-file ${WORK}/mlp.cases --write-case-file ${WORK}/again.cases
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(STRINGS ${WORK}/again.cases again REGEX "^[^#]")
string(REGEX REPLACE " *#[^;]*" "" again "${again}")
if(NOT rc EQUAL 0 OR NOT again STREQUAL cases)
  message(FATAL_ERROR "the case file did not read back as its cases (exit ${rc}):\n${out}${err}\n${again}")
endif()
list(LENGTH cases n)
message(STATUS "${n} distinct calls of mlp_train in ${WORK}/mlp.cases")
