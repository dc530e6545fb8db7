/* ncrt_protocol: what the runtime's parts say to each other, written once.
 * libncrt (libncrt/), the ncrt Python module (python/) and ncrun (ncrun/)
 * include it; it is not installed. ncrt.h, the one public header, spells
 * the control strings in its own inline functions (a program includes
 * ncrt.h alone); the runtime tests check them end to end (steps.c,
 * runtime/python: ncrt_step(), ncrt.step() and a libncrt that acts on
 * them).
 *
 * Control: NVTX marks in the NCRT_CONTROL_DOMAIN domain whose message is a
 * verb, or a "loc" record telling where a range name comes from. */
#ifndef NCRT_PROTOCOL_H
#define NCRT_PROTOCOL_H

#define NCRT_CONTROL_DOMAIN "ncrt.control"
#define NCRT_VERB_STEP "step"
#define NCRT_VERB_START "start"
#define NCRT_VERB_STOP "stop"
#define NCRT_LOC_PREFIX "loc\t" /* "loc\t<name>\t<file>\t<line>" */
/* "role\t<role>\t<detail>": what this process is (the Python module tells
 * it at its first range: "dataloader worker", "pool worker", ...) */
#define NCRT_ROLE_PREFIX "role\t"
/* "rank\t<R>\t<W>\t<from>[\t<backend>]": this process is rank R of W (torch.distributed
 * once initialized): it becomes that rank's main process, unless from is
 * NCRT_RANK_INHERITED (a forked child holding its parent's group, a
 * DataLoader worker: a helper of rank R) */
#define NCRT_RANK_PREFIX "rank\t"
#define NCRT_RANK_INHERITED "torch.distributed (inherited)"
/* "write\t<dir>\t<name>": write what was recorded since the last write now,
 * as <dir>/<name>-rank<R>.pt.trace.json.gz (the Python package's profilers
 * stop, then write: a trace when the profiled region ends) */
#define NCRT_WRITE_PREFIX "write\t"
/* "schedule\t<wait>\t<warmup>\t<active>\t<repeat>[\t<skip_first>]\t<dir>\t<name>": a
 * profiler with a torch.profiler-style schedule starts (step 0 now; each
 * step verb moves it; cycles written as <dir>/<name>[-cycle<K>]-rank<R>...);
 * "schedule_end": it stops, writing the cycle still open */
#define NCRT_SCHEDULE_PREFIX "schedule\t"
#define NCRT_VERB_SCHEDULE_END "schedule_end"

/* Traces: <dir>/<name>-rank<R>.pt.trace.json.gz (-pid<PID> added when taken) */
#define NCRT_TRACE_SUFFIX ".trace.json.gz"
#define NCRT_PFTRACE_SUFFIX ".pftrace" /* NCRT_TRACE_FORMAT=perfetto */

/* The environment ncrun sets for libncrt and the module (docs/runtime.md,
 * "Environment variables"). */
#define NCRT_ENV_OUTPUT_DIR "NCRT_OUTPUT_DIR"
#define NCRT_ENV_OUTPUT_ROOT "NCRT_OUTPUT_ROOT"
#define NCRT_ENV_TRACE_NAME "NCRT_TRACE_NAME"
#define NCRT_ENV_ROOT_PID "NCRT_ROOT_PID"
#define NCRT_ENV_ACTIVITIES "NCRT_ACTIVITIES"
#define NCRT_ENV_CAPTURE_RANGE "NCRT_CAPTURE_RANGE"
#define NCRT_ENV_SCHEDULE "NCRT_SCHEDULE"
#define NCRT_ENV_STEP "NCRT_STEP"
#define NCRT_ENV_THROTTLE "NCRT_THROTTLE"
#define NCRT_ENV_DISK_BUDGET "NCRT_DISK_BUDGET" /* a size: ncrt_parse_size */
#define NCRT_ENV_GZIP_LEVEL "NCRT_GZIP_LEVEL"
#define NCRT_ENV_TRACE_FORMAT "NCRT_TRACE_FORMAT" /* "json" (default) or "perfetto" */
#define NCRT_ENV_CUPTI_LIB "NCRT_CUPTI_LIB"
#define NCRT_ENV_TORCH "NCRT_TORCH"
/* ncrun --backend torch: the backend in use, and the torch profiler's
 * options (read by python/torch_backend/) */
#define NCRT_ENV_BACKEND "NCRT_BACKEND"
#define NCRT_ENV_WITH_STACK "NCRT_WITH_STACK"
#define NCRT_ENV_RECORD_SHAPES "NCRT_RECORD_SHAPES"
/* 1: loaded in-process by the Python package: capture starts off, and at
 * exit a trace is written only if capture is on (a profiled region still
 * open); the package's profilers start, stop and write */
#define NCRT_ENV_DORMANT "NCRT_DORMANT"
/* read by libncrt only (set by hand or by tests) */
#define NCRT_ENV_CLOCK "NCRT_CLOCK"
#define NCRT_ENV_QUIET "NCRT_QUIET"
#define NCRT_ENV_FLUSH "NCRT_FLUSH"
#define NCRT_ENV_SIGNALS "NCRT_SIGNALS"
#define NCRT_ENV_INCREMENTAL "NCRT_INCREMENTAL"
#define NCRT_ENV_VERBOSE "NCRT_VERBOSE"
/* set by ncrun for its command: a finalizer (ncrun's, when the command
 * ends) will make the trace of every process of the run that leaves its
 * spill files, so a big exit may hand its conversion over (convert.c) */
#define NCRT_ENV_FINALIZER "NCRT_FINALIZER"
/* a size (ncrt_parse_size): an exit with more records than this left to
 * convert hands them to the finalizer; "off" or "0": never (16M unset) */
#define NCRT_ENV_HANDOFF "NCRT_HANDOFF"
/* tests only: the flusher sends the process SIGTERM while it holds a claim
 * on another thread's records (tests/runtime: term-in-claim) */
#define NCRT_ENV_TEST_TERM_IN_CLAIM "NCRT_TEST_TERM_IN_CLAIM"

/* NCRT_DISK_BUDGET's syntax, one parser for ncrun (which checks it) and
 * libncrt (which obeys it): "512M", "2G", "1.5T", "1048576" (bytes; K, M,
 * G, T are powers of 1024, "iB"/"B" after them allowed), "off" or "0" (no
 * limit: 0). *ok is 0 when v is not a size. */
#include <stdlib.h>
#include <string.h>
static inline unsigned long long ncrt_parse_size(const char *v, int *ok) {
  *ok = 0;
  if (!v) return 0;
  if (!strcmp(v, "off") || !strcmp(v, "0")) {
    *ok = 1;
    return 0;
  }
  char *end;
  double x = strtod(v, &end), mul = 1;
  if (end == v || x <= 0) return 0;
  switch (*end) {
  case 'k': case 'K': mul = 1024.0; end++; break;
  case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
  case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
  case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
  default: break;
  }
  if (*end == 'i') end++;
  if (*end == 'B') end++;
  if (*end || x * mul < 1) return 0;
  *ok = 1;
  return (unsigned long long)(x * mul);
}

#endif
