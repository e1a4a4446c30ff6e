# cmake -DMPIRUN=... -DMLP=mlp_train -DCHECK=accel-trace-check -DWORK=dir -P trace_ranks.cmake
# Data-parallel mlp_train on 2 ranks with ACCEL_TRACE=t.json: t.rank0.json
# and t.rank1.json, valid, each rank in its own processes.
string(REPLACE "|" ";" mpirun "${MPIRUN}")
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${mpirun} -n 2 -x ACCEL_TRACE=${WORK}/t.json ${MLP} --backends host --epochs 2
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mlp_train on 2 ranks exited ${rc}:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CHECK} ${WORK}/t.rank0.json ${WORK}/t.rank1.json --ranks OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the per-rank traces are not valid, or not one per rank")
endif()
