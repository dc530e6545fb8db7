/* output: write a file as plain text or, when its name ends in ".gz", as
 * ONE gzip stream (deflateInit2 with 15+16 window bits; Perfetto reads
 * only the first gzip member). "-" is standard output.
 * Ownership: the Output owns its buffer and file; out_close frees both. */
#ifndef NCT_OUTPUT_H
#define NCT_OUTPUT_H

#include "util.h"

typedef struct Output Output;

Output *out_open(const char *path); /* NULL after reporting */
void out_write(Output *o, const void *p, size_t n);
void out_puts(Output *o, const char *s);
/* Flushes and closes; 0 or -1 (reported), also for earlier write errors. */
int out_close(Output *o);
/* A whole text at once (summary, report, kernels): open, write, close;
 * 0 or -1 (reported). */
int out_write_file(const char *path, const Buf *b);

#endif
