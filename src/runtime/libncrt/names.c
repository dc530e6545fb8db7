/* names.c: range names, interned. Every name text gets one id for the
 * life of the process (RtName, rt.h); records and the writer carry ids.
 *
 * Contract: rt_intern is safe in a signal handler (mmap, never malloc; a
 * handler that interrupted its thread inside the names lock gets the
 * "(unnamed)" id, rt_name_unknown, instead of a deadlock); rt_name and
 * rt_name_count are lock free. Names are never freed. rt_names_init once,
 * at set-up (collector.c); the fork lock pair around fork. */
#define _GNU_SOURCE
#include "rt.h"

#include <fnmatch.h>
#include <string.h>
#include <sys/mman.h>

RtName *rt_name_pages[RT_NAME_PAGES];
static volatile uint32_t name_n;
static uint32_t *name_hash; /* id + 1, 0 = empty */
static uint32_t name_hash_cap;
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
uint32_t rt_name_unknown;

uint32_t rt_name_count(void) { return __atomic_load_n(&name_n, __ATOMIC_ACQUIRE); }

static uint32_t hash_str(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

static uint8_t name_flags_for(const char *s);

/* The name lock, never taken twice by one thread: a signal handler that
 * interrupted its thread while it held the lock (interning, registering a
 * string or a domain) gets "(unnamed)" instead of a deadlock. */
static __thread int holding_names;
int rt_names_lock(void) {
  if (holding_names) return -1;
  pthread_mutex_lock(&name_lock);
  holding_names = 1;
  return 0;
}
void rt_names_unlock(void) {
  holding_names = 0;
  pthread_mutex_unlock(&name_lock);
}

/* Interning allocates with mmap (async-signal-safe), never malloc: a
 * signal handler may record a never-seen name while its thread was inside
 * malloc. Strings go to 64 KiB arenas, never freed (ids live forever). */
static void *map_zero(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
#define ARENA_BYTES 65536
static char *arena;
static size_t arena_left;
static char *name_copy(const char *s, size_t len) {
  char *p;
  if (len + 1 > ARENA_BYTES / 4) {
    p = map_zero(len + 1);
  } else {
    if (len + 1 > arena_left) {
      char *a = map_zero(ARENA_BYTES);
      if (!a) return NULL;
      arena = a;
      arena_left = ARENA_BYTES;
    }
    p = arena;
    arena += len + 1;
    arena_left -= len + 1;
  }
  if (p) {
    memcpy(p, s, len);
    p[len] = 0;
  }
  return p;
}

/* Intern s[0..len): the same text always gives the same id. */
uint32_t rt_intern(const char *s, size_t len) {
  uint32_t h = hash_str(s, len);
  if (rt_names_lock()) return rt_name_unknown;
  if (name_n * 2 >= name_hash_cap) {
    uint32_t cap = name_hash_cap ? name_hash_cap * 2 : 1024;
    uint32_t *nh = map_zero(cap * sizeof *nh);
    if (!nh) {
      rt_names_unlock();
      return rt_name_unknown;
    }
    for (uint32_t i = 0; i < name_hash_cap; i++) {
      uint32_t v = name_hash[i];
      if (!v) continue;
      RtName *nm = rt_name(v - 1);
      uint32_t j = hash_str(nm->str, nm->len) & (cap - 1);
      while (nh[j]) j = (j + 1) & (cap - 1);
      nh[j] = v;
    }
    if (name_hash) munmap(name_hash, name_hash_cap * sizeof *name_hash);
    name_hash = nh;
    name_hash_cap = cap;
  }
  uint32_t j = h & (name_hash_cap - 1);
  while (name_hash[j]) {
    RtName *nm = rt_name(name_hash[j] - 1);
    if (nm->len == len && !memcmp(nm->str, s, len)) {
      rt_names_unlock();
      return name_hash[j] - 1;
    }
    j = (j + 1) & (name_hash_cap - 1);
  }
  uint32_t id = name_n;
  uint32_t page = id >> RT_NAME_PAGE_BITS;
  if (page >= RT_NAME_PAGES) {
    static int said_full;
    rt_names_unlock();
    if (!__atomic_exchange_n(&said_full, 1, __ATOMIC_RELAXED))
      rt_say("more than %u distinct range names: later new names are recorded as '(unnamed)'",
             (unsigned)RT_NAME_PAGES * RT_NAME_PAGE_N);
    return rt_name_unknown;
  }
  if (!rt_name_pages[page]) rt_name_pages[page] = map_zero(RT_NAME_PAGE_N * sizeof(RtName));
  char *copy = rt_name_pages[page] ? name_copy(s, len) : NULL;
  if (!copy) {
    rt_names_unlock();
    return rt_name_unknown;
  }
  RtName *nm = rt_name(id);
  nm->str = copy;
  nm->len = (uint32_t)len;
  __atomic_store_n(&nm->flags, name_flags_for(copy), __ATOMIC_RELEASE);
  name_hash[j] = id + 1;
  __atomic_store_n(&name_n, id + 1, __ATOMIC_RELEASE);
  rt_names_unlock();
  return id;
}

static uint8_t name_flags_for(const char *s) {
  uint8_t f = 0;
  if (rt_opt.gate[0] && fnmatch(rt_opt.gate, s, 0) == 0) f |= NAME_GATE;
  if (rt_opt.step_name[0] && strcmp(rt_opt.step_name, s) == 0) f |= NAME_STEP;
  return f;
}

void rt_names_init(void) {
  rt_name_unknown = 0;
  rt_name_unknown = rt_intern("(unnamed)", 9);
}
void rt_names_fork_lock(void) { pthread_mutex_lock(&name_lock); }
void rt_names_fork_unlock(void) { pthread_mutex_unlock(&name_lock); }
