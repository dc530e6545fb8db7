/* subcommands: ncrewrite's subcommands, one table (subcommands.c) that the
 * ncrewrite program (main.c) and the Python package's engine
 * (python/src/engine.c, run_tool) both dispatch through. Adding a
 * subcommand is a row there plus its cmd_ function. */
#ifndef NC_SUBCOMMANDS_H
#define NC_SUBCOMMANDS_H

#include <stdbool.h>

typedef int (*SubcommandFn)(int argc, char **argv);

/* The subcommand called name, or NULL. Its argv[0] is the subcommand. */
SubcommandFn subcommand_find(const char *name);

/* ncrewrite SUBCOMMAND ...: true when argv[1] names a subcommand; its exit
 * status is then in *status. */
bool subcommand_run(int argc, char **argv, int *status);

int cmd_feedback(int argc, char **argv);
int cmd_drill(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_export_nsys(int argc, char **argv);

#endif
