// Fuzzes accel::ops::parse_path_choice (ACCEL_OP_PATH) with any text: it is
// accepted exactly when, without surrounding blanks and ignoring case, it is
// empty, "auto", "native" or "vendor", and refused otherwise with
// accel::InvalidArgument (a short, one-line message).
#include "fuzz.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <cctype>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    // The oracle: the accepted spelling, or "?" for none.
    std::string word;
    const auto b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
    if (b != std::string::npos)
        for (char c : text.substr(b, e - b + 1)) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    using accel::ops::PathChoice;
    const bool valid = word.empty() || word == "auto" || word == "native" || word == "vendor";
    PathChoice got;
    try {
        got = accel::ops::parse_path_choice(text);
    } catch (const accel::InvalidArgument& err) {
        ACCEL_FUZZ_CHECK(!valid);
        ACCEL_FUZZ_CHECK_MESSAGE(err.what());
        return 0;
    }
    ACCEL_FUZZ_CHECK(valid);
    ACCEL_FUZZ_CHECK(got == (word == "native"   ? PathChoice::native
                             : word == "vendor" ? PathChoice::vendor
                                                : PathChoice::automatic));
    return 0;
}
