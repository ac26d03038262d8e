// libFuzzer target for the torch.save format (issue 33): any bytes give a
// value or a std::runtime_error naming the file, never a crash, a hang or
// another exception. The pickle machine below it is compiled in too, run with
// torch.save's policy; fuzz_pickle_reader fuzzes the machine alone.
//
// An input that starts as a zip archive ("PK\3\4") is the file itself, which
// exercises the archive checks. Any other input is the pickle: it is put into
// a well-formed archive as data.pkl beside eight 256-byte storages (data/0 to
// data/7), so mutations reach the pickle and the tensors rebuilt from it
// rather than stopping at the zip's checksums. A 2-D int64 tensor is read as
// a token batch is. Seeds: make_torch_save_seeds.py.
#include <caffe2/serialize/inline_container.h>

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "interop/torch_save_reader.h"

using namespace stepscope;

namespace {

const std::string& scratchPath() {
    static const std::string path =
        "/tmp/fuzz_torch_save_" + std::to_string(static_cast<long>(getpid())) + ".pt";
    return path;
}

void writeArchive(const std::string& path, const uint8_t* pickle, size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    caffe2::serialize::PyTorchStreamWriter writer([&out](const void* data, size_t bytes) {
        out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
        return bytes;
    });
    writer.writeRecord("data.pkl", pickle, size);
    writer.writeRecord("byteorder", "little", 6);
    std::vector<uint8_t> storage(256);
    for (int key = 0; key < 8; ++key) {
        for (size_t i = 0; i < storage.size(); ++i) {
            storage[i] = static_cast<uint8_t>(i * 7 + static_cast<size_t>(key));
        }
        writer.writeRecord("data/" + std::to_string(key), storage.data(), storage.size());
    }
    writer.writeEndOfFile();
}

// What eval and run --tokens do with a token batch (model/evaluate.cpp's
// readTokenBatch): every id read, the batch made contiguous on the way to
// the model. A tensor never stands for more elements than its storage holds
// (issue 45: strides [0, 0] made 623 bytes a 21 GB batch), so this is bounded.
double touchTokens(const at::Tensor& tensor) {
    const auto stored = int64_t(tensor.storage().nbytes() / tensor.element_size());
    if (tensor.numel() > stored) {
        __builtin_trap();  // the reader let overlapping elements through
    }
    if (tensor.dim() != 2 || tensor.scalar_type() != at::kLong || tensor.numel() == 0) {
        return 0;
    }
    return double(tensor.min().item<int64_t>() % 97 + tensor.max().item<int64_t>() % 97) +
           double(tensor.contiguous().numel());
}

// Touches what a caller would: every tensor's values, every container's items.
double visit(const PyValue& root) {
    double seen = 0;
    std::vector<const PyValue*> pending{&root};
    size_t visits = 0;
    while (!pending.empty() && ++visits < 100000) {
        const PyValue* value = pending.back();
        pending.pop_back();
        seen += static_cast<double>(value->typeName().size());
        if (const at::Tensor* tensor = value->asTensor()) {
            seen += touchTokens(*tensor);
            if (tensor->numel() > 0 && tensor->numel() < (1 << 20)) {
                seen += tensor->to(at::kDouble).abs().sum().item<double>();
            }
        } else if (const auto* sequence = std::get_if<std::shared_ptr<PySequence>>(&value->value)) {
            for (const PyValue& item : (*sequence)->items) {
                pending.push_back(&item);
            }
        } else if (const PyDict* dict = value->asDict()) {
            for (const auto& [key, item] : dict->items) {
                pending.push_back(&key);
                pending.push_back(&item);
            }
        }
    }
    return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string& path = scratchPath();
    if (size >= 4 && std::string(reinterpret_cast<const char*>(data), 4) == "PK\x03\x04") {
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    } else {
        writeArchive(path, data, size);
    }
    try {
        volatile double sink = visit(readTorchSave(path));
        (void)sink;
    } catch (const std::runtime_error&) {
        // A refusal with its message: what a hostile file must get.
    }
    std::remove(path.c_str());
    return 0;
}
