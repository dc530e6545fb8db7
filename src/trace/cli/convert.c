/* convert: `nctrace convert` -- a trace as Kineto's JSON, for the tools
 * that read only that (TensorBoard's profiler plugin, HTA, torch's own
 * loaders): a Perfetto trace of ncrt's (.pftrace) becomes the JSON it
 * stands for (pbread.h: byte for byte what the JSON writer writes), a JSON
 * trace is copied. OUT ending in ".gz" is gzip'ed (output.h). */
#include "commands.h"
#include "output.h"
#include "pbread.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

int cmd_convert(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v;
    switch (opt_next("convert", argc, argv, &i, &v)) {
    case CNV_OUT: out = v; break;
    case OPT_ARG:
      if (in) return usage_error("convert", "convert: one TRACE at a time");
      in = argv[i];
      break;
    default: return 2;
    }
  }
  if (!in || !out) return usage_error("convert", NULL);
  gzFile gz = gzopen(in, "rb");
  if (!gz) return nct_error("%s: cannot open: %s", in, strerror(errno ? errno : ENOMEM)), 1;
  gzbuffer(gz, 1 << 20);
  PbRead *pb = pbread_sniff(gz, in) ? pbread_open(gz, in) : NULL;
  Output *o = out_open(out);
  int rc = o ? 0 : 1;
  static char buf[1 << 20];
  while (!rc) {
    long k;
    if (pb) {
      k = pbread_read(pb, buf, sizeof buf);
    } else {
      int zerr;
      k = gzread(gz, buf, sizeof buf);
      const char *msg = gzerror(gz, &zerr);
      if (k < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR)) k = -1, nct_error("%s: %s", in, msg);
    }
    if (k < 0) rc = 1;
    if (k <= 0) break;
    out_write(o, buf, (size_t)k);
  }
  if (o && out_close(o) < 0) rc = 1;
  pbread_close(pb);
  gzclose(gz);
  return rc;
}
