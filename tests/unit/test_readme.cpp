// README.md's C++ snippets are the text of examples/readme/ (which the build
// compiles, and a test runs against a real server): each ```cpp block follows
// a `<!-- snippet: FILE NAME -->` line and shows, dedented, what FILE holds
// between `// [readme:NAME]` and `// [/readme:NAME]`. A ```cmake block after a
// `<!-- snippet: FILE -->` line (no NAME) is the whole of FILE (the first
// program's CMakeLists.txt, which the install_consumer test builds).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::filesystem::path source_dir = ZKLOCK_SOURCE_DIR;

std::vector<std::string> lines_of(const std::filesystem::path& p) {
    std::ifstream in(p);
    EXPECT_TRUE(in) << p;
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

// The region NAME of FILE, with the indentation its lines share removed.
std::string region(const std::string& file, const std::string& name) {
    const auto lines = lines_of(source_dir / file);
    std::vector<std::string> body;
    bool inside = false, found = false;
    for (const auto& l : lines) {
        if (l.find("// [readme:" + name + "]") != std::string::npos) { inside = found = true; continue; }
        if (l.find("// [/readme:" + name + "]") != std::string::npos) { inside = false; continue; }
        if (inside) body.push_back(l);
    }
    EXPECT_TRUE(found) << "no region " << name << " in " << file;
    std::size_t indent = std::string::npos;
    for (const auto& l : body)
        if (l.find_first_not_of(' ') != std::string::npos) indent = std::min(indent, l.find_first_not_of(' '));
    for (auto& l : body) l = l.size() > indent ? l.substr(indent) : std::string();
    return joined(body);
}

TEST(ReadmeTest, EveryCppSnippetIsTheTextOfACompiledExample) {
    const auto readme = lines_of(source_dir / "README.md");
    const std::string marker = "<!-- snippet: ";
    int snippets = 0;
    for (std::size_t i = 0; i < readme.size(); ++i) {
        if (readme[i] != "```cpp") continue;
        ASSERT_GT(i, 0u);
        const auto& before = readme[i - 1];
        ASSERT_EQ(before.rfind(marker, 0), 0u) << "README.md line " << i + 1 << ": a ```cpp block without "
                                               << marker << "FILE NAME -->";
        std::istringstream words(before.substr(marker.size()));
        std::string file, name;
        words >> file >> name;
        std::vector<std::string> block;
        std::size_t j = i + 1;
        for (; j < readme.size() && readme[j] != "```"; ++j) block.push_back(readme[j]);
        EXPECT_EQ(joined(block), region(file, name)) << "README.md line " << i + 1 << " (" << file << " " << name << ")";
        ++snippets;
        i = j;
    }
    EXPECT_GT(snippets, 0);
}

TEST(ReadmeTest, EveryMarkedCmakeBlockIsTheWholeFile) {
    const auto readme = lines_of(source_dir / "README.md");
    const std::string marker = "<!-- snippet: ";
    int blocks = 0;
    for (std::size_t i = 1; i < readme.size(); ++i) {
        if (readme[i] != "```cmake" || readme[i - 1].rfind(marker, 0) != 0) continue;
        std::istringstream words(readme[i - 1].substr(marker.size()));
        std::string file, name;
        words >> file >> name;
        EXPECT_EQ(name, "-->") << "README.md line " << i << ": a ```cmake snippet names a whole file, no region";
        std::vector<std::string> block;
        std::size_t j = i + 1;
        for (; j < readme.size() && readme[j] != "```"; ++j) block.push_back(readme[j]);
        EXPECT_EQ(joined(block), joined(lines_of(source_dir / file))) << "README.md line " << i + 1 << " (" << file << ")";
        ++blocks;
        i = j;
    }
    EXPECT_GT(blocks, 0);
}

} // namespace
