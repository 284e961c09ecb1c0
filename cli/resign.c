/* `asyncore resign`: recompute every stored signature from the stored
 * frames, with the analyzer's own signature function and the lists given. */
#include "cli.h"

#include "../analyzer/signature.h"
#include "../reports/store_resign.h"
#include "options.h"

enum resign_option { O_DB, O_SIGNATURE_LISTS };

static const struct cli_option resign_options[] = {
	{"--db", true, O_DB},
	{"--signature-lists", true, O_SIGNATURE_LISTS},
	{NULL, false, 0},
};

/* The analyzer's signature of a core the store read back. */
static int sign_stored(void *ctx, const struct rep_stored_crash *c, char **signature, char **hash)
{
	const struct an_signature_input in = {
		.has_signal = c->has_signal,
		.signo = c->signo,
		.signal_name = c->signal_name,
		.frames = c->frames,
		.nframes = c->nframes,
	};
	return an_signature_of(&in, ctx, signature, hash);
}

int cli_resign(int argc, char **argv)
{
	struct cli_args args;
	const char *v, *db = NULL, *lists_dir = NULL;
	struct an_signature_lists *lists = NULL;
	struct rep_store *st = NULL;
	struct rep_resign_result r;
	char why[512];
	int id, status = CLI_EXIT_UNUSABLE;
	cli_args_init(&args, "resign", argc, argv);
	while ((id = cli_next(&args, resign_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return CLI_EXIT_UNUSABLE;
		if (id == O_DB) {
			db = v;
		} else if (id == O_SIGNATURE_LISTS) {
			lists_dir = v;
		} else {
			cli_error("resign", "unexpected argument %s", v);
			return CLI_EXIT_UNUSABLE;
		}
	}
	if (!db) {
		cli_error("resign", "usage: asyncore resign --db FILE|URL [--signature-lists DIR]");
		return CLI_EXIT_UNUSABLE;
	}
	if (cli_signature_lists(lists_dir, &lists) != 0)
		return CLI_EXIT_UNUSABLE;
	if (rep_store_open(db, &st, why, sizeof(why)) != 0 ||
	    rep_store_resign(st, sign_stored, lists, &r, why, sizeof(why)) != 0) {
		fprintf(stderr, "asyncore: %s\n", why);
		goto out;
	}
	printf("resigned %zu cores, %zu signatures changed; buckets %zu -> %zu: %zu merged, %zu split\n",
	       r.cores, r.changed, r.buckets_before, r.buckets_after, r.merged, r.split);
	status = CLI_EXIT_OK;
out:
	rep_store_close(st);
	an_signature_lists_destroy(lists);
	return status;
}
