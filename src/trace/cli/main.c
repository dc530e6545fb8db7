/* nctrace: where did the time go? Reads Chrome-trace files (ncrt's,
 * torch.profiler/Kineto's, torch's legacy exporter's) and summarises,
 * filters, merges, compares or renders them. docs/nctrace.md is the user guide. */
#include "commands.h"
#include "progress.h"
#include "reader.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char FOOTER[] =
  "TRACE: .json, .json.gz or .pftrace (Perfetto); OUT ending in .gz is written gzip-compressed.\n"
  "-q, --quiet (any command): no progress bar while big traces are read (it is\n"
  "only ever drawn on a terminal). --version: the version. docs/nctrace.md and\n"
  "nctrace(1) explain each figure.\n";

/* The usage of every command (the table's, commands.c), or of one. */
static void usage(FILE *f, int only) {
  for (int i = 0; i < (int)NCT_NCOMMANDS; i++)
    if (only < 0 || only == i) fprintf(f, "%s%s", only < 0 && i ? "       " : "usage: ", NCT_COMMANDS[i].usage);
  fputs(FOOTER, f);
}

/* How the trace core's messages and progress reach the terminal: the bar
 * is erased before any message (the core itself never prints). */
static const NctProgress bar = {progress_begin, progress_update, progress_clear};

int main(int argc, char **argv) {
  nct_say = progress_say;
  nct_progress = &bar;
  /* -q / --quiet belongs to no command: take it out wherever it stands */
  int n = 0;
  for (int i = 0; i < argc; i++) {
    if (i > 0 && (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))) progress_set_quiet(true);
    else argv[n++] = argv[i];
  }
  argc = n;
  argv[argc] = NULL;
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout, -1);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("nctrace %s\n", NC_VERSION);
    return 0;
  }
  for (int c = 0; c < (int)NCT_NCOMMANDS; c++) {
    const Command *cmd = &NCT_COMMANDS[c];
    if (strcmp(argv[1], cmd->name)) continue;
    /* -h / --help anywhere, unless it is an option's value (-o --help) */
    for (int i = 2; i < argc; i++)
      if ((!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) && (i == 2 || !opt_takes_value(cmd->name, argv[i - 1]))) {
        usage(stdout, c);
        return 0;
      }
    return cmd->run(argc - 1, argv + 1);
  }
  fprintf(stderr, "nctrace: unknown command '%s'\n", argv[1]);
  usage(stderr, -1);
  return 2;
}
