#include "cli.h"

static const char usage_text[] =
	"usage: asyncore CORE [BINARY]                crash report for one core\n"
	"       asyncore report CORE [BINARY] [options]\n"
	"       asyncore ingest --db FILE|URL [--jobs N] [--binary BIN | --sysroot DIR] [--quiet]\n"
	"                       [--signature-lists DIR] [--journal [--journal-dir DIR]] CORE...|DIR\n"
	"       asyncore query --db FILE|URL [--format table|csv|json] \"SQL\"\n"
	"       asyncore top --db FILE|URL [--limit N] [--format table|csv|json|html]\n"
	"       asyncore resign --db FILE|URL [--signature-lists DIR]\n"
	"       asyncore store init --db URL          create a ClickHouse store's schema\n"
	"\n"
	"report options:\n"
	"  --format text|json|html   output format (default text)\n"
	"  --threads crashing|all    threads to show (default all)\n"
	"  --recorder-tail N         recorder events shown before the crash (default 20)\n"
	"  --recorder-format library print the rings in the recorder library's dump format\n"
	"  --sysroot DIR             look for mapped files under DIR\n"
	"  --debug-dir DIR           also look for debug info in DIR (repeatable)\n"
	"  --max-frames N            frames per thread (default 1024)\n"
	"  --no-async                do not splice async (folly) stacks\n"
	"  --no-recorders            do not recover flight-recorder rings\n"
	"  --no-args                 do not show frame arguments\n"
	"  --no-tasks                do not list runtimes' tasks (bRPC bthreads)\n"
	"  --frame-registers         JSON: each frame's recovered registers too\n"
	"  --color auto|always|never colour the text report (auto: on a terminal, unless NO_COLOR)\n"
	"  --signature-lists DIR     signature lists from DIR/skip and DIR/prefix (also ingest, resign)\n"
	"  --help, --version\n"
	"\n"
	"ingest options:\n"
	"  --journal                 read each systemd-coredump core's journal entry (unit, command line)\n"
	"  --journal-dir DIR         the journal files in DIR instead of the system journal\n"
	"\n"
	"top: per crash bucket its count, first and last seen (crash time, else ingest time), crashes\n"
	"  in the last 7 days, new (1: only in the newest build of its executable), the build-ids\n"
	"resign: recompute every stored signature from the stored frames (one transaction) and print\n"
	"  how many buckets merged or split\n"
	"\n"
	"signature list files (DIR/skip: frames that never explain a crash, left out; DIR/prefix:\n"
	"  frames that only make sense with their caller, kept without counting): one POSIX extended\n"
	"  regular expression per line, matched against the whole frame name (the normalised function,\n"
	"  or MODULE@0xOFFSET without one); '#' starts a comment line; the line @defaults stands for\n"
	"  the built-in entries; a missing file keeps the built-in list\n"
	"--db: an SQLite file, or a ClickHouse server clickhouse://HOST:HTTPPORT/DATABASE, sharded\n"
	"  with ?cluster=NAME (a cluster of the server's remote_servers; store init on every shard)\n"
	"every option of every command is accepted as --name value and as --name=value\n"
	"exit status: 0 analysed, 1 analysed with warnings, 2 unusable input\n";

void cli_usage(FILE *out)
{
	const char *share = cli_share_dir();
	fputs(usage_text, out);
	fprintf(out, "shipped files: %s\nsee asyncore(1)\n", share ? share : "none found");
}
