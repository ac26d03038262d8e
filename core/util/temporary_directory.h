#pragma once

#include <filesystem>
#include <string>

namespace stepscope {

// A new private directory under the system's temporary directory, removed
// with everything in it when this goes out of scope. Throws
// std::runtime_error when it cannot be made.
//
// A process killed with SIGKILL runs no destructor: its directory stays. So
// each directory holds a lock for as long as its maker lives (flock on
// PREFIX-XXXXXX/.owner, which the kernel lets go when the process ends),
// and making one first removes the PREFIX-XXXXXX directories whose lock
// nobody holds: those of dead processes. A directory without the lock file
// (one being made, or made before there was one) is left alone.
class TemporaryDirectory {
public:
    explicit TemporaryDirectory(const std::string& prefix = "stepscope");
    ~TemporaryDirectory();
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

    const std::filesystem::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
    int owner_ = -1;  // the locked .owner, held until the directory is gone
};

// Removes `parent`/PREFIX-XXXXXX directories whose maker has ended (see
// TemporaryDirectory); returns how many. TemporaryDirectory calls it.
int removeStaleTemporaryDirectories(const std::filesystem::path& parent, const std::string& prefix);

}  // namespace stepscope
