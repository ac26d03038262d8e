#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace stepscope {

// Reads the files Python's torch.save writes (the zip format, pickle protocol
// 2) into plain values. LibTorch's own torch::pickle_load turns every
// collections.OrderedDict into None, so it cannot read `torch.save(
// model.state_dict())`; this reader keeps dicts of any kind, rebuilds
// tensors from their storages, and stands in opaque placeholders for objects
// it has no use for (optimizer classes, argparse namespaces, ...). The
// pickle itself is read by the pickle machine (util/pickle_reader.h), which
// runs nothing; this layer builds values from its inert records.
struct PyValue;

struct PySequence {
    bool isTuple = false;
    std::vector<PyValue> items;
};

struct PyDict {
    std::vector<std::pair<PyValue, PyValue>> items;  // insertion order
};

struct PyGlobal {
    std::string module;
    std::string name;
};

struct PyOpaque {
    std::string type;  // "module.name" of what built it
};

struct PyValue {
    std::variant<std::monostate, bool, int64_t, double, std::string, at::Tensor,
                 std::shared_ptr<PySequence>, std::shared_ptr<PyDict>, PyGlobal, PyOpaque>
        value;

    bool isNone() const { return std::holds_alternative<std::monostate>(value); }
    const std::string* asString() const { return std::get_if<std::string>(&value); }
    const at::Tensor* asTensor() const { return std::get_if<at::Tensor>(&value); }
    const PyDict* asDict() const {
        auto* dict = std::get_if<std::shared_ptr<PyDict>>(&value);
        return dict ? dict->get() : nullptr;
    }
    std::string typeName() const;  // "dict", "tensor", "str", ... for messages
};

// What a torch.save file may take: every zip entry's declared size is
// checked before anything is inflated (deflate makes at most 1,032 bytes of
// one; small records and data.pkl have caps of their own), and each storage
// is read, only as many bytes as its tensor's element count says, into
// memory that is there.
struct TorchSaveLimits {
    // What this process may still take; nullopt: util/system_memory.h's measure.
    std::optional<int64_t> memoryRoomBytes;
};

// Throws std::runtime_error naming the file and what is wrong: the entry, or
// the tensor by where the file's value holds it ("tensor 'layers.0.w'"). A
// tensor's elements must not overlap (no stride 0 over a size > 1), so none
// stands for more elements than its storage holds.
PyValue readTorchSave(const std::string& path, const TorchSaveLimits& limits = {});

}  // namespace stepscope
