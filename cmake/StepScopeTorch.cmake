# Finds LibTorch inside the PyPI torch wheel of the project's virtual
# environment (scripts/bootstrap.sh makes it), through
# torch.utils.cmake_prefix_path. STEPSCOPE_PYTHON picks another interpreter,
# for example the GPU machine's own PyTorch.
if(DEFINED ENV{STEPSCOPE_CACHE})
    set(_stepscope_cache "$ENV{STEPSCOPE_CACHE}")
else()
    set(_stepscope_cache "$ENV{HOME}/.cache/stepscope")
endif()
if(EXISTS "${_stepscope_cache}/venv/bin/python")
    set(_default_python "${_stepscope_cache}/venv/bin/python")
else()
    set(_default_python "python3")
endif()
set(STEPSCOPE_PYTHON "${_default_python}" CACHE FILEPATH "Python interpreter whose torch package provides LibTorch")

# Run from this folder: in the build folder (where a regeneration runs),
# `import torch` would find the build folder's own link to torch first.
execute_process(
    COMMAND "${STEPSCOPE_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path, end='')"
    WORKING_DIRECTORY "${CMAKE_CURRENT_LIST_DIR}"
    OUTPUT_VARIABLE _torch_prefix
    RESULT_VARIABLE _torch_result
    ERROR_VARIABLE _torch_error)
if(NOT _torch_result EQUAL 0)
    message(FATAL_ERROR "StepScope: '${STEPSCOPE_PYTHON}' cannot import torch (${_torch_error}). "
                        "Run scripts/bootstrap.sh, or pass -DSTEPSCOPE_PYTHON=/path/to/python.")
endif()
# Found through a link in the build folder (build/*/torch -> the torch
# package), so that every compile names LibTorch's headers by a path under
# the build folder: ccache (cmake/ccache-launch.sh) then keys them the same
# for another user's torch, as no_root_check's user has its own copy.
get_filename_component(_torch_package "${_torch_prefix}/../.." ABSOLUTE)
# Made again only when it names another package: CREATE_LINK refuses a link
# that already leads to its target ("cannot use same file"), as on every
# configure after the first.
set(_torch_link "")
if(IS_SYMLINK "${CMAKE_BINARY_DIR}/torch")
    file(READ_SYMLINK "${CMAKE_BINARY_DIR}/torch" _torch_link)
endif()
if(NOT _torch_link STREQUAL _torch_package)
    file(REMOVE "${CMAKE_BINARY_DIR}/torch")
    file(CREATE_LINK "${_torch_package}" "${CMAKE_BINARY_DIR}/torch" SYMBOLIC)
endif()
list(APPEND CMAKE_PREFIX_PATH "${CMAKE_BINARY_DIR}/torch/share/cmake")
# Over what an older configure cached (the package's own path).
set(Torch_DIR "${CMAKE_BINARY_DIR}/torch/share/cmake/Torch")
set(Caffe2_DIR "${CMAKE_BINARY_DIR}/torch/share/cmake/Caffe2")

# LibTorch's config looks for the CUDA toolkit itself; point it at the
# machine's toolkit when the caller has not.
if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS "/usr/local/cuda")
    set(CUDAToolkit_ROOT "/usr/local/cuda")
endif()
# Name the architectures so LibTorch's config does not try to detect a GPU
# by compiling and running a probe (CI has none).
if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
endif()
find_package(Torch REQUIRED)
message(STATUS "StepScope: LibTorch ${Torch_VERSION} from ${_torch_package} (as ${CMAKE_BINARY_DIR}/torch)")

# libtorch_cuda is present in the CUDA wheel; the CUDA-only engine parts
# compile against it whenever it is.
if(TARGET torch_cuda)
    set(STEPSCOPE_TORCH_HAS_CUDA ON)
else()
    set(STEPSCOPE_TORCH_HAS_CUDA OFF)
endif()

execute_process(
    COMMAND "${STEPSCOPE_PYTHON}" -c "import torch; print(torch.version.cuda or '', end='')"
    OUTPUT_VARIABLE STEPSCOPE_TORCH_CUDA_VERSION)

# The folder holding libtorch.so: the installed programs' RUNPATH.
set(STEPSCOPE_TORCH_LIB_DIR "${TORCH_INSTALL_PREFIX}/lib")
if(NOT EXISTS "${STEPSCOPE_TORCH_LIB_DIR}/libtorch.so")
    message(FATAL_ERROR "StepScope: no libtorch.so in ${STEPSCOPE_TORCH_LIB_DIR} (TORCH_INSTALL_PREFIX)")
endif()
get_filename_component(STEPSCOPE_TORCH_LIB_DIR "${STEPSCOPE_TORCH_LIB_DIR}" REALPATH)
