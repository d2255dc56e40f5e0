# Every outside dependency comes from Debian bookworm's packages (hack/setup.sh installs them).
find_package(absl CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(simdjson CONFIG REQUIRED)
find_package(RapidJSON CONFIG REQUIRED)
find_package(Threads REQUIRED)
# The Placement API (proto/): protoc and libprotobuf, then gRPC's own config, which also needs
# protobuf-compiler-grpc for grpc_cpp_plugin (without that package gRPC's CMake config fails).
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
if(PHALANX_BUILD_BENCHMARKS)
  find_package(benchmark CONFIG REQUIRED)
endif()
