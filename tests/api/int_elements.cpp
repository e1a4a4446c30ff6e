// Must not compile: int is not a tensor element type. The test
// (tests/CMakeLists.txt, api.rejects_unsupported_element_type) expects the
// compiler's message to name the supported types.
#include <accel/accel.hpp>

int main() {
    auto dev = accel::open_device("host");
    auto t = accel::Tensor::from_host(dev, {2}, std::vector<int>{1, 2});
    return static_cast<int>(t.elements());
}
