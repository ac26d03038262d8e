// The translation unit that compiles the LibTorch headers core/CMakeLists.txt
// names (stepscope_torch_pch) once, for every layer that uses LibTorch.
