#include "testing/server_account.hpp"

#include "testing/posix_io.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <utility>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock::testing::detail {

ServerAccount::ServerAccount(const std::string& who, std::string os_user, std::filesystem::path directory)
    : os_user_(std::move(os_user)), directory_(std::move(directory)) {
    if (::geteuid() != 0) return;
    std::array<char, 16384> buffer{};
    passwd pw{};
    passwd* found = nullptr;
    const int err = ::getpwnam_r(os_user_.c_str(), &pw, buffer.data(), buffer.size(), &found);
    if (found == nullptr) {
        throw std::runtime_error(who + ": running as root, but the user '" + os_user_ + "' to run it as does not exist" +
                                 (err != 0 ? std::string(": ") + std::strerror(err) : std::string()));
    }
    if (::chown(directory_.c_str(), pw.pw_uid, pw.pw_gid) != 0)
        posix_io::throw_errno(errno, who + ": chown " + directory_.string());
    if (::chmod(directory_.c_str(), 0755) != 0) posix_io::throw_errno(errno, who + ": chmod " + directory_.string());
    uid_ = pw.pw_uid;
    gid_ = pw.pw_gid;
}

std::vector<std::string> ServerAccount::command(std::vector<std::string> argv) const {
    if (uid_ == uid_t(-1)) return argv;
    std::vector<std::string> wrapped{"setpriv", "--reuid=" + std::to_string(uid_), "--regid=" + std::to_string(gid_),
                                     "--init-groups", "--pdeathsig", "keep", "--"};
    wrapped.insert(wrapped.end(), std::make_move_iterator(argv.begin()), std::make_move_iterator(argv.end()));
    return wrapped;
}

std::string ServerAccount::reach_hint() const {
    if (uid_ == uid_t(-1)) return "";
    for (auto p = directory_.parent_path(); !p.empty(); p = p.parent_path()) {
        struct stat st {};
        const bool enters = ::stat(p.c_str(), &st) == 0 &&
                            ((st.st_mode & S_IXOTH) != 0 || (st.st_uid == uid_ && (st.st_mode & S_IXUSR) != 0));
        if (!enters) {
            return " (hint: user '" + os_user_ + "' cannot enter every parent of " + directory_.string() +
                   "; set TMPDIR to a directory it can reach, e.g. /tmp)";
        }
        if (p == p.root_path()) break;
    }
    return "";
}

}  // namespace zklock::testing::detail
