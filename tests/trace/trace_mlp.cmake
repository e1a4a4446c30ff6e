# cmake -DMLP=mlp_train -DCHECK=accel-trace-check -DWORK=dir -DBACKEND=opencl -P trace_mlp.cmake
# ACCEL_TRACE=t.json mlp_train --backends BACKEND --epochs 2, then the file
# validated: the format, device times, and ops with the model's shapes
# (30 -> 10 -> 1, batch 40: W1 has 300 parameters).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(ENV{ACCEL_TRACE} ${WORK}/t.json)
execute_process(COMMAND ${MLP} --backends ${BACKEND} --epochs 2 OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mlp_train exited ${rc}:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CHECK} ${WORK}/t.json --device-times
                --op "adam_step p[300] grad[300] m[300] v[300] -> p[300] m[300] v[300]"
                --op "bce_with_logits_backward z[40] t[40] -> dz[40]"
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the trace mlp_train wrote is not valid")
endif()
