// The OS account a server's programs run as (ServerProcess::run_as()): this
// process's own, or, when it runs as root, a named account reached through
// setpriv. PostgreSQL and MariaDB refuse to run as root.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <sys/types.h>

namespace zklock::testing::detail {

class ServerAccount {
public:
    /// When this process runs as root: `os_user`, who is given `directory`
    /// (chown, mode 0755); otherwise this process's own account. `who` names
    /// the server in errors. Throws std::runtime_error when there is no such
    /// user, std::system_error when the directory cannot be given to it.
    ServerAccount(const std::string& who, std::string os_user, std::filesystem::path directory);

    /// `argv` as the account runs it: as it is, or behind `setpriv --reuid
    /// --regid --init-groups --pdeathsig keep --`. setpriv execs the program
    /// (same pid); a uid change clears the parent-death signal, and
    /// --pdeathsig keep sets it again afterwards.
    [[nodiscard]] std::vector<std::string> command(std::vector<std::string> argv) const;
    /// The account's ids, for files made for it: uid_t(-1) and gid_t(-1) when
    /// it is this process's own.
    [[nodiscard]] uid_t uid() const noexcept { return uid_; }
    [[nodiscard]] gid_t gid() const noexcept { return gid_; }
    /// " (hint: ...)" when the account is another user who cannot enter every
    /// parent of the directory (others' x bit or ownership; groups are not
    /// considered), "" otherwise: for the message of a failed start.
    [[nodiscard]] std::string reach_hint() const;

private:
    std::string os_user_;
    std::filesystem::path directory_;
    uid_t uid_ = uid_t(-1);
    gid_t gid_ = gid_t(-1);
};

}  // namespace zklock::testing::detail
