/* cli.c — what every nbcuda subcommand does the same way: usage errors as one line with a
 * hint where to read more, and getopt_long's failures turned into such a line.
 *
 * getopt_long runs with opterr = 0 and an optstring starting with ':' (after '+' where the
 * caller stops at the first operand), so it reports instead of printing: '?' for an option
 * it does not know (optopt the letter of a short one, 0 for a long one, whose text is then
 * argv[optind - 1]) and ':' for an option whose value is missing.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int nbc__cli_usage_error(const char *command, const char *fmt, const char *arg) {
  fprintf(stderr, "nbcuda%s%s: ", command ? " " : "", command ? command : "");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (try nbcuda%s%s --help)\n", command ? " " : "", command ? command : "");
  return 2;
}

/* Whether getopt_long's complaint is about the long option argv[optind - 1]: optopt is 0
 * for an unknown one, and the option's val for one given a value it takes not (or missing
 * its value), which is a letter where the option has a short form too. */
static int about_long_option(char *const *argv, const struct option *longopts) {
  if (optopt == 0 || optopt > 255) return 1;
  const char *arg = argv[optind - 1];
  if (strncmp(arg, "--", 2) != 0) return 0;
  size_t len = strcspn(arg + 2, "=");
  for (const struct option *o = longopts; o->name; o++)
    if (o->val == optopt && strncmp(o->name, arg + 2, len) == 0) return 1;
  return 0;
}

int nbc__cli_bad_option(const char *command, int c, char *const *argv,
                        const struct option *longopts) {
  char name[256];
  if (!about_long_option(argv, longopts)) {
    snprintf(name, sizeof name, "-%c", optopt);
  } else {
    /* "--name" or "--name=value": the name alone is what the user must fix. */
    const char *arg = argv[optind - 1];
    size_t len = strcspn(arg, "=");
    snprintf(name, sizeof name, "%.*s", (int)(len < 200 ? len : 200), arg);
    if (c == '?' && arg[len] == '=')
      for (const struct option *o = longopts; o->name; o++)
        if (o->has_arg == no_argument && strncmp(o->name, name + 2, len - 2) == 0)
          return nbc__cli_usage_error(command, "option '%s' takes no value", name);
  }
  if (c == ':') return nbc__cli_usage_error(command, "option '%s' needs a value", name);
  return nbc__cli_usage_error(command, "unknown option '%s'", name);
}
