# cmake -DPYTHON=<python3> -DSCRIPT=<mlp_vs_pytorch.py> -DBENCH=<accel-bench> -P mlp_vs_pytorch.cmake
# The comparison script on a tiny problem: exit 0 and accel's row in its
# table. Without PyTorch it prints accel's figures alone; with it, PyTorch's
# too, and a final loss that disagrees with accel's makes it exit 1.
execute_process(COMMAND ${PYTHON} ${SCRIPT} --bench ${BENCH} --backends host --hidden 16 --epochs 2 --rounds 1
                        --threads 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "30-16-1 b256 f32 +host:0 ")
  message(FATAL_ERROR "mlp_vs_pytorch.py exited '${rc}' (expected 0 and a line for host:0):\n${out}${err}")
endif()
if(err MATCHES "PyTorch is not installed")
  message(STATUS "PyTorch not installed: accel's figures only")
elseif(NOT out MATCHES " ok\n")
  message(FATAL_ERROR "PyTorch ran, but no line compares its loss with accel's:\n${out}${err}")
endif()
message(STATUS "${out}")
