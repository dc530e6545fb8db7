#!/usr/bin/env python3
"""Differential test on a real CUDA code base: the CUDA toolkit's CCCL
headers (Thrust, CUB, libcu++) instrumented in full-trace mode must compile
with nvcc and behave exactly like the originals: a Thrust program prints the
same output and exit status (without a GPU it takes its error path, the same
way in both builds), the instrumented headers are really used, and every
range that runs closes (counted by the test-only NVTX injection; without a
GPU the host path may run none of them).

CCCL declares nearly every function through macros (_CCCL_HOST_DEVICE,
_CCCL_API, ...): a function whose header uses one that may hide __device__
or constexpr must be skipped, or nvcc rejects the range in device code.

    test_real_cuda.py NCREWRITE        (exit 77: skipped, no nvcc or CCCL)
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CUDA = "/usr/local/cuda"
INC = ["-I", os.path.join(ROOT, "src/runtime/include"), "-I", CUDA + "/include"]

PROGRAM = r"""
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <cub/cub.cuh>
#include <cstdio>
struct twice {
  __host__ __device__ int operator()(int x) const { return 2 * x; }
};
int main() {
  thrust::host_vector<int> h(16);
  thrust::sequence(h.begin(), h.end());
  thrust::transform(h.begin(), h.end(), h.begin(), twice());
  std::printf("host sum %d\n", thrust::reduce(h.begin(), h.end()));
  try {
    thrust::device_vector<int> d = h;
    thrust::sort(d.begin(), d.end());
    std::printf("device first %d sum %d\n", (int)d[0], thrust::reduce(d.begin(), d.end()));
  } catch (const std::exception &) {
    std::printf("no device\n");
  }
  return 3;
}
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    ncrewrite = sys.argv[1]
    cccl = os.path.join(CUDA, "include/cccl")
    if not shutil.which("nvcc") or not os.path.isdir(os.path.join(cccl, "thrust")):
        print("skipped: no nvcc or no CCCL headers at %s" % cccl)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "rules.yaml")
        open(rules, "w").write("full_trace_mode: true\n")
        inst = os.path.join(tmp, "cccl")
        r = sh([ncrewrite, "-q", "--config", rules, cccl, inst])
        if r.returncode:
            print(r.stderr)
            return 1
        prog = os.path.join(tmp, "prog.cu")
        open(prog, "w").write(PROGRAM)
        lib = os.path.join(tmp, "libnvtx_counter.so")
        r = sh(["gcc", "-shared", "-fPIC"] + INC + [os.path.join(HERE, "nvtx_counter.c"), "-o", lib, "-lpthread"])
        if r.returncode:
            print(r.stderr)
            return 1
        exes = []
        for tag, extra in (("orig", []), ("inst", ["-I", inst])):
            exe = os.path.join(tmp, tag)
            r = sh(["nvcc", "-std=c++17"] + extra + INC + [prog, "-o", exe])
            if r.returncode:
                print("FAILED: %s does not build:\n%s" % (tag, r.stderr[-3000:]))
                return 1
            exes.append(exe)
        pre = sh(["nvcc", "-std=c++17", "-E", "-I", inst] + INC + [prog])
        used = pre.stdout.count("ncrt::ScopedRange ncrt__range")
        if used < 10:
            print("FAILED: only %d instrumented functions reached the program" % used)
            return 1
        want = sh([exes[0]])
        log = os.path.join(tmp, "counts.log")
        got = sh([exes[1]], env=dict(os.environ, NVTX_INJECTION64_PATH=lib, NVTX_COUNTER_LOG=log))
        if (got.returncode, got.stdout) != (want.returncode, want.stdout) or not want.stdout:
            print("FAILED: behaves differently: %r vs %r" % ((got.returncode, got.stdout),
                                                           (want.returncode, want.stdout)))
            return 1
        # no log: no range ran (without a GPU the host path may reach none of the instrumented
        # functions; most of CCCL is __host__ __device__)
        counts = dict(line.rsplit(" ", 1) for line in open(log).read().splitlines()) if os.path.exists(log) else {}
        if counts.pop("unbalanced", "0") != "0":
            print("FAILED: unbalanced ranges")
            return 1
    print("ok: CCCL instrumented builds with nvcc (%d instrumented functions in the program) and behaves the "
          "same (%s); %d functions ran, every range closed" % (used, want.stdout.strip().splitlines()[-1],
                                                              len(counts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
