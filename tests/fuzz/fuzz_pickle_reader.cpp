// libFuzzer target for the pickle machine itself (issue 33), the one every
// pickle format runs on: any bytes give a document or a PickleError, never a
// crash, a hang or a call. Each input is read twice: with no policy (as the
// snapshot reader has it), and with one that allows a few globals and every
// persistent id as inert records and makes a POP past a MARK an underflow
// (as the torch.save reader has it); then every value is visited. The formats
// above it have targets of their own: fuzz_memory_snapshot, fuzz_torch_save.
//
//   (one command line:) clang++-14 -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Icore
//       tests/fuzz/fuzz_pickle_reader.cpp core/util/pickle_reader.cpp -o fuzz_pickle_reader
//   ./fuzz_pickle_reader -max_total_time=60 CORPUS_DIR  (seeds: make_memory_snapshots.py's files)
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/pickle_reader.h"

using namespace stepscope;

namespace {

// Touches every value the way a caller would; a value refers to others by
// index, so a flat loop over the arena reaches them all, cycles included.
size_t visit(const PickleDocument& doc) {
    size_t seen = doc.typeName(doc.root()).size();
    for (PickleRef ref = 0; ref < doc.valueCount(); ++ref) {
        switch (doc.kind(ref)) {
            case PickleKind::Int:
                seen += static_cast<size_t>(doc.integer(ref));
                break;
            case PickleKind::BigInt:
            case PickleKind::String:
            case PickleKind::Bytes:
            case PickleKind::ByteArray:
                seen += doc.text(ref).size() + doc.toUInt64(ref).value_or(0);
                break;
            case PickleKind::Float:
                seen += doc.real(ref) > 0;
                break;
            case PickleKind::Tuple:
            case PickleKind::List:
            case PickleKind::Set:
            case PickleKind::FrozenSet:
            case PickleKind::Dict:
                for (const PickleRef item : doc.items(ref)) {
                    seen += doc.typeName(item).size();
                }
                seen += doc.find(ref, "storage") != kNoPickleRef;
                break;
            case PickleKind::Global:
                seen += doc.globalModule(ref).size() + doc.globalName(ref).size();
                break;
            case PickleKind::Call: {
                const PickleCall& call = doc.call(ref);
                seen += doc.items(call.args).size() + (call.state != kNoPickleRef);
                break;
            }
            case PickleKind::PersistentId:
                seen += doc.typeName(doc.persistentId(ref)).size();
                break;
            default:
                break;
        }
    }
    return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    PickleLimits limits;
    limits.maxValues = 1 << 20;
    limits.maxItems = 1 << 22;
    limits.maxStringBytes = 1 << 20;
    try {
        visit(readPickle(bytes, {}, limits));
    } catch (const PickleError&) {
    }
    PicklePolicy allowing = PicklePolicy::allowing({{"collections", "OrderedDict"},
                                                    {"torch._utils", "_rebuild_tensor_v2"},
                                                    {"torch", "FloatStorage"},
                                                    {"os", "system"}});
    allowing.checkPersistentId = [](const PickleDocument& doc, PickleRef id) {
        if (doc.kind(id) != PickleKind::Tuple || doc.items(id).empty()) {
            throw PickleError(PickleError::Reason::Refused, 0, "BINPERSID", "not a storage");
        }
    };
    allowing.popMayDropMark = false;
    try {
        visit(readPickle(bytes, allowing, limits));
    } catch (const PickleError&) {
    }
    return 0;
}
