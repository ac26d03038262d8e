#include "interop/torch_save_reader.h"

#include <ATen/ops/empty.h>
#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "config/limits.h"
#include "interop/torch_storage_types.h"
#include "util/checked_math.h"
#include "util/pickle_reader.h"
#include "util/strings.h"
#include "util/system_memory.h"
#include "util/zip_directory.h"

namespace stepscope {

namespace {

using Fault = PickleError::Fault;

// Python's own pickler gives up near this depth (its recursion limit), so a
// deeper file was made by hand.
constexpr size_t kMaxDepth = 1000;

// What one pickled value becomes: a leaf (a scalar, a string, a global, a
// storage, a placeholder), a container, or one of the calls below.
enum class Role : uint8_t { Leaf, Container, Dict, Tensor, Parameter, TypeTag };

// The calls this reader rebuilds. Nothing is imported or called: the pickle
// machine keeps each REDUCE as a record, and any other (an optimizer's
// class, argparse.Namespace, numpy's arrays) stands as an opaque placeholder.
struct KnownGlobal {
    std::string_view module;
    std::string_view name;
    Role role;
};
constexpr KnownGlobal kKnownGlobals[] = {
    {"torch._utils", "_rebuild_tensor_v2", Role::Tensor},
    {"torch._utils", "_rebuild_tensor", Role::Tensor},
    {"torch._utils", "_rebuild_parameter", Role::Parameter},
    {"torch._utils", "_rebuild_parameter_with_state", Role::Parameter},
    {"torch.jit._pickle", "restore_type_tag", Role::TypeTag},  // LibTorch's pickle_save
    {"collections", "OrderedDict", Role::Dict},
    {"builtins", "dict", Role::Dict},
};

// torch.save's persistent ids are ('storage', torch.<Type>Storage, key,
// location, numel): checked for every id in the file before anything is
// built, so a file naming a storage this reader cannot load is refused even
// where nothing reaches it.
void checkStorageId(const PickleDocument& doc, PickleRef id) {
    const PickleKind kind = doc.kind(id);
    const bool sequence = kind == PickleKind::Tuple || kind == PickleKind::List;
    const auto items = sequence ? doc.items(id) : std::span<const PickleRef>();
    if (items.size() < 5 || doc.kind(items[2]) != PickleKind::String) {
        throw std::runtime_error("unexpected persistent id (not a torch storage)");
    }
    if (doc.kind(items[1]) != PickleKind::Global) {
        throw std::runtime_error("storage without a type");
    }
    storageDtype(std::string(doc.globalName(items[1])));  // throws for a type it cannot load
}

PicklePolicy torchSavePolicy() {
    PicklePolicy policy;
    // A checkpoint names the class of whatever it holds; every global stays an
    // inert record (kKnownGlobals are rebuilt, the rest are placeholders).
    policy.allowGlobal = [](std::string_view, std::string_view) { return true; };
    policy.checkPersistentId = checkStorageId;
    // torch.save pickles with protocol 2, whose writer pops a MARK with
    // POP_MARK: a POP past one is the file's error, not Python's protocol 0.
    policy.popMayDropMark = false;
    return policy;
}

// How this reader has always worded these faults of the machine; users (and
// tests) know these messages.
struct Wording {
    Fault fault;
    std::string_view opcode;
    const char* text;
};
constexpr Wording kWordings[] = {
    {Fault::Underflow, "STOP", "pickle ends with an empty stack"},
    {Fault::Underflow, "DUP", "pickle duplicates the top of an empty stack"},
    {Fault::Underflow, "PUT", "PUT with an empty stack"},
    {Fault::Underflow, "BINPUT", "PUT with an empty stack"},
    {Fault::Underflow, "LONG_BINPUT", "PUT with an empty stack"},
    {Fault::Underflow, "MEMOIZE", "PUT with an empty stack"},
    {Fault::Underflow, "APPEND", "APPEND without a list"},
    {Fault::Underflow, "APPENDS", "APPEND without a list"},
    {Fault::Underflow, "SETITEM", "SETITEMS without a dict"},
    {Fault::Underflow, "SETITEMS", "SETITEMS without a dict"},
    {Fault::Other, "STACK_GLOBAL", "STACK_GLOBAL without names"},
};

// One line for what the pickle machine refused, without the path (the
// caller adds it).
std::string pickleMessage(const PickleError& error) {
    const std::string at = std::to_string(error.offset);
    switch (error.reason) {
        case PickleError::Reason::Truncated:
            return "pickle is truncated";
        case PickleError::Reason::Refused:
            if (error.opcode == "BINPERSID" || error.opcode == "PERSID") {
                return error.detail;  // checkStorageId's own words
            }
            break;
        case PickleError::Reason::Malformed:
            for (const Wording& wording : kWordings) {
                if (wording.fault == error.fault && wording.opcode == error.opcode) {
                    return wording.text;
                }
            }
            if (error.fault == Fault::Underflow) {
                return "pickle pops an empty stack (stack underflow at byte " + at + ")";
            }
            if (error.fault == Fault::NoMark) {
                return "pickle has no MARK to pop to";
            }
            if (error.fault == Fault::NoMemo) {
                return "pickle refers to memo entry " + error.asked + " that was never stored";
            }
            if (error.opcode.starts_with("0x")) {
                return "unsupported pickle opcode " + error.opcode + " at byte " + at;
            }
            break;
        case PickleError::Reason::TooLarge:
        case PickleError::Reason::Stopped:  // no progress is asked for: never
            break;
    }
    return std::string("data.pkl: ") + error.what();
}

PickleDocument readDataPickle(std::string bytes) {
    try {
        return readPickle(std::move(bytes), torchSavePolicy());
    } catch (const PickleError& error) {
        throw std::runtime_error(pickleMessage(error));
    }
}

// "[1048576, 2049]": a size or stride list in messages.
std::string listText(const std::vector<int64_t>& values) {
    std::string text = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(values[i]);
    }
    return text + "]";
}

// Why a view of `sizes`, `strides` and `offset` cannot be read from a storage
// of `stored` elements as a tensor of distinct elements; empty when it can.
// ATen would accept a stride of 0, and a 623-byte file then stood for a
// [1048576, 2049] tensor that eval turned into 21 GB: the elements must not
// overlap, so a tensor never holds more elements than its storage.
std::string tensorLayoutProblem(const std::vector<int64_t>& sizes,
                                const std::vector<int64_t>& strides, int64_t offset,
                                int64_t stored) {
    const std::string layout = "shape " + listText(sizes) + " with strides " + listText(strides);
    if (sizes.size() != strides.size() || sizes.size() > 64) {
        return layout + ": the size and stride lists must be as long, at most 64";
    }
    if (offset < 0) {  // before the loop: a 0-d tensor has no dimension to check it in
        return layout + " and offset " + std::to_string(offset) + ": negative";
    }
    std::optional<int64_t> elements = 1, last = offset;  // the last element's index
    std::vector<std::pair<int64_t, int64_t>> dims;       // (stride, size) of each size > 1
    for (size_t d = 0; d < sizes.size(); ++d) {
        if (sizes[d] < 0 || strides[d] < 0) {
            return layout + " and offset " + std::to_string(offset) + ": negative";
        }
        elements = elements ? checkedMultiply(*elements, sizes[d]) : std::nullopt;
        const auto reach = sizes[d] > 0 ? checkedMultiply(sizes[d] - 1, strides[d]) : 0;
        last = last && reach ? checkedAdd(*last, *reach) : std::nullopt;
        if (sizes[d] > 1) {
            dims.emplace_back(strides[d], sizes[d]);
        }
    }
    if (!elements || *elements > kMaxTensorElements) {
        return layout + ": more than 2^50 elements";
    }
    if (*elements > 0 && (!last || *last >= stored)) {
        return layout + " and offset " + std::to_string(offset) + " reaches past its storage of " +
               std::to_string(stored) + " elements";
    }
    // Each dimension's stride must pass every offset the smaller ones reach.
    std::sort(dims.begin(), dims.end());
    int64_t reached = 0;
    for (const auto& [stride, size] : dims) {
        if (stride <= reached) {
            return layout + ": its elements overlap (" +
                   (stride == 0
                        ? "a stride of 0 repeats one value " + std::to_string(size) + " times"
                        : "a stride of " + std::to_string(stride) +
                              " revisits what smaller strides reach") +
                   "); StepScope reads tensors of distinct elements: save t.contiguous()";
        }
        reached += (size - 1) * stride;  // ≤ last, checked above
    }
    return {};
}

// Builds the PyValue the pickle's root stands for, in two passes over the
// pickle machine's records. First every storage, tensor and parameter the
// file names, in the file's order, whether the root reaches it or not (so a
// broken one is refused as when this reader rebuilt them while reading).
// Then the containers from the root, with a stack of its own: values may nest
// 200,000 deep and share or hold each other through the memo. Each is built
// once, after what it holds, so a value the memo shares stays one value; the
// result is refused when its containers nest deeper than kMaxDepth or one
// holds itself, so whoever frees it later recurses at most kMaxDepth levels.
class ValueBuilder {
public:
    ValueBuilder(const PickleDocument& doc, caffe2::serialize::PyTorchStreamReader& archive,
                 int64_t memoryRoom)
        : doc_(doc), archive_(archive), memoryRoom_(memoryRoom) {}

    PyValue build() {
        for (PickleRef ref = 0; ref < doc_.valueCount(); ++ref) {
            rebuildTensor(ref);
        }
        for (const PickleRef id : bareStorages_) {  // storages no tensor views, as values
            if (!tensors_.contains(id)) {
                tensors_[id] = loadStorage(id, "a storage");
            }
        }
        const PickleRef root = doc_.root();
        if (enter(root)) {  // a leaf: no frame to walk
            return valueOf(root);
        }
        while (!path_.empty()) {
            Frame& frame = path_.back();
            if (frame.next == frame.children.size()) {
                finish();
                continue;
            }
            const PickleRef child = frame.children[frame.next++];
            const size_t parent = path_.size() - 1;
            if (const std::optional<size_t> height = enter(child)) {  // may grow path_
                path_[parent].tallest = std::max(path_[parent].tallest, *height);
            }
        }
        return built_.at(root).value;
    }

private:
    struct Frame {
        PickleRef ref;
        Role role;
        std::span<const PickleRef> children;
        size_t next = 0;
        size_t tallest = 0;  // of the children built so far
    };
    struct Built {
        PyValue value;
        size_t height = 0;  // containers nested, this one included
        bool done = false;  // false while it is on the path
    };

    [[noreturn]] static void tooDeep() {
        throw std::runtime_error("values nest deeper than " + std::to_string(kMaxDepth) +
                                 " levels (Python's pickler stops near 1000)");
    }

    Role roleOf(PickleRef ref) const {
        switch (doc_.kind(ref)) {
            case PickleKind::Tuple:
            case PickleKind::List:
            case PickleKind::Dict:
                return Role::Container;
            case PickleKind::Call:
                break;
            default:
                return Role::Leaf;
        }
        const PickleCall& call = doc_.call(ref);
        if (call.how != PickleCall::How::Reduce) {
            return Role::Leaf;  // a class made by NEWOBJ, INST or OBJ stays opaque
        }
        for (const KnownGlobal& known : kKnownGlobals) {
            if (doc_.globalModule(call.callable) == known.module &&
                doc_.globalName(call.callable) == known.name) {
                return known.role;
            }
        }
        return Role::Leaf;
    }

    std::string callName(PickleRef ref) const {
        const PickleRef callable = doc_.call(ref).callable;
        return std::string(doc_.globalModule(callable)) + "." +
               std::string(doc_.globalName(callable));
    }

    // The first pass, one value: a storage, a tensor or parameter rebuilt
    // from it, or a type tag around one, kept in tensors_. A value it refers
    // to comes earlier in the file, so it is done by then.
    void rebuildTensor(PickleRef ref) {
        const PickleKind kind = doc_.kind(ref);
        if (kind == PickleKind::BigInt) {
            throw std::runtime_error("integer too large");
        }
        if (kind == PickleKind::PersistentId) {
            bareStorages_.push_back(ref);  // loaded by the tensor that views it, else after
            return;
        }
        const Role role = roleOf(ref);
        if (role != Role::Tensor && role != Role::Parameter && role != Role::TypeTag) {
            return;
        }
        const auto args = doc_.items(doc_.call(ref).args);
        if (role == Role::Tensor) {
            tensors_[ref] = tensor(ref, args);
            return;
        }
        const auto found = args.empty() ? tensors_.end() : tensors_.find(args[0]);
        if (found != tensors_.end()) {
            tensors_[ref] = found->second;
        } else if (role == Role::Parameter) {
            throw std::runtime_error(callName(ref) + " without a tensor");
        } else if (args.empty()) {
            throw std::runtime_error(callName(ref) + " without a value");
        }
    }

    // _rebuild_tensor_v2(storage, offset, size, stride, ...): a view of the
    // storage, whose layout is checked before ATen sees it (tensorLayoutProblem).
    at::Tensor tensor(PickleRef ref, std::span<const PickleRef> args) {
        if (args.size() < 4) {
            throw std::runtime_error(callName(ref) + " called with too few arguments");
        }
        const std::optional<int64_t> offset = doc_.toInt64(args[1]);  // an int, never a bool
        if (doc_.kind(args[0]) != PickleKind::PersistentId || !offset) {
            throw std::runtime_error(callName(ref) + " without a storage and offset");
        }
        const std::vector<int64_t> sizes = intList(args[2], "size");
        const std::vector<int64_t> strides = intList(args[3], "stride");
        auto& storage = tensors_[args[0]];
        if (!storage.defined()) {
            storage = loadStorage(args[0], tensorLabel(ref));
        }
        const std::string problem = tensorLayoutProblem(sizes, strides, *offset, storage.numel());
        if (!problem.empty()) {
            throw std::runtime_error(tensorLabel(ref) + ": " + problem);
        }
        return storage.as_strided(sizes, strides, *offset);
    }

    std::vector<int64_t> intList(PickleRef ref, const char* what) const {
        const PickleKind kind = doc_.kind(ref);
        if (kind != PickleKind::Tuple && kind != PickleKind::List) {
            throw std::runtime_error(std::string("tensor ") + what + " is not a tuple");
        }
        std::vector<int64_t> out;
        for (const PickleRef item : doc_.items(ref)) {
            if (doc_.kind(item) != PickleKind::Int) {
                throw std::runtime_error(std::string("tensor ") + what + " holds a non-integer");
            }
            out.push_back(doc_.integer(item));
        }
        return out;
    }

    // The storage the persistent id `ref` names (checkStorageId passed it),
    // read from the archive once however many tensors view it: as many
    // elements as the id says, streamed from its entry, which must hold
    // them, into memory that is there (what all storages read so far take
    // and this one). `who` names the tensor for messages.
    at::Tensor loadStorage(PickleRef ref, const std::string& who) {
        const auto items = doc_.items(doc_.persistentId(ref));
        const std::string key(doc_.text(items[2]));
        if (const auto cached = storages_.find(key); cached != storages_.end()) {
            return cached->second;
        }
        const at::ScalarType dtype = storageDtype(std::string(doc_.globalName(items[1])));
        const std::string entry = "data/" + key;
        const std::optional<int64_t> elements = doc_.toInt64(items[4]);
        if (!elements || *elements < 0 || *elements > kMaxTensorElements) {
            throw std::runtime_error(who + ": its storage '" + entry +
                                     "' gives no element count from 0 to 2^50");
        }
        const auto bytes = uint64_t(*elements) * c10::elementSize(dtype);
        if (!archive_.hasRecord(entry)) {
            throw std::runtime_error(who + ": its storage '" + entry +
                                     "' is missing from the archive");
        }
        checkStorageFits(who, entry, bytes);
        at::Tensor storage = at::empty({*elements}, at::TensorOptions().dtype(dtype));
        try {
            auto iterator = archive_.createChunkReaderIter(entry, bytes, kChunkBytes);
            for (uint64_t done = 0; done < bytes;) {
                done += iterator.next(static_cast<char*>(storage.data_ptr()) + done);
            }
        } catch (const c10::Error&) {  // miniz's "internal error", "corrupted": ours instead
            throw std::runtime_error(who + ": its storage '" + entry +
                                     "' cannot be read: the archive is damaged there");
        }
        loadedBytes_ += bytes;
        storages_[key] = storage;
        return storage;
    }

    // A storage's bytes against its entry's and the memory left.
    void checkStorageFits(const std::string& who, const std::string& entry, uint64_t bytes) {
        const uint64_t recorded = archive_.getRecordSize(entry);
        if (recorded < bytes) {
            throw std::runtime_error(who + ": its storage '" + entry + "' holds " +
                                     std::to_string(recorded) + " bytes, fewer than the " +
                                     std::to_string(bytes) + " its elements take");
        }
        if (bytes > uint64_t(memoryRoom_) - std::min(loadedBytes_, uint64_t(memoryRoom_))) {
            throw std::runtime_error(
                who + ": its storage '" + entry + "' takes " + formatBytes(double(bytes)) +
                (loadedBytes_ > 0 ? " beyond the " + formatBytes(double(loadedBytes_)) + " read"
                                  : std::string()) +
                ", more than the " + formatBytes(double(memoryRoom_)) +
                " of memory this process may still take");
        }
    }

    // Where the root holds the tensor `target`, for messages: "tensor
    // 'layers.0.w'", "the tensor" (the root itself). Looked for only when a
    // message needs it, with a stack of its own.
    std::string tensorLabel(PickleRef target) const {
        const PickleRef root = doc_.root();
        std::unordered_map<PickleRef, std::pair<PickleRef, std::string>> parent{{root, {root, ""}}};
        std::vector<PickleRef> pending{root};
        while (!pending.empty() && !parent.contains(target)) {
            const PickleRef ref = pending.back();
            pending.pop_back();
            for (auto& [child, label] : labelledChildren(ref)) {
                if (parent.try_emplace(child, ref, std::move(label)).second) {
                    pending.push_back(child);
                }
            }
        }
        if (!parent.contains(target)) {
            return "a tensor the file's value does not hold";
        }
        std::string path;
        for (PickleRef ref = target; ref != root; ref = parent.at(ref).first) {
            const std::string& label = parent.at(ref).second;
            if (!label.empty()) {
                path = label + (path.empty() ? "" : "." + path);
            }
        }
        if (path.empty()) {
            return "the tensor";
        }
        return "tensor '" + printableText(path.size() > 200 ? path.substr(0, 200) + "…" : path) +
               "'";
    }

    // What `ref` holds, each with its label in a path: a dict's values by
    // their keys, a list's items by index; what a parameter or a type tag wraps.
    std::vector<std::pair<PickleRef, std::string>> labelledChildren(PickleRef ref) const {
        std::vector<std::pair<PickleRef, std::string>> out;
        const Role role = roleOf(ref);
        if (role == Role::Parameter || role == Role::TypeTag) {
            const auto args = doc_.items(doc_.call(ref).args);
            if (!args.empty()) {
                out.emplace_back(args[0], "");
            }
            return out;
        }
        if (role != Role::Container && role != Role::Dict) {
            return out;
        }
        const std::span<const PickleRef> items = childrenOf(ref, role);
        if (role == Role::Container && doc_.kind(ref) != PickleKind::Dict) {
            for (size_t i = 0; i < items.size(); ++i) {
                out.emplace_back(items[i], std::to_string(i));
            }
            return out;
        }
        for (size_t i = 0; i + 1 < items.size(); i += 2) {
            const PickleKind kind = doc_.kind(items[i]);
            out.emplace_back(items[i + 1],
                             kind == PickleKind::String ? std::string(doc_.text(items[i]))
                             : kind == PickleKind::Int  ? std::to_string(doc_.integer(items[i]))
                                                        : "?");
        }
        return out;
    }

    // The second pass, one step down: the height of a value built before (0
    // for a leaf), or nullopt when it starts a new frame. A tensor is a leaf;
    // a type tag stands for what it holds (a tensor, or a container).
    std::optional<size_t> enter(PickleRef ref) {
        const Role role = roleOf(ref);
        if (role != Role::Container && role != Role::Dict && role != Role::TypeTag) {
            return 0;
        }
        if (role == Role::TypeTag && tensors_.contains(ref)) {
            return 0;
        }
        const auto [found, isNew] = built_.try_emplace(ref);
        if (!isNew) {
            if (!found->second.done) {
                throw std::runtime_error("a list, tuple or dict contains itself");
            }
            return found->second.height;
        }
        if (role != Role::TypeTag && containersOnPath_++ >= kMaxDepth) {
            tooDeep();
        }
        path_.push_back({ref, role, childrenOf(ref, role)});
        return std::nullopt;
    }

    // What a frame waits for: a container's items (keys too), the entries
    // SETITEMS gave a dict's call, what a type tag holds.
    std::span<const PickleRef> childrenOf(PickleRef ref, Role role) const {
        if (role == Role::Container) {
            return doc_.items(ref);
        }
        const PickleCall& call = doc_.call(ref);
        if (role == Role::TypeTag) {
            return doc_.items(call.args).first(1);  // the first pass saw it is there
        }
        return call.dictItems == kNoPickleRef ? std::span<const PickleRef>()
                                              : doc_.items(call.dictItems);
    }

    void finish() {
        const Frame frame = path_.back();
        size_t height = frame.tallest;
        if (frame.role != Role::TypeTag) {
            height = frame.tallest + 1;
            --containersOnPath_;
        }
        if (height > kMaxDepth) {
            tooDeep();
        }
        Built& built = built_.at(frame.ref);
        built.value = assemble(frame);
        built.height = height;
        built.done = true;
        path_.pop_back();
        if (!path_.empty()) {
            path_.back().tallest = std::max(path_.back().tallest, height);
        }
    }

    PyValue assemble(const Frame& frame) {
        const PickleKind kind = doc_.kind(frame.ref);
        if (frame.role == Role::TypeTag) {
            return valueOf(frame.children[0]);
        }
        if (frame.role == Role::Container && kind != PickleKind::Dict) {
            auto out = std::make_shared<PySequence>();
            out->isTuple = kind == PickleKind::Tuple;
            out->items.reserve(frame.children.size());
            for (const PickleRef item : frame.children) {
                out->items.push_back(valueOf(item));
            }
            return {out};
        }
        auto out = std::make_shared<PyDict>();
        out->items.reserve(frame.children.size() / 2);
        for (size_t i = 0; i + 1 < frame.children.size(); i += 2) {
            out->items.emplace_back(valueOf(frame.children[i]), valueOf(frame.children[i + 1]));
        }
        return {out};
    }

    // A value built before, or one that needs no frame.
    PyValue valueOf(PickleRef ref) const {
        if (const auto found = built_.find(ref); found != built_.end()) {
            return found->second.value;
        }
        if (const auto found = tensors_.find(ref); found != tensors_.end()) {
            return {found->second};
        }
        switch (doc_.kind(ref)) {
            case PickleKind::None:
                return {};
            case PickleKind::Bool:
                return {doc_.boolean(ref)};
            case PickleKind::Int:
                return {doc_.integer(ref)};
            case PickleKind::Float:
                return {doc_.real(ref)};
            case PickleKind::String:
                return {std::string(doc_.text(ref))};
            case PickleKind::Global:
                return {PyGlobal{std::string(doc_.globalModule(ref)),
                                 std::string(doc_.globalName(ref))}};
            case PickleKind::Call:
                return {PyOpaque{callName(ref)}};
            default:
                return {PyOpaque{"builtins." + doc_.typeName(ref)}};  // bytes, sets
        }
    }

    // A storage is streamed into its tensor this much at a time.
    static constexpr size_t kChunkBytes = size_t(64) << 20;

    const PickleDocument& doc_;
    caffe2::serialize::PyTorchStreamReader& archive_;
    std::unordered_map<PickleRef, at::Tensor> tensors_;
    std::vector<PickleRef> bareStorages_;  // persistent ids, in the file's order
    std::map<std::string, at::Tensor> storages_;
    uint64_t loadedBytes_ = 0;  // what storages_ take
    const int64_t memoryRoom_;  // what this process may take, when reading began
    std::vector<Frame> path_;
    size_t containersOnPath_ = 0;
    std::unordered_map<PickleRef, Built> built_;
};

// A missing file, a directory or a file of another kind, said in words
// rather than as the zip reader's error.
void checkLooksLikeTorchSave(const std::string& path) {
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) {
        throw std::runtime_error("'" + path + "' does not exist");
    }
    if (std::filesystem::is_directory(status)) {
        throw std::runtime_error("'" + path +
                                 "' is a directory; expected a file written by torch.save");
    }
    char magic[4] = {};
    std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
    if (std::string(magic, 4) == std::string("PK\x03\x04", 4)) {
        return;
    }
    const std::string hint =
        static_cast<unsigned char>(magic[0]) == 0x80
            ? "it looks like the legacy format (_use_new_zipfile_serialization=False); save "
              "it again with torch.save"
            : "it is not the zip archive torch.save writes (PyTorch 1.6 and later)";
    throw std::runtime_error("'" + path + "' is not a torch.save file: " + hint);
}

// A torch.save archive's entries hold a few small records, data.pkl and the
// storages: about 20,000 for a model of a thousand layers with its optimizer.
constexpr size_t kMaxEntries = size_t(1) << 20;
// data.pkl of such a checkpoint is a few MB; a larger one is not read.
constexpr uint64_t kMaxPickleBytes = uint64_t(1) << 30;
// "version", "byteorder", ".data/serialization_id": a few bytes each.
constexpr uint64_t kMaxSmallRecordBytes = 4096;

// What every entry declares, checked before the zip reader inflates any of
// it (its constructor alone reads the version record): a size that the
// compressed bytes cannot make, or that memory does not hold, is refused
// naming the entry. Storages are checked again as they are read, against
// what the pickle says they hold.
void checkArchiveEntries(const std::string& path, int64_t room) {
    const std::vector<ZipEntry> entries = readZipDirectory(path, kMaxEntries);
    const uint64_t fileBytes = std::filesystem::file_size(path);
    for (const ZipEntry& entry : entries) {
        std::string problem = zipEntryProblem(entry, fileBytes);
        // Records are named "ARCHIVE/data.pkl", "ARCHIVE/data/0", ...
        const std::string record = entry.name.substr(entry.name.find('/') + 1);
        const bool storage = record.starts_with("data/");
        const uint64_t limit = storage                ? uint64_t(room)
                               : record == "data.pkl" ? std::min(kMaxPickleBytes, uint64_t(room))
                                                      : kMaxSmallRecordBytes;
        if (problem.empty() && entry.size > limit) {
            problem = "declares " + formatBytes(double(entry.size)) + ", more than " +
                      (storage ? "the " + formatBytes(double(room)) +
                                     " of memory this process may still take"
                               : formatBytes(double(limit)) + ", the most such a record holds");
        }
        if (!problem.empty()) {
            throw std::runtime_error("entry '" + printableText(entry.name) + "' " + problem);
        }
    }
}

}  // namespace

std::string PyValue::typeName() const {
    switch (value.index()) {
        case 0:
            return "None";
        case 1:
            return "bool";
        case 2:
            return "int";
        case 3:
            return "float";
        case 4:
            return "str";
        case 5:
            return "tensor";
        case 6:
            return std::get<std::shared_ptr<PySequence>>(value)->isTuple ? "tuple" : "list";
        case 7:
            return "dict";
        case 8:
            return "global " + std::get<PyGlobal>(value).name;
        default:
            return std::get<PyOpaque>(value).type + " object";
    }
}

PyValue readTorchSave(const std::string& path, const TorchSaveLimits& limits) {
    checkLooksLikeTorchSave(path);
    const int64_t room = std::max<int64_t>(0, limits.memoryRoomBytes.value_or(memoryRoomBytes()));
    try {
        checkArchiveEntries(path, room);
        caffe2::serialize::PyTorchStreamReader archive(path);
        if (archive.hasRecord("byteorder")) {
            auto [bytes, size] = archive.getRecord("byteorder");
            const std::string order(static_cast<const char*>(bytes.get()), size);
            if (order != "little") {
                throw std::runtime_error("written on a " + order + "-endian machine");
            }
        }
        auto [pickle, size] = archive.getRecord("data.pkl");
        const PickleDocument doc =
            readDataPickle(std::string(static_cast<const char*>(pickle.get()), size));
        pickle.clear();
        return ValueBuilder(doc, archive, room).build();
    } catch (const c10::Error& error) {
        throw std::runtime_error("'" + path +
                                 "' is not a torch.save file in the zip format (PyTorch 1.6 "
                                 "and later): " +
                                 error.what_without_backtrace());
    } catch (const std::bad_alloc&) {  // the checks above leave this to other programs
        throw std::runtime_error("'" + path + "': memory ran out while reading it");
    } catch (const std::runtime_error& error) {
        throw std::runtime_error("'" + path + "': " + error.what());
    }
}

}  // namespace stepscope
