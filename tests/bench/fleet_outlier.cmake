# cmake -DBENCH=accel-bench -DWORK=dir -P fleet_outlier.cmake
# `accel-bench fleet` on a fleet file made up here: three ranks on one kind of
# GPU (10, 11 and 18 ms: rank 2 is 1.71x the median of its siblings, an
# outlier) and a fourth device of another name, slower still but with no
# sibling (not judged). Then rank 2 at 12 ms (1.14x: no outlier).
file(MAKE_DIRECTORY ${WORK})
# Kernel times (10 + rank) ms x factor: ranks 0 and 1 factor 1 (10, 11 ms),
# rank 2 `slow_tenths`/10, rank 3 ("Other GPU") 3.
function(fleet_file path slow_tenths)
  set(rows "")
  foreach(rank 0 1 2 3)
    set(name "Same GPU")
    set(f10 10)
    if(rank EQUAL 2)
      set(f10 ${slow_tenths})
    elseif(rank EQUAL 3)
      set(name "Other GPU")
      set(f10 30)
    endif()
    math(EXPR t10 "(10 + ${rank}) * ${f10}")  # hundredths of a ms
    math(EXPR whole "${t10} / 10")
    math(EXPR frac "${t10} % 10")
    foreach(op add matmul)
      string(APPEND rows "{\"rank\":${rank},\"host\":\"node${rank}\",\"backend\":\"cuda\",\"device\":\"${name}\","
             "\"selector\":\"cuda:0\",\"op\":\"${op}\",\"shape\":\"1000\",\"path\":\"native\",\"pass\":true,"
             "\"kernel_ms\":{\"median\":${whole}.${frac}}},")
    endforeach()
  endforeach()
  string(REGEX REPLACE ",$" "" rows "${rows}")
  file(WRITE ${path} "{\"accel_version\":\"test\",\"rows\":[${rows}]}")
endfunction()

fleet_file(${WORK}/slow.json 15)
execute_process(COMMAND ${BENCH} fleet ${WORK}/slow.json OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "accel-bench fleet exited ${rc} with an outlier in the file; expected 1")
endif()
# Rank 2 at 18 ms against its siblings' median (10 + 11) / 2 = 10.5: 1.71x.
if(NOT out MATCHES "OUTLIER: rank 2 on host node2, cuda:0 \\(Same GPU\\): 1.71x the kernel time of its 2 same-named")
  message(FATAL_ERROR "rank 2 is not named as the outlier")
endif()
string(REGEX MATCHALL "OUTLIER: rank" named "${out}")
list(LENGTH named n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "${n} outliers named; only rank 2 is one (rank 3 has no sibling)")
endif()

fleet_file(${WORK}/fine.json 10)
execute_process(COMMAND ${BENCH} fleet ${WORK}/fine.json OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0 OR out MATCHES "OUTLIER")
  message(FATAL_ERROR "rank 2 at 1.14x its siblings (exit ${rc}) must not be an outlier")
endif()
message(STATUS "the 1.71x device is named, the 1.14x one is not")
