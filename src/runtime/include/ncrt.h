/* ncrt.h: the one public header of ncrewrite's runtime.
 *
 * This part is header-only and needs no library at link time: the scope
 * macros that ncrewrite inserts into C, C++ and CUDA host code. A range
 * opened by NCRT_RANGE closes on every path out of the enclosing scope —
 * return, break, continue, goto, C++ exceptions — because it is an object
 * with a destructor in C++ (and CUDA host code) and a variable with
 * __attribute__((cleanup)) in C (GCC, Clang, and nvcc's host compiler).
 *
 * Ranges are NVTX v3 push/pop ranges in one project domain ("ncrt" unless a
 * rule names another) with registered message strings, so Nsight Systems'
 * --capture-range=nvtx and Nsight Compute's --nvtx-include see them. Domain
 * and string handles are created once per call site and cached in static
 * variables there. NVTX v3 is header-only: without a tool attached each
 * call is a pointer load and a test; a collector (libncrt, nsys) attaches
 * through NVTX_INJECTION64_PATH. (Very old glibc may need -ldl.)
 *
 *   NCRT_RANGE("name");                               default domain
 *   NCRT_RANGE_EX("domain", "name", category, argb);  category 0 / argb 0: none
 *
 * domain, category and argb are constants (a string literal, integer
 * constants): each call site keeps them in one static object.
 *
 * In C both are declarations, so they may precede other declarations
 * under -Wdeclaration-after-statement. Define NCRT_DISABLE before including
 * to make them vanish (an unused enumerator in C, ((void)0) in C++).
 * Never use them in __device__ or __global__ code: NVTX is host-only.
 *
 * The header compiles without a warning under -Wall -Wextra -Wpedantic in
 * C89/gnu89 to C23 and C++98 to C++23 (GCC, Clang; nvcc), which
 * tests/c/test_header.sh checks. It reads system headers, so it must come
 * after a file's feature-test macros (ncrewrite places it so). */
#ifndef NCRT_H
#define NCRT_H

#define NCRT_DEFAULT_DOMAIN "ncrt"

#define NCRT__CAT2(a, b) a##b
#define NCRT__CAT(a, b) NCRT__CAT2(a, b)

#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define NCRT__INLINE inline
#else
#define NCRT__INLINE __inline__ /* C90 with GCC or Clang (gnu89 and c89 alike) */
#endif

#if defined(NCRT_DISABLE)

#ifdef __cplusplus
#define NCRT_RANGE_EX(domain, name, category, argb) ((void)0)
#else /* an enumerator nobody uses: a declaration that warns nowhere */
#define NCRT_RANGE_EX(domain, name, category, argb) enum { NCRT__CAT(ncrt__off_, __COUNTER__) }
#endif
#define NCRT_RANGE(name) NCRT_RANGE_EX(NCRT_DEFAULT_DOMAIN, name, 0, 0)

#else

#include <stdint.h>
#include <string.h>
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wvariadic-macros"
#endif
#include <nvtx3/nvToolsExt.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* The path with no tool attached. An instrumented function must cost
 * what it did: a marker that inlined the event's setup (attributes, domain
 * creation, string registration, several NVTX calls) made every
 * instrumented function big, so the compiler stopped inlining them and
 * their callers (Lua ran 2.1x and jq 6.7x slower with no tool at all;
 * bench/bench_c_scale.py). Now a marker is a load of NVTX's own function
 * pointer and a branch predicted not taken, on push and on pop; all the
 * rest is in cold functions that are never inlined, called with constant
 * arguments. NVTX sets the pointer to its initializer until the first call
 * and then to the tool's entry point, or to NULL when no tool is attached;
 * the pop tests its own pointer, as nvtxDomainRangePop does, so a push and
 * its pop take the same path. The scope object holds only the address of
 * its call site, a constant, so nothing of it need live in memory (and
 * -Wclobbered has nothing to say after a setjmp). */
#if defined(NVTX_DISABLE)
#define NCRT__TOOL(fn) 0
#else
#define NCRT__TOOL(fn) __builtin_expect(NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).fn##_impl_fnptr != 0, 0)
#endif

/* The fast path is inlined even at -O0: the push's cold path reads its
 * caller's stack pointer, which must be that of the function that opens
 * the range, not of a helper between them. */
#define NCRT__FAST __attribute__((always_inline))

/* The slow path: never inlined, kept apart from hot code (unused: a file
 * that opens no range raises no -Wunused-function). */
#define NCRT__SLOW static __attribute__((noinline, cold, unused))

/* The caller's stack pointer at the call: an address in the frame of the
 * function that opened the range (its lowest), which libncrt compares with
 * the stack pointer a longjmp restores to close the ranges of the frames
 * the jump abandons (other tools show it as the range's payload). Taken
 * here rather than as the scope object's address, which would make the
 * scope object live in memory in every instrumented function. GCC gives
 * the call frame address; elsewhere (Clang) it is above the frame record
 * that __builtin_frame_address(0) points at (x86-64: saved frame pointer,
 * return address). */
#if defined(__GNUC__) && !defined(__clang__)
#define NCRT__CALLER_SP() ((uint64_t)(size_t)__builtin_dwarf_cfa())
#else
#define NCRT__CALLER_SP() ((uint64_t)(size_t)__builtin_frame_address(0) + 2 * sizeof(void *))
#endif

/* A call site: its domain and attributes, and the handles cached on first
 * use. One static object per site, so the cold push takes two arguments,
 * the site and the name (six made the marker twice as big to the
 * inliner). Its fields are constants: NCRT_RANGE_EX's domain, category and
 * argb must be constant expressions (a string literal, integer constants),
 * as ncrewrite writes them. The name may be any expression (it is
 * registered on the site's first push, as before). */
typedef struct {
  nvtxDomainHandle_t dom;
  nvtxStringHandle_t str;
  const char *domain;
  uint32_t category, argb;
} ncrt__site;

/* Push a range with a registered message; create the domain and register
 * the string on first use at this call site. A race between two threads on
 * the first call creates the same handle twice: NVTX returns the same
 * domain for the same name, and registering a string twice gives an equal
 * handle. */
NCRT__SLOW void ncrt__push_slow(ncrt__site *site, const char *name) {
  nvtxDomainHandle_t d = __atomic_load_n(&site->dom, __ATOMIC_ACQUIRE);
  nvtxStringHandle_t s;
  nvtxEventAttributes_t a;
  if (!d) {
    d = nvtxDomainCreateA(site->domain);
    __atomic_store_n(&site->dom, d, __ATOMIC_RELEASE);
  }
  s = __atomic_load_n(&site->str, __ATOMIC_ACQUIRE);
  if (!s) {
    s = nvtxDomainRegisterStringA(d, name);
    __atomic_store_n(&site->str, s, __ATOMIC_RELEASE);
  }
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = site->category;
  if (site->argb) {
    a.colorType = NVTX_COLOR_ARGB;
    a.color = site->argb;
  }
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = NCRT__CALLER_SP();
  if (s) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
  } else {
    /* no tool attached after all (this was NVTX's first call): keep the text */
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
  }
  nvtxDomainRangePushEx(d, &a);
}

/* the handle the push stored at the call site */
NCRT__SLOW void ncrt__pop_slow(ncrt__site *site) {
  nvtxDomainRangePop(__atomic_load_n(&site->dom, __ATOMIC_RELAXED));
}

#ifdef __cplusplus

extern "C++" { /* so that the header may be included inside extern "C" */
namespace ncrt {
/* RAII: the range is popped when the object goes out of scope, however the
 * scope is left (including by an exception). */
class ScopedRange {
 public:
  NCRT__FAST ScopedRange(ncrt__site *site, const char *name) : site_(site) {
    if (NCRT__TOOL(nvtxDomainRangePushEx)) ncrt__push_slow(site, name);
  }
  NCRT__FAST ~ScopedRange() {
    if (NCRT__TOOL(nvtxDomainRangePop)) ncrt__pop_slow(site_);
  }
#if __cplusplus >= 201103L || (defined(_MSVC_LANG) && _MSVC_LANG >= 201103L)
  ScopedRange(const ScopedRange &) = delete;
  ScopedRange &operator=(const ScopedRange &) = delete;
#endif

 private:
#if !(__cplusplus >= 201103L || (defined(_MSVC_LANG) && _MSVC_LANG >= 201103L))
  ScopedRange(const ScopedRange &); /* C++98: not copyable, never defined */
  ScopedRange &operator=(const ScopedRange &);
#endif
  ncrt__site *site_;
};
} /* namespace ncrt */
} /* extern "C++" */

#define NCRT__RANGE(id, domain, name, category, argb)                                              \
  static ncrt__site NCRT__CAT(ncrt__site_, id) = {0, 0, domain, category, argb};                  \
  ::ncrt::ScopedRange NCRT__CAT(ncrt__range_, id)(&NCRT__CAT(ncrt__site_, id), name)

#else /* C */

/* The scope keeps the address of its call site, not the handle: a
 * constant, which the compiler can form again after a setjmp() in the
 * function returns a second time, rather than a value it would keep in a
 * register (-Wclobbered). The push has stored the handle there. */
typedef struct {
  ncrt__site *site;
} ncrt__scope;

static NCRT__INLINE NCRT__FAST ncrt__scope ncrt__push(ncrt__site *site, const char *name) {
  ncrt__scope s;
  s.site = site;
  if (NCRT__TOOL(nvtxDomainRangePushEx)) ncrt__push_slow(site, name);
  return s;
}

static NCRT__INLINE NCRT__FAST void ncrt__pop(ncrt__scope *s) {
  if (NCRT__TOOL(nvtxDomainRangePop)) ncrt__pop_slow(s->site);
}

#define NCRT__RANGE(id, domain, name, category, argb)                                              \
  static ncrt__site NCRT__CAT(ncrt__site_, id) = {0, 0, domain, category, argb};                  \
  __attribute__((cleanup(ncrt__pop), unused)) ncrt__scope NCRT__CAT(ncrt__range_, id) =            \
      ncrt__push(&NCRT__CAT(ncrt__site_, id), name)

#endif /* __cplusplus */

/* __COUNTER__ gives every expansion its own names, so nested ranges on one
 * line neither clash nor shadow each other. */
#define NCRT_RANGE_EX(domain, name, category, argb) NCRT__RANGE(__COUNTER__, domain, name, category, argb)
#define NCRT_RANGE(name) NCRT_RANGE_EX(NCRT_DEFAULT_DOMAIN, name, 0, 0)

#endif /* NCRT_DISABLE */

/* ---- Runtime control: libncrt's C API (issue 4) ----------------------------
 * ncrt_step()   a step boundary for the capture schedule (ncrun --schedule)
 * ncrt_start()  resume recording;  ncrt_stop()  pause recording
 * They are NVTX marks in the "ncrt.control" domain, which libncrt reads as
 * commands; under another tool (nsys) they are plain marks, with no tool a
 * pointer test. Header-only like the macros above: nothing to link. */
#if defined(NCRT_DISABLE)
static NCRT__INLINE void ncrt_step(void) {}
static NCRT__INLINE void ncrt_start(void) {}
static NCRT__INLINE void ncrt_stop(void) {}
static NCRT__INLINE void ncrt_source_location(const char *name, const char *file, int line) {
  (void)name, (void)file, (void)line;
}
#else
static NCRT__INLINE void ncrt__control(const char *what) {
  static nvtxDomainHandle_t dom;
  nvtxDomainHandle_t d = __atomic_load_n(&dom, __ATOMIC_ACQUIRE);
  nvtxEventAttributes_t a;
  if (!d) {
    d = nvtxDomainCreateA("ncrt.control"); /* NCRT_CONTROL_DOMAIN (ncrt_protocol.h) */
    __atomic_store_n(&dom, d, __ATOMIC_RELEASE);
  }
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = what;
  nvtxDomainMarkEx(d, &a);
}
static NCRT__INLINE void ncrt_step(void) { ncrt__control("step"); }
static NCRT__INLINE void ncrt_start(void) { ncrt__control("start"); }
static NCRT__INLINE void ncrt_stop(void) { ncrt__control("stop"); }

/* ncrt_source_location(name, file, line): tell the collector where ranges
 * named `name` come from; traces then carry args.file and args.line. Meant
 * to be called once per call site (e.g. when its string is registered); the
 * first location given for a name is kept. */
static NCRT__INLINE void ncrt_source_location(const char *name, const char *file, int line) {
  char buf[512], num[16];
  size_t n = 0, k = 0;
  unsigned u = line < 0 ? 0u : (unsigned)line;
  const char *parts[4], *c;
  int p;
  parts[0] = "loc\t", parts[1] = name, parts[2] = "\t", parts[3] = file;
  do num[k++] = (char)('0' + u % 10); while ((u /= 10) && k < sizeof num);
  for (p = 0; p < 4; p++)
    for (c = parts[p]; *c && n < sizeof buf - 20; c++) buf[n++] = *c;
  buf[n++] = '\t';
  while (k) buf[n++] = num[--k];
  buf[n] = 0;
  ncrt__control(buf);
}
#endif /* NCRT_DISABLE */

#endif /* NCRT_H */
