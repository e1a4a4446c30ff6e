# cmake -DMPIRUN=... -DMLP=mlp_train -DCHECK=accel-mlp-parity -DRANKS=P -DBACKENDS=host,opencl -DWORK=dir
#       -P mlp_parity.cmake
# Data-parallel mlp_train on P ranks (one backend each, dealt by rank) against
# one process on host with the same global batch; accel-mlp-parity compares
# the loss of every epoch (tolerance and why: mlp_parity.cpp).
string(REPLACE "|" ";" mpirun "${MPIRUN}")
file(MAKE_DIRECTORY ${WORK})
set(args --epochs 30 --batch 40 --format json)
execute_process(COMMAND ${MLP} --backends host ${args} OUTPUT_FILE ${WORK}/one.json RESULT_VARIABLE rc1)
execute_process(COMMAND ${mpirun} -n ${RANKS} ${MLP} --backends ${BACKENDS} ${args} OUTPUT_FILE ${WORK}/many.json
                ERROR_VARIABLE err RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  file(READ ${WORK}/many.json many)
  message(FATAL_ERROR "mlp_train exited ${rc1} (1 process) / ${rc2} (${RANKS} ranks):\n${many}\n${err}")
endif()
execute_process(COMMAND ${CHECK} ${WORK}/one.json ${WORK}/many.json ${RANKS} ${BACKENDS} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the ${RANKS}-rank loss curve does not match the single process's")
endif()
