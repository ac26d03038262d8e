#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace stepscope {

namespace {

namespace fs = std::filesystem;

// Linux gives up on a path after 40 links (ELOOP); so do we.
constexpr int kMaxLinks = 40;

// The file a write to `path` lands in: `path`, or where its symbolic links
// lead (a link's relative target is relative to the link's folder).
fs::path writeTarget(const std::string& path) {
    fs::path target(path);
    for (int links = 0;; ++links) {
        std::error_code error;
        if (fs::symlink_status(target, error).type() != fs::file_type::symlink) {
            return target;
        }
        if (links == kMaxLinks) {
            throw OutputPathError("'" + path + "' is a symbolic link that leads round in a circle");
        }
        const fs::path next = fs::read_symlink(target, error);
        if (error) {
            throw std::runtime_error("cannot read the link '" + target.string() +
                                     "': " + error.message());
        }
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
}

// Why `target` (where `path` leads) is not written over; nullopt where it is
// a regular file or not there yet.
std::optional<std::string> refusedTarget(const std::string& path, const fs::path& target) {
    std::error_code error;
    const fs::file_status status = fs::symlink_status(target, error);
    if (error || !fs::exists(status) || fs::is_regular_file(status)) {
        return std::nullopt;
    }
    const std::string named = target == fs::path(path)
                                  ? "'" + path + "' is "
                                  : "'" + path + "' leads to '" + target.string() + "', ";
    return named + fileTypeName(status.type()) +
           (fs::is_directory(status) ? "; name the file to write"
                                     : ", not a file to write; StepScope writes only regular "
                                       "files (through a symbolic link, the file it leads to)");
}

// The temporary file beside the target, made here and nowhere else: not
// through a link someone left under its name.
int openTemporary(const std::string& temporary) {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int descriptor = ::open(temporary.c_str(), flags, 0666);
    if (descriptor < 0 && errno == EEXIST) {
        ::unlink(temporary.c_str());  // left by a killed process that had this pid
        descriptor = ::open(temporary.c_str(), flags, 0666);
    }
    if (descriptor < 0) {
        throw std::runtime_error("cannot write '" + temporary + "': " + std::strerror(errno));
    }
    return descriptor;
}

// All of `contents` to `descriptor`, then to the disk; errno says why not.
bool writeAll(int descriptor, const std::string& contents) {
    size_t written = 0;
    while (written < contents.size()) {
        const ssize_t now =
            ::write(descriptor, contents.data() + written, contents.size() - written);
        if (now < 0 && errno == EINTR) {
            continue;
        }
        if (now <= 0) {
            return false;
        }
        written += size_t(now);
    }
    return ::fsync(descriptor) == 0;
}

}  // namespace

std::string fileTypeName(fs::file_type type) {
    switch (type) {
        case fs::file_type::regular:
            return "a regular file";
        case fs::file_type::directory:
            return "a folder";
        case fs::file_type::symlink:
            return "a symbolic link";
        case fs::file_type::fifo:
            return "a FIFO (named pipe)";
        case fs::file_type::socket:
            return "a socket";
        case fs::file_type::character:
            return "a character device";
        case fs::file_type::block:
            return "a block device";
        case fs::file_type::not_found:
            return "missing";
        default:
            return "not a regular file";
    }
}

void writeFileAtomically(const std::string& path, const std::string& contents) {
    const fs::path target = writeTarget(path);
    if (const auto refused = refusedTarget(path, target)) {
        throw OutputPathError(*refused);
    }
    if (target.has_parent_path()) {
        fs::create_directories(target.parent_path());
    }
    const std::string temporary = target.string() + ".tmp." + std::to_string(::getpid());
    const int descriptor = openTemporary(temporary);
    const bool written = writeAll(descriptor, contents);
    const int savedErrno = errno;
    const bool closed = ::close(descriptor) == 0;
    if (!written || !closed) {
        ::unlink(temporary.c_str());
        throw std::runtime_error("cannot write '" + temporary +
                                 "': " + std::strerror(written ? errno : savedErrno));
    }
    std::error_code error;
    fs::rename(temporary, target, error);
    if (error) {
        ::unlink(temporary.c_str());
        throw std::runtime_error("cannot rename '" + temporary + "' to '" + target.string() +
                                 "': " + error.message());
    }
}

std::optional<std::string> whyCannotWriteFile(const std::string& path) {
    if (path.empty()) {
        return "'' is no file; name the file to write";
    }
    fs::path target;
    try {
        target = writeTarget(path);
    } catch (const std::exception& refused) {
        return refused.what();
    }
    if (const auto refused = refusedTarget(path, target)) {
        return refused;
    }
    // The nearest folder that exists: writeFileAtomically makes the ones below it.
    std::error_code error;
    fs::path folder = target.parent_path();
    while (!folder.empty() && !fs::exists(folder, error)) {
        folder = folder.parent_path();
    }
    if (folder.empty()) {
        folder = ".";
    }
    if (!fs::is_directory(folder, error)) {
        std::ostringstream message;  // (not operator+: GCC 12 warns falsely on it here)
        message << "'" << folder.string() << "' above '" << path << "' is a file, not a folder";
        return message.str();
    }
    std::string probe = (folder / ".stepscope-write-probe.XXXXXX").string();
    const int descriptor = ::mkstemp(probe.data());
    if (descriptor < 0) {
        std::ostringstream message;
        message << "cannot write in the folder '" << folder.string()
                << "': " << std::strerror(errno);
        return message.str();
    }
    ::close(descriptor);
    std::remove(probe.c_str());
    return std::nullopt;
}

std::optional<std::string> whyNotARegularFile(const std::string& path) {
    std::error_code error;
    const fs::file_status status = fs::status(path, error);  // links followed
    if (status.type() == fs::file_type::not_found) {
        return "'" + path + "' does not exist";
    }
    if (status.type() == fs::file_type::none) {
        return "'" + path + "' cannot be read: " + error.message();
    }
    if (fs::is_regular_file(status)) {
        return std::nullopt;
    }
    return "'" + path + "' is " + fileTypeName(status.type()) + ", not a file to read";
}

std::string readFile(const std::string& path) {
    std::error_code error;
    if (const auto why = whyNotARegularFile(path); why && fs::exists(path, error)) {
        throw std::runtime_error(*why);  // a FIFO would block the open below
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open '" + path + "': " + std::strerror(errno));
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

}  // namespace stepscope
