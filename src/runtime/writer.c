/* writer: the collected ranges as one Chrome-trace file in the layout
 * torch.profiler/Kineto writes (schemaVersion, baseTimeNanoseconds,
 * distributedInfo, traceEvents with ph "X", cat "user_annotation"), gzip'ed
 * as ONE stream (Perfetto reads only the first gzip member), written to a
 * temporary name and renamed, so a reader never sees half a trace.
 *
 *   $NCRT_OUTPUT_DIR (default ".") / $NCRT_TRACE_NAME (default "ncrt")
 *       -rank<R>.trace.json.gz
 * R comes from RANK (torchrun), SLURM_PROCID, OMPI_COMM_WORLD_RANK or
 * PMI_RANK, else 0. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "collector.h"

typedef struct {
  z_stream z;
  FILE *f;
  char buf[1 << 16];
  size_t n;
  int err;
} Gz;

static void gz_flush(Gz *g, int mode) {
  unsigned char out[1 << 16];
  g->z.next_in = (unsigned char *)g->buf;
  g->z.avail_in = (uInt)g->n;
  do {
    g->z.next_out = out;
    g->z.avail_out = sizeof out;
    if (deflate(&g->z, mode) == Z_STREAM_ERROR) g->err = 1;
    size_t have = sizeof out - g->z.avail_out;
    if (have && fwrite(out, 1, have, g->f) != have) g->err = 1;
  } while (g->z.avail_out == 0);
  g->n = 0;
}

static void gz_printf(Gz *g, const char *fmt, ...) {
  va_list ap;
  if (sizeof g->buf - g->n < 4096) gz_flush(g, Z_NO_FLUSH);
  va_start(ap, fmt);
  int k = vsnprintf(g->buf + g->n, sizeof g->buf - g->n, fmt, ap);
  va_end(ap);
  if (k > 0 && (size_t)k < sizeof g->buf - g->n) g->n += (size_t)k;
  else g->err = 1;
}

static void gz_string(Gz *g, const char *s) {
  gz_printf(g, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') gz_printf(g, "\\%c", c);
    else if (c < 0x20) gz_printf(g, "\\u%04x", c);
    else gz_printf(g, "%c", c);
  }
  gz_printf(g, "\"");
}

static int env_int(const char *const *names, int dflt) {
  for (; *names; names++) {
    const char *v = getenv(*names);
    if (v && *v) return atoi(v);
  }
  return dflt;
}

void ncrt_write_trace(void) {
  static const char *const rank_vars[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
  static const char *const size_vars[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
  if (ncrt_state.disabled && !ncrt_state.threads) return;
  int rank = env_int(rank_vars, 0), world = env_int(size_vars, 1);
  const char *dir = getenv("NCRT_OUTPUT_DIR"), *name = getenv("NCRT_TRACE_NAME");
  if (!dir || !*dir) dir = ".";
  if (!name || !*name) name = "ncrt";
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s-rank%d.trace.json.gz", dir, name, rank);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  Gz *g = calloc(1, sizeof *g);
  if (!g || !(g->f = fopen(tmp, "wb"))) {
    fprintf(stderr, "ncrt: cannot write %s; trace lost\n", path);
    free(g);
    return;
  }
  if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    fclose(g->f);
    unlink(tmp);
    free(g);
    return;
  }
  pid_t pid = getpid();
  gz_printf(g, "{\"schemaVersion\": 1, \"deviceProperties\": [], \"displayTimeUnit\": \"ms\", "
               "\"baseTimeNanoseconds\": %lld, \"distributedInfo\": {\"backend\": \"\", \"rank\": %d, "
               "\"world_size\": %d}, \"traceName\": ",
            (long long)ncrt_state.real0, rank, world);
  gz_string(g, path);
  gz_printf(g, ", \"traceEvents\": [\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, "
               "\"args\": {\"name\": \"rank %d (pid %d)\"}}",
            (int)pid, rank, (int)pid);
  for (NcrtThread *t = ncrt_state.threads; t; t = t->next) {
    gz_printf(g, ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": "
                 "\"thread %d\"}}",
              (int)pid, (int)t->tid, (int)t->tid);
    for (size_t i = 0; i < t->n; i++) {
      const NcrtEvent *e = &t->ev[i];
      gz_printf(g, ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": ");
      gz_string(g, e->name < ncrt_state.nnames ? ncrt_state.names[e->name] : "");
      gz_printf(g, ", \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"depth\": %u}}", (int)pid,
                (int)t->tid, e->start / 1000.0, (e->end - e->start) / 1000.0, e->depth);
    }
  }
  gz_printf(g, "\n]}\n");
  gz_flush(g, Z_FINISH);
  deflateEnd(&g->z);
  int bad = g->err | (fclose(g->f) != 0);
  if (bad || rename(tmp, path) != 0) {
    fprintf(stderr, "ncrt: cannot write %s; trace lost\n", path);
    unlink(tmp);
  }
  free(g);
}
