#!/usr/bin/env python3
"""Generate a Kineto-layout Chrome trace of a given size for benchmarks:
training steps (ProfilerStep#N) of layers, each a cpu_op with a child op,
a cudaLaunchKernel with its kernel on a GPU stream, flow events, some
memcpys -- the event mix and formatting torch.profiler writes (~200 bytes
per event, pretty-printed like Kineto).

usage: gen_trace.py OUT.json SIZE_MB [--seed N]"""
import random
import sys

KERNELS = ["ampere_sgemm_128x64_tn", "void at::native::vectorized_elementwise_kernel<4, at::native::"
           "CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
           "at::detail::Array<char*, 3>)", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
           "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)", "ncclKernel_AllReduce_RING_LL_Sum_float"]
OPS = [("aten::linear", "aten::addmm"), ("aten::relu", "aten::clamp_min"), ("aten::add", "aten::add_"),
       ("aten::layer_norm", "aten::native_layer_norm"), ("aten::softmax", "aten::_softmax")]


def main():
    out, size = sys.argv[1], int(float(sys.argv[2]) * 1e6)
    rnd = random.Random(int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1)
    pid, tid = 4242, 4242
    f = open(out, "w", buffering=1 << 22)
    f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", '
            '"totalGlobalMem": 84929216512, "computeMajor": 9, "computeMinor": 0}],\n'
            '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n'
            '  "baseTimeNanoseconds": 1700000000000000000,\n  "displayTimeUnit": "ms",\n  "traceEvents": [\n')
    X = ('  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n    "ts": %.3f, "dur": %.3f,\n'
         '    "args": {\n      %s\n    }\n  },\n')
    written, corr, ext, step, t, gt = 0, 0, 0, 0, 1000.0, 1000.0
    first = True
    while written < size:
        step += 1
        step_start = t
        parts = []
        t += 5.0
        for layer in range(40):
            op, child = OPS[layer % len(OPS)]
            d_launch = 3.0 + rnd.random() * 4
            d_child = d_launch + 4 + rnd.random() * 6
            d_op = d_child + 3 + rnd.random() * 5
            ext += 1
            corr += 1
            parts.append(X % ("cpu_op", op, pid, tid, t, d_op, '"External id": %d, "Record function id": 0, '
                                                        '"Ev Idx": %d' % (ext, ext)))
            parts.append(X % ("cpu_op", child, pid, tid, t + 1.5, d_child, '"External id": %d, "Ev Idx": %d'
                              % (ext + 1, ext + 1)))
            lt = t + 2.5
            parts.append(X % ("cuda_runtime", "cudaLaunchKernel", pid, tid, lt, d_launch,
                              '"cbid": 211, "correlation": %d, "External id": %d' % (corr, ext + 1)))
            kd = 2.0 + rnd.random() * (60 if layer % 3 == 0 else 8)
            gt = max(gt, lt + d_launch + 2.0) + rnd.random() * 3
            kname = KERNELS[layer % len(KERNELS)]
            parts.append(X % ("kernel", kname, 0, 7, gt, kd,
                              '"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, '
                              '"registers per thread": 96, "shared memory": 16384, "blocks per SM": 2.5, '
                              '"warps per SM": 10.0, "grid": [128, 1, 1], "block": [256, 1, 1], '
                              '"est. achieved occupancy %%": 50' % corr))
            parts.append('  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %.3f,\n    "cat": "ac2g", '
                         '"name": "ac2g"\n  },\n' % (corr, pid, tid, lt))
            parts.append('  {\n    "ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %.3f,\n    "cat": "ac2g", '
                         '"name": "ac2g", "bp": "e"\n  },\n' % (corr, gt))
            gt += kd
            ext += 1
            t += d_op + 1.0 + rnd.random() * 3
        corr += 1
        parts.append(X % ("cuda_runtime", "cudaMemcpyAsync", pid, tid, t, 6.0,
                          '"cbid": 41, "correlation": %d, "External id": %d' % (corr, ext)))
        gt = max(gt, t + 8)
        parts.append(X % ("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 0, 7, gt, 4.0,
                          '"device": 0, "context": 1, "stream": 7, "correlation": %d, "bytes": 4096, '
                          '"memory bandwidth (GB/s)": 1.024' % corr))
        gt += 4.0
        t += 10.0
        parts.insert(0, X % ("user_annotation", "ProfilerStep#%d" % step, pid, tid, step_start, t - step_start,
                             '"External id": %d, "Record function id": 0' % ext))
        chunk = "".join(parts)
        f.write(chunk)
        written += len(chunk)
        t += 20.0
        first = False
    # last event without a trailing comma
    f.write('  {\n    "ph": "M", "name": "process_name", "pid": %d, "tid": 0,\n    "args": {"name": "python3"}\n'
            '  }\n  ],\n  "traceName": "bench"\n}\n' % pid)
    f.close()
    print("%s: %d steps, %.1f MB" % (out, step, (written + 200) / 1e6))
    return 0 if not first else 1


if __name__ == "__main__":
    sys.exit(main())
