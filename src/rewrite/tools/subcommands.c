/* subcommands: the table of ncrewrite's subcommands (subcommands.h). It lives
 * apart from the commands themselves so that they call each other's
 * helpers (drill uses feedback's rule check) without the dispatch calling
 * back into them: no file of tools/ calls a file that calls it
 * (tests/arch/test_circles.py). */
#include "subcommands.h"

#include <string.h>

static const struct {
  const char *name;
  SubcommandFn fn;
} CMDS[] = {
  {"feedback", cmd_feedback}, {"drill", cmd_drill}, {"prune", cmd_prune},
  {"config", cmd_config},     {"export-nsys", cmd_export_nsys},
};

SubcommandFn subcommand_find(const char *name) {
  for (size_t i = 0; i < sizeof CMDS / sizeof *CMDS; i++)
    if (!strcmp(name, CMDS[i].name)) return CMDS[i].fn;
  return NULL;
}

bool subcommand_run(int argc, char **argv, int *status) {
  SubcommandFn fn = argc < 2 ? NULL : subcommand_find(argv[1]);
  if (!fn) return false;
  *status = fn(argc - 1, argv + 1);
  return true;
}
