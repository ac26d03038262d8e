#include "model/torch_save_writer.h"

#include <caffe2/serialize/inline_container.h>

#include <cstring>

#include "model/torch_storage_types.h"
#include "util/atomic_file.h"

namespace stepscope {

namespace {

class PickleWriter {
public:
    void op(char opcode) { bytes_ += opcode; }
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
    void intTuple(at::IntArrayRef values) {
        op('(');
        for (int64_t v : values) {
            integer(v);
        }
        op('t');
    }
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

}  // namespace

void writeTorchSaveStateDict(const std::string& path,
                             const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
    std::string archive;
    caffe2::serialize::PyTorchStreamWriter writer([&archive](const void* data, size_t size) {
        archive.append(static_cast<const char*>(data), size);
        return size;
    });

    PickleWriter pickle;
    pickle.op('\x80');
    pickle.op('\x02');  // protocol 2, as torch.save
    pickle.emptyOrderedDict();
    pickle.op('(');
    for (size_t i = 0; i < tensors.size(); ++i) {
        const at::Tensor tensor = tensors[i].second.detach().cpu().contiguous();
        const std::string key = std::to_string(i);
        writer.writeRecord("data/" + key, tensor.data_ptr(), tensor.nbytes());

        pickle.text(tensors[i].first);
        pickle.global("torch._utils", "_rebuild_tensor_v2");
        pickle.op('(');
        pickle.op('(');  // persistent id: ('storage', type, key, location, numel)
        pickle.text("storage");
        pickle.global("torch", storageTypeName(tensor.scalar_type()).c_str());
        pickle.text(key);
        pickle.text("cpu");
        pickle.integer(tensor.numel());
        pickle.op('t');
        pickle.op('Q');
        pickle.integer(0);  // storage offset
        pickle.intTuple(tensor.sizes());
        pickle.intTuple(tensor.strides());
        pickle.op('\x89');          // requires_grad = False
        pickle.emptyOrderedDict();  // backward hooks
        pickle.op('t');
        pickle.op('R');
    }
    pickle.op('u');
    pickle.op('.');
    writer.writeRecord("data.pkl", pickle.bytes().data(), pickle.bytes().size());
    writer.writeRecord("byteorder", "little", 6);
    writer.writeEndOfFile();
    writeFileAtomically(path, archive);
}

}  // namespace stepscope
