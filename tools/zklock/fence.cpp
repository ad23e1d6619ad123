// zklock fence check|write: a file or directory that refuses stale lock holders,
// for shell jobs run under `zklock run` ($ZKLOCK_FENCING_TOKEN).
//
// The token of RESOURCE is recorded beside it, in RESOURCE.zklock-fence (the
// decimal token and a newline), and only read or changed under flock(2) on that
// record, so concurrent writers are serialized. `write` copies stdin into a
// temporary file in RESOURCE's directory first (outside the lock), then, under
// the lock: refuses when the recorded token is newer; otherwise records the
// token (fdatasync) and renames the temporary file over RESOURCE (then fsyncs
// the directory). Recording before renaming means a crash in between leaves the
// old data under the new token: a stale writer is still refused. `check`
// records the token when it is current, so any older one is refused from then on.
#include "commands.hpp"

#include <zklock/fencing.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zklock::cli {
namespace {

namespace fs = std::filesystem;

inline constexpr int exit_stale = exit_lock_lost;  ///< 76: a newer token is recorded (the writer's lock was lost)
inline constexpr int exit_bad_record = 65;        ///< EX_DATAERR: the record holds no token
inline constexpr int exit_io = 74;                ///< EX_IOERR
inline constexpr const char* token_variable = "ZKLOCK_FENCING_TOKEN";
inline constexpr const char* record_suffix = ".zklock-fence";

struct fence_options {
    std::string token_text;  // empty: $ZKLOCK_FENCING_TOKEN
    std::string resource;
};

// Exits with a status and a message already printed.
struct failure {
    int status;
};

[[noreturn]] void fail(int status, const std::string& what) {
    notice(what);
    throw failure{status};
}

[[noreturn]] void fail_errno(const std::string& doing, int err = errno) {
    fail(exit_io, "cannot " + doing + ": " + std::strerror(err));
}

class descriptor {
public:
    explicit descriptor(int fd = -1) noexcept : fd_(fd) {}
    descriptor(descriptor&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    descriptor& operator=(descriptor&&) = delete;
    ~descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    int get() const noexcept { return fd_; }

private:
    int fd_;
};

std::int64_t token_of(const fence_options& o) {
    std::string text = o.token_text;
    if (text.empty()) {
        const char* env = std::getenv(token_variable);
        if (!env || !*env)
            fail(exit_usage, "no fencing token: give --token TOKEN, or run under `zklock run`, which sets " +
                                 std::string(token_variable));
        text = env;
    }
    std::string reason;
    const auto token = parse_fencing_token(text, &reason);
    if (!token) fail(exit_usage, reason + (o.token_text.empty() ? std::string(" (from $") + token_variable + ")" : ""));
    return *token;
}

fs::path resource_of(const fence_options& o) {
    std::string r = o.resource;
    while (r.size() > 1 && r.back() == '/') r.pop_back();
    if (r.empty() || r == "/" || r == "." || r == ".." || r.ends_with("/.") || r.ends_with("/.."))
        fail(exit_usage, "'" + o.resource + "' cannot be fenced: name a file or directory");
    return r;
}

bool write_all(int fd, const char* data, std::size_t n, off_t at = -1) {
    while (n > 0) {
        const ssize_t w = at < 0 ? ::write(fd, data, n) : ::pwrite(fd, data, n, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data += w;
        n -= static_cast<std::size_t>(w);
        if (at >= 0) at += w;
    }
    return true;
}

// The record, open and locked (LOCK_EX): created when missing. A record that
// was replaced or removed while we waited for the lock is opened again.
descriptor lock_record(const fs::path& record) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        descriptor fd(::open(record.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
        if (fd.get() < 0) fail_errno("open " + record.string());
        while (::flock(fd.get(), LOCK_EX) != 0)
            if (errno != EINTR) fail_errno("lock " + record.string());
        struct stat held {}, named {};
        if (::fstat(fd.get(), &held) != 0) fail_errno("stat " + record.string());
        if (::stat(record.c_str(), &named) == 0 && named.st_dev == held.st_dev && named.st_ino == held.st_ino)
            return fd;
    }
    fail(exit_io, "cannot lock " + record.string() + ": it keeps being replaced");
}

// The recorded token: nullopt when the record is empty (nothing recorded yet).
std::optional<std::int64_t> read_record(int fd, const fs::path& record, std::string& raw) {
    raw.clear();
    char buf[64];
    for (;;) {
        const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(raw.size()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail_errno("read " + record.string());
        if (n == 0) break;
        raw.append(buf, static_cast<std::size_t>(n));
        if (raw.size() > 64) break;
    }
    if (raw.empty()) return std::nullopt;
    std::string_view text(raw);
    if (text.ends_with('\n')) text.remove_suffix(1);
    std::string reason;
    const auto token = parse_fencing_token(text, &reason);
    if (!token)
        fail(exit_bad_record, record.string() + " holds no fencing token (" + reason +
                                  "); remove it only when no older lock holder can still write");
    return token;
}

bool store_record(int fd, std::int64_t token) {
    const std::string text = std::to_string(token) + "\n";
    return write_all(fd, text.data(), text.size(), 0) && ::ftruncate(fd, static_cast<off_t>(text.size())) == 0 &&
           ::fdatasync(fd) == 0;
}

[[noreturn]] void refuse(const fs::path& resource, std::int64_t token, std::int64_t stored) {
    fail(exit_stale, "refused: fencing token " + std::to_string(token) + " is older than " + std::to_string(stored) +
                         ", the token recorded for " + resource.string() +
                         " (a later lock holder has used it: this one's lock was lost)");
}

int check_command(const fence_options& o) {
    const auto token = token_of(o);
    const auto resource = resource_of(o);
    const fs::path record = resource.string() + record_suffix;
    const auto fd = lock_record(record);
    std::string raw;
    const auto stored = read_record(fd.get(), record, raw);
    const auto decision = fence_decide(token, stored);
    if (!decision.applied) refuse(resource, token, decision.stored_token);
    if (stored != token && !store_record(fd.get(), token)) fail_errno("record the token in " + record.string());
    return 0;
}

// A temporary file beside `resource`, with the mode `resource` has (or would
// get). Removed on destruction unless released.
class staged_file {
public:
    explicit staged_file(const fs::path& resource) {
        const auto dir = resource.has_parent_path() ? resource.parent_path() : fs::path(".");
        std::string pattern = (dir / ("." + resource.filename().string() + ".zklock-XXXXXX")).string();
        fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
        if (fd_ < 0) fail_errno("create a temporary file in " + dir.string());
        path_ = pattern;
    }
    /// Copies stdin into the file, gives it the mode and syncs it.
    void fill(const fs::path& resource) {
        struct stat existing {};
        mode_t mode = 0;
        if (::stat(resource.c_str(), &existing) == 0) {
            mode = existing.st_mode & 07777;
        } else {
            const mode_t mask = ::umask(0);
            ::umask(mask);
            mode = 0666 & ~mask;
        }
        if (::fchmod(fd_, mode) != 0) fail_errno("set the mode of " + path_.string());
        char buf[65536];
        for (;;) {
            const ssize_t n = ::read(0, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) fail_errno("read standard input");
            if (n == 0) break;
            if (!write_all(fd_, buf, static_cast<std::size_t>(n))) fail_errno("write " + path_.string());
        }
        if (::fsync(fd_) != 0) fail_errno("write " + path_.string());
    }
    ~staged_file() {
        if (fd_ >= 0) ::close(fd_);
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    const fs::path& path() const noexcept { return path_; }
    void release() noexcept { path_.clear(); }

private:
    int fd_ = -1;
    fs::path path_;
};

int write_command(const fence_options& o) {
    const auto token = token_of(o);
    const auto resource = resource_of(o);
    struct stat st {};
    if (::stat(resource.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        fail(exit_usage, resource.string() + " is a directory: fence write replaces a file (fence a directory with "
                                             "`zklock fence check` before writing into it)");
    const fs::path record = resource.string() + record_suffix;
    staged_file staged(resource);
    staged.fill(resource);  // stdin may be slow: read it before taking the lock
    {
        // The critical section: short, since a writer stopped inside it makes the others wait.
        const auto fd = lock_record(record);
        std::string before;
        const auto stored = read_record(fd.get(), record, before);
        const auto decision = fence_decide(token, stored);
        if (!decision.applied) refuse(resource, token, decision.stored_token);
        if (stored != token && !store_record(fd.get(), token)) fail_errno("record the token in " + record.string());
        if (::rename(staged.path().c_str(), resource.c_str()) != 0) {
            const int err = errno;
            // Nothing was written: put the old token back (best effort), so older holders are not refused for nothing.
            if (stored != token) {
                if (before.empty()) (void)!::ftruncate(fd.get(), 0);
                else (void)store_record(fd.get(), *stored);
            }
            fail_errno("replace " + resource.string(), err);
        }
        staged.release();
    }
    // Outside the lock: a crash before this sync can lose the rename, never the recorded token.
    const auto dir = resource.has_parent_path() ? resource.parent_path() : fs::path(".");
    const descriptor dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_fd.get() < 0 || ::fsync(dir_fd.get()) != 0) fail_errno("sync the directory " + dir.string());
    return 0;
}

int guarded(int (*command)(const fence_options&), const fence_options& o) {
    try {
        return command(o);
    } catch (const failure& f) {
        return f.status;
    }
}

} // namespace

void add_fence(CLI::App& app, int& exit_code) {
    auto* fence = app.add_subcommand("fence", "Fence a file or directory: refuse writers whose fencing token is stale");
    fence->require_subcommand(1);
    const char* footer =
        "TOKEN defaults to $ZKLOCK_FENCING_TOKEN, which `zklock run` gives its command. The token of RESOURCE is\n"
        "recorded in RESOURCE.zklock-fence beside it, changed only under flock(2): concurrent writers are\n"
        "serialized, and a token is current when it is >= the recorded one (equal: the same holder again).\n"
        "Tokens of one resource must come from one source (one ZooKeeper ensemble).\n"
        "Exit status: 0 done; 76 refused: a newer token is recorded (a later lock holder has written: this\n"
        "one's lock was lost), nothing written; 64 missing or invalid token, or a bad RESOURCE; 65 the record\n"
        "holds no token; 74 an I/O error.";
    auto add_common = [](CLI::App& cmd, fence_options& o) {
        cmd.add_option("-t,--token", o.token_text, "The writer's fencing token (default: $ZKLOCK_FENCING_TOKEN)")
            ->type_name("TOKEN");
    };

    auto c = std::make_shared<fence_options>();
    auto* check = fence->add_subcommand(
        "check", "Exit 0 when TOKEN is current for RESOURCE, and record it (older tokens are refused from then on)");
    check->footer(footer);
    add_common(*check, *c);
    check->add_option("RESOURCE", c->resource, "The fenced file or directory (it need not exist)")->required();
    check->callback([c, &exit_code] { exit_code = guarded(check_command, *c); });

    auto w = std::make_shared<fence_options>();
    auto* write = fence->add_subcommand(
        "write", "Replace FILE with stdin atomically (temporary file + rename) when TOKEN is current for it");
    write->footer(footer);
    add_common(*write, *w);
    write->add_option("FILE", w->resource, "The fenced file (created when missing)")->required();
    write->callback([w, &exit_code] { exit_code = guarded(write_command, *w); });
}

} // namespace zklock::cli
