# cmake -DMLP=<mlp_train> -P first_epoch.cmake
# mlp_train for 3 epochs on host reports the first epoch apart from the
# steady ones (epochs 2..3: their median and range), in the text and in the
# JSON; the mean over every epoch keeps its name (ms_per_epoch).
execute_process(COMMAND ${MLP} --backends host --epochs 3 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(number "[0-9]+\\.[0-9]+")
if(NOT rc EQUAL 0
   OR NOT out MATCHES "first epoch ${number} ms, then ${number} ms/epoch \\(median of epochs 2\\.\\.3, ${number}\\.\\.${number}\\)"
   OR NOT out MATCHES "1st ms +ms/epoch +min\\.\\.max")
  message(FATAL_ERROR "mlp_train --epochs 3 exited ${rc}; expected its first epoch apart from the median of "
                      "epochs 2..3 (and the table's 1st ms, ms/epoch, min..max):\n${out}${err}")
endif()
execute_process(COMMAND ${MLP} --backends host --epochs 3 --format json RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mlp_train --format json exited ${rc}:\n${out}${err}")
endif()
string(JSON first GET "${out}" results 0 first_epoch_ms)
string(JSON median GET "${out}" results 0 epoch_ms median)
string(JSON lo GET "${out}" results 0 epoch_ms min)
string(JSON hi GET "${out}" results 0 epoch_ms max)
string(JSON steady GET "${out}" results 0 epoch_ms epochs)
string(JSON mean GET "${out}" results 0 ms_per_epoch)
if(NOT first GREATER 0 OR NOT median GREATER 0 OR lo GREATER median OR median GREATER hi OR NOT steady EQUAL 2
   OR NOT mean GREATER 0)
  message(FATAL_ERROR "first_epoch_ms ${first}, epoch_ms median ${median} (${lo}..${hi}) over ${steady} epochs, "
                      "ms_per_epoch ${mean}: expected positive times, min <= median <= max, 2 steady epochs:\n${out}")
endif()
message(STATUS "first epoch ${first} ms, then ${median} ms/epoch (${lo}..${hi}); mean ${mean}")
