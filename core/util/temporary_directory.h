#pragma once

#include <filesystem>
#include <string>

namespace stepscope {

// A new private directory under the system's temporary directory, removed
// with everything in it when this goes out of scope. Throws
// std::runtime_error when it cannot be made.
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
};

}  // namespace stepscope
