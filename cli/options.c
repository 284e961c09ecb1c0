#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/siglists.h"

void cli_args_init(struct cli_args *a, const char *command, int argc, char **argv)
{
	*a = (struct cli_args){.command = command, .argc = argc, .argv = argv};
}

void cli_error(const char *command, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "asyncore: %s: ", command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The option ARG names ("--db=x" names "--db"), or NULL. */
static const struct cli_option *find_option(const struct cli_option *options, const char *arg,
					    size_t *name_len)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq && arg[1] == '-' ? (size_t)(eq - arg) : strlen(arg);
	for (const struct cli_option *o = options; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0) {
			*name_len = len;
			return o;
		}
	return NULL;
}

int cli_next(struct cli_args *a, const struct cli_option *options, const char **value)
{
	*value = NULL;
	if (a->next >= a->argc)
		return CLI_END;
	const char *arg = a->argv[a->next++];
	if (a->positional_only || arg[0] != '-' || arg[1] == '\0') {
		*value = arg;
		return CLI_POSITIONAL;
	}
	if (strcmp(arg, "--") == 0) {
		a->positional_only = true;
		return cli_next(a, options, value);
	}
	size_t len;
	const struct cli_option *o = find_option(options, arg, &len);
	if (!o) {
		size_t n = strcspn(arg, "=");
		cli_error(a->command, "unknown option %.*s (see asyncore --help)", (int)n, arg);
		return CLI_ERROR;
	}
	if (o->has_value == CLI_OPTIONAL_VALUE) {
		if (arg[len] == '=')
			*value = arg + len + 1;
		return o->id;
	}
	if (!o->has_value) {
		if (arg[len] == '=') {
			cli_error(a->command, "%s takes no value", o->name);
			return CLI_ERROR;
		}
		return o->id;
	}
	if (arg[len] == '=') {
		*value = arg + len + 1;
	} else if (a->next < a->argc) {
		*value = a->argv[a->next++];
	} else {
		cli_error(a->command, "%s needs a value", o->name);
		return CLI_ERROR;
	}
	return o->id;
}

void cli_optional_value(struct cli_args *a, const char *const *choices, const char **value)
{
	*value = NULL;
	if (a->next >= a->argc || a->positional_only)
		return;
	for (const char *const *c = choices; *c && !*value; c++)
		if (strcmp(a->argv[a->next], *c) == 0)
			*value = a->argv[a->next++];
}

bool cli_number(const char *name, const char *value, unsigned long long min,
		unsigned long long max, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(value, &end, 10);
	if (errno || *end || end == value || value[0] == '-' || n < min || n > max) {
		fprintf(stderr, "asyncore: %s wants a whole number from %llu to %llu, not '%s'\n", name,
			min, max, value);
		return false;
	}
	*out = n;
	return true;
}

int cli_choice(const char *name, const char *value, const char *const *choices)
{
	for (int i = 0; choices[i]; i++)
		if (strcmp(value, choices[i]) == 0)
			return i;
	fprintf(stderr, "asyncore: %s wants", name);
	for (int i = 0; choices[i]; i++)
		fprintf(stderr, "%s %s", i == 0 ? "" : choices[i + 1] ? "," : " or", choices[i]);
	fprintf(stderr, ", not '%s'\n", value);
	return -1;
}

bool cli_size(const char *name, const char *value, unsigned long long *out)
{
	static const char units[] = "KMGT";
	char *end;
	errno = 0;
	unsigned long long n = strtoull(value, &end, 10), scale = 1;
	const char *u = *end ? strchr(units, *end) : NULL;
	if (u) {
		scale = 1ull << (10 * (u - units + 1));
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (errno || *end || end == value || value[0] == '-' || !isdigit((unsigned char)value[0]) ||
	    n > ULLONG_MAX / scale) {
		fprintf(stderr, "asyncore: %s wants a size in bytes (a number, or with K, M, G or T), "
			"not '%s'\n", name, value);
		return false;
	}
	*out = n * scale;
	return true;
}

int cli_signature_lists(const char *dir, struct an_signature_lists **out)
{
	char why[512];
	*out = NULL;
	if (!dir)
		return 0;
	if (an_signature_lists_load(dir, out, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: --signature-lists: %s\n", why);
		return -1;
	}
	return 0;
}

bool cli_repeated(const char *command, const char *name, const char **values, size_t *n,
		  size_t max, const char *value)
{
	if (*n == max) {
		cli_error(command, "at most %zu %s", max, name);
		return false;
	}
	values[(*n)++] = value;
	return true;
}
