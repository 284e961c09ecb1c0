/* `asyncore store init --db URL`: create the store's schema; on ClickHouse
 * the database, tables and views (idempotent; with ?cluster=NAME on the
 * shard the URL names, so it is run once per shard). */
#include "cli.h"

#include <string.h>

#include "../reports/store.h"
#include "options.h"

enum store_option { O_DB };

static const struct cli_option store_options[] = {
	{"--db", true, O_DB},
	{NULL, false, 0},
};

int cli_store(int argc, char **argv)
{
	struct cli_args args;
	const char *v, *db = NULL;
	char why[512];
	int id;
	if (argc < 1 || strcmp(argv[0], "init") != 0) {
		cli_error("store", "usage: asyncore store init --db URL");
		return CLI_EXIT_UNUSABLE;
	}
	cli_args_init(&args, "store init", argc - 1, argv + 1);
	while ((id = cli_next(&args, store_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return CLI_EXIT_UNUSABLE;
		if (id != O_DB) {
			cli_error("store init", "unexpected argument %s", v);
			return CLI_EXIT_UNUSABLE;
		}
		db = v;
	}
	if (!db) {
		cli_error("store init", "usage: asyncore store init --db URL");
		return CLI_EXIT_UNUSABLE;
	}
	if (rep_store_init(db, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		return CLI_EXIT_UNUSABLE;
	}
	return CLI_EXIT_OK;
}
