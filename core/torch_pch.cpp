// The translation unit that compiles torch_pch.h once for every layer that
// uses LibTorch (core/CMakeLists.txt, stepscope_torch_pch).
