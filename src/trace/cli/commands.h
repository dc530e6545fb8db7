/* commands: one function per nctrace subcommand; each takes its own argv
 * (argv[0] is the subcommand) and returns the exit status. */
#ifndef NCT_COMMANDS_H
#define NCT_COMMANDS_H

int cmd_summary(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
