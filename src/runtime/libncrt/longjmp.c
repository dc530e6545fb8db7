/* longjmp.c: ranges stay right across longjmp.
 *
 * A longjmp skips the cleanup of every frame between the jump and its
 * setjmp, so the ranges those frames opened would never see their pops and
 * every later pop on the thread would close the wrong range. libncrt, when
 * preloaded (ncrun does), interposes longjmp, _longjmp, siglongjmp and
 * __longjmp_chk (what _FORTIFY_SOURCE calls): before jumping, it reads the
 * stack pointer the jump restores from the jmp_buf and closes the ranges
 * whose scope objects (their addresses come with each push from ncrt.h)
 * lie in the part of the stack being abandoned (collector.c,
 * rt_longjmp_unwind). Nothing is added to push or pop.
 *
 * glibc keeps that stack pointer mangled (PTR_MANGLE: xor with the pointer
 * guard in the thread control block, then rotated left by 17 bits on
 * x86-64); we undo it on x86-64 glibc only. Elsewhere the target is
 * unknown and the ranges are left as the program left them (rules-c.md).
 *
 * The real functions are looked up once, when the library loads: a jump
 * out of a signal handler must not call dlsym. No lock, no malloc. */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* our longjmp must keep its own name */
#include "rt.h"

#include <dlfcn.h>
#include <setjmp.h>

typedef void (*JumpFn)(struct __jmp_buf_tag *env, int val);
static JumpFn real_longjmp, real__longjmp, real_siglongjmp, real_chk;

__attribute__((constructor)) static void resolve(void) {
  real_longjmp = (JumpFn)dlsym(RTLD_NEXT, "longjmp");
  real__longjmp = (JumpFn)dlsym(RTLD_NEXT, "_longjmp");
  real_siglongjmp = (JumpFn)dlsym(RTLD_NEXT, "siglongjmp");
  real_chk = (JumpFn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

/* The stack pointer env restores; 0 when we cannot tell. */
static uint64_t target_sp(struct __jmp_buf_tag *env) {
#if defined(__x86_64__) && defined(__GLIBC__)
  uint64_t v = (uint64_t)env->__jmpbuf[6], guard; /* JB_RSP */
  __asm__("mov %%fs:0x30, %0" : "=r"(guard));      /* tcbhead_t.pointer_guard */
  v = (v >> 17) | (v << 47);
  return v ^ guard;
#else
  (void)env;
  return 0;
#endif
}

static void before_jump(struct __jmp_buf_tag *env) {
  if (!rt_collecting) return;
  volatile char here;
  uint64_t t = target_sp(env), h = (uint64_t)(size_t)&here;
  /* a jump down the stack (or a mangling we misread) abandons nothing */
  if (t > h ? t - h < ((uint64_t)1 << 32) : h - t < ((uint64_t)1 << 32)) rt_longjmp_unwind(t, h);
}

static __attribute__((noreturn)) void jump(JumpFn first, struct __jmp_buf_tag *env, int val) {
  JumpFn f = first ? first : real_siglongjmp ? real_siglongjmp : real_longjmp ? real_longjmp : real__longjmp;
  if (!f) f = (JumpFn)dlsym(RTLD_NEXT, "siglongjmp"); /* loaded too late for the constructor */
  f(env, val);
  __builtin_unreachable();
}

RT_EXPORT void longjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real_longjmp, env, val);
}
RT_EXPORT void _longjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real__longjmp, env, val);
}
RT_EXPORT void siglongjmp(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real_siglongjmp, env, val);
}
RT_EXPORT void __longjmp_chk(struct __jmp_buf_tag env[1], int val);
RT_EXPORT void __longjmp_chk(struct __jmp_buf_tag env[1], int val) {
  before_jump(env);
  jump(real_chk, env, val);
}
