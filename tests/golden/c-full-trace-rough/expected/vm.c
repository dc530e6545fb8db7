#include <ncrt.h>
#line 1 "input/vm.c"
/* An interpreter's dispatch loop written with macros, as Lua's lvm.c is. */
#include <stdio.h>

#define vmdispatch(o) switch (o)
#define vmcase(l) case l:
#define vmbreak break
#define checkgc(L) { if ((L) > 100) (L) = 0; }

static int step(int pc) { return pc + 1; }

int execute(const int *code, int n) { NCRT_RANGE("execute");
  int pc = 0, acc = 0;
  for (;;) {
    if (pc >= n) return acc;
    vmdispatch (code[pc]) {
      vmcase(0) {
        acc += step(pc);
        checkgc(acc)
        vmbreak;
      }
      vmcase(1) {
        acc -= 1;
        vmbreak;
      }
      default: return -1;
    }
    pc++;
  }
}

/* a macro opens a block, the source closes it: tree-sitter cannot pair
 * them, the compiler does; the range after the function's own brace is
 * right either way */
#define GUARD(c) if (c) {
int guarded(int x) { NCRT_RANGE("guarded");
  GUARD(x > 1)
    printf("%d\n", x);
  }
  return x;
}

int main(void) { NCRT_RANGE("main");
  int code[] = {0, 0, 1, 0};
  printf("%d\n", execute(code, 4));
  return guarded(2) - 2;
}
