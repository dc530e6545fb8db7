/* commands: nctrace's one command table (commands.c). A row is a command:
 * its name, its usage (printed by `nctrace --help`, `nctrace CMD --help`
 * and with a usage error), its options and the function that runs it.
 * Each command's options are an X-macro list below, from which both the
 * table's option row and the command's enum of option indexes are made, so
 * the parser (opt_next), the --help check (is --help a value here?) and the
 * command read one list. Adding a command is a row in commands.c, a list
 * here and its cmd_ function. Each cmd_ takes its own argv (argv[0] is the
 * command) and returns the exit status. */
#ifndef NCT_COMMANDS_H
#define NCT_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  const char *name; /* "--top", "-o" */
  bool value;       /* takes the next argument as its value */
} Opt;

typedef struct {
  const char *name;
  const char *usage; /* "nctrace summary TRACE... [...]\n<indent>[...]\n"; a form per line starting "nctrace" */
  const Opt *opts;   /* ended by {NULL} */
  int (*run)(int argc, char **argv);
} Command;

extern const Command NCT_COMMANDS[];
extern const size_t NCT_NCOMMANDS;
const Command *command_find(const char *name);

#define X_ENUM(id, name, value) id,

/* name, takes a value */
#define SUMMARY_OPTS(X) X(SUM_FORMAT, "--format", 1) X(SUM_OUT, "-o", 1) X(SUM_TOP, "--top", 1) \
  X(SUM_STEP, "--step", 1) X(SUM_STRICT, "--strict", 0) X(SUM_NCU, "--ncu", 1) X(SUM_NSYS, "--nsys", 1) \
  X(SUM_PARTIAL, "--partial", 0)
#define FILTER_OPTS(X) X(FIL_OUT, "-o", 1) X(FIL_MIN_DUR, "--min-dur-us", 1) \
  X(FIL_KERNELS, "--include-cuda-kernels", 0) X(FIL_CHILDREN, "--include-direct-children", 0) X(FIL_NAME, "--name", 1)
#define MERGE_OPTS(X) X(MRG_OUT, "-o", 1)
#define CONVERT_OPTS(X) X(CNV_OUT, "-o", 1)
#define REPORT_OPTS(X) X(REP_OUT, "-o", 1) X(REP_TOP, "--top", 1) X(REP_STEP, "--step", 1) \
  X(REP_COMPARE, "--compare", 1) X(REP_SHADOW, "--shadow", 1) \
  X(REP_SERVE, "--serve", 0) X(REP_PORT, "--port", 1)
#define KERNELS_OPTS(X) X(KER_RANGE, "--range", 1) X(KER_TOP, "--top", 1) X(KER_FORMAT, "--format", 1) X(KER_OUT, "-o", 1)
#define DIFF_OPTS(X) X(DIF_FORMAT, "--format", 1) X(DIF_OUT, "-o", 1) X(DIF_TOP, "--top", 1) X(DIF_STEP, "--step", 1)

enum { SUMMARY_OPTS(X_ENUM) };
enum { FILTER_OPTS(X_ENUM) };
enum { MERGE_OPTS(X_ENUM) };
enum { CONVERT_OPTS(X_ENUM) };
enum { REPORT_OPTS(X_ENUM) };
enum { KERNELS_OPTS(X_ENUM) };
enum { DIFF_OPTS(X_ENUM) };

/* argv[*i] for command cmd: an option of its list (its index; a value in
 * *val, *i moved past it), OPT_ARG (not an option: an operand, "-" or
 * "--"), or OPT_BAD after saying "CMD: unknown or incomplete option". */
enum { OPT_ARG = -1, OPT_BAD = -2 };
int opt_next(const char *cmd, int argc, char **argv, int *i, const char **val);
/* An option's value that must be a count (--top): true with it in *out
 * (0, all, as SIZE_MAX), else false after saying "CMD: OPT takes a count
 * (0: all), not 'V'". */
bool opt_count(const char *cmd, const char *opt, const char *v, size_t *out);
/* Does opt (e.g. "-o") take a value in cmd? */
bool opt_takes_value(const char *cmd, const char *opt);
/* The usage error: why (when not NULL) and, on the next line, "usage: "
 * and the command's forms, each on one line. Returns 2 (the status of a
 * usage error). */
int usage_error(const char *cmd, const char *why);

int cmd_summary(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
