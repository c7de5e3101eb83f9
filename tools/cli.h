/* cli.h — subcommands of the nbcuda command-line tool, one per file under tools/.
 *
 * tools/nbcuda.c holds main() and dispatches on argv[1]; each subcommand gets argc/argv with
 * argv[0] being the subcommand's name and returns the process exit code (0 success, 1 the
 * operation failed, 2 usage error).
 */
#ifndef NBC_TOOLS_CLI_H
#define NBC_TOOLS_CLI_H

/* `nbcuda compile ...` — tools/cmd_compile.c. */
int nbc__cli_compile(int argc, char **argv);

#endif /* NBC_TOOLS_CLI_H */
