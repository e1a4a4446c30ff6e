// extract-snippets OUT_DIR DOC.md...
//
// Turns the docs into a project that builds against an installed accel:
// every ```cpp block becomes OUT_DIR/snippet_N.cpp (it must be a complete
// program: a block without `main` is an error naming its file and line),
// the first one the target `app` that the ```cmake blocks name, pasted
// verbatim into OUT_DIR/CMakeLists.txt after it. Also writes
// OUT_DIR/programs.txt (the targets, one per line) and OUT_DIR/flags.txt
// ("TOOL FLAG FILE:LINE" for every --flag on a line that names an installed
// tool), and checks that every ACCEL_ environment variable the docs set
// (NAME=value; not the CMake options, -DNAME=..., cmake.define.NAME=... or
// ACCEL_WITH_*) is a row of docs/environment.md's variables table. Exit status
// 1 on any error, each printed.
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Block {
    std::string lang, file, text;
    int line = 0;
};

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot be read");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: extract-snippets OUT_DIR DOC.md...\n";
        return 2;
    }
    const std::string out = argv[1];
    const std::vector<std::string> tools{"accel-bench", "accel-info", "accel-conformance"};
    const std::regex flag(R"((^|[\s`(])(--[a-z][a-z0-9-]*))"), variable(R"(ACCEL_[A-Z0-9_]*[A-Z0-9]=)");
    std::vector<Block> blocks;
    std::set<std::string> table_variables;
    std::vector<std::pair<std::string, std::string>> mentioned;  // variable, where
    std::ostringstream flags;
    int errors = 0;
    try {
        for (int a = 2; a < argc; ++a) {
            const std::string doc = argv[a];
            const auto lines = read_lines(doc);
            const std::string table_doc = "docs/environment.md";
            const bool readme = doc.size() >= table_doc.size() &&
                                doc.compare(doc.size() - table_doc.size(), table_doc.size(), table_doc) == 0;
            Block* open = nullptr;
            for (std::size_t i = 0; i < lines.size(); ++i) {
                const std::string& l = lines[i];
                const std::string where = doc + ":" + std::to_string(i + 1);
                if (l.rfind("```", 0) == 0) {
                    if (open) {
                        open = nullptr;
                    } else {
                        blocks.push_back({l.substr(3), doc, "", static_cast<int>(i + 1)});
                        open = &blocks.back();
                    }
                    continue;
                }
                if (open) {
                    open->text += l + "\n";
                } else if (readme && l.rfind("| `ACCEL_", 0) == 0) {
                    table_variables.insert(l.substr(3, l.find('`', 3) - 3));
                }
                // NAME=value, not a CMake option (-DNAME=..., pip's cmake.define.NAME=..., ACCEL_WITH_*):
                // an environment variable.
                for (std::sregex_iterator m(l.begin(), l.end(), variable), e; m != e; ++m) {
                    const std::string name = m->str().substr(0, m->length() - 1);
                    const auto preceded_by = [&](const std::string& s) {
                        return m->position() >= static_cast<std::ptrdiff_t>(s.size()) &&
                               l.compare(m->position() - s.size(), s.size(), s) == 0;
                    };
                    const bool cmake_option =
                        preceded_by("-D") || preceded_by("cmake.define.") || name.rfind("ACCEL_WITH_", 0) == 0;
                    if (!cmake_option) mentioned.emplace_back(name, where);
                }
                // The flags after a tool's name, up to the end of its command (&&, ;, a pipe).
                for (const auto& tool : tools) {
                    const auto at = l.find(tool);
                    if (at == std::string::npos) continue;
                    std::string args = l.substr(at + tool.size());
                    for (const char* end : {"&&", ";", " | "}) args = args.substr(0, args.find(end));
                    for (std::sregex_iterator m(args.begin(), args.end(), flag), e; m != e; ++m)
                        flags << tool << " " << (*m)[2].str() << " " << where << "\n";
                }
            }
        }
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    for (const auto& [name, where] : mentioned)
        if (!table_variables.count(name)) {
            std::cerr << where << ": " << name << " is not in docs/environment.md's table of variables\n";
            ++errors;
        }
    std::ofstream cmake(out + "/CMakeLists.txt"), programs(out + "/programs.txt");
    cmake << "cmake_minimum_required(VERSION 3.21)\nproject(accel_docs LANGUAGES CXX)\n";
    std::string cmake_blocks;
    for (const auto& b : blocks)
        if (b.lang == "cmake") cmake_blocks += b.text;
    int n = 0;
    for (const auto& b : blocks) {
        if (b.lang != "cpp") continue;
        if (b.text.find("int main(") == std::string::npos) {
            std::cerr << b.file << ":" << b.line << ": a cpp block that is not a complete program (no main); "
                      << "write it as one, so that it is compiled and run\n";
            ++errors;
            continue;
        }
        const std::string name = n == 0 ? "app" : "snippet_" + std::to_string(n);
        std::ofstream(out + "/" + name + ".cpp") << "// " << b.file << ":" << b.line << "\n" << b.text;
        cmake << "add_executable(" << name << " " << name << ".cpp)\n";
        if (n == 0) cmake << cmake_blocks;  // the docs' own CMake lines, for the target they call `app`
        else cmake << "target_link_libraries(" << name << " PRIVATE accel::accel)\n";
        programs << name << "\n";
        ++n;
    }
    if (n == 0) {
        std::cerr << "no cpp block found in the docs given\n";
        ++errors;
    }
    std::ofstream(out + "/flags.txt") << flags.str();
    return errors ? 1 : 0;
}
