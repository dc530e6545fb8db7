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
import sys
import tempfile

from nccheck import INC, Failed, counter_lib, full_trace, run_pair, sh

CUDA = "/usr/local/cuda"

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


def check(ncrewrite, cccl, tmp):
    inst = os.path.join(tmp, "cccl")
    full_trace(ncrewrite, cccl, inst)
    prog = os.path.join(tmp, "prog.cu")
    open(prog, "w").write(PROGRAM)
    exes = []
    for tag, extra in (("orig", []), ("inst", ["-I", inst])):
        exe = os.path.join(tmp, tag)
        r = sh(["nvcc", "-std=c++17"] + extra + INC + [prog, "-o", exe])
        if r.returncode:
            raise Failed("%s does not build:\n%s" % (tag, r.stderr[-3000:]))
        exes.append(exe)
    pre = sh(["nvcc", "-std=c++17", "-E", "-I", inst] + INC + [prog])
    used = pre.stdout.count("ncrt::ScopedRange ncrt__range")
    if used < 10:
        raise Failed("only %d instrumented functions reached the program" % used)
    # no log: no range ran (without a GPU the host path may reach none of the instrumented
    # functions; most of CCCL is __host__ __device__)
    want, counts = run_pair(exes[0], exes[1], counter_lib(tmp), os.path.join(tmp, "counts.log"))
    return ("CCCL instrumented builds with nvcc (%d instrumented functions in the program) and behaves the same "
            "(%s); %d functions ran, every range closed" % (used, want.stdout.strip().splitlines()[-1], len(counts)))


def main():
    cccl = os.path.join(CUDA, "include/cccl")
    if not shutil.which("nvcc") or not os.path.isdir(os.path.join(cccl, "thrust")):
        print("skipped: no nvcc or no CCCL headers at %s" % cccl)
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        try:
            print("ok: " + check(sys.argv[1], cccl, tmp))
        except Failed as e:
            print("FAILED: %s" % e)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
