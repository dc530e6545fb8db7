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

/* Fill the event attributes for a registered message; create the domain
 * and register the string on first use at this call site. A race between
 * two threads on the first call creates the same handle twice: NVTX returns
 * the same domain for the same name, and registering a string twice gives
 * an equal handle. */
static NCRT__INLINE nvtxDomainHandle_t ncrt__prepare(nvtxDomainHandle_t *dom, nvtxStringHandle_t *str,
                                                     const char *domain, const char *name, uint32_t category,
                                                     uint32_t argb, const void *frame, nvtxEventAttributes_t *a) {
  nvtxDomainHandle_t d = __atomic_load_n(dom, __ATOMIC_ACQUIRE);
  nvtxStringHandle_t s;
  if (!d) {
    d = nvtxDomainCreateA(domain);
    __atomic_store_n(dom, d, __ATOMIC_RELEASE);
  }
  s = __atomic_load_n(str, __ATOMIC_ACQUIRE);
  if (!s) {
    s = nvtxDomainRegisterStringA(d, name);
    __atomic_store_n(str, s, __ATOMIC_RELEASE);
  }
  memset(a, 0, sizeof *a);
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a->category = category;
  if (argb) {
    a->colorType = NVTX_COLOR_ARGB;
    a->color = argb;
  }
  /* The address of the range's scope object, in the frame of the function
   * that opened it: libncrt closes the ranges of frames a longjmp abandons
   * (other tools show it as the range's payload). */
  a->payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a->payload.ullValue = (uint64_t)(size_t)frame;
  if (s) {
    a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a->message.registered = s;
  } else {
    /* no tool attached: registration returns NULL; keep the text */
    a->messageType = NVTX_MESSAGE_TYPE_ASCII;
    a->message.ascii = name;
  }
  return d;
}

#ifdef __cplusplus

extern "C++" { /* so that the header may be included inside extern "C" */
namespace ncrt {
/* RAII: the range is popped when the object goes out of scope, however the
 * scope is left (including by an exception). */
class ScopedRange {
 public:
  ScopedRange(nvtxDomainHandle_t *dom, nvtxStringHandle_t *str, const char *domain, const char *name,
              uint32_t category, uint32_t argb)
      : dom_(dom) {
    nvtxEventAttributes_t a;
    nvtxDomainRangePushEx(ncrt__prepare(dom, str, domain, name, category, argb, this, &a), &a);
  }
  /* the handle the push stored at the call site (see ncrt__scope) */
  ~ScopedRange() { nvtxDomainRangePop(__atomic_load_n(dom_, __ATOMIC_RELAXED)); }
#if __cplusplus >= 201103L || (defined(_MSVC_LANG) && _MSVC_LANG >= 201103L)
  ScopedRange(const ScopedRange &) = delete;
  ScopedRange &operator=(const ScopedRange &) = delete;
#endif

 private:
#if !(__cplusplus >= 201103L || (defined(_MSVC_LANG) && _MSVC_LANG >= 201103L))
  ScopedRange(const ScopedRange &); /* C++98: not copyable, never defined */
  ScopedRange &operator=(const ScopedRange &);
#endif
  nvtxDomainHandle_t *dom_;
};
} /* namespace ncrt */
} /* extern "C++" */

#define NCRT__RANGE(id, domain, name, category, argb)                                           \
  static nvtxDomainHandle_t NCRT__CAT(ncrt__dom_, id);                                          \
  static nvtxStringHandle_t NCRT__CAT(ncrt__str_, id);                                          \
  ::ncrt::ScopedRange NCRT__CAT(ncrt__range_, id)(&NCRT__CAT(ncrt__dom_, id), &NCRT__CAT(ncrt__str_, id), \
                                                  domain, name, category, argb)

#else /* C */

/* frame: the scope object's own address, taken in its initializer (not
 * const: GCC would take a const pointer to it for a read before it is set).
 * The scope keeps where the call site's domain handle is cached, not the
 * handle: an address the compiler can form again after a setjmp() in the
 * function returns a second time, rather than a value it would keep in a
 * register (-Wclobbered). The push has stored the handle there. */
typedef struct {
  nvtxDomainHandle_t *dom;
} ncrt__scope;

static NCRT__INLINE ncrt__scope ncrt__push(nvtxDomainHandle_t *dom, nvtxStringHandle_t *str, const char *domain,
                                           const char *name, uint32_t category, uint32_t argb, void *frame) {
  nvtxEventAttributes_t a;
  ncrt__scope s;
  s.dom = dom;
  nvtxDomainRangePushEx(ncrt__prepare(dom, str, domain, name, category, argb, frame, &a), &a);
  return s;
}

static NCRT__INLINE void ncrt__pop(ncrt__scope *s) { nvtxDomainRangePop(__atomic_load_n(s->dom, __ATOMIC_RELAXED)); }

#define NCRT__RANGE(id, domain, name, category, argb)                                          \
  static nvtxDomainHandle_t NCRT__CAT(ncrt__dom_, id);                                         \
  static nvtxStringHandle_t NCRT__CAT(ncrt__str_, id);                                         \
  __attribute__((cleanup(ncrt__pop), unused)) ncrt__scope NCRT__CAT(ncrt__range_, id) =        \
      ncrt__push(&NCRT__CAT(ncrt__dom_, id), &NCRT__CAT(ncrt__str_, id), domain, name, category, argb, \
                 &NCRT__CAT(ncrt__range_, id))

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
