# cmake -DMLP=mlp_train -DREPLAY=accel-replay -DWORK=dir -P check_faulty.cmake
# (ACCEL_PLUGIN_PATH holds the `faulty` test backend.)
# 1. Uncorrupted, mlp_train on `faulty` passes ACCEL_CHECK=oracle.
# 2. With its 37th matmul corrupted, the check stops the run naming that call
#    and writes the call's operands.
# 3. accel-replay of that file: `faulty` (its first matmul corrupted) diverges,
#    host does not.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(ENV{ACCEL_CHECK} oracle)
set(ENV{ACCEL_CHECK_DIR} ${WORK})
execute_process(COMMAND ${MLP} --backends faulty --epochs 2 OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "uncorrupted, mlp_train on faulty should pass the check; it exited ${rc}:\n${out}\n${err}")
endif()

set(ENV{FAULTY_CORRUPT} matmul:37)
execute_process(COMMAND ${MLP} --backends faulty --epochs 2 OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("corrupted run (exit ${rc}):\n${err}")
if(rc EQUAL 0 OR NOT err MATCHES "accel check: op [0-9]+ on faulty:0 [^\n]*, call 37 of matmul: f32 native")
  message(FATAL_ERROR "the check did not name the 37th matmul:\n${out}\n${err}")
endif()
file(GLOB records ${WORK}/accel-check-faulty-0-op*-matmul.cbor)
list(LENGTH records count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one record of the matmul in ${WORK}, found: ${records}")
endif()

set(ENV{ACCEL_CHECK} "")
set(ENV{FAULTY_CORRUPT} matmul:1)
execute_process(COMMAND ${REPLAY} ${records} --backends host,faulty OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
message("accel-replay (exit ${rc}):\n${out}${err}")
if(NOT rc EQUAL 1 OR NOT out MATCHES "host:0 \\([^\n]*\\): NMSE [^\n]* ok" OR
   NOT out MATCHES "faulty:0 \\([^\n]*\\): NMSE [^\n]*DIVERGES" OR NOT out MATCHES "call 37 of matmul")
  message(FATAL_ERROR "accel-replay should reproduce the divergence on faulty and not on host")
endif()
