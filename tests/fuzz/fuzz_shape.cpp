// Fuzzes accel::Shape (and Tensor's use of it) with any list of dimensions:
// a shape is refused with accel::InvalidArgument exactly when its rank is not
// 1 or 2 or its byte count in the widest dtype (elements × 8, f64) does not
// fit a size_t; an accepted
// one reports its dimensions, element count and text faithfully.
#include "fuzz.hpp"
#include "values.hpp"

#include <accel/error.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    std::vector<std::size_t> dims(in.ConsumeIntegralInRange<std::size_t>(0, 3));
    for (auto& d : dims) d = fuzzed_extent(in);
    // The oracle, in 128-bit arithmetic: (2^64)^2 · 8 does not fit, so stop
    // at the first partial product past size_t (a later 0 still makes it 0).
    unsigned __int128 bytes = sizeof(double);
    bool overflow = false, empty = false;
    for (std::size_t d : dims) {
        empty = empty || d == 0;
        if (!overflow) bytes *= d;
        overflow = overflow || bytes > SIZE_MAX;
    }
    const bool valid = (dims.size() == 1 || dims.size() == 2) && (empty || !overflow);
    try {
        const accel::Shape s(dims);
        ACCEL_FUZZ_CHECK(valid);
        ACCEL_FUZZ_CHECK(s.rank() == dims.size() && s.dims() == dims);
        ACCEL_FUZZ_CHECK(s.elements() == (empty ? 0 : static_cast<std::size_t>(bytes / sizeof(double))));
        ACCEL_FUZZ_CHECK(s.cols() == dims.back() && s.rows() == (dims.size() == 2 ? dims[0] : 1));
        std::string text = "[";
        for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
        ACCEL_FUZZ_CHECK(s.to_string() == text + "]");
        try {
            accel::Tensor t(nullptr, s);  // no device: refused once the byte count is known
            ACCEL_FUZZ_CHECK(!"a tensor without a device was made");
        } catch (const accel::InvalidArgument& e) {
            ACCEL_FUZZ_CHECK_MESSAGE(e.what());
        }
    } catch (const accel::InvalidArgument& e) {
        ACCEL_FUZZ_CHECK(!valid);
        ACCEL_FUZZ_CHECK_MESSAGE(e.what());
    }
    return 0;
}
