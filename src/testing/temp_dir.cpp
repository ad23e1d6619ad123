#include "zklock/testing/process.hpp"

#include "testing/posix_io.hpp"

#include <cstdlib>

namespace zklock::testing {

TempDir::TempDir(const std::string& prefix) {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    std::string templ = std::filesystem::absolute(base / (prefix + "XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr) posix_io::throw_errno(errno, "TempDir: mkdtemp " + templ);
    path_ = templ;
}

TempDir::~TempDir() { remove(); }

TempDir::TempDir(TempDir&& other) noexcept
    : path_(std::exchange(other.path_, {})), keep_(std::exchange(other.keep_, false)) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
    if (this != &other) {
        remove();
        path_ = std::exchange(other.path_, {});
        keep_ = std::exchange(other.keep_, false);
    }
    return *this;
}

void TempDir::remove() noexcept {
    if (!path_.empty() && !keep_) {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    path_.clear();
}

const std::filesystem::path& TempDir::path() const noexcept { return path_; }

void TempDir::keep(bool keep) noexcept { keep_ = keep; }

bool TempDir::kept() const noexcept { return keep_; }

}  // namespace zklock::testing
