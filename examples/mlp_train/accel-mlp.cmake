# accel-mlp: the MLP example's library (data set, model, training loop), used
# by mlp_train, `accel-bench mlp` and tests/training. Included by whichever of
# them is configured first (tools/ comes before examples/), defined once.
include_guard(GLOBAL)
find_package(nlohmann_json 3 REQUIRED)

add_library(accel-mlp STATIC ${CMAKE_CURRENT_LIST_DIR}/data.cpp ${CMAKE_CURRENT_LIST_DIR}/mlp.cpp)
target_include_directories(accel-mlp PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(accel-mlp PUBLIC accel::accel PRIVATE nlohmann_json::nlohmann_json)
target_compile_definitions(accel-mlp PRIVATE MLP_SOURCE_DATA="${PROJECT_SOURCE_DIR}/data/breast_cancer.csv")
accel_warnings(accel-mlp)
# Its data set, to <prefix>/share/accel (installed mlp_train and accel-bench mlp read it there).
install(FILES ${PROJECT_SOURCE_DIR}/data/breast_cancer.csv DESTINATION ${CMAKE_INSTALL_DATADIR}/accel)
