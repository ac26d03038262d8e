#include "interop/torch_save_writer.h"

#include <caffe2/serialize/inline_container.h>

#include <cstring>

#include "interop/torch_storage_types.h"
#include "util/atomic_file.h"
#include "util/pickle_writer.h"

namespace stepscope {

namespace {

void writeIntTuple(PickleWriter& pickle, at::IntArrayRef values) {
    pickle.mark();
    for (int64_t v : values) {
        pickle.integer(v);
    }
    pickle.op('t');
}

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
        writeIntTuple(pickle, tensor.sizes());
        writeIntTuple(pickle, tensor.strides());
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
