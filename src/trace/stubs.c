#include "commands.h"
#include "util.h"
int cmd_filter(int argc, char **argv) { return error("filter: not yet"), 1; }
int cmd_merge(int argc, char **argv) { return error("merge: not yet"), 1; }
int cmd_report(int argc, char **argv) { return error("report: not yet"), 1; }
