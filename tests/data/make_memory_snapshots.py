#!/usr/bin/env python3
"""Fixtures for tests/tst_memory_snapshot.cpp, written with Python's own pickle.

    make_memory_snapshots.py OUT_DIR [--marker PATH] [--big EVENTS [--big-devices D]]

Writes into OUT_DIR:
  basic_p2.pickle, basic_p5.pickle, basic.json
      the same hand-written snapshot (two devices; allocs and frees, a free
      with no alloc, an active block in the segments, segment events, an OOM,
      record_function annotations, allocator settings) in pickle protocols 2
      and 5 and as JSON. The test holds its figures, counted by hand.
  expandable.pickle  segment_map / segment_unmap of an expandable segment
  os_system_p2.pickle, os_system_p4.pickle, os_system_nested.pickle
      pickles that ask to run `touch PATH` (--marker); reading them must not
  truncated.pickle, list.pickle, tensor.pickle, torch_save.pt
      a cut snapshot, a list, a pickled tensor, a torch.save archive
  deep.pickle, deep_memo.pickle, deep.json
      a list nested 200,000 deep (on the stack; through the memo; JSON)
  random_p2.pickle, random_p4.pickle, random.json, random_expected.json
      a seeded random snapshot full of the cases memory_viz has rules for
      (frees without an alloc, an alloc over an open address, requested
      frees, active segment blocks), and the figures a separate Python
      implementation of memory_viz's process_alloc_data gives for it
  values_pN.pickle, values_pN.txt (N = 2..5)
      random plain values, and the text form of each (one a line) that the
      test's own printer must give for them
  gpu_like.pickle
      a snapshot whose stacks are as a real CUDA one's (torch 2.x,
      _record_memory_history(stacks="all")): the unwinder's and the caching
      allocator's frames first, with "??" or no file at all; ATen's and the
      dispatcher's; Python frames after (the interpreter's own among them);
      backward's allocations on the autograd thread with C++ frames only.
      The sites it must give are beside each stack (GPU_STACKS).
  big.pickle (--big N)  N events with stacks, for timing the reader (on each of
                        --big-devices D devices, 1 unless said)

Nothing here needs torch: the tensor pickle and torch.save archive are made
with torch when it is there and spelled out by hand when not.
"""

import json
import os
import pickle
import random
import struct
import sys

TORCH = "/venv/lib/python3.11/site-packages/torch"


def frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


# Stacks, innermost call first as PyTorch records them. Each names the site
# and category the test expects (see tst_memory_snapshot.cpp).
FORWARD = [  # site model.py:20 forward, category activation
    frame("??", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc"),
    frame("Python/ceval.c", 0, "_PyEval_EvalFrameDefault"),
    frame(TORCH + "/nn/modules/linear.py", 125, "forward"),
    frame("model.py", 20, "forward"),
    frame("train.py", 50, "main"),
]
PARAMETER = [  # site model.py:8 __init__, category parameter
    frame(TORCH + "/nn/modules/linear.py", 110, "reset_parameters"),
    frame("model.py", 8, "__init__"),
    frame("train.py", 40, "main"),
]
OPTIMIZER = [  # site train.py:60 main, category optimizer
    frame(TORCH + "/optim/adamw.py", 500, "_single_tensor_adamw"),
    frame(TORCH + "/optim/optimizer.py", 480, "step"),
    frame("train.py", 60, "main"),
]
BACKWARD = [  # site train.py:55 main, category backward
    frame(TORCH + "/autograd/graph.py", 820, "_engine_run_backward"),
    frame(TORCH + "/_tensor.py", 600, "backward"),
    frame("train.py", 55, "main"),
]


# A real CUDA snapshot's frames (torch 2.x on Linux, addr2line symbols of a
# release wheel: C++ frames have "??" or an empty file and line 0, a few a
# bare source name). Innermost first, as CapturedTraceback::gather and
# symbolize() order them: the C++ frames of the unwinder, the caching
# allocator, ATen and the dispatcher; Python frames where the interpreter's
# frames were, and after them. Each list names the site StepScope gives it.
PY = "/usr/local/src/conda/python-3.11.9"
SITE = "/opt/conda/lib/python3.11/site-packages"
USER = "/home/student/assignment1-basics/cs336_basics"
UNWIND = [
    frame("??", 0, "torch::unwind::unwind()"),
    frame("??", 0, "torch::CapturedTraceback::gather(bool, bool, bool)"),
    frame("memory_snapshot.cpp", 0, "torch::cuda::(anonymous namespace)::gather_with_cpp()"),
    frame("", 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc("
                 "void**, signed char, unsigned long, CUstream_st*)"),
    frame("", 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate("
                 "unsigned long)"),
    frame("??", 0, "at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, "
                   "c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)"),
]


def dispatched(op, overload_args="at::Tensor const&"):
    """An ATen operator's frames as the dispatcher leaves them: its native
    kernel, the generated wrapper, redispatch, the autograd kernel, call."""
    return [
        frame("??", 0, "at::native::%s(%s)" % (op, overload_args)),
        frame("RegisterCUDA_0.cpp", 0, "at::(anonymous namespace)::(anonymous namespace)::"
                                       "wrapper_CUDA__%s(%s)" % (op, overload_args)),
        frame("??", 0, "at::_ops::%s::redispatch(c10::DispatchKeySet, %s)" % (op, overload_args)),
        frame("VariableType_2.cpp", 0, "torch::autograd::VariableType::(anonymous namespace)::"
                                       "%s(c10::DispatchKeySet, %s)" % (op, overload_args)),
        frame("??", 0, "at::_ops::%s::call(%s)" % (op, overload_args)),
    ]


INTERPRETER = [
    frame("", 0, "cfunction_call"),
    frame(PY + "/Objects/call.c", 215, "_PyObject_MakeTpCall"),
    frame(PY + "/Python/ceval.c", 5291, "_PyEval_EvalFrameDefault"),
]
MAIN_THREAD_END = [
    frame(PY + "/Python/pythonrun.c", 1695, "run_mod"),
    frame(PY + "/Modules/main.c", 717, "Py_BytesMain"),
    frame("./csu/../csu/libc-start.c", 360, "__libc_start_main_impl"),
    frame("??", 0, "_start"),
]
# Forward, main thread: the user's Linear (an einsum), called through nn.Module.
GPU_FORWARD = (UNWIND + [frame("??", 0, "at::detail::empty_cuda(c10::ArrayRef<long>, "
                                        "c10::ScalarType, std::optional<c10::Device>, "
                                        "std::optional<c10::MemoryFormat>)")]
               + dispatched("bmm", "at::Tensor const&, at::Tensor const&")
               + [frame("??", 0, "at::native::einsum(c10::basic_string_view<char>, "
                                 "c10::ArrayRef<at::Tensor>, std::optional<c10::ArrayRef<long> >)"),
                  frame("??", 0, "at::_ops::einsum::call(c10::basic_string_view<char>, "
                                 "c10::ArrayRef<at::Tensor>, std::optional<c10::ArrayRef<long> >)"),
                  frame("python_torch_functions_1.cpp", 0,
                        "torch::autograd::THPVariable_einsum(_object*, _object*, _object*)")]
               + INTERPRETER
               + [frame(SITE + "/torch/functional.py", 407, "einsum"),
                  frame(SITE + "/einops/einops.py", 905, "einsum"),
                  frame(USER + "/model.py", 96, "forward"),
                  frame(SITE + "/torch/nn/modules/module.py", 1747, "_call_impl"),
                  frame(SITE + "/torch/nn/modules/module.py", 1736, "_wrapped_call_impl"),
                  frame(USER + "/model.py", 211, "forward"),
                  frame("/home/student/train.py", 40, "train_step"),
                  frame("/home/student/train.py", 75, "<module>")]
               + MAIN_THREAD_END)
GPU_FORWARD_SITE = USER + "/model.py:96 forward"  # einops passes tensors on: not the site
# Backward on the autograd engine's device thread: C++ frames only.
AUTOGRAD_THREAD = [
    frame("function.h", 0, "torch::autograd::Node::operator()(std::vector<at::Tensor, "
                           "std::allocator<at::Tensor> >&&)"),
    frame("??", 0, "torch::autograd::call_function(std::shared_ptr<torch::autograd::GraphTask>&,"
                   " torch::autograd::Node*, torch::autograd::InputBuffer&)"),
    frame("??", 0, "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::"
                   "GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, "
                   "std::shared_ptr<torch::autograd::ReadyQueue> const&)"),
    frame("??", 0, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::"
                   "GraphTask> const&)"),
    frame("??", 0, "torch::autograd::Engine::thread_init(int, std::shared_ptr<torch::autograd::"
                   "ReadyQueue> const&, bool)"),
    frame("??", 0, "torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<"
                   "torch::autograd::ReadyQueue> const&, bool)"),
    frame("", 0, "execute_native_thread_routine"),
    frame("./nptl/pthread_create.c", 442, "start_thread"),
    frame("../sysdeps/unix/sysv/linux/x86_64/clone3.S", 81, "__clone3"),
]
NODE_APPLY = "::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"
GPU_TO_COPY_BACKWARD = (UNWIND + [frame("??", 0, "at::detail::empty_strided_cuda(c10::ArrayRef"
                                                 "<long>, c10::ArrayRef<long>, c10::ScalarType, "
                                                 "std::optional<c10::Device>)")]
                        + dispatched("empty_strided", "c10::ArrayRef<c10::SymInt>")
                        + dispatched("_to_copy", "at::Tensor const&, std::optional<c10::ScalarType>")
                        + [frame("??", 0, "at::native::to(at::Tensor const&, c10::ScalarType, "
                                          "bool, bool, std::optional<c10::MemoryFormat>)"),
                           frame("??", 0, "at::_ops::to_dtype::call(at::Tensor const&, "
                                          "c10::ScalarType, bool, bool, "
                                          "std::optional<c10::MemoryFormat>)"),
                           frame("??", 0, "torch::autograd::generated::ToCopyBackward0" +
                                          NODE_APPLY)]
                        + AUTOGRAD_THREAD)
GPU_TO_COPY_BACKWARD_SITE = "ToCopyBackward0 · aten::_to_copy"
GPU_MM_BACKWARD = (UNWIND + [frame("??", 0, "at::detail::empty_cuda(c10::ArrayRef<long>, "
                                            "c10::ScalarType, std::optional<c10::Device>, "
                                            "std::optional<c10::MemoryFormat>)")]
                   + dispatched("mm", "at::Tensor const&, at::Tensor const&")
                   + [frame("??", 0, "torch::autograd::generated::details::mm_mat2_backward("
                                     "at::Tensor const&, at::Tensor const&, c10::ArrayRef<c10::"
                                     "SymInt>, c10::ArrayRef<c10::SymInt>, c10::Layout, "
                                     "c10::Scalar const&)"),
                      frame("??", 0, "torch::autograd::generated::MmBackward0" + NODE_APPLY)]
                   + AUTOGRAD_THREAD)
GPU_MM_BACKWARD_SITE = "MmBackward0 · aten::mm"
GPU_ACCUMULATE = (UNWIND + dispatched("empty_like", "at::Tensor const&")
                  + [frame("??", 0, "torch::autograd::AccumulateGrad" + NODE_APPLY)]
                  + AUTOGRAD_THREAD)
GPU_ACCUMULATE_SITE = "AccumulateGrad · aten::empty_like"
# The user's own AdamW, main thread.
GPU_OPTIMIZER = (UNWIND + dispatched("zeros_like", "at::Tensor const&") + INTERPRETER
                 + [frame(USER + "/optimizer.py", 52, "step"),
                    frame(SITE + "/torch/optim/optimizer.py", 485, "wrapper"),
                    frame("/home/student/train.py", 47, "train_step"),
                    frame("/home/student/train.py", 75, "<module>")]
                 + MAIN_THREAD_END)
GPU_OPTIMIZER_SITE = USER + "/optimizer.py:52 step"
# A free on the autograd thread of a block saved before the trace began:
# the tensor's last reference let go when the node released its variables.
GPU_RELEASE = ([frame("??", 0, "torch::unwind::unwind()"),
                frame("??", 0, "torch::CapturedTraceback::gather(bool, bool, bool)"),
                frame("memory_snapshot.cpp", 0,
                      "torch::cuda::(anonymous namespace)::gather_with_cpp()"),
                frame("", 0, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::"
                             "free(c10::cuda::CUDACachingAllocator::Native::(anonymous "
                             "namespace)::Block*)"),
                frame("", 0, "c10::cuda::CUDACachingAllocator::Native::local_raw_delete(void*)"),
                frame("", 0, "c10::StorageImpl::~StorageImpl()"),
                frame("", 0, "c10::intrusive_ptr<c10::StorageImpl, c10::detail::intrusive_target"
                             "_default_null_type<c10::StorageImpl> >::reset_not_null_()"),
                frame("", 0, "c10::TensorImpl::~TensorImpl()"),
                frame("??", 0, "torch::autograd::SavedVariable::reset_data()"),
                frame("??", 0, "torch::autograd::generated::MulBackward0::release_variables()")]
               + AUTOGRAD_THREAD)
GPU_RELEASE_SITE = "(alloc not recorded; freed at torch::autograd::SavedVariable::reset_data())"
GPU_STACKS = {"GPU_FORWARD": GPU_FORWARD_SITE, "GPU_TO_COPY_BACKWARD": GPU_TO_COPY_BACKWARD_SITE,
              "GPU_MM_BACKWARD": GPU_MM_BACKWARD_SITE, "GPU_ACCUMULATE": GPU_ACCUMULATE_SITE,
              "GPU_OPTIMIZER": GPU_OPTIMIZER_SITE}


def event(action, addr, size, time_us, frames=None, stream=0):
    entry = {"action": action, "addr": addr, "size": size, "stream": stream,
             "time_us": time_us}
    entry["frames"] = frames if frames is not None else []
    return entry


def basic_snapshot():
    # Device 0's trace; the test counts its figures by hand from this list.
    device0 = [
        event("segment_alloc", 0x20000000, 4194304, 1000),
        event("alloc", 0x20000000, 3000000, 1010, FORWARD),
        event("alloc", 0x10100000, 524288, 1020, PARAMETER),
        event("free_requested", 0x20000000, 3000000, 1030, FORWARD),
        event("free_completed", 0x20000000, 3000000, 1031, FORWARD),
        event("free_completed", 0x50000000, 700000, 1040, OPTIMIZER),  # no alloc
        event("alloc", 0x20000000, 2500000, 1050, BACKWARD),
        {"action": "oom", "device_free": 1000, "size": 8000000, "stream": 0,
         "time_us": 1060, "frames": []},
        event("alloc", 0x20300000, 100000, 1070),
        event("free_completed", 0x20000000, 2500000, 1080, BACKWARD),
        event("free", 0x20300000, 100000, 1090),  # an older snapshot's free
        event("segment_free", 0x20000000, 4194304, 1100),
    ]
    device1 = [
        event("alloc", 0x31000000, 1000, 10, FORWARD),  # the same list: the memo shares it
        event("alloc", 0x31001000, 3000, 11),
        event("free_completed", 0x31000000, 1000, 12, FORWARD),
    ]
    segments = [
        {"device": 0, "address": 0x10000000, "total_size": 2097152, "allocated_size": 1572864,
         "active_size": 1572864, "requested_size": 1524288, "stream": 0,
         "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": [], "blocks": [
             # alive since before the trace: counts its requested size
             {"address": 0x10000000, "size": 1048576, "requested_size": 1000000,
              "state": "active_allocated", "frames": []},
             # opened by the trace's alloc at this address: counted there
             {"address": 0x10100000, "size": 524288, "requested_size": 524288,
              "state": "active_allocated", "frames": PARAMETER},
             {"address": 0x10180000, "size": 524288, "requested_size": 0,
              "state": "inactive", "frames": []},
         ]},
        {"device": 1, "address": 0x30000000, "total_size": 2097152, "allocated_size": 2097152,
         "active_size": 2097152, "requested_size": 2000000, "stream": 0,
         "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": [], "blocks": [
             {"address": 0x30000000, "size": 2097152, "requested_size": 2000000,
              "state": "active_allocated", "frames": []},
         ]},
    ]
    annotations = [
        {"stage": "START", "name": "fwd", "device": 0, "time_us": 1005},
        {"stage": "END", "name": "fwd", "device": 0, "time_us": 1035},
        {"stage": "END", "name": "stray", "device": 0, "time_us": 1036},  # no START: dropped
        {"stage": "START", "name": "opt", "device": 0, "time_us": 1045},  # no END
        {"stage": "START", "name": "other", "device": 1, "time_us": 5},
        {"stage": "END", "name": "other", "device": 1, "time_us": 6},
    ]
    settings = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False", "max_split_size": -1,
                "garbage_collection_threshold": 0.0, "expandable_segments": False,
                "roundup_power2_divisions": {"1": 0, "2": 0}}
    return {"segments": segments, "device_traces": [device0, device1],
            "allocator_settings": settings, "external_annotations": annotations}


def expandable_snapshot():
    # 6 MiB mapped at the end, 2 MiB more than when the trace began.
    mib = 1 << 20
    return {
        "segments": [{"device": 0, "address": 0x40000000, "total_size": 6 * mib,
                      "stream": 0, "segment_type": "large", "is_expandable": True,
                      "blocks": [{"size": 6 * mib, "state": "inactive"}]}],
        "device_traces": [[
            event("segment_map", 0x40200000, 2 * mib, 1),
            event("segment_map", 0x40400000, 2 * mib, 2),
            event("segment_unmap", 0x40400000, 2 * mib, 3),
        ]],
    }


class RunsCommand:
    """Pickles as a call of os.system: Python's pickle.load would run it."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def tensor_pickle():
    try:
        import torch
        return pickle.dumps(torch.zeros(2), protocol=2)
    except ImportError:
        # What torch writes first: its rebuild function as a global.
        return b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00)R."


def torch_save_archive():
    try:
        import io
        import torch
        buffer = io.BytesIO()
        torch.save({"w": torch.zeros(2)}, buffer)
        return buffer.getvalue()
    except ImportError:
        return b"PK\x03\x04" + b"\x00" * 26


def deep_pickle(depth):
    # [[[...]]] the way pickle nests it: every list on the stack, then appended inward.
    return b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."


def deep_memo_pickle(depth):
    # The same depth with at most two values on the stack: each new list
    # appends the one before, fetched back from the memo.
    out = bytearray(b"\x80\x02]r" + struct.pack("<I", 0) + b"0")
    for i in range(1, depth):
        out += b"]r" + struct.pack("<I", i) + b"j" + struct.pack("<I", i - 1) + b"a0"
    out += b"j" + struct.pack("<I", depth - 1) + b"."
    return bytes(out)


# Random plain values and their text form (the test prints what it reads the same way).
def encode_long(x):
    if x == 0:
        return b""
    n = (x.bit_length() >> 3) + 1
    raw = x.to_bytes(n, "little", signed=True)
    if x < 0 and n > 1 and raw[-1] == 0xFF and (raw[-2] & 0x80):
        raw = raw[:-1]
    return raw


def text_form(value):
    if value is None:
        return "None"
    if value is True or value is False:
        return str(value)
    if isinstance(value, int):
        return str(value) if -2**63 <= value < 2**63 else "big:" + encode_long(value).hex()
    if isinstance(value, float):
        return "f:%d" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if isinstance(value, str):
        return "s:" + value.encode("utf-8").hex()
    if isinstance(value, bytearray):
        return "ba:" + bytes(value).hex()
    if isinstance(value, bytes):
        return "b:" + value.hex()
    if isinstance(value, tuple):
        return "(" + ",".join(text_form(x) for x in value) + ")"
    if isinstance(value, list):
        return "[" + ",".join(text_form(x) for x in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(text_form(k) + ":" + text_form(v) for k, v in value.items()) + "}"
    if isinstance(value, frozenset):
        return "frozenset{" + ",".join(text_form(x) for x in value) + "}"
    if isinstance(value, set):
        return "set{" + ",".join(text_form(x) for x in value) + "}"
    raise TypeError(type(value))


def random_value(rng, protocol, depth=0):
    # Protocols below 3 pickle bytes, below 4 sets, below 5 bytearrays through globals.
    kinds = ["none", "bool", "int", "bigint", "float", "str", "tuple", "list", "dict"]
    kinds += ["bytes"] if protocol >= 3 else []
    kinds += ["set", "frozenset"] if protocol >= 4 else []
    kinds += ["bytearray"] if protocol >= 5 else []
    if depth >= 4:
        kinds = [k for k in kinds if k not in ("tuple", "list", "dict", "set", "frozenset")]
    kind = rng.choice(kinds)
    count = rng.randrange(0, 1100) if depth == 0 and rng.random() < 0.05 else rng.randrange(5)
    if kind == "none":
        return None
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([rng.randrange(-300, 300), rng.randrange(-2**40, 2**40)])
    if kind == "bigint":
        return rng.choice([2**31, -2**31 - 1, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64,
                           -2**64, 10**30, -(10**40), 255, 256, 65535, 65536, 2**2100])
    if kind == "float":
        return rng.choice([0.0, -0.0, 1.5, 1e300, float("inf"), -1e-300, rng.random()])
    if kind == "str":
        length = rng.randrange(300) if rng.random() < 0.1 else rng.randrange(8)
        return "".join(rng.choice("abc\u00e9\u4e2d\n") for _ in range(length))
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(300)))
    if kind == "bytearray":
        return bytearray(b"xy" * rng.randrange(3))
    if kind == "tuple":
        return tuple(random_value(rng, protocol, depth + 1) for _ in range(count))
    if kind == "list":
        return [random_value(rng, protocol, depth + 1) for _ in range(count)]
    if kind == "dict":
        return {"k%d" % rng.randrange(50): random_value(rng, protocol, depth + 1)
                for _ in range(count)}
    items = {rng.randrange(-100, 100) for _ in range(count)}
    return frozenset(items) if kind == "frozenset" else items


def write_values(out):
    for protocol in (2, 3, 4, 5):
        rng = random.Random(protocol)
        shared = ["shared", 1]
        values = [random_value(rng, protocol) for _ in range(200)]
        values.append([shared, shared, {"x": shared}])  # one object three times: the memo
        with open(os.path.join(out, "values_p%d.pickle" % protocol), "wb") as f:
            pickle.dump(values, f, protocol=protocol)
        with open(os.path.join(out, "values_p%d.txt" % protocol), "w") as f:
            for value in values:
                f.write(text_form(value) + "\n")


def random_snapshot(seed=5, events=3000):
    rng = random.Random(seed)
    stacks = [FORWARD, PARAMETER, OPTIMIZER, BACKWARD, []]
    traces, segments = [], []
    for device in range(2):
        trace, live = [], []
        addresses = [0x1000 * (device * 10000 + i) for i in range(1, 300)]
        for t in range(events // (device + 1)):
            roll = rng.random()
            addr = rng.choice(addresses)
            size = rng.randrange(1, 1 << 20)
            stack = rng.choice(stacks)
            if roll < 0.45:
                trace.append(event("alloc", addr, size, t, stack))
                live.append((addr, size))
            elif roll < 0.8 and live:
                addr, size = live.pop(rng.randrange(len(live)))
                if rng.random() < 0.3:
                    trace.append(event("free_requested", addr, size, t, stack))
                trace.append(event(rng.choice(["free_completed", "free"]), addr, size, t, stack))
            elif roll < 0.85:
                trace.append(event("free_completed", addr, size, t, stack))  # maybe no alloc
            elif roll < 0.9:
                trace.append(event(rng.choice(["segment_alloc", "segment_free"]), addr,
                                   size, t))
            elif roll < 0.92:
                trace.append({"action": "oom", "device_free": 5, "size": size, "stream": 0,
                              "time_us": t, "frames": []})
            else:
                trace.append(event("free_requested", addr, size, t, stack))
        traces.append(trace)
        blocks = []
        for i in range(40):
            size = rng.randrange(1, 1 << 16) * 512
            blocks.append({"size": size, "requested_size": size - rng.randrange(512),
                           "state": rng.choice(["active_allocated", "inactive",
                                                "active_pending_free"]),
                           "frames": rng.choice(stacks)})
        # Segments at addresses the trace uses, so some blocks are open there.
        base = addresses[rng.randrange(len(addresses))]
        address = base
        for block in blocks:
            block["address"] = address
            address += block["size"]
        segments.append({"device": device, "address": base, "stream": 0,
                         "total_size": address - base, "segment_type": "large",
                         "blocks": blocks})
    return {"segments": segments, "device_traces": traces}


def gpu_like_snapshot():
    """One device's train step with GPU_STACKS, counted by hand (MiB):
    alive before the trace 3 (a saved tensor, freed at event 13) + 1 (a
    segment's block, no stack); forward 4 × 2 (events 1-4); backward's
    _to_copy 3 × 4, mm 2 × 1, AccumulateGrad 0.5 (events 5-10): the peak,
    26.5 MiB after event 10. 19 entries; two free_requested/free_completed
    pairs make 17 events as memory_viz counts them; 11 allocs in the trace
    and 2 blocks before it make 13 allocations."""
    mib = 1 << 20
    base = 0x7F0000000000
    t0 = 1_700_000_000_000_000
    trace = [event("segment_alloc", base, 64 * mib, t0)]
    steps = [("alloc", 0x10, 2 * mib, GPU_FORWARD), ("alloc", 0x11, 2 * mib, GPU_FORWARD),
             ("alloc", 0x12, 2 * mib, GPU_FORWARD), ("alloc", 0x13, 2 * mib, GPU_FORWARD),
             ("alloc", 0x20, 4 * mib, GPU_TO_COPY_BACKWARD),
             ("alloc", 0x21, 4 * mib, GPU_TO_COPY_BACKWARD),
             ("alloc", 0x22, 4 * mib, GPU_TO_COPY_BACKWARD),
             ("alloc", 0x30, 1 * mib, GPU_MM_BACKWARD), ("alloc", 0x31, 1 * mib, GPU_MM_BACKWARD),
             ("alloc", 0x40, mib // 2, GPU_ACCUMULATE),
             ("free_requested", 0x10, 2 * mib, GPU_RELEASE),
             ("free_completed", 0x10, 2 * mib, GPU_RELEASE),
             ("free_completed", 0x50, 3 * mib, GPU_RELEASE),  # allocated before the trace
             ("free_requested", 0x20, 4 * mib, GPU_RELEASE),
             ("free_completed", 0x20, 4 * mib, GPU_RELEASE),
             ("alloc", 0x60, mib // 4, GPU_OPTIMIZER),
             ("free_completed", 0x60, mib // 4, GPU_OPTIMIZER),
             ("free_completed", 0x21, 4 * mib, GPU_RELEASE)]
    for i, (action, slot, size, frames) in enumerate(steps):
        trace.append(event(action, base + slot * mib, size, t0 + 10 * (i + 1), frames))
    segments = [{"device": 0, "address": base + 0x100 * mib, "total_size": 2 * mib, "stream": 0,
                 "segment_type": "large", "is_expandable": False, "frames": [],
                 "blocks": [{"size": mib, "requested_size": mib, "state": "active_allocated",
                             "frames": []},
                            {"size": mib, "requested_size": 0, "state": "inactive",
                             "frames": []}]}]
    return {"segments": segments, "device_traces": [trace],
            "allocator_settings": {"expandable_segments": False}}


def memviz_events(trace):
    """Events as memory_viz's Allocator State History lists them
    (annotate_snapshot): a free_requested followed at once by its
    free_completed is one "free"."""
    kept = []
    for e in trace:
        if (e["action"] == "free_completed" and kept and kept[-1]["action"] == "free_requested"
                and kept[-1]["addr"] == e["addr"]):
            kept[-1] = dict(kept[-1], action="free")
            continue
        kept.append(e)
    return len(kept)


def memviz_figures(snapshot, device):
    """memory_viz's Active Memory Timeline (process_alloc_data), written
    again in Python for the test to hold the C++ one against."""
    elements, actions, initially, open_at = [], [], [], {}
    allocs = frees = 0
    for e in snapshot["device_traces"][device]:
        if e["action"] == "alloc":
            allocs += 1
            elements.append(e["size"])
            open_at[e["addr"]] = len(elements) - 1
            actions.append(len(elements) - 1)
        elif e["action"] in ("free", "free_completed"):
            frees += 1
            if e["addr"] in open_at:
                actions.append(open_at.pop(e["addr"]))
            else:
                elements.append(e["size"])
                initially.append(len(elements) - 1)
                actions.append(len(elements) - 1)
    for segment in snapshot["segments"]:
        if segment["device"] != device:
            continue
        address = segment["address"]
        for block in segment["blocks"]:
            if block["state"] == "active_allocated" and address not in open_at:
                elements.append(block["requested_size"])
                initially.append(len(elements) - 1)
            address += block["size"]
    total = sum(elements[i] for i in initially)
    alive_before = total
    peak = total
    current = set(initially)
    for i in actions:
        if i in current:
            current.remove(i)
            total -= elements[i]
        else:
            current.add(i)
            total += elements[i]
        peak = max(peak, total)
    return {"events": memviz_events(snapshot["device_traces"][device]),
            "allocations": len(elements), "allocs": allocs, "frees": frees,
            "alive_before_bytes": alive_before, "peak_bytes": peak, "end_bytes": total}


def big_snapshot(events, seed=1, devices=1):
    """`events` entries on each of `devices` devices like a training loop's:
    allocs and frees over a thousand stacks of twenty frames, segments now
    and then."""
    if devices > 1:
        traces = [big_snapshot(events, seed + d)["device_traces"][0] for d in range(devices)]
        return {"segments": [], "device_traces": traces,
                "allocator_settings": {"expandable_segments": False}}
    rng = random.Random(seed)
    stacks = []
    for s in range(1000):
        frames = [frame(TORCH + "/nn/modules/module.py", 1700 + i, "_call_impl")
                  for i in range(16)]
        frames.insert(0, frame("??", 0, "c10::cuda::CUDACachingAllocator::malloc"))
        frames.insert(2, frame("model.py", 10 + s, "forward" if s % 3 else "backward"))
        frames.append(frame("train.py", 100 + s % 50, "main"))
        frames.append(frame("train.py", 7, "<module>"))
        stacks.append(frames)
    trace = []
    live = []
    time_us = 1_700_000_000_000_000
    next_addr = 0x7F0000000000
    while len(trace) < events:
        time_us += rng.randrange(1, 20)
        if len(trace) % 997 == 0:
            trace.append(event("segment_alloc", next_addr, 1 << 21, time_us))
        if live and (len(live) > 5000 or rng.random() < 0.5):
            addr, size, stack = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.3:
                trace.append(event("free_requested", addr, size, time_us, stack))
            trace.append(event("free_completed", addr, size, time_us, stack))
        else:
            size = rng.choice([512, 4096, 1 << 20, 3 << 20, rng.randrange(1, 1 << 24)])
            stack = rng.choice(stacks)
            trace.append(event("alloc", next_addr, size, time_us, stack))
            live.append((next_addr, size, stack))
            next_addr += 1 << 12
    return {"segments": [], "device_traces": [trace[:events]],
            "allocator_settings": {"expandable_segments": False}}


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    out = args[0]
    marker = os.path.join(out, "MARKER")
    big = 0
    big_devices = 1
    i = 1
    while i < len(args):
        if args[i] == "--marker":
            marker = args[i + 1]
        elif args[i] == "--big":
            big = int(args[i + 1])
        elif args[i] == "--big-devices":
            big_devices = int(args[i + 1])
        else:
            sys.exit("unknown argument " + args[i])
        i += 2
    os.makedirs(out, exist_ok=True)

    def write(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    snapshot = basic_snapshot()
    write("basic_p2.pickle", pickle.dumps(snapshot, protocol=2))
    write("basic_p5.pickle", pickle.dumps(snapshot, protocol=5))
    write("basic.json", json.dumps(snapshot).encode())
    write("expandable.pickle", pickle.dumps(expandable_snapshot(), protocol=4))

    command = "touch " + marker
    write("os_system_p2.pickle", pickle.dumps(RunsCommand(command), protocol=2))
    write("os_system_p4.pickle", pickle.dumps(RunsCommand(command), protocol=4))
    nested = basic_snapshot()
    nested["device_traces"][0][1]["frames"] = [RunsCommand(command)]
    write("os_system_nested.pickle", pickle.dumps(nested, protocol=4))
    whole = pickle.dumps(snapshot, protocol=2)
    write("truncated.pickle", whole[: len(whole) // 2])
    write("list.pickle", pickle.dumps([1, 2, 3], protocol=4))
    write("tensor.pickle", tensor_pickle())
    write("torch_save.pt", torch_save_archive())
    write("deep.pickle", deep_pickle(200_000))
    write("deep_memo.pickle", deep_memo_pickle(200_000))
    write("deep.json", b"[" * 200_000 + b"]" * 200_000)
    shaken = random_snapshot()
    write("random_p2.pickle", pickle.dumps(shaken, protocol=2))
    write("random_p4.pickle", pickle.dumps(shaken, protocol=4))
    write("random.json", json.dumps(shaken).encode())
    expected = [memviz_figures(shaken, device) for device in range(2)]
    write("random_expected.json", json.dumps(expected).encode())
    write("gpu_like.pickle", pickle.dumps(gpu_like_snapshot(), protocol=4))
    write_values(out)
    if big:
        with open(os.path.join(out, "big.pickle"), "wb") as f:
            pickle.dump(big_snapshot(big, devices=big_devices), f, protocol=4)


if __name__ == "__main__":
    main()
