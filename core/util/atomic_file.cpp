#include "util/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace stepscope {

void writeFileAtomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    if (target.has_parent_path()) {
        fs::create_directories(target.parent_path());
    }
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    {
        std::FILE* file = std::fopen(temporary.c_str(), "wb");
        if (!file) {
            throw std::runtime_error("cannot write '" + temporary + "': " + std::strerror(errno));
        }
        const bool written =
            std::fwrite(contents.data(), 1, contents.size(), file) == contents.size() &&
            std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0;
        const int savedErrno = errno;
        std::fclose(file);
        if (!written) {
            std::remove(temporary.c_str());
            throw std::runtime_error("cannot write '" + temporary +
                                     "': " + std::strerror(savedErrno));
        }
    }
    std::error_code error;
    fs::rename(temporary, target, error);
    if (error) {
        std::remove(temporary.c_str());
        throw std::runtime_error("cannot rename '" + temporary + "' to '" + path +
                                 "': " + error.message());
    }
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open '" + path + "'");
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

}  // namespace stepscope
