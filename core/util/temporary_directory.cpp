#include "util/temporary_directory.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <stdexcept>

namespace stepscope {

namespace {

namespace fs = std::filesystem;

constexpr const char* kOwnerFile = ".owner";

// nftw rather than std::filesystem::remove_all: the LibTorch wheel's
// libtorch.so exports its own remove_all, which the dynamic linker may
// bind here, and that one crashes.
void removeTree(const fs::path& path) {
    ::nftw(
        path.c_str(),
        [](const char* entry, const struct stat*, int, struct FTW*) { return ::remove(entry); }, 16,
        FTW_DEPTH | FTW_PHYS);
}

// The lock that says this process still uses `directory`: made under
// another name, locked, then renamed, so that no other process ever finds
// the lock file unlocked while its maker lives. -1 where it cannot be made
// (the directory is then never taken for stale).
int lockOwner(const fs::path& directory) {
    const std::string making = (directory / ".owner.making").string();
    const int descriptor =
        ::open(making.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (descriptor < 0) {
        return -1;
    }
    if (::flock(descriptor, LOCK_EX) != 0 ||
        ::rename(making.c_str(), (directory / kOwnerFile).c_str()) != 0) {
        ::close(descriptor);
        return -1;
    }
    return descriptor;
}

// Whether `directory`'s maker has ended: its lock file is there and nobody holds it.
bool ownerGone(const fs::path& directory) {
    const int descriptor =
        ::open((directory / kOwnerFile).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (descriptor < 0) {
        return false;
    }
    const bool gone = ::flock(descriptor, LOCK_EX | LOCK_NB) == 0;
    ::close(descriptor);
    return gone;
}

}  // namespace

int removeStaleTemporaryDirectories(const fs::path& parent, const std::string& prefix) {
    const std::string start = prefix + "-";
    const size_t length = start.size() + 6;  // mkdtemp's XXXXXX
    int removed = 0;
    std::error_code error;
    for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        std::error_code typeError;
        if (name.size() != length || name.rfind(start, 0) != 0 || !it->is_directory(typeError) ||
            it->is_symlink(typeError) || ::access(it->path().c_str(), W_OK) != 0 ||
            !ownerGone(it->path())) {
            continue;
        }
        removeTree(it->path());
        ++removed;
    }
    return removed;
}

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
    const fs::path parent = fs::temp_directory_path();
    removeStaleTemporaryDirectories(parent, prefix);
    std::string pattern = (parent / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) {
        throw std::runtime_error("cannot make a temporary directory in " + parent.string());
    }
    path_ = pattern;
    owner_ = lockOwner(path_);
}

TemporaryDirectory::~TemporaryDirectory() {
    removeTree(path_);  // the lock held until the last file is gone
    if (owner_ >= 0) {
        ::close(owner_);
    }
}

}  // namespace stepscope
