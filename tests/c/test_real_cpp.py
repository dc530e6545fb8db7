#!/usr/bin/env python3
"""Differential test on a real C++ code base: the C++ standard library's
headers (libstdc++, as installed with g++) instrumented in full-trace mode
must compile in C++11, C++17 and C++20 and behave exactly like the
originals: a program using containers, algorithms, strings, streams,
smart pointers, std::function and regex prints the same output, and every
range closes (counted by the test-only NVTX injection).

libstdc++ is a hard case for a parser that cannot expand macros: most
functions are declared through macros such as _GLIBCXX20_CONSTEXPR, often
across #if/#else lines, and instrumenting one of those would break the
build. One header is put back as it was: bits/std_abs.h is reached from the
C library headers that ncrt.h itself includes (an include cycle; see
docs/rules-c.md).

    test_real_cpp.py NCREWRITE        (exit 77: skipped, no libstdc++ found)
"""
import glob
import os
import shutil
import sys
import tempfile

from nccheck import INC, Failed, counter_lib, full_trace, run_pair, sh

PROGRAM = r"""
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
int main() {
  std::vector<int> v{5, 3, 9, 1, 7};
  std::sort(v.begin(), v.end());
  std::map<std::string, int> m{{"a", 1}, {"b", 2}};
  std::unordered_map<int, std::string> u{{1, "one"}, {2, "two"}};
  auto p = std::make_shared<std::string>("shared");
  std::unique_ptr<int[]> q(new int[3]{1, 2, 3});
  std::function<int(int)> f = [](int x) { return x * x; };
  std::ostringstream os;
  for (int x : v) os << x << ',';
  os << m["b"] << u[2] << *p << q[2] << f(12);
  std::regex re("([a-z]+)([0-9]+)");
  std::smatch sm;
  std::string s = "abc123";
  bool ok = std::regex_match(s, sm, re);
  std::cout << os.str() << ' ' << ok << ' ' << sm[2] << '\n';
  try {
    v.at(99);
  } catch (const std::out_of_range &) {
    std::cout << "out of range\n";
  }
  return (int)v.size();
}
"""


def check(ncrewrite, tmp):
    major = sh(["g++", "-dumpversion"]).stdout.strip().split(".")[0]
    multiarch = sh(["g++", "-print-multiarch"]).stdout.strip()
    std_dir = "/usr/include/c++/" + major
    arch_dir = "/usr/include/%s/c++/%s" % (multiarch, major)
    if not os.path.isdir(std_dir) or not os.path.isdir(arch_dir):
        return None, "no libstdc++ headers at %s" % std_dir
    inst = os.path.join(tmp, "inst")
    full_trace(ncrewrite, std_dir, inst)
    shutil.copy(os.path.join(std_dir, "bits/std_abs.h"), os.path.join(inst, "bits/std_abs.h"))
    nranges = sum(open(p, errors="replace").read().count("NCRT_RANGE(")
                  for p in glob.glob(os.path.join(inst, "**/*.h"), recursive=True))
    prog = os.path.join(tmp, "prog.cpp")
    open(prog, "w").write(PROGRAM)
    lib = counter_lib(tmp)
    for std in ("c++11", "c++17", "c++20"):
        exes = []
        for tag, d in (("orig", std_dir), ("inst", inst)):
            exe = os.path.join(tmp, "%s-%s" % (tag, std))
            r = sh(["g++", "-std=" + std, "-nostdinc++", "-I", d, "-I", arch_dir] + INC + [prog, "-o", exe])
            if r.returncode:
                raise Failed("%s %s does not build:\n%s" % (tag, std, r.stderr[-3000:]))
            exes.append(exe)
        _, counts = run_pair(exes[0], exes[1], lib, os.path.join(tmp, std + ".log"), (),
                             "%s: the instrumented library" % std)
        if len(counts) < 20:
            raise Failed("%s: only %d functions recorded ranges" % (std, len(counts)))
    return True, ("libstdc++ %s instrumented (%d ranges in its headers) builds in C++11/17/20 and behaves the "
                  "same; %d functions ran, every range closed" % (major, nranges, len(counts)))


def main():
    if not shutil.which("g++"):
        print("skipped: no g++")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        try:
            ok, msg = check(sys.argv[1], tmp)
        except Failed as e:
            print("FAILED: %s" % e)
            return 1
    print(("ok: " if ok else "skipped: ") + msg)
    return 0 if ok else 77


if __name__ == "__main__":
    sys.exit(main())
