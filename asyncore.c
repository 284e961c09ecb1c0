/* asyncore: post-mortem crash analysis of ELF core files.
 *
 * main(): the command word picks a command of cli/, which wires the layers
 * (corefile -> dwarf -> analyzer -> reports). */
#include <stdio.h>
#include <string.h>

#include "analyzer/analysis.h"
#include "cli/cli.h"
#include "cli/collect.h"
#include "cli/live.h"
#include "cli/minicore.h"
#include "cli/options.h"

int main(int argc, char **argv)
{
	if (argc < 2) {
		cli_usage(stderr);
		return CLI_EXIT_UNUSABLE;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		cli_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("asyncore %s\n", AN_VERSION);
		return CLI_EXIT_OK;
	}
	/* `asyncore COMMAND --help` too: the command's options are in it. */
	if (argc == 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
		cli_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(cmd, "report") == 0)
		return cli_report(argc - 2, argv + 2);
	if (strcmp(cmd, "ingest") == 0)
		return cli_ingest(argc - 2, argv + 2);
	if (strcmp(cmd, "query") == 0)
		return cli_query(argc - 2, argv + 2);
	if (strcmp(cmd, "top") == 0)
		return cli_top(argc - 2, argv + 2);
	if (strcmp(cmd, "resign") == 0)
		return cli_resign(argc - 2, argv + 2);
	if (strcmp(cmd, "store") == 0)
		return cli_store(argc - 2, argv + 2);
	if (strcmp(cmd, "serve") == 0)
		return cli_serve(argc - 2, argv + 2);
	if (strcmp(cmd, "snapshot") == 0)
		return cli_snapshot(argc - 2, argv + 2);
	if (strcmp(cmd, "minicore") == 0)
		return cli_minicore(argc - 2, argv + 2);
	if (strcmp(cmd, "collect") == 0)
		return cli_collect(argc - 2, argv + 2);
	if (strcmp(cmd, "runtimes") == 0)
		return cli_runtimes(argc - 2, argv + 2);
	return cli_report(argc - 1, argv + 1);
}
