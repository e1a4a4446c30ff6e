# cmake -DFUZZER=<target> -DSEEDS=<seed folder> -DWORK=<folder> -DSECONDS=<n> -P run.cmake
# Fuzzes for SECONDS on a fresh copy of the seeds in WORK; any crash, sanitizer
# report, failed invariant or input slower than 5 s fails the test, and the
# input that did it is left in WORK as crash-*, timeout-* or leak-*.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus)
file(GLOB seeds ${SEEDS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=5 -rss_limit_mb=2048 -max_len=8192
                        -print_final_stats=1 -artifact_prefix=${WORK}/ ${WORK}/corpus
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB found ${WORK}/crash-* ${WORK}/timeout-* ${WORK}/leak-* ${WORK}/oom-*)
  message(FATAL_ERROR "${FUZZER} failed (${rc}); reproduce with: ${FUZZER} ${found}")
endif()
