#include "interop/torch_storage_types.h"

#include <stdexcept>
#include <utility>

namespace stepscope {

namespace {
constexpr std::pair<const char*, at::ScalarType> kStorageTypes[] = {
    {"FloatStorage", at::kFloat},
    {"DoubleStorage", at::kDouble},
    {"HalfStorage", at::kHalf},
    {"BFloat16Storage", at::kBFloat16},
    {"LongStorage", at::kLong},
    {"IntStorage", at::kInt},
    {"ShortStorage", at::kShort},
    {"CharStorage", at::kChar},
    {"ByteStorage", at::kByte},
    {"BoolStorage", at::kBool},
    {"ComplexFloatStorage", at::kComplexFloat},
    {"ComplexDoubleStorage", at::kComplexDouble},
};
}  // namespace

at::ScalarType storageDtype(const std::string& storageType) {
    for (const auto& [name, dtype] : kStorageTypes) {
        if (storageType == name) {
            return dtype;
        }
    }
    throw std::runtime_error("unsupported storage type torch." + storageType);
}

std::string storageTypeName(at::ScalarType dtype) {
    for (const auto& [name, candidate] : kStorageTypes) {
        if (candidate == dtype) {
            return name;
        }
    }
    throw std::runtime_error(std::string("cannot save tensors of dtype ") + c10::toString(dtype));
}

}  // namespace stepscope
