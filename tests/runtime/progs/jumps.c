/* jumps: ranges across longjmp. Each round:
 *   to_main  setjmp in main's "round" range; f -> g -> h open "f", "g",
 *            "h"; h jumps back to main (the three are abandoned)
 *   to_mid   setjmp in f (its "f.mid" range open); g -> h open "g2",
 *            "h2" and h jumps to f: "g2" and "h2" abandoned, "f.mid"
 *            goes on and closes normally
 *   signal   h3 raises SIGUSR1, whose handler siglongjmps to its caller
 *            past "h3" (a jump out of a signal handler)
 *   nested   a longjmp whose setjmp is in a frame with no range: only
 *            the frames below it lose their ranges
 * then "after" in main (depth 1 under "main"). Prints "rounds N". Built
 * with _FORTIFY_SOURCE too (the jumps go through __longjmp_chk), and the
 * to_main jump uses _longjmp in round 2 and longjmp otherwise. */
#include <ncrt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf to_main, to_mid;
static sigjmp_buf to_sig;
static volatile int round_no;

__attribute__((noinline)) static void h(void) {
  NCRT_RANGE("h");
  if (round_no % 3 == 2) _longjmp(to_main, 1);
  longjmp(to_main, 1);
}
__attribute__((noinline)) static void g(void) {
  NCRT_RANGE("g");
  h();
}
__attribute__((noinline)) static void f(void) {
  NCRT_RANGE("f");
  g();
}

__attribute__((noinline)) static void h2(void) {
  NCRT_RANGE("h2");
  longjmp(to_mid, 7);
}
__attribute__((noinline)) static void g2(void) {
  NCRT_RANGE("g2");
  h2();
}
__attribute__((noinline)) static int f_mid(void) {
  NCRT_RANGE("f.mid");
  int r;
  if ((r = setjmp(to_mid)) == 0) g2();
  {
    NCRT_RANGE("f.mid.after"); /* nested in f.mid, not in g2 */
    return r;
  }
}

static void on_usr1(int sig) {
  (void)sig;
  siglongjmp(to_sig, 1);
}
__attribute__((noinline)) static void h3(void) {
  NCRT_RANGE("h3");
  raise(SIGUSR1);
}
__attribute__((noinline)) static int f_sig(void) {
  NCRT_RANGE("f.sig");
  if (sigsetjmp(to_sig, 1)) return 1;
  h3();
  return 0;
}

static jmp_buf plain;
__attribute__((noinline)) static void deep(void) {
  NCRT_RANGE("deep");
  longjmp(plain, 1);
}
__attribute__((noinline)) static int no_range(void) {
  if (setjmp(plain)) return 1;
  deep();
  return 0;
}
__attribute__((noinline)) static int nested(void) {
  NCRT_RANGE("nested");
  return no_range();
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  signal(SIGUSR1, on_usr1);
  NCRT_RANGE("main");
  for (round_no = 0; round_no < n; round_no++) {
    NCRT_RANGE("round");
    if (setjmp(to_main) == 0) f();
    if (f_mid() != 7 || f_sig() != 1 || nested() != 1) return 1;
  }
  {
    NCRT_RANGE("after");
  }
  printf("rounds %d\n", n);
  return 0;
}
