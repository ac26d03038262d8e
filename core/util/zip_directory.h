#pragma once

// The central directory of a zip archive (torch.save's container), read
// from the file itself: what each entry declares before anything of it is
// inflated. Readers check these sizes against the file, against what
// deflate can produce and against memory before a zip library allocates
// what an entry claims (docs/hostile-files.md).

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

struct ZipEntry {
    std::string name;
    uint16_t method = 0;  // 0 stored, 8 deflated
    uint64_t compressedSize = 0;
    uint64_t size = 0;  // inflated, as declared
};

// Deflate turns at most 1 compressed byte into 1,032 (a 258-byte match per
// 2 bits, about): a larger declared ratio is a lie.
inline constexpr uint64_t kMaxDeflateRatio = 1032;

// The entries of the archive at `path`, as its central directory declares
// them (zip64 too). Throws std::runtime_error saying what is wrong, without
// the path: no end-of-directory record, a directory past the file's end,
// more than `maxEntries` entries, a truncated entry.
std::vector<ZipEntry> readZipDirectory(const std::string& path, size_t maxEntries);

// Why `entry` cannot be what it declares, of an archive of `fileBytes`
// bytes: a method other than stored or deflated, a stored entry whose two
// sizes differ, compressed bytes past the file's end, or more inflated
// bytes than deflate makes from the compressed ones. Empty when it can be.
std::string zipEntryProblem(const ZipEntry& entry, uint64_t fileBytes);

}  // namespace stepscope
