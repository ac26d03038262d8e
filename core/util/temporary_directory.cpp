#include "util/temporary_directory.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <stdexcept>

namespace stepscope {

TemporaryDirectory::TemporaryDirectory(const std::string& prefix) {
    const std::filesystem::path parent = std::filesystem::temp_directory_path();
    std::string pattern = (parent / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) {
        throw std::runtime_error("cannot make a temporary directory in " + parent.string());
    }
    path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
    // nftw rather than std::filesystem::remove_all: the LibTorch wheel's
    // libtorch.so exports its own remove_all, which the dynamic linker may
    // bind here, and that one crashes.
    ::nftw(
        path_.c_str(),
        [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
        FTW_DEPTH | FTW_PHYS);
}

}  // namespace stepscope
