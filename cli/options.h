/* The one option layer of every command: `--name value` and `--name=value`
 * alike, flags without values, positional arguments, and `--` ending the
 * options.  Nothing here exits: a problem is one line on stderr and
 * CLI_ERROR, and the command returns exit status 2. */
#ifndef CLI_OPTIONS_H
#define CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_WARNINGS = 1, CLI_EXIT_UNUSABLE = 2 };

/* What cli_next() found besides an option's id (ids are >= 0). */
enum { CLI_END = -1, CLI_POSITIONAL = -2, CLI_ERROR = -3 };

/* An option whose value may be left out: has_value CLI_OPTIONAL_VALUE takes
 * "--name=V" and "--name" (value NULL); "--name V" is for the command to
 * take with cli_optional_value(). */
enum { CLI_OPTIONAL_VALUE = 2 };

struct cli_option {
	const char *name;           /* "--format"; a short alias ("-j") is its own entry */
	int has_value;              /* false, true or CLI_OPTIONAL_VALUE */
	int id;
};

struct cli_args {
	const char *command;        /* for messages: "ingest" */
	int argc;
	char **argv;
	int next;
	bool positional_only;       /* after "--" */
};

/* Parse ARGV[0 .. ARGC) of COMMAND. */
void cli_args_init(struct cli_args *a, const char *command, int argc, char **argv);

/* The next item: an option's id (its value, if it takes one, in *VALUE),
 * CLI_POSITIONAL (the argument in *VALUE), CLI_END, or CLI_ERROR (an unknown
 * option, a missing value, or a value given to a flag; reported). OPTIONS
 * ends with an entry whose name is NULL. */
int cli_next(struct cli_args *a, const struct cli_option *options, const char **value);

/* After an option with an optional value given without "=": the next
 * argument as its value (into *VALUE, consumed) when it is one of CHOICES
 * (NULL-terminated); else *VALUE stays NULL. */
void cli_optional_value(struct cli_args *a, const char *const *choices, const char **value);

/* VALUE of option NAME as a whole number in [MIN, MAX]; false (reported)
 * otherwise. */
bool cli_number(const char *name, const char *value, unsigned long long min,
		unsigned long long max, unsigned long long *out);

/* VALUE of option NAME as a size in bytes: a whole number, optionally with
 * K, M, G or T (powers of 1024; "512M", "2GiB"); false (reported)
 * otherwise. */
bool cli_size(const char *name, const char *value, unsigned long long *out);

/* Index of VALUE of option NAME among CHOICES (NULL-terminated); -1
 * (reported, listing the choices) when it is none of them. */
int cli_choice(const char *name, const char *value, const char *const *choices);

struct an_signature_lists;

/* The signature lists of --signature-lists DIR into *OUT (NULL when DIR is
 * NULL: the built-in lists; an_signature_lists_destroy() frees them); 0, or
 * -1 with the reason on stderr. */
int cli_signature_lists(const char *dir, struct an_signature_lists **out);

/* --debug-dir directories a command takes, at most. */
#define CLI_MAX_DEBUG_DIRS 16

/* Add VALUE of the repeatable option NAME of COMMAND to VALUES (*N of
 * them, at most MAX); false (reported) when there are too many. */
bool cli_repeated(const char *command, const char *name, const char **values, size_t *n,
		  size_t max, const char *value);

/* A one-line usage problem of COMMAND on stderr ("asyncore: ingest: ..."). */
void cli_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
