// ncrt_torch_events: the torch backend's trace writer for a torch built
// without Kineto (Debian's python3-torch 1.13), where torch cannot export a
// trace itself. _ncrt_torch_export.write_converted reads the profiler's raw
// records; in Python that is eight calls into torch's bindings and a string
// format per event (about 6 us an event). This module formats the same
// records in C++, straight from torch's own KinetoEvent vector.
//
// Contract: events_json(results, base_us, pid, shapes, stacks, mem) takes a
// torch._C._autograd._ProfilerResult and returns (texts, tids): each event's
// JSON object as a str, sorted as write_converted's Python path sorts them
// (stably by ts: torch's order, then the memory events), and the sorted thread ids seen. The text is
// byte-identical to that path's (tests/run: the torch backend's
// fast-writer case compares both on one profile), json.dumps' escaping
// included (ASCII only, \uXXXX). Built only where torch's C++ headers are
// (libtorch-dev) and only for the interpreter torch was built for; the
// Python path is the fallback when this module cannot be imported.
//
// One file of C++ in a C project: torch's records are C++ objects, and the
// only other way to them is the bindings this replaces.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include "json_string.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
using torch::autograd::profiler::KinetoEvent;
using torch::autograd::profiler::ProfilerResult;
using ncrt_torch::json_string;

namespace {

// std::to_chars: no locale, no format string (snprintf was a third of the
// time per event)
void append_int(std::string &out, long long v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, static_cast<size_t>(r.ptr - b));
}

void append_uint(std::string &out, unsigned long long v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  out.append(b, static_cast<size_t>(r.ptr - b));
}

// ',"pid":P,"tid":T,"ts":TS': every event's place
void where(std::string &out, long long pid, unsigned long long tid, long long ts) {
  out += ",\"pid\":";
  append_int(out, pid);
  out += ",\"tid\":";
  append_uint(out, tid);
  out += ",\"ts\":";
  append_int(out, ts);
}

// json.dumps of a list of lists of ints: "[[8, 8], []]" (", " between items)
void json_shapes(std::string &out, c10::ArrayRef<std::vector<int64_t>> sh) {
  out.push_back('[');
  for (size_t i = 0; i < sh.size(); i++) {
    if (i) out += ", ";
    out.push_back('[');
    for (size_t k = 0; k < sh[i].size(); k++) {
      if (k) out += ", ";
      append_int(out, sh[i][k]);
    }
    out.push_back(']');
  }
  out.push_back(']');
}

constexpr uint8_t kUserScope = 7;  // at::RecordScope::USER_SCOPE: record_function

// One event's place in the buffer all are formatted into (one allocation
// for all, not one string each)
struct Placed {
  long long ts;
  size_t off, len;
};

py::tuple events_json(py::handle results, long long base_us, long long pid, bool shapes, bool stacks, bool mem) {
  const ProfilerResult &res = results.cast<const ProfilerResult &>();
  // the records in torch's order, then the memory events: a stable sort
  // on ts keeps that order among equal times, as Python's does
  std::vector<Placed> out, memory_events;
  std::set<unsigned long long> tids;
  std::string t;
  {
    py::gil_scoped_release unlocked;  // torch's records are ours alone now
    const auto &evs = res.events();
    out.reserve(evs.size());
    t.reserve(evs.size() * 160);
    for (const KinetoEvent &e : evs) {
      std::string name = e.name();
      bool memory = name == "[memory]";
      if (memory && !mem) continue;
      unsigned long long tid = e.startThreadId();
      long long ts = static_cast<long long>(e.startUs()) - base_us;
      size_t off = t.size();
      if (memory) {
        tids.insert(tid);
        t += "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\"";
        where(t, pid, tid, ts);
        t += ",\"args\":{\"Bytes\":";
        append_int(t, e.nBytes());
        t += ",\"Device Type\":";
        append_int(t, static_cast<int>(e.deviceType()));
        t += ",\"Device Id\":";
        append_int(t, e.deviceIndex());
        t += "}}";
        memory_events.push_back({ts, off, t.size() - off});
        continue;
      }
      bool user = e.scope() == kUserScope;
      t += user ? "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":" : "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":";
      if (!json_string(t, name)) {
        t.resize(off);
        continue;
      }
      tids.insert(tid);
      where(t, pid, tid, ts);
      t += ",\"dur\":";
      append_uint(t, e.durationUs());
      t += ",\"args\":{\"External id\":";
      append_uint(t, e.correlationId());
      long long seq = e.sequenceNr();
      if (seq >= 0) {
        t += ",\"Sequence number\":";
        append_int(t, seq);
        t += ",\"Fwd thread id\":";
        append_uint(t, e.fwdThreadId());
      }
      if (shapes && !user && e.hasShapes()) {
        auto sh = e.shapes();
        if (!sh.empty()) {
          t += ",\"Input Dims\":";
          json_shapes(t, sh);
        }
      }
      if (stacks && e.hasStack()) {
        auto st = e.stack();
        if (!st.empty()) {
          std::string joined;
          for (size_t k = 0; k < st.size(); k++) {
            if (k) joined.push_back(';');
            joined += st[k];
          }
          t += ",\"Call stack\":";
          if (!json_string(t, joined)) {
            t.resize(off);
            continue;
          }
        }
      }
      t += "}}";
      out.push_back({ts, off, t.size() - off});
    }
    out.insert(out.end(), memory_events.begin(), memory_events.end());
    std::stable_sort(out.begin(), out.end(), [](const Placed &a, const Placed &b) { return a.ts < b.ts; });
  }
  py::list texts(out.size());
  for (size_t i = 0; i < out.size(); i++) {
    PyObject *s = PyUnicode_FromStringAndSize(t.data() + out[i].off, static_cast<Py_ssize_t>(out[i].len));
    if (!s) throw py::error_already_set();
    PyList_SET_ITEM(texts.ptr(), static_cast<Py_ssize_t>(i), s);
  }
  py::list tl;
  for (unsigned long long id : tids) tl.append(id);
  return py::make_tuple(texts, tl);
}

}  // namespace

PYBIND11_MODULE(ncrt_torch_events, m) {
  m.doc() = "The torch backend's trace writer for torch without Kineto (see _ncrt_torch_export).";
  m.def("events_json", &events_json, py::arg("results"), py::arg("base_us"), py::arg("pid"), py::arg("shapes"),
        py::arg("stacks"), py::arg("mem"));
}
