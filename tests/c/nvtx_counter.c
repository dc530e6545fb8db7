/* nvtx_counter: a minimal NVTX injection library for tests only (the real
 * collector is libncrt). Loaded through NVTX_INJECTION64_PATH, it counts
 * push and pop per registered message and per thread, checks that every pop
 * matches a push on the same thread, and at exit writes one line per range
 * name ("name pushes") plus "unbalanced N" to $NVTX_COUNTER_LOG. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define MAXN 256
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *names[MAXN];
static long counts[MAXN];
static int nnames;
static long unbalanced;
static __thread int depth;

static int find_name(const char *s) {
  for (int i = 0; i < nnames; i++)
    if (!strcmp(names[i], s)) return i;
  if (nnames == MAXN) return -1;
  names[nnames] = strdup(s);
  return nnames++;
}

static nvtxStringHandle_t reg(nvtxDomainHandle_t d, const char *s) {
  (void)d;
  pthread_mutex_lock(&lock);
  int i = find_name(s);
  pthread_mutex_unlock(&lock);
  return (nvtxStringHandle_t)(intptr_t)(i + 1);
}

static nvtxDomainHandle_t domain_create(const char *name) {
  (void)name;
  return (nvtxDomainHandle_t)(intptr_t)1;
}

static int push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  (void)d;
  int i = -1;
  pthread_mutex_lock(&lock);
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) i = (int)(intptr_t)a->message.registered - 1;
  else if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) i = find_name(a->message.ascii);
  if (i >= 0) counts[i]++;
  pthread_mutex_unlock(&lock);
  return depth++;
}

static int pop(nvtxDomainHandle_t d) {
  (void)d;
  if (depth == 0) __atomic_fetch_add(&unbalanced, 1, __ATOMIC_RELAXED);
  else depth--;
  return depth;
}

static void report(void) {
  const char *p = getenv("NVTX_COUNTER_LOG");
  FILE *f = p ? fopen(p, "w") : NULL;
  if (!f) return;
  for (int i = 0; i < nnames; i++)
    if (counts[i]) fprintf(f, "%s %ld\n", names[i], counts[i]);
  fprintf(f, "unbalanced %ld\n", unbalanced + depth);
  fclose(f);
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable t;
  unsigned int n;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) return 0;
  *t[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
  *t[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
  *t[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)reg;
  *t[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
  atexit(report);
  return 1;
}
