/*
** Built with -std=c99, where only lprefix.h's _XOPEN_SOURCE makes
** struct sigaction complete and popen() declared: <ncrt.h> goes after it.
*/

#define loslib_c
#define LUA_LIB

#include "lprefix.h"


#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t hits;

static void onsignal(int sig) { hits += sig > 0; }

int os_trap(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onsignal;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGUSR1, &sa, NULL);
}

int os_run(const char *cmd) {
  FILE *f = popen(cmd, "r");
  if (f == NULL) return -1;
  return pclose(f);
}
