#include "interop/torch_save_reader.h"

#include <ATen/ops/empty.h>
#include <caffe2/serialize/inline_container.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <type_traits>

#include "interop/torch_storage_types.h"

namespace stepscope {

namespace {

// Python's own pickler gives up near this depth (its recursion limit), so a
// deeper file was made by hand.
constexpr size_t kMaxDepth = 1000;

// The values a list, tuple or dict holds directly (keys too); none for others.
std::vector<const PyValue*> childrenOf(const PyValue& value) {
    std::vector<const PyValue*> children;
    if (const auto* sequence = std::get_if<std::shared_ptr<PySequence>>(&value.value)) {
        for (const auto& item : (*sequence)->items) {
            children.push_back(&item);
        }
    } else if (const auto* dict = std::get_if<std::shared_ptr<PyDict>>(&value.value)) {
        for (const auto& [key, item] : (*dict)->items) {
            children.push_back(&key);
            children.push_back(&item);
        }
    }
    return children;
}

const void* containerOf(const PyValue& value) {
    if (const auto* sequence = std::get_if<std::shared_ptr<PySequence>>(&value.value)) {
        return sequence->get();
    }
    if (const auto* dict = std::get_if<std::shared_ptr<PyDict>>(&value.value)) {
        return dict->get();
    }
    return nullptr;
}

// The containers `root` reaches, walked without recursion; throws when they
// nest deeper than kMaxDepth or one holds itself. Heights are memoised per
// container, so values the memo shares are walked once yet a chain hidden
// behind a shared value still counts in full.
std::set<const void*> containersReached(const PyValue& root) {
    std::map<const void*, size_t> height;  // 0 while on the path
    struct Frame {
        const void* container;
        std::vector<const PyValue*> children;
        size_t next = 0;
        size_t tallest = 0;  // of the children done so far
    };
    std::vector<Frame> path;
    const std::string tooDeep = "values nest deeper than " + std::to_string(kMaxDepth) +
                                " levels (Python's pickler stops near 1000)";
    // The height of a value already walked, 0 for a scalar or one it starts.
    auto enter = [&](const PyValue& value) -> size_t {
        const void* container = containerOf(value);
        if (!container) {
            return 0;
        }
        const auto [found, isNew] = height.try_emplace(container, 0);
        if (!isNew) {
            if (found->second == 0) {
                throw std::runtime_error("a list, tuple or dict contains itself");
            }
            return found->second;
        }
        if (path.size() >= kMaxDepth) {
            throw std::runtime_error(tooDeep);
        }
        path.push_back({container, childrenOf(value)});
        return 0;
    };
    enter(root);
    while (!path.empty()) {
        Frame& frame = path.back();
        if (frame.next < frame.children.size()) {
            const size_t parent = path.size() - 1;
            const size_t known = enter(*frame.children[frame.next++]);  // may grow `path`
            path[parent].tallest = std::max(path[parent].tallest, known);
            continue;
        }
        const size_t own = frame.tallest + 1;
        if (own > kMaxDepth) {
            throw std::runtime_error(tooDeep);
        }
        height[frame.container] = own;
        path.pop_back();
        if (!path.empty()) {
            path.back().tallest = std::max(path.back().tallest, own);
        }
    }
    std::set<const void*> reached;
    for (const auto& entry : height) {
        reached.insert(entry.first);
    }
    return reached;
}

std::vector<int64_t> intList(const PyValue& value, const char* what) {
    const auto* sequence = std::get_if<std::shared_ptr<PySequence>>(&value.value);
    if (!sequence) {
        throw std::runtime_error(std::string("tensor ") + what + " is not a tuple");
    }
    std::vector<int64_t> out;
    for (const auto& item : (*sequence)->items) {
        const auto* number = std::get_if<int64_t>(&item.value);
        if (!number) {
            throw std::runtime_error(std::string("tensor ") + what + " holds a non-integer");
        }
        out.push_back(*number);
    }
    return out;
}

// A stack machine over the pickle opcodes that torch.save emits.
//
// Every container it makes stays in sequences_ or dicts_ until the end, so
// popping or replacing a value never frees a nested chain recursively; the
// destructor empties the containers the result does not reach one by one (no
// recursion, and cycles made through the memo are broken). The result is
// refused when it nests deeper than kMaxDepth or holds itself, so whoever
// frees it later recurses at most kMaxDepth levels.
class Unpickler {
public:
    Unpickler(const char* data, size_t size, caffe2::serialize::PyTorchStreamReader& archive)
        : data_(data), size_(size), archive_(archive) {}
    Unpickler(const Unpickler&) = delete;
    Unpickler& operator=(const Unpickler&) = delete;
    ~Unpickler() {
        for (auto& sequence : sequences_) {
            if (!kept_.contains(sequence.get())) {
                sequence->items.clear();
            }
        }
        for (auto& dict : dicts_) {
            if (!kept_.contains(dict.get())) {
                dict->items.clear();
            }
        }
    }

    PyValue run() {
        while (true) {
            const auto opcode = static_cast<unsigned char>(readBytes(1)[0]);
            if (opcode == '.') {  // STOP
                if (stack_.empty()) {
                    throw std::runtime_error("pickle ends with an empty stack");
                }
                PyValue result = stack_.back();
                kept_ = containersReached(result);
                return result;
            }
            step(opcode);
        }
    }

private:
    template <typename Container>
    std::shared_ptr<Container> make() {
        auto container = std::make_shared<Container>();
        if constexpr (std::is_same_v<Container, PySequence>) {
            sequences_.push_back(container);
        } else {
            dicts_.push_back(container);
        }
        return container;
    }

    const char* readBytes(size_t n) {
        if (position_ + n > size_) {
            throw std::runtime_error("pickle is truncated");
        }
        const char* at = data_ + position_;
        position_ += n;
        return at;
    }
    template <typename T>
    T readLittleEndian() {
        T value{};
        std::memcpy(&value, readBytes(sizeof(T)), sizeof(T));
        return value;
    }
    std::string readLine() {
        std::string line;
        while (true) {
            const char c = readBytes(1)[0];
            if (c == '\n') {
                return line;
            }
            line += c;
        }
    }
    PyValue pop() {
        if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
            throw std::runtime_error("pickle pops an empty stack (stack underflow at byte " +
                                     std::to_string(position_ - 1) + ")");
        }
        PyValue value = std::move(stack_.back());
        stack_.pop_back();
        return value;
    }
    std::vector<PyValue> popToMark() {
        if (marks_.empty()) {
            throw std::runtime_error("pickle has no MARK to pop to");
        }
        const size_t mark = marks_.back();
        marks_.pop_back();
        std::vector<PyValue> items(std::make_move_iterator(stack_.begin() + mark),
                                   std::make_move_iterator(stack_.end()));
        stack_.resize(mark);
        return items;
    }
    void pushTuple(std::vector<PyValue> items) {
        auto tuple = make<PySequence>();
        tuple->isTuple = true;
        tuple->items = std::move(items);
        stack_.push_back({tuple});
    }
    void setItems(std::vector<PyValue> flat) {
        if (stack_.empty()) {
            throw std::runtime_error("SETITEMS without a dict");
        }
        auto* dict = std::get_if<std::shared_ptr<PyDict>>(&stack_.back().value);
        if (!dict) {
            return;  // items of an object we keep opaque
        }
        for (size_t i = 0; i + 1 < flat.size(); i += 2) {
            (*dict)->items.emplace_back(std::move(flat[i]), std::move(flat[i + 1]));
        }
    }
    void append(std::vector<PyValue> items) {
        if (stack_.empty()) {
            throw std::runtime_error("APPEND without a list");
        }
        if (auto* list = std::get_if<std::shared_ptr<PySequence>>(&stack_.back().value)) {
            for (auto& item : items) {
                (*list)->items.push_back(std::move(item));
            }
        }
    }
    void memoize(size_t index) {
        if (stack_.empty()) {
            throw std::runtime_error("PUT with an empty stack");
        }
        memo_[index] = stack_.back();
    }
    void recall(size_t index) {
        const auto found = memo_.find(index);
        if (found == memo_.end()) {
            throw std::runtime_error("pickle refers to memo entry " + std::to_string(index) +
                                     " that was never stored");
        }
        stack_.push_back(found->second);
    }

    at::Tensor loadStorage(const PyValue& persistentId) {
        const auto* tuple = std::get_if<std::shared_ptr<PySequence>>(&persistentId.value);
        if (!tuple || (*tuple)->items.size() < 5 || !(*tuple)->items[2].asString()) {
            throw std::runtime_error("unexpected persistent id (not a torch storage)");
        }
        const auto& items = (*tuple)->items;
        const auto* type = std::get_if<PyGlobal>(&items[1].value);
        if (!type) {
            throw std::runtime_error("storage without a type");
        }
        const std::string key = *items[2].asString();
        if (const auto cached = storages_.find(key); cached != storages_.end()) {
            return cached->second;
        }
        const at::ScalarType dtype = storageDtype(type->name);
        auto [bytes, size] = archive_.getRecord("data/" + key);
        const int64_t elements = static_cast<int64_t>(size / c10::elementSize(dtype));
        at::Tensor storage = at::empty({elements}, at::TensorOptions().dtype(dtype));
        if (size > 0) {
            std::memcpy(storage.data_ptr(), bytes.get(), elements * c10::elementSize(dtype));
        }
        storages_[key] = storage;
        return storage;
    }

    PyValue call(const PyGlobal& callable, const PyValue& argsValue) {
        const auto* args = std::get_if<std::shared_ptr<PySequence>>(&argsValue.value);
        const std::string name = callable.module + "." + callable.name;
        if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
            if (!args || (*args)->items.size() < 4) {
                throw std::runtime_error(name + " called with too few arguments");
            }
            const auto& a = (*args)->items;
            const auto* storage = a[0].asTensor();
            const auto* offset = std::get_if<int64_t>(&a[1].value);
            if (!storage || !offset) {
                throw std::runtime_error(name + " without a storage and offset");
            }
            return {storage->as_strided(intList(a[2], "size"), intList(a[3], "stride"), *offset)};
        }
        if (name == "torch._utils._rebuild_parameter" ||
            name == "torch._utils._rebuild_parameter_with_state") {
            if (!args || (*args)->items.empty() || !(*args)->items[0].asTensor()) {
                throw std::runtime_error(name + " without a tensor");
            }
            return (*args)->items[0];
        }
        if (name == "torch.jit._pickle.restore_type_tag") {  // LibTorch's pickle_save
            if (!args || (*args)->items.empty()) {
                throw std::runtime_error(name + " without a value");
            }
            return (*args)->items[0];
        }
        if (name == "collections.OrderedDict" || name == "builtins.dict") {
            return {make<PyDict>()};
        }
        return {PyOpaque{name}};
    }

    void step(unsigned char opcode) {
        switch (opcode) {
            case 0x80:
                readBytes(1);
                break;  // PROTO
            case 0x95:
                readBytes(8);
                break;  // FRAME
            case '(':
                marks_.push_back(stack_.size());
                break;
            case '0':
                pop();
                break;
            case '1':
                popToMark();
                break;
            case '2': {  // DUP
                if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) {
                    throw std::runtime_error("pickle duplicates the top of an empty stack");
                }
                PyValue top = stack_.back();
                stack_.push_back(std::move(top));
                break;
            }
            case 'N':
                stack_.push_back({});
                break;
            case 0x88:
                stack_.push_back({true});
                break;
            case 0x89:
                stack_.push_back({false});
                break;
            case 'J':
                stack_.push_back({static_cast<int64_t>(readLittleEndian<int32_t>())});
                break;
            case 'K':
                stack_.push_back({static_cast<int64_t>(readLittleEndian<uint8_t>())});
                break;
            case 'M':
                stack_.push_back({static_cast<int64_t>(readLittleEndian<uint16_t>())});
                break;
            case 0x8a: {  // LONG1: little-endian two's complement of n bytes
                const uint8_t n = readLittleEndian<uint8_t>();
                const char* bytes = readBytes(n);
                if (n > 8) {
                    throw std::runtime_error("integer too large");
                }
                uint64_t value = 0;
                for (int i = n - 1; i >= 0; --i) {
                    value = (value << 8) | static_cast<uint8_t>(bytes[i]);
                }
                if (n > 0 && n < 8 && (static_cast<uint8_t>(bytes[n - 1]) & 0x80)) {
                    value |= ~uint64_t{0} << (8 * n);  // sign-extend
                }
                stack_.push_back({static_cast<int64_t>(value)});
                break;
            }
            case 'G': {  // BINFLOAT, big-endian
                const char* bytes = readBytes(8);
                char swapped[8];
                for (int i = 0; i < 8; ++i) {
                    swapped[i] = bytes[7 - i];
                }
                double value;
                std::memcpy(&value, swapped, 8);
                stack_.push_back({value});
                break;
            }
            case 'X': {
                const uint32_t n = readLittleEndian<uint32_t>();
                stack_.push_back({std::string(readBytes(n), n)});
                break;
            }
            case 0x8c: {  // SHORT_BINUNICODE
                const uint8_t n = readLittleEndian<uint8_t>();
                stack_.push_back({std::string(readBytes(n), n)});
                break;
            }
            case 'U': {  // SHORT_BINSTRING
                const uint8_t n = readLittleEndian<uint8_t>();
                stack_.push_back({std::string(readBytes(n), n)});
                break;
            }
            case 'c': {  // GLOBAL "module\nname\n"
                PyGlobal global;
                global.module = readLine();
                global.name = readLine();
                stack_.push_back({global});
                break;
            }
            case 0x93: {  // STACK_GLOBAL
                PyValue name = pop();
                PyValue module = pop();
                if (!name.asString() || !module.asString()) {
                    throw std::runtime_error("STACK_GLOBAL without names");
                }
                stack_.push_back({PyGlobal{*module.asString(), *name.asString()}});
                break;
            }
            case 'q':
                memoize(readLittleEndian<uint8_t>());
                break;
            case 'r':
                memoize(readLittleEndian<uint32_t>());
                break;
            case 0x94:
                memoize(memo_.size());
                break;  // MEMOIZE
            case 'h':
                recall(readLittleEndian<uint8_t>());
                break;
            case 'j':
                recall(readLittleEndian<uint32_t>());
                break;
            case ')':
                pushTuple({});
                break;
            case 't':
                pushTuple(popToMark());
                break;
            case 0x85: {
                PyValue a = pop();
                pushTuple({std::move(a)});
                break;
            }
            case 0x86: {
                PyValue b = pop();
                PyValue a = pop();
                pushTuple({std::move(a), std::move(b)});
                break;
            }
            case 0x87: {
                PyValue c = pop();
                PyValue b = pop();
                PyValue a = pop();
                pushTuple({std::move(a), std::move(b), std::move(c)});
                break;
            }
            case ']':
                stack_.push_back({make<PySequence>()});
                break;
            case 'l': {
                auto list = make<PySequence>();
                list->items = popToMark();
                stack_.push_back({list});
                break;
            }
            case 'a': {
                PyValue item = pop();
                std::vector<PyValue> items;
                items.push_back(std::move(item));
                append(std::move(items));
                break;
            }
            case 'e':
                append(popToMark());
                break;
            case '}':
                stack_.push_back({make<PyDict>()});
                break;
            case 'd': {
                std::vector<PyValue> flat = popToMark();
                stack_.push_back({make<PyDict>()});
                setItems(std::move(flat));
                break;
            }
            case 's': {
                PyValue value = pop();
                PyValue key = pop();
                std::vector<PyValue> flat;
                flat.push_back(std::move(key));
                flat.push_back(std::move(value));
                setItems(std::move(flat));
                break;
            }
            case 'u':
                setItems(popToMark());
                break;
            case 'Q': {  // BINPERSID: a storage in the archive
                PyValue id = pop();
                stack_.push_back({loadStorage(id)});
                break;
            }
            case 'R': {  // REDUCE
                PyValue args = pop();
                PyValue callable = pop();
                const auto* global = std::get_if<PyGlobal>(&callable.value);
                stack_.push_back(global ? call(*global, args) : PyValue{PyOpaque{"object"}});
                break;
            }
            case 0x81: {  // NEWOBJ
                pop();
                PyValue cls = pop();
                const auto* global = std::get_if<PyGlobal>(&cls.value);
                stack_.push_back({PyOpaque{global ? global->module + "." + global->name : "?"}});
                break;
            }
            case 'b':
                pop();
                break;  // BUILD: object state (OrderedDict._metadata, ...)
            default: {
                char hex[8];
                std::snprintf(hex, sizeof hex, "0x%02x", opcode);
                throw std::runtime_error("unsupported pickle opcode " + std::string(hex) +
                                         " at byte " + std::to_string(position_ - 1));
            }
        }
    }

    const char* data_;
    size_t size_;
    size_t position_ = 0;
    caffe2::serialize::PyTorchStreamReader& archive_;
    std::vector<PyValue> stack_;
    std::vector<size_t> marks_;
    std::map<size_t, PyValue> memo_;
    std::map<std::string, at::Tensor> storages_;
    std::vector<std::shared_ptr<PySequence>> sequences_;
    std::vector<std::shared_ptr<PyDict>> dicts_;
    std::set<const void*> kept_;  // the containers the result reaches
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

PyValue readTorchSave(const std::string& path) {
    checkLooksLikeTorchSave(path);
    try {
        caffe2::serialize::PyTorchStreamReader archive(path);
        if (archive.hasRecord("byteorder")) {
            auto [bytes, size] = archive.getRecord("byteorder");
            const std::string order(static_cast<const char*>(bytes.get()), size);
            if (order != "little") {
                throw std::runtime_error("written on a " + order + "-endian machine");
            }
        }
        auto [pickle, size] = archive.getRecord("data.pkl");
        Unpickler unpickler(static_cast<const char*>(pickle.get()), size, archive);
        return unpickler.run();
    } catch (const c10::Error& error) {
        throw std::runtime_error("'" + path +
                                 "' is not a torch.save file in the zip format (PyTorch 1.6 "
                                 "and later): " +
                                 error.what_without_backtrace());
    } catch (const std::runtime_error& error) {
        throw std::runtime_error("'" + path + "': " + error.what());
    }
}

}  // namespace stepscope
