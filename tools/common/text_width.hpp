// Text for a terminal of a given width, shared by the tools' help, tables and
// reports: the width to keep within, a UTF-8 text's columns, and lines broken
// at spaces. Header-only, no dependencies beyond the C++ and POSIX libraries.
#pragma once

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tool_cli {

/// The width, in columns, that a tool's help and default tables keep within:
/// $COLUMNS when it holds a number of at least 40 (a shell's or the user's
/// choice), else the terminal's width when stdout is a terminal (at least
/// 40), else 100. Thread-safe (reads the environment once per call).
inline std::size_t output_width() {
    if (const char* c = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const unsigned long v = std::strtoul(c, &end, 10);
        if (end != c && *end == '\0' && v >= 40 && v <= 100000) return v;
    }
    winsize w{};
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
    return 100;
}

/// Columns `s` takes on a terminal: its UTF-8 code points (each counted one
/// column wide, as the arrows, dashes and signs accel prints are).
inline std::size_t text_columns(const std::string& s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

/// `text` with every line longer than `width` columns broken at spaces into
/// lines of at most `width` (a word longer than a line stays whole on its
/// own). A continuation line is indented as far as the broken line's text
/// started, plus `hang` columns: past its leading blanks, or, for a
/// "  --name   text" line of a help, at the column where the text after the
/// name's run of blanks begins (no hang there). Lines within `width` are kept
/// as they are.
inline std::string wrap_lines(const std::string& text, std::size_t width, std::size_t hang = 0) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        const bool newline = end != std::string::npos;
        if (!newline) end = text.size();
        std::string line = text.substr(start, end - start);
        start = end + 1;
        if (text_columns(line) <= width) {
            out += line + (newline ? "\n" : "");
            continue;
        }
        std::size_t indent = line.find_first_not_of(' ');
        const std::size_t first = indent;
        const std::size_t gap = line.find("  ", indent);
        if (gap != std::string::npos && line.find_first_not_of(' ', gap) != std::string::npos &&
            line.find_first_not_of(' ', gap) < width / 2)
            indent = line.find_first_not_of(' ', gap);
        const std::size_t continued = indent == first && indent + hang < width / 2 ? indent + hang : indent;
        std::string current = line.substr(0, indent);
        std::size_t columns = text_columns(current);
        bool first_word = true;
        std::size_t pos = indent;
        while (pos < line.size()) {
            std::size_t word_end = line.find(' ', pos);
            if (word_end == std::string::npos) word_end = line.size();
            const std::string word = line.substr(pos, word_end - pos);
            const std::size_t w = text_columns(word);
            if (!first_word && columns + 1 + w > width) {
                out += current + "\n";
                current = std::string(continued, ' ') + word;
                columns = continued + w;
            } else {
                current += (first_word ? "" : " ") + word;
                columns += (first_word ? 0 : 1) + w;
            }
            first_word = false;
            pos = line.find_first_not_of(' ', word_end);
            if (pos == std::string::npos) break;
        }
        out += current + (newline ? "\n" : "");
    }
    return out;
}

}  // namespace tool_cli
