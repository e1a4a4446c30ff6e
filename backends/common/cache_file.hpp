// A file of cached build results (compiled pipelines, program binaries) in
// accel's cache folder, shared by the backends that keep one: read as
// untrusted input (our header with a magic, the length and a checksum must
// all match, else it reads as empty), written whole or not at all (a
// temporary file renamed over the old one). Never throws (but keyed_path,
// for a bad ACCEL_CACHE_DIR): a cache that cannot be read or written costs
// compile time only.
//
// Keyed entries (built kernels: OpenCL binaries, SPIR-V compiled from GLSL)
// are named by a hash of their key and hold the key itself ahead of the
// result, compared whole on reading: a file of another key (a hash
// collision, a copy from another machine) is never used.
#pragma once

#include <accel/environment.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace accel {
namespace cache_file {

/// FNV-1a 64 of `n` bytes, never 0 (0 means "nothing").
inline std::uint64_t checksum(const unsigned char* p, std::size_t n) {
    std::uint64_t h = 1469598103934665603ull;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h | 1;
}

/// The file's header: magic (8 characters), bytes of data, checksum of the data.
struct Header {
    char magic[8];
    std::uint64_t bytes;
    std::uint64_t sum;
};

/// The data of the file at `path` written by write() with `magic`, or empty
/// when it is missing, of another magic, longer than `max_bytes`, truncated,
/// longer than its header says or failing its checksum.
inline std::vector<unsigned char> read(const std::string& path, const char (&magic)[9], std::uint64_t max_bytes) {
    std::vector<unsigned char> data;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return data;
    Header h{};
    if (std::fread(&h, sizeof h, 1, f) == 1 && std::memcmp(h.magic, magic, 8) == 0 && h.bytes <= max_bytes) {
        data.resize(static_cast<std::size_t>(h.bytes));
        if (std::fread(data.data(), 1, data.size(), f) != data.size() || std::fgetc(f) != EOF ||
            checksum(data.data(), data.size()) != h.sum)
            data.clear();
    }
    std::fclose(f);
    return data;
}

/// Writes `data` under `magic` to `path` (its folder made when missing),
/// whole or not at all.
inline void write(const std::string& path, const char (&magic)[9], const std::vector<unsigned char>& data) noexcept {
    try {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
        const std::string tmp = path + ".tmp." + std::to_string(::getpid());
        FILE* f = std::fopen(tmp.c_str(), "wb");
        if (!f) return;
        Header h{};
        std::memcpy(h.magic, magic, 8);
        h.bytes = data.size();
        h.sum = checksum(data.data(), data.size());
        const bool ok = std::fwrite(&h, sizeof h, 1, f) == 1 && std::fwrite(data.data(), 1, data.size(), f) == data.size();
        if (std::fclose(f) == 0 && ok) std::rename(tmp.c_str(), path.c_str());
        else std::remove(tmp.c_str());
    } catch (...) {
    }
}

/// ACCEL_CACHE_DIR/`folder`/<hash of key>.`ext`, or "" when no cache folder
/// is known. Throws InvalidArgument for a bad ACCEL_CACHE_DIR (env::cache_dir):
/// the user's setting, reported rather than ignored.
inline std::string keyed_path(const char* folder, const std::string& key, const char* ext) {
    const std::string dir = env::cache_dir();
    if (dir.empty()) return "";
    char name[24];
    std::snprintf(name, sizeof name, "%016llx.",
                  static_cast<unsigned long long>(checksum(reinterpret_cast<const unsigned char*>(key.data()), key.size())));
    return dir + "/" + folder + "/" + name + ext;
}

/// The result stored for `key` at `path` by write_keyed with `magic`, or
/// empty (no file, another key, a damaged file, or "" for path).
inline std::vector<unsigned char> read_keyed(const std::string& path, const char (&magic)[9], const std::string& key,
                                             std::uint64_t max_bytes) {
    if (path.empty()) return {};
    std::vector<unsigned char> data = read(path, magic, max_bytes);
    if (data.size() <= key.size() || std::memcmp(data.data(), key.data(), key.size()) != 0) return {};
    data.erase(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(key.size()));
    return data;
}

/// Writes `n` bytes of result for `key` to `path` (nothing for "" or n = 0).
inline void write_keyed(const std::string& path, const char (&magic)[9], const std::string& key,
                        const unsigned char* result, std::size_t n) noexcept {
    if (path.empty() || n == 0) return;
    try {
        std::vector<unsigned char> data(key.size() + n);
        std::memcpy(data.data(), key.data(), key.size());
        std::memcpy(data.data() + key.size(), result, n);
        write(path, magic, data);
    } catch (...) {  // no memory for the copy: not cached
    }
}

}  // namespace cache_file
}  // namespace accel
