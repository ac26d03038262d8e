#pragma once

#include <string>

namespace stepscope {

// What `stepscope --version` and `stepscope-cli --version` print: the
// StepScope version, the LibTorch it was built against and the library file
// this process actually loaded (an installed binary finds it through its
// RUNPATH, or through STEPSCOPE_TORCH in the launcher), whether that LibTorch
// has CUDA and whether this machine offers a CUDA device. Several lines, no
// trailing newline.
std::string versionText(const std::string& program);

// The LibTorch library file this process loaded; empty when it cannot tell.
std::string loadedLibtorchPath();

}  // namespace stepscope
