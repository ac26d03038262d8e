#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace stepscope {

// The few opcodes of Python's pickle protocol 2 that torch.save files and
// memory_viz snapshots need; values are written in the order Python reads them.
class PickleWriter {
public:
    void op(char opcode) { bytes_ += opcode; }
    void protocol() {
        op('\x80');
        bytes_ += '\x02';
    }
    void global(const char* module, const char* name) {
        op('c');
        bytes_ += std::string(module) + "\n" + name + "\n";
    }
    void text(const std::string& value) {
        op('X');
        little(static_cast<uint32_t>(value.size()));
        bytes_ += value;
    }
    void integer(int64_t value) {
        if (value >= INT32_MIN && value <= INT32_MAX) {
            op('J');
            little(static_cast<int32_t>(value));
        } else {
            op('\x8a');  // LONG1 with 8 bytes
            bytes_ += '\x08';
            little(value);
        }
    }
    void none() { op('N'); }
    void emptyDict() { op('}'); }
    void emptyList() { op(']'); }
    void mark() { op('('); }
    void setItems() { op('u'); }  // the key, value pairs since the mark into the dict
    void appends() { op('e'); }   // the values since the mark onto the list
    void stop() { op('.'); }
    void emptyOrderedDict() {
        global("collections", "OrderedDict");
        op(')');
        op('R');
    }
    const std::string& bytes() const { return bytes_; }

private:
    template <typename T>
    void little(T value) {
        char raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T));  // x86-64 and aarch64 are little-endian
        bytes_.append(raw, sizeof(T));
    }
    std::string bytes_;
};

}  // namespace stepscope
