#include "util/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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

std::optional<std::string> whyCannotWriteFile(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code error;
    if (path.empty() || fs::is_directory(path, error)) {
        return "'" + path + "' is a folder; name the file to write";
    }
    // The nearest folder that exists: writeFileAtomically makes the ones below it.
    fs::path folder = fs::path(path).parent_path();
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
