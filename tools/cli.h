/* cli.h — subcommands of the nbcuda command-line tool, one per file under tools/, and the
 * option handling they share (tools/cli.c).
 *
 * tools/nbcuda.c holds main() and dispatches on the command word; each subcommand gets
 * argc/argv with argv[0] being the subcommand's name, parses its options with getopt_long
 * and returns the process exit code (0 success, 1 the operation failed, 2 usage error).
 */
#ifndef NBC_TOOLS_CLI_H
#define NBC_TOOLS_CLI_H

#include <getopt.h>

/* `nbcuda compile ...` — tools/cmd_compile.c. */
int nbc__cli_compile(int argc, char **argv);

/* A usage error of `nbcuda <command>` (command NULL: of nbcuda itself): one line on stderr,
 *   nbcuda compile: <message> (try nbcuda compile --help)
 * where message is fmt with one string argument. Returns 2, the exit status of bad usage. */
int nbc__cli_usage_error(const char *command, const char *fmt, const char *arg);

/* The usage error for what getopt_long returned as c ('?' or ':', with opterr 0 and an
 * optstring that starts with ':'), naming the option as the user wrote it: unknown option,
 * option that needs a value, or long option given a value it does not take. Returns 2. */
int nbc__cli_bad_option(const char *command, int c, char *const *argv,
                        const struct option *longopts);

#endif /* NBC_TOOLS_CLI_H */
