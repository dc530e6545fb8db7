/*
** Built with -std=c99, where only lprefix.h's _XOPEN_SOURCE makes
** struct sigaction complete and popen() declared: <ncrt.h> goes after it.
*/

#define loslib_c
#define LUA_LIB

#include "lprefix.h"
#include <ncrt.h>
#line 10 "input/loslib.c"


#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t hits;

static void onsignal(int sig) { NCRT_RANGE("onsignal"); hits += sig > 0; }

int os_trap(void) { NCRT_RANGE("os_trap");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onsignal;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGUSR1, &sa, NULL);
}

int os_run(const char *cmd) { NCRT_RANGE("os_run");
  FILE *f = popen(cmd, "r");
  if (f == NULL) return -1;
  return pclose(f);
}
