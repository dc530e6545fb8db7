/* readback.c: a process's .raw spill file read back, block by block in
 * file order, for a conversion (the flusher's, the exit's, a finalizer's).
 * A block is {BlkHdr, n records, commit word} (spill.c); one whose commit
 * word is not there yet was being written: the mode says whether to wait
 * for it, stop before it or count its records lost.
 *
 * Contract: the caller says where to start (an offset and the records of
 * that block already converted) and gets back where it stopped; nothing
 * here keeps state between calls. */
#define _GNU_SOURCE
#include "writer.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The flusher converts a block in slices of RB_SLICE records and stops
 * between two when the process exits (a 2 MiB block is ~87 000 records:
 * 30 ms of CPU, a second at nice 10 on a loaded machine, which the exit
 * waited for): *partial says how many records of the block at the
 * position it reached are converted, and the next read of that block
 * (skip) starts after them. An incomplete block (a thread still writing
 * it) is waited for a little when the process is alive, else counted as
 * lost. */
#define RB_SLICE 4096u
uint64_t read_blocks(int fd, uint64_t from, uint64_t to, int mode, BlockFn fn, BlockFn before, Gz *g, void *arg,
                     uint64_t *reached, uint32_t skip, uint32_t *partial, int (*between)(void)) {
  uint64_t lost = 0;
  if (partial) *partial = 0;
  int tries_max = mode == READ_ALIVE ? 200 : 1;
  size_t cap = sizeof(BlkHdr) + (2u << 20) + 8;
  char *buf = malloc(cap);
  uint64_t off = from;
  if (!buf) {
    if (!g->err) g->err = ENOMEM; /* a trace without the records would be a lie */
    to = from;
  }
  while (off + sizeof(BlkHdr) + 8 <= to) {
    BlkHdr h;
    int ok = 0;
    for (int tries = 0; tries < tries_max; tries++) {
      if (pread(fd, &h, sizeof h, (off_t)off) == (ssize_t)sizeof h && h.magic == BLK_MAGIC) {
        ok = 1;
        break;
      }
      struct timespec d = {0, 250000};
      if (tries + 1 < tries_max) nanosleep(&d, NULL);
    }
    if (!ok || (uint64_t)h.n * sizeof(RtRec) + sizeof h + 8 > cap) break;
    size_t body = (size_t)h.n * sizeof(RtRec) + 8;
    ok = 0;
    for (int tries = 0; tries < tries_max; tries++) {
      if (pread(fd, buf, body, (off_t)(off + sizeof h)) == (ssize_t)body) {
        uint64_t c;
        memcpy(&c, buf + body - 8, 8);
        if (c == (BLK_COMMIT ^ h.n)) {
          ok = 1;
          break;
        }
      }
      struct timespec d = {0, 250000};
      if (tries + 1 < tries_max) nanosleep(&d, NULL);
    }
    if (!ok && mode == READ_READY) break;
    const RtRec *recs = (const RtRec *)buf;
    uint32_t first = skip < h.n ? skip : 0;
    skip = 0;
    /* records converted before (the block's first, by an earlier read that
     * stopped inside it): their ranges still count for GPU attribution */
    if (ok && first && before) before(g, h.tid, recs, first, arg);
    if (ok && mode == READ_READY) {
      uint32_t k = first;
      while (k < h.n) {
        uint32_t m = h.n - k < RB_SLICE ? h.n - k : RB_SLICE;
        fn(g, h.tid, recs + k, m, arg);
        k += m;
        if (k < h.n && between()) break;
      }
      if (k < h.n) { /* exiting: the rest of this block is the exit's */
        if (partial) *partial = k;
        break;
      }
    } else if (ok) {
      fn(g, h.tid, recs + first, h.n - first, arg);
    } else {
      lost += h.n - first;
    }
    off += sizeof h + body;
    if (mode == READ_READY && between()) break;
  }
  free(buf);
  if (reached) *reached = off;
  return lost;
}
