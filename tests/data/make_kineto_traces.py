#!/usr/bin/env python3
"""Makes the Kineto trace fixtures in tests/data/traces/ (tst_kineto_trace).

  make_kineto_traces.py gpu OUT_DIR     hand-written GPU traces with known overlaps
                                        (no torch needed; the test computes them by hand)
  make_kineto_traces.py cpu OUT_DIR     torch.profiler on the CPU, two gloo ranks, with
                                        torch's own operator table beside each trace
  make_kineto_traces.py export OUT_DIR  what `stepscope-cli export` must write of a traced
                                        GPU run to speak Kineto (issue 30, item 7), by hand
  make_kineto_traces.py large OUT MB    a trace of about MB megabytes made by repeating
                                        the real-shaped rank-0 fixtures (for the open-time
                                        measurement in docs/perf)

The GPU traces spell events as Kineto does (cat, args.stream, args.correlation,
ac2g flows, cuda_runtime launches, deviceProperties, distributedInfo); their
timelines are drawn in tst_kineto_trace.cpp beside the figures expected of them.
"""
import copy
import gzip
import json
import os
import sys

HOST_PID = 100
DEVICE_PROPERTIES = [{
    "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
    "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
    "sharedMemPerBlock": 49152, "numSms": 132, "sharedMemPerMultiprocessor": 233472,
}]

GEMM = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(Params)"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
ELEMENTWISE = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
               "<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
               "at::detail::Array<char*, 3>)")
SYNC_KERNEL = "void cub::DeviceSyncKernel<int>(int*)"  # "Sync": HTA's OTHER type
MEMCPY_HTOD = "Memcpy HtoD (Pageable -> Device)"
MEMCPY_DTOH = "Memcpy DtoH (Device -> Pageable)"
MEMSET = "Memset (Device)"

# (correlation, launch name, host tid, launch ts, launch dur, kernel, kernel cat,
#  stream, kernel ts, kernel dur)
LAUNCHES = [
    (1, "cudaLaunchKernel", 100, 10, 5, GEMM, "kernel", 7, 20, 40),
    (2, "cudaLaunchKernel", 100, 16, 5, NCCL, "kernel", 20, 40, 50),
    (3, "cudaMemcpyAsync", 100, 22, 5, MEMCPY_HTOD, "gpu_memcpy", 21, 50, 20),
    (4, "cudaLaunchKernel", 100, 28, 8, ELEMENTWISE, "kernel", 7, 60, 5),
    (5, "cudaMemsetAsync", 100, 37, 5, MEMSET, "gpu_memset", 7, 145, 2),
    (12, "cudaMemcpyAsync", 100, 43, 4, MEMCPY_DTOH, "gpu_memcpy", 21, 92, 2),
    (6, "cudaLaunchKernel", 100, 110, 5, GEMM, "kernel", 7, 120, 30),
    (7, "cudaLaunchKernel", 101, 116, 60, NCCL, "kernel", 20, 130, 50),
    (8, "cudaLaunchKernel", 100, 122, 6, ELEMENTWISE, "kernel", 7, 150, 6),
    (9, "cudaLaunchKernel", 100, 130, 4, SYNC_KERNEL, "kernel", 7, 185, 5),
    (10, "cudaLaunchKernel", 100, 210, 5, GEMM, "kernel", 7, 220, 40),
]
# (name, tid, ts, dur): each holds one launch above (self time = dur - launch dur)
OPERATORS = [
    ("aten::mm", 100, 9, 7), ("c10d::allreduce_", 100, 16, 6), ("aten::copy_", 100, 22, 6),
    ("aten::add", 100, 28, 9), ("aten::fill_", 100, 37, 6), ("aten::copy_", 100, 43, 5),
    ("aten::mm", 100, 109, 7), ("c10d::allreduce_", 101, 115, 62), ("aten::add", 100, 121, 8),
    ("aten::nonzero", 100, 129, 6), ("aten::mm", 100, 209, 7),
]


def x(cat, name, pid, tid, ts, dur, **args):
    event = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        event["args"] = args
    return event


def gpu_events(steps):
    """The rank's events; `steps` lists (number, ts, dur) ProfilerStep ranges."""
    events = [
        {"name": "process_name", "ph": "M", "pid": HOST_PID, "tid": 0, "args": {"name": "python"}},
        {"name": "thread_name", "ph": "M", "pid": HOST_PID, "tid": 100,
         "args": {"name": "thread 100 (python)"}},
        {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "python"}},
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    ]
    for number, ts, dur in steps:
        events.append(x("user_annotation", f"ProfilerStep#{number}", HOST_PID, 100, ts, dur,
                        **{"External id": 1000 + number}))
    events.append(x("python_function", "train.py(12): step", HOST_PID, 100, 4, 56))
    events.append(x("user_annotation", "forward", HOST_PID, 100, 5, 45, **{"External id": 900}))
    events.append(x("gpu_user_annotation", "forward", 0, 7, 20, 45, **{"External id": 900}))
    for external, (name, tid, ts, dur) in enumerate(OPERATORS, start=1):
        events.append(x("cpu_op", name, HOST_PID, tid, ts, dur,
                        **{"External id": external, "Input Dims": [[8, 16], [16, 32]],
                           "Input type": ["float", "float"]}))
    for corr, launch, tid, lts, ldur, kernel, kcat, stream, kts, kdur in LAUNCHES:
        events.append(x("cuda_runtime", launch, HOST_PID, tid, lts, ldur,
                        **{"External id": corr, "cbid": 211, "correlation": corr}))
        args = {"External id": corr, "queued": 0, "device": 0, "context": 1, "stream": stream,
                "correlation": corr}
        if kcat == "kernel":
            args.update({"registers per thread": 32, "shared memory": 0, "grid": [128, 1, 1],
                         "block": [256, 1, 1], "est. achieved occupancy %": 50})
        else:
            args.update({"bytes": 4096, "memory bandwidth (GB/s)": 2.5})
        events.append(x(kcat, kernel, 0, stream, kts, kdur, **args))
        events.append({"ph": "s", "id": corr, "pid": HOST_PID, "tid": tid, "ts": lts,
                       "cat": "ac2g", "name": "ac2g"})
        events.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": kts,
                       "cat": "ac2g", "name": "ac2g", "bp": "e"})
    # What real traces also hold: a driver call, the profiler's own span (cat
    # "Trace", which HTA drops), forward/backward flows, an instant, a counter.
    events.append(x("cuda_driver", "cuModuleLoadData", HOST_PID, 100, 1, 2,
                    **{"cbid": 17, "correlation": 500}))
    events.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                   "tid": "PyTorch Profiler", "ts": 0, "dur": 300, "args": {"Op count": 0}})
    events.append({"ph": "s", "id": 77, "pid": HOST_PID, "tid": 100, "ts": 9, "cat": "fwdbwd",
                   "name": "fwdbwd"})
    events.append({"ph": "f", "id": 77, "pid": HOST_PID, "tid": 100, "ts": 28, "cat": "fwdbwd",
                   "name": "fwdbwd", "bp": "e"})
    events.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
                   "ts": 299})
    events.append({"ph": "C", "name": "GPU 0 Memory", "pid": 0, "ts": 50,
                   "args": {"allocated": 1.5}})
    return events


def trace(events, rank=None):
    document = {"schemaVersion": 1, "deviceProperties": DEVICE_PROPERTIES}
    if rank is not None:
        document["distributedInfo"] = {"backend": "nccl", "rank": rank, "world_size": 2}
    document.update({"displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000,
                     "traceEvents": events, "traceName": "fixture"})
    return document


def write(path, document):
    # Kineto writes "key": value with a space; HTA finds the rank with that spelling.
    text = json.dumps(document, indent=1)
    if path.endswith(".gz"):
        with gzip.GzipFile(path, "wb", mtime=0) as out:  # the same bytes every time
            out.write(text.encode("utf-8"))
    else:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)


def make_gpu(out_dir):
    two = os.path.join(out_dir, "gpu_two_ranks")
    os.makedirs(two, exist_ok=True)
    write(os.path.join(two, "rank0.json"),
          trace(gpu_events([(1, 0, 100), (2, 100, 100), (3, 200, 100)]), rank=0))
    # Rank 1: a longer step 2, so its last step starts at 215 and the launch
    # at 210 (correlation 10) falls inside the analysed steps.
    write(os.path.join(two, "rank1.pt.trace.json.gz"),
          trace(gpu_events([(1, 0, 100), (2, 100, 115), (3, 215, 85)]), rank=1))
    # No profiler steps and times at half microseconds: nothing is left out,
    # fractions are kept, and every stretch between two edges is whole.
    fractional = os.path.join(out_dir, "gpu_fractional")
    os.makedirs(fractional, exist_ok=True)
    events = gpu_events([])
    for event in events:
        if "ts" in event:
            event["ts"] = event["ts"] + 1_000_000.5
    write(os.path.join(fractional, "trace.json"), trace(events))


def make_cpu(out_dir):
    import torch  # the project's venv (~/.cache/stepscope/venv)
    import torch.multiprocessing as mp
    folder = os.path.join(out_dir, "cpu_gloo")
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        os.remove(os.path.join(folder, name))
    # A free port, so two runs at once (parallel tests) do not meet.
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        os.environ["MASTER_PORT"] = str(probe.getsockname()[1])
    mp.spawn(_cpu_rank, args=(2, folder), nprocs=2)


def _cpu_rank(rank, world, folder):
    import torch
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randn(8, 16)

    def ready(prof):
        base = os.path.join(folder, f"rank{rank}")
        prof.export_chrome_trace(base + ".pt.trace.json")
        with open(base + ".pt.trace.json", "rb") as raw, gzip.open(base + ".pt.trace.json.gz",
                                                                   "wb") as packed:
            packed.write(raw.read())
        os.remove(base + ".pt.trace.json")
        # torch's own operator table, which the C++ reader's must match.
        table = {e.key: {"count": e.count, "cpu_time_total": e.cpu_time_total,
                         "self_cpu_time_total": e.self_cpu_time_total}
                 for e in prof.key_averages()}
        with open(base + ".torch-ops", "w", encoding="utf-8") as out:
            json.dump(table, out, indent=1, sort_keys=True)

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=ready) as prof:
        for _ in range(4):
            with record_function("forward"):
                loss = model(data).sum()
            loss.backward()
            for parameter in model.parameters():
                dist.all_reduce(parameter.grad)
            optimizer.step()
            optimizer.zero_grad()
            prof.step()
    dist.destroy_process_group()


def make_export(out_dir):
    """One traced step of a StepScope GPU run as the Chrome trace export must
    spell it for HTA and this reader: ProfilerStep#N and the phases as
    user_annotation, operators as cpu_op, each launch a cuda_runtime
    cudaLaunchKernel (cudaMemcpyAsync) holding the kernel's correlation, ac2g
    flows, kernels on pid 0 / tid = stream with args.stream and
    args.correlation, deviceProperties, and distributedInfo written with
    "rank": 0 (a space, which HTA's rank search needs)."""
    host, thread = 1, 1
    events = [
        {"name": "process_name", "ph": "M", "pid": host, "tid": 0, "args": {"name": "host"}},
        {"name": "thread_name", "ph": "M", "pid": host, "tid": thread, "args": {"name": "main"}},
        {"name": "process_name", "ph": "M", "pid": 0, "tid": 0,
         "args": {"name": "GPU 0 NVIDIA H100 80GB HBM3"}},
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
        x("user_annotation", "ProfilerStep#3", host, thread, 0.0, 1000.0, **{"External id": 1}),
        x("user_annotation", "forward", host, thread, 0.5, 399.5, **{"External id": 2}),
        x("user_annotation", "backward", host, thread, 400.0, 500.0, **{"External id": 3}),
        x("user_annotation", "optimizer", host, thread, 900.0, 100.0, **{"External id": 4}),
    ]
    # (operator, op ts, op dur, kernel, stream, kernel ts, kernel dur); the
    # launch sits 1 µs into its operator and lasts 4 µs.
    work = [
        ("aten::mm", 10.0, 20.0, GEMM, 7, 30.0, 150.25),
        ("aten::add", 40.0, 10.0, ELEMENTWISE, 7, 181.0, 8.5),
        ("aten::mm", 410.0, 20.0, GEMM, 7, 430.0, 300.0),
        ("aten::copy_", 440.0, 10.0, MEMCPY_DTOH, 7, 731.0, 12.0),
        ("aten::_foreach_add_", 910.0, 30.0, ELEMENTWISE, 7, 925.0, 40.0),
    ]
    for corr, (op, ots, odur, kernel, stream, kts, kdur) in enumerate(work, start=10):
        events.append(x("cpu_op", op, host, thread, ots, odur, **{"External id": corr}))
        launch = "cudaMemcpyAsync" if kernel.startswith("Memcpy") else "cudaLaunchKernel"
        events.append(x("cuda_runtime", launch, host, thread, ots + 1.0, 4.0,
                        **{"External id": corr, "correlation": corr}))
        events.append({"ph": "s", "id": corr, "pid": host, "tid": thread, "ts": ots + 1.0,
                       "cat": "ac2g", "name": "ac2g"})
        cat = "gpu_memcpy" if kernel.startswith("Memcpy") else "kernel"
        events.append(x(cat, kernel, 0, stream, kts, kdur,
                        **{"External id": corr, "device": 0, "stream": stream,
                           "correlation": corr}))
        events.append({"ph": "f", "id": corr, "pid": 0, "tid": stream, "ts": kts,
                       "cat": "ac2g", "name": "ac2g", "bp": "e"})
    events.append({"ph": "C", "name": "active memory (MiB)", "pid": host, "ts": 100.0,
                   "args": {"activations": 12.5}})
    document = {"schemaVersion": 1, "deviceProperties": DEVICE_PROPERTIES,
                "distributedInfo": {"backend": "none", "rank": 0, "world_size": 1},
                "displayTimeUnit": "ms", "traceEvents": events,
                "otherData": {"producer": "StepScope", "step": 3}}
    folder = os.path.join(out_dir, "stepscope_export")
    os.makedirs(folder, exist_ok=True)
    write(os.path.join(folder, "run.pt.trace.json"), document)


def make_large(out_path, megabytes, steps=10):
    """Repeats rank 0 of both fixtures (the GPU one's kernels, launches and
    flows, the CPU one's operators) until the file is MB large, under `steps`
    ProfilerStep ranges, as a real recording has a few long steps."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "traces", "gpu_two_ranks", "rank0.json"), encoding="utf-8") as f:
        gpu = json.load(f)
    with gzip.open(os.path.join(here, "traces", "cpu_gloo", "rank0.pt.trace.json.gz")) as f:
        cpu = json.load(f)
    template = [e for e in gpu["traceEvents"]
                if e.get("ph") != "M" and e.get("cat") != "Trace"
                and not e.get("name", "").startswith("ProfilerStep#")]
    cpu_ops = [e for e in cpu["traceEvents"] if e.get("cat") == "cpu_op"][:40]
    cpu_start = min(e["ts"] for e in cpu_ops)
    period = 300.0

    def batch(repeat):
        shift = repeat * period
        events = []
        for event in template:
            e = copy.copy(event)
            e["ts"] = round(event["ts"] + shift, 3)
            if "id" in e:
                e["id"] = event["id"] + repeat * 1000
            if "args" in e:
                e["args"] = dict(event["args"])
                if "correlation" in e["args"]:
                    e["args"]["correlation"] += repeat * 1000
            events.append(e)
        for event in cpu_ops:  # real operators, squeezed into the period
            e = dict(event)
            e["ts"] = round(shift + 250 + (event["ts"] - cpu_start) / 1000.0, 3)
            e["dur"] = round(event["dur"] / 1000.0, 3)
            e["tid"] = 102
            events.append(e)
        return ",\n".join(json.dumps(e) for e in events)

    repeats = max(steps, int(megabytes * 1_000_000 / (len(batch(0)) + 2)) + 1)
    per_step = -(-repeats // steps)
    with open(out_path, "w", encoding="utf-8") as out:
        head = {k: v for k, v in gpu.items() if k != "traceEvents"}
        out.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        for step in range(steps):
            start, stop = step * per_step, min(repeats, (step + 1) * per_step)
            marker = {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}",
                      "pid": HOST_PID, "tid": 100, "ts": start * period,
                      "dur": (stop - start) * period, "args": {"External id": 1_000_000 + step}}
            out.write(("" if step == 0 else ",\n") + json.dumps(marker))
            for repeat in range(start, stop):
                out.write(",\n" + batch(repeat))
        out.write("\n]}\n")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "gpu":
        make_gpu(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "cpu":
        make_cpu(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "export":
        make_export(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "large":
        make_large(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(__doc__)
