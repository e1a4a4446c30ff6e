# cmake -DBENCH=accel-bench -DCHECK=accel-trace-check -DWORK=dir -P trace_bench.cmake
# accel-bench --trace FILE on the host backend: the file is a valid trace
# holding the benchmark's add and matmul calls.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${BENCH} --quick --backends host --ops add,matmul --add-sizes 1000 --matmul-sizes 32
                        --paths native --trace ${WORK}/bench.json
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "accel-bench --trace exited ${rc}:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CHECK} ${WORK}/bench.json --device-times --op "add a[1000] b[1000] -> c[1000]"
                        --op "matmul a[32,32] b[32,32] -> c[32,32]"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "accel-bench's trace is not valid or lacks its ops")
endif()
