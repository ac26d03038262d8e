#include "util/zip_directory.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace stepscope {

namespace {

// The most a central directory may take in memory to be read at all.
constexpr uint64_t kMaxDirectoryBytes = uint64_t(1) << 30;
constexpr uint32_t kEndSignature = 0x06054b50;      // "PK\5\6"
constexpr uint32_t kLocatorSignature = 0x07064b50;  // zip64 locator, "PK\6\7"
constexpr uint32_t kEnd64Signature = 0x06064b50;    // zip64 end record, "PK\6\6"
constexpr uint32_t kEntrySignature = 0x02014b50;    // "PK\1\2"

// Little-endian integers at `at` of `bytes`, which the caller bounds.
uint64_t little(const std::string& bytes, size_t at, size_t width) {
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) {
        value |= uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    }
    return value;
}

[[noreturn]] void broken(const std::string& what) {
    throw std::runtime_error("not a readable zip archive: " + what);
}

std::string readAt(std::ifstream& in, uint64_t offset, uint64_t count) {
    std::string bytes(count, '\0');
    in.seekg(std::streamoff(offset));
    if (!in.read(bytes.data(), std::streamsize(count))) {
        broken("cannot read " + std::to_string(count) + " bytes at " + std::to_string(offset));
    }
    return bytes;
}

struct Directory {
    uint64_t entries = 0;
    uint64_t bytes = 0;
    uint64_t offset = 0;
};

// The end-of-central-directory record (and its zip64 form, where there is one).
Directory findDirectory(std::ifstream& in, uint64_t fileBytes) {
    const uint64_t tailBytes = std::min<uint64_t>(fileBytes, 22 + 65535 + 20);
    const std::string tail = readAt(in, fileBytes - tailBytes, tailBytes);
    size_t at = tail.size() < 22 ? std::string::npos : tail.size() - 22;
    while (at != std::string::npos && little(tail, at, 4) != kEndSignature) {
        at = at == 0 ? std::string::npos : at - 1;
    }
    if (at == std::string::npos) {
        broken("no end of central directory");
    }
    Directory directory{little(tail, at + 10, 2), little(tail, at + 12, 4),
                        little(tail, at + 16, 4)};
    if (at >= 20 && little(tail, at - 20, 4) == kLocatorSignature) {
        const uint64_t end64 = little(tail, at - 20 + 8, 8);
        if (end64 > fileBytes || fileBytes - end64 < 56) {
            broken("the zip64 end record lies past the file's end");
        }
        const std::string record = readAt(in, end64, 56);
        if (little(record, 0, 4) != kEnd64Signature) {
            broken("no zip64 end record where its locator points");
        }
        directory = {little(record, 32, 8), little(record, 40, 8), little(record, 48, 8)};
    }
    if (directory.offset > fileBytes || directory.bytes > fileBytes - directory.offset) {
        broken("the central directory lies past the file's end");
    }
    if (directory.bytes > kMaxDirectoryBytes) {
        broken("a central directory of " + std::to_string(directory.bytes) + " bytes");
    }
    return directory;
}

// The zip64 extra field's sizes, for those the entry marks 0xFFFFFFFF.
void readZip64Sizes(const std::string& extra, ZipEntry& entry) {
    for (size_t at = 0; at + 4 <= extra.size();) {
        const uint64_t id = little(extra, at, 2);
        const uint64_t length = little(extra, at + 2, 2);
        if (at + 4 + length > extra.size()) {
            broken("entry '" + entry.name + "': an extra field past its end");
        }
        if (id == 0x0001) {
            size_t field = at + 4;
            for (uint64_t* size : {&entry.size, &entry.compressedSize}) {
                if (*size == 0xFFFFFFFF) {
                    if (field + 8 > at + 4 + length) {
                        broken("entry '" + entry.name + "': a zip64 field too short");
                    }
                    *size = little(extra, field, 8);
                    field += 8;
                }
            }
        }
        at += 4 + length;
    }
}

}  // namespace

std::vector<ZipEntry> readZipDirectory(const std::string& path, size_t maxEntries) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(0, std::ios::end);
    const std::streamoff end = in.tellg();
    if (!in || end < 0) {
        broken("cannot read it");
    }
    const Directory directory = findDirectory(in, uint64_t(end));
    if (directory.entries > maxEntries) {
        broken("more than " + std::to_string(maxEntries) + " entries");
    }
    const std::string bytes = readAt(in, directory.offset, directory.bytes);
    std::vector<ZipEntry> entries;
    size_t at = 0;
    for (uint64_t i = 0; i < directory.entries; ++i) {
        if (at + 46 > bytes.size() || little(bytes, at, 4) != kEntrySignature) {
            broken("entry " + std::to_string(i) + " of the central directory is cut short");
        }
        const size_t nameBytes = little(bytes, at + 28, 2);
        const size_t extraBytes = little(bytes, at + 30, 2);
        const size_t commentBytes = little(bytes, at + 32, 2);
        if (at + 46 + nameBytes + extraBytes + commentBytes > bytes.size()) {
            broken("entry " + std::to_string(i) + " of the central directory is cut short");
        }
        ZipEntry entry;
        entry.name = bytes.substr(at + 46, nameBytes);
        entry.method = uint16_t(little(bytes, at + 10, 2));
        entry.compressedSize = little(bytes, at + 20, 4);
        entry.size = little(bytes, at + 24, 4);
        readZip64Sizes(bytes.substr(at + 46 + nameBytes, extraBytes), entry);
        entries.push_back(std::move(entry));
        at += 46 + nameBytes + extraBytes + commentBytes;
    }
    return entries;
}

std::string zipEntryProblem(const ZipEntry& entry, uint64_t fileBytes) {
    const std::string sizes = std::to_string(entry.size) + " bytes from " +
                              std::to_string(entry.compressedSize) + " compressed";
    if (entry.method != 0 && entry.method != 8) {
        return "compressed with method " + std::to_string(entry.method) +
               " (torch.save stores its entries; a zip reader inflates only deflate)";
    }
    if (entry.compressedSize > fileBytes) {
        return "declares " + std::to_string(entry.compressedSize) + " compressed bytes in a " +
               std::to_string(fileBytes) + "-byte file";
    }
    if (entry.method == 0 && entry.size != entry.compressedSize) {
        return "stored (not compressed), yet declares " + sizes;
    }
    // 1 KiB of slack for the stream's own blocks around a tiny entry.
    if (entry.method == 8 && entry.size / kMaxDeflateRatio > entry.compressedSize + 1024) {
        return "declares " + sizes + ": more than deflate can make (at most " +
               std::to_string(kMaxDeflateRatio) + " to 1)";
    }
    return {};
}

}  // namespace stepscope
