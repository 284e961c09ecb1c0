#include "procmaps.h"

#include <elf.h>
#include <stdio.h>

bool core_maps_line_parse(const char *line, struct core_maps_line *out)
{
	unsigned long long start, end, off, inode;
	char perms[8];
	unsigned maj, min;
	int used = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &inode,
		   &used) < 7 || end <= start || start >= 0xffffffffff600000ull)
		return false;
	out->start = start;
	out->end = end;
	out->offset = off;
	out->flags = (perms[0] == 'r' ? PF_R : 0) | (perms[1] == 'w' ? PF_W : 0) | (perms[2] == 'x' ? PF_X : 0);
	out->shared = perms[3] == 's';
	out->dev_major = maj;
	out->dev_minor = min;
	out->inode = inode;
	out->path = line + used;
	return true;
}
