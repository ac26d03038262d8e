#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace stepscope {

// A path that names what StepScope does not write over: a device, a FIFO, a
// socket or a folder (or a symbolic link that leads to one, or round in a
// circle). Bad input, not a failure: the message names the path and what it is.
class OutputPathError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Writes to a temporary file beside the file `path` names, then renames it
// over that file, so a reader never sees a half-written file. A symbolic link
// is written through: its target is replaced (atomically, the temporary file
// beside the target) and the link stays. Throws OutputPathError where `path`
// names a device, FIFO, socket or folder (which a rename would replace:
// `--out /dev/null` as root), std::runtime_error on any other failure.
void writeFileAtomically(const std::string& path, const std::string& contents);

// Why writeFileAtomically(path, …) would fail, asked before long work makes
// what goes there: `path` names a device, FIFO, socket or folder, or the
// nearest folder above the file it names that exists takes no new file (a
// probe file is made there and removed). nullopt where it can be written.
std::optional<std::string> whyCannotWriteFile(const std::string& path);

// What a file of `type` is, for messages: "a FIFO", "a character device",
// "a folder", "a regular file".
std::string fileTypeName(std::filesystem::file_type type);

// Why `path` cannot be read as a file: it does not exist, or is (or its
// links lead to) a folder, FIFO, socket or device. A FIFO or a device can
// block a reader forever or never end (/dev/zero); every reader of a file a
// user names asks this before opening it. nullopt for a regular file.
std::optional<std::string> whyNotARegularFile(const std::string& path);

// The whole of the regular file `path`; throws std::runtime_error naming it
// where it cannot be opened or is not a regular file (whyNotARegularFile).
std::string readFile(const std::string& path);

}  // namespace stepscope
