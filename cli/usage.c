#include "cli.h"

static const char usage_text[] =
	"usage: asyncore CORE [BINARY]                crash report for one core\n"
	"       asyncore report CORE [BINARY] [options]\n"
	"       asyncore ingest --db FILE [--jobs N] [--timeout SECONDS] [--max-memory SIZE]\n"
	"                       [--binary BIN | --sysroot DIR] [--quiet] CORE...|DIR\n"
	"       asyncore query --db FILE [--format table|csv|json] \"SQL\"\n"
	"       asyncore top --db FILE [--limit N] [--format table|csv|json]\n"
	"\n"
	"report options:\n"
	"  --format text|json        output format (default text)\n"
	"  --threads crashing|all    threads to show (default all)\n"
	"  --recorder-tail N         recorder events shown before the crash (default 20)\n"
	"  --recorder-format library print the rings in the recorder library's dump format\n"
	"  --sysroot DIR             look for mapped files under DIR\n"
	"  --debug-dir DIR           also look for debug info in DIR (repeatable)\n"
	"  --max-frames N            frames per thread (default 1024)\n"
	"  --no-async                do not splice async (folly) stacks\n"
	"  --no-recorders            do not recover flight-recorder rings\n"
	"  --no-args                 do not show frame arguments\n"
	"  --max-memory SIZE         memory ceiling (bytes, or with K, M, G; 0: none;\n"
	"                            default half the RAM)\n"
	"  --timeout SECONDS         time limit (default 300; 0: none)\n"
	"  --help, --version\n"
	"\n"
	"ingest options:\n"
	"  --jobs N                  worker processes (default: the number of CPUs)\n"
	"  --timeout SECONDS         per core, in a worker (default 300; 0: none)\n"
	"  --max-memory SIZE         per worker (default half the RAM shared by the workers)\n"
	"every option of every command is accepted as --name value and as --name=value\n"
	"exit status: 0 analysed, 1 analysed with warnings (ingest: some cores failed),\n"
	"2 unusable input, 130 (ingest) stopped by SIGINT or SIGTERM\n";

void cli_usage(FILE *out)
{
	fputs(usage_text, out);
}
