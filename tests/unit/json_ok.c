/* json_ok FILE: exit 0 when FILE holds one JSON document (jansson's
 * parser, as strict as Python's json.load), 1 otherwise.  The test scripts
 * check every report with it: a process of a millisecond, not an
 * interpreter's start. */
#include <jansson.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: json_ok FILE\n");
		return 2;
	}
	json_error_t err;
	json_t *doc = json_load_file(argv[1], JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	if (!doc)
		return 1;
	json_decref(doc);
	return 0;
}
