/* `asyncore query` and `asyncore top`: read-only questions to a store. */
#include "cli.h"

#include <string.h>

#include "../reports/query.h"
#include "options.h"

enum query_option { O_DB, O_FORMAT, O_LIMIT };

static const struct cli_option query_options[] = {
	{"--db", true, O_DB},
	{"--format", true, O_FORMAT},
	{"--limit", true, O_LIMIT},
	{NULL, false, 0},
};

struct query_args {
	const char *db;
	const char *sql;
	enum rep_format format;
	unsigned long long limit;
};

/* Options of query (WANT_SQL: one SQL argument) and top (--limit). */
static bool parse_query_args(const char *command, int argc, char **argv, bool want_sql,
			     struct query_args *q)
{
	static const char *const formats[] = {"table", "csv", "json", "html", NULL};
	struct cli_args args;
	const char *v;
	int id, k;
	cli_args_init(&args, command, argc, argv);
	while ((id = cli_next(&args, query_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return false;
		if (id == O_DB) {
			q->db = v;
		} else if (id == O_FORMAT) {
			if ((k = cli_choice("--format", strcmp(v, "text") ? v : "table", formats)) < 0)
				return false;
			q->format = (enum rep_format)k;
			if (want_sql && q->format == REP_FORMAT_HTML) {
				cli_error(command, "--format html is a page of top, not of query");
				return false;
			}
		} else if (id == O_LIMIT && !want_sql) {
			if (!cli_number("--limit", v, 1, 1000000000, &q->limit))
				return false;
		} else if (id == CLI_POSITIONAL && want_sql && !q->sql) {
			q->sql = v;
		} else {
			cli_error(command, "unexpected argument %s", id == CLI_POSITIONAL ? v : "--limit");
			return false;
		}
	}
	if (!q->db || (want_sql && !q->sql)) {
		cli_error(command, want_sql ? "usage: asyncore query --db FILE|URL [--format table|csv|json] \"SQL\""
					    : "usage: asyncore top --db FILE|URL [--limit N] [--format table|csv|json|html]");
		return false;
	}
	return true;
}

int cli_query(int argc, char **argv)
{
	struct query_args q = {0};
	if (!parse_query_args("query", argc, argv, true, &q))
		return CLI_EXIT_UNUSABLE;
	return rep_query(q.db, q.sql, q.format);
}

int cli_top(int argc, char **argv)
{
	struct query_args q = {.limit = 20};
	if (!parse_query_args("top", argc, argv, false, &q))
		return CLI_EXIT_UNUSABLE;
	return rep_top(q.db, (long)q.limit, q.format);
}
