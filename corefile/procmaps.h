/* A line of /proc/PID/maps, as a running process's /proc shows it and a
 * minidump's LinuxMaps stream keeps it. */
#ifndef COREFILE_PROCMAPS_H
#define COREFILE_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>

struct core_maps_line {
	uint64_t start, end, offset;
	uint32_t flags;             /* PF_R | PF_W | PF_X */
	bool shared;
	unsigned dev_major, dev_minor;
	uint64_t inode;
	const char *path;           /* into the line; "" when anonymous */
};

/* Parse LINE (one line, without its newline) into *OUT; false when it is
 * no mapping, or the kernel's [vsyscall] page, which is not the
 * process's memory. */
bool core_maps_line_parse(const char *line, struct core_maps_line *out);

#endif
