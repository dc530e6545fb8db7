/* nctrace: where did the time go? Reads Chrome-trace files (ncrt's,
 * torch.profiler/Kineto's, torch's legacy exporter's) and summarises,
 * filters, merges, compares or renders them. docs/nctrace.md is the user guide. */
#include "commands.h"
#include "progress.h"
#include "reader.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* One usage line per command: `nctrace CMD --help` prints its own. */
static const struct {
  const char *cmd, *usage;
  const char *valued; /* its options that take a value: "--name -h" names "-h" */
  int (*run)(int, char **);
} CMDS[] = {
  {"summary", "nctrace summary TRACE... [--format md|json] [-o OUT] [--top N] [--step GLOB] [--strict]\n"
              "                       [--ncu CSV] [--nsys CSV]\n",
   " --format -o --top --step --ncu --nsys ", cmd_summary},
  {"filter", "nctrace filter TRACE -o OUT [--min-dur-us X] [--include-cuda-kernels]\n"
             "                      [--include-direct-children] [--name GLOB]\n", " -o --min-dur-us --name ", cmd_filter},
  {"merge", "nctrace merge RANK_TRACE... -o OUT\n", " -o ", cmd_merge},
  {"report", "nctrace report TRACE... -o report.html [--top N] [--step GLOB] [--compare TRACE]...\n"
             "                      [--shadow DIR]\n",
   " -o --top --step --compare --shadow ", cmd_report},
  {"kernels", "nctrace kernels TRACE... [--range GLOB] [--top N] [--format md|tsv|json] [-o OUT]\n",
   " --range --top --format -o ", cmd_kernels},
  {"diff", "nctrace diff A B [--format md|json] [-o OUT] [--top N] [--step GLOB]\n"
           "       nctrace diff A1 A2... -- B1 B2... [the same options]\n", " --format -o --top --step ",
   cmd_diff},
};

static bool is_value_of(const char *valued, const char *opt) {
  char key[64];
  snprintf(key, sizeof key, " %s ", opt);
  return strlen(opt) < sizeof key - 2 && strstr(valued, key);
}
static const char FOOTER[] =
  "TRACE: .json or .json.gz; OUT ending in .gz is written gzip-compressed.\n"
  "-q, --quiet (any command): no progress bar while big traces are read (it is\n"
  "only ever drawn on a terminal). --version: the version. docs/nctrace.md and\n"
  "nctrace(1) explain each figure.\n";

static void usage(FILE *f, int only) {
  for (int i = 0; i < (int)(sizeof CMDS / sizeof *CMDS); i++)
    if (only < 0 || only == i) fprintf(f, "%s%s", only < 0 && i ? "       " : "usage: ", CMDS[i].usage);
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
  for (int c = 0; c < (int)(sizeof CMDS / sizeof *CMDS); c++) {
    if (strcmp(argv[1], CMDS[c].cmd)) continue;
    for (int i = 2; i < argc; i++)
      if ((!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) && !is_value_of(CMDS[c].valued, argv[i - 1])) {
        usage(stdout, c);
        return 0;
      }
    return CMDS[c].run(argc - 1, argv + 1);
  }
  fprintf(stderr, "nctrace: unknown command '%s'\n", argv[1]);
  usage(stderr, -1);
  return 2;
}
