/* `asyncore minicore CORE [BINARY] -o FILE[.zst]`: a core cut down to what
 * its analysis reads (corefile/minicore.h). */
#ifndef CLI_MINICORE_H
#define CLI_MINICORE_H

int cli_minicore(int argc, char **argv);

#endif
