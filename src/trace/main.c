/* nctrace: where did the time go? Reads Chrome-trace files (ncrt's,
 * torch.profiler/Kineto's, torch's legacy exporter's) and summarises,
 * filters, merges or renders them. docs/nctrace.md is the user guide. */
#include "commands.h"
#include "progress.h"

#include <stdio.h>
#include <string.h>

static const char USAGE[] =
  "usage: nctrace summary TRACE... [--format md|json] [-o OUT] [--top N] [--step GLOB] [--strict]\n"
  "       nctrace filter TRACE -o OUT [--min-dur-us X] [--include-cuda-kernels]\n"
  "                      [--include-direct-children] [--name GLOB]\n"
  "       nctrace merge RANK_TRACE... -o OUT\n"
  "       nctrace report TRACE... -o report.html [--top N] [--step GLOB]\n"
  "TRACE: .json or .json.gz; OUT ending in .gz is written gzip-compressed.\n"
  "-q, --quiet (any command): no progress bar while big traces are read (it is\n"
  "only ever drawn on a terminal).\n";

int main(int argc, char **argv) {
  /* -q / --quiet belongs to no command: take it out wherever it stands */
  int n = 0;
  for (int i = 0; i < argc; i++) {
    if (i > 0 && (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))) progress_set_quiet(true);
    else argv[n++] = argv[i];
  }
  argc = n;
  argv[argc] = NULL;
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fputs(USAGE, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "summary")) return cmd_summary(argc - 1, argv + 1);
  if (!strcmp(cmd, "filter")) return cmd_filter(argc - 1, argv + 1);
  if (!strcmp(cmd, "merge")) return cmd_merge(argc - 1, argv + 1);
  if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
  fprintf(stderr, "nctrace: unknown command '%s'\n%s", cmd, USAGE);
  return 2;
}
