/* commands: nctrace's command table and its option parser (commands.h). */
#include "commands.h"

#include "util.h"

#include <stdint.h>
#include <string.h>

#define X_OPT(id, name, value) {name, value},
static const Opt summary_opts[] = {SUMMARY_OPTS(X_OPT){NULL, 0}};
static const Opt filter_opts[] = {FILTER_OPTS(X_OPT){NULL, 0}};
static const Opt merge_opts[] = {MERGE_OPTS(X_OPT){NULL, 0}};
static const Opt convert_opts[] = {CONVERT_OPTS(X_OPT){NULL, 0}};
static const Opt report_opts[] = {REPORT_OPTS(X_OPT){NULL, 0}};
static const Opt kernels_opts[] = {KERNELS_OPTS(X_OPT){NULL, 0}};
static const Opt diff_opts[] = {DIFF_OPTS(X_OPT){NULL, 0}};

const Command NCT_COMMANDS[] = {
  {"summary",
   "nctrace summary TRACE... [--format md|json] [-o OUT] [--top N] [--step GLOB] [--strict]\n"
   "                       [--ncu CSV] [--nsys CSV]\n"
   "       nctrace summary --partial TRACE... -o PART [--step GLOB] [--strict]\n"
   "       nctrace summary PART... [--format md|json] [-o OUT] [--top N] [--step GLOB]\n",
   summary_opts, cmd_summary},
  {"filter",
   "nctrace filter TRACE -o OUT [--min-dur-us X] [--include-cuda-kernels]\n"
   "                      [--include-direct-children] [--name GLOB]\n",
   filter_opts, cmd_filter},
  {"merge", "nctrace merge RANK_TRACE... -o OUT\n", merge_opts, cmd_merge},
  {"convert", "nctrace convert TRACE -o OUT\n", convert_opts, cmd_convert},
  {"report",
   "nctrace report TRACE... -o report.html [--top N] [--step GLOB] [--compare TRACE]...\n"
   "                      [--shadow DIR]\n"
   "       nctrace report TRACE... --serve [--port N] [the same options]\n",
   report_opts, cmd_report},
  {"kernels", "nctrace kernels TRACE... [--range GLOB] [--top N] [--format md|tsv|json] [-o OUT]\n", kernels_opts,
   cmd_kernels},
  {"diff",
   "nctrace diff A B [--format md|json] [-o OUT] [--top N] [--step GLOB]\n"
   "       nctrace diff A1 A2... -- B1 B2... [the same options]\n",
   diff_opts, cmd_diff},
};
const size_t NCT_NCOMMANDS = sizeof NCT_COMMANDS / sizeof *NCT_COMMANDS;

const Command *command_find(const char *name) {
  for (size_t i = 0; i < NCT_NCOMMANDS; i++)
    if (!strcmp(NCT_COMMANDS[i].name, name)) return &NCT_COMMANDS[i];
  return NULL;
}

static int opt_index(const Command *c, const char *a) {
  for (int k = 0; c && c->opts[k].name; k++)
    if (!strcmp(c->opts[k].name, a)) return k;
  return -1;
}

bool opt_count(const char *cmd, const char *opt, const char *v, size_t *out) {
  if (parse_count(v, out)) {
    if (!*out) *out = SIZE_MAX; /* 0: all (summary and report once showed none) */
    return true;
  }
  nct_error("%s: %s takes a count (0: all), not '%s'", cmd, opt, v);
  return false;
}

bool opt_takes_value(const char *cmd, const char *opt) {
  const Command *c = command_find(cmd);
  int k = opt_index(c, opt);
  return k >= 0 && c->opts[k].value;
}

int opt_next(const char *cmd, int argc, char **argv, int *i, const char **val) {
  const char *a = argv[*i];
  const Command *c = command_find(cmd);
  int k = opt_index(c, a);
  *val = NULL;
  if (k >= 0 && (!c->opts[k].value || *i + 1 < argc)) {
    if (c->opts[k].value) *val = argv[++*i];
    return k;
  }
  if (k >= 0 || (a[0] == '-' && a[1] && strcmp(a, "--"))) {
    nct_error("%s: unknown or incomplete option '%s'", cmd, a);
    return OPT_BAD;
  }
  return OPT_ARG;
}

int usage_error(const char *cmd, const char *why) {
  const Command *c = command_find(cmd);
  Buf b = {0};
  if (why) {
    buf_puts(&b, why);
    buf_putc(&b, '\n');
  }
  buf_puts(&b, "usage: ");
  /* continuation lines join their form; a line that starts a form
   * ("nctrace ...") stays a line of its own */
  for (const char *p = c ? c->usage : ""; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    size_t lead = strspn(p, " ");
    if (p != c->usage) {
      if (n - lead >= 8 && !strncmp(p + lead, "nctrace ", 8)) buf_puts(&b, "\n       ");
      else buf_putc(&b, ' ');
    }
    buf_add(&b, p + lead, n - lead);
    p += n + (e != NULL);
  }
  nct_error("%s", b.s ? b.s : "");
  buf_free(&b);
  return 2;
}
