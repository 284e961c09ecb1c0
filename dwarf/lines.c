/* Line tables, each in a Dwarf handle of its own.
 *
 * libdw keeps a unit's decoded line table (some 60 bytes a row, with the
 * file names) for as long as its Dwarf lives, and a template-heavy C++ unit
 * built at -O0 has a hundred thousand rows and more: a report that
 * symbolized frames in a few such units held 40 MB of tables in the module's
 * Dwarf.  Here each unit's table is decoded in a Dwarf handle opened on the
 * module's ELF for that unit alone, and before another unit is decoded the
 * least recently used handles are ended until the rows kept are within a
 * budget.  The row for an address is the one libdwfl's dwfl_module_getsrc
 * gives: the last row at or below it, unless that ends a sequence. */
#include "internal.h"

#include <stdlib.h>

#include "../base/array.h"

/* Rows kept of the units used before the one decoded: about 2 MB. */
#define ROWS_BUDGET 30000u

struct unit_lines {
	Dwarf_Off cu;               /* the unit's DIE in the module's Dwarf */
	Dwarf *dw;                  /* holds this unit's table only */
	Dwarf_Die cudie;            /* the unit in DW */
	size_t rows;
	uint64_t used;              /* clock of the last use */
};

struct dbg_lines {
	struct unit_lines *v;
	size_t n, cap;
	size_t rows;                /* of all units kept */
	size_t budget;
	uint64_t clock;
};

static void unit_end(struct unit_lines *u)
{
	dwarf_end(u->dw);
}

void dbg_lines_destroy(struct dbg_lines *lines)
{
	if (!lines)
		return;
	for (size_t i = 0; i < lines->n; i++)
		unit_end(&lines->v[i]);
	free(lines->v);
	free(lines);
}

static void evict(struct dbg_lines *lines, size_t i)
{
	lines->rows -= lines->v[i].rows;
	unit_end(&lines->v[i]);
	lines->v[i] = lines->v[--lines->n];
}

/* Ends the least recently used units while the rows kept pass the budget,
 * before another unit is decoded. */
static void trim(struct dbg_lines *lines)
{
	while (lines->rows > lines->budget) {
		size_t oldest = 0;
		for (size_t i = 1; i < lines->n; i++)
			if (lines->v[i].used < lines->v[oldest].used)
				oldest = i;
		evict(lines, oldest);
	}
}

/* A handle on the ELF of CUDIE's Dwarf holding that unit, with the same
 * supplementary (dwz) file. */
static bool unit_open(Dwarf_Die *cudie, struct unit_lines *u)
{
	Dwarf *main = dwarf_cu_getdwarf(cudie->cu);
	Elf *elf = main ? dwarf_getelf(main) : NULL;
	u->dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!u->dw)
		return false;
	Dwarf *alt = dwarf_getalt(main);
	if (alt)
		dwarf_setalt(u->dw, alt);
	Dwarf_Lines *table;
	if (!dwarf_offdie(u->dw, u->cu, &u->cudie) ||
	    dwarf_getsrclines(&u->cudie, &table, &u->rows) != 0) {
		dwarf_end(u->dw);
		return false;
	}
	return true;
}

static struct dbg_lines *lines_of(struct dbg_file *f)
{
	if (!f->lines && (f->lines = calloc(1, sizeof(*f->lines))) != NULL)
		f->lines->budget = ROWS_BUDGET;
	return f->lines;
}

bool dbg_lines_set_budget(struct dbg_file *f, size_t rows)
{
	struct dbg_lines *lines = lines_of(f);
	if (lines)
		lines->budget = rows;
	return lines != NULL;
}

static struct unit_lines *unit_get(struct dbg_file *f, Dwarf_Die *cudie)
{
	struct dbg_lines *lines = lines_of(f);
	if (!lines)
		return NULL;
	Dwarf_Off cu = dwarf_dieoffset(cudie);
	lines->clock++;
	for (size_t i = 0; i < lines->n; i++)
		if (lines->v[i].cu == cu) {
			lines->v[i].used = lines->clock;
			return &lines->v[i];
		}
	if (!base_array_reserve(&lines->v, &lines->cap, lines->n + 1, sizeof(*lines->v)))
		return NULL;
	trim(lines);
	struct unit_lines u = { .cu = cu, .used = lines->clock };
	if (!unit_open(cudie, &u))
		return NULL;
	lines->rows += u.rows;
	lines->v[lines->n] = u;
	return &lines->v[lines->n++];
}

const char *dbg_lines_at(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Addr addr, int *line)
{
	struct unit_lines *u = unit_get(f, cudie);
	Dwarf_Line *row = u ? dwarf_getsrc_die(&u->cudie, addr) : NULL;
	if (!row || dwarf_lineno(row, line) != 0)
		return NULL;
	return dwarf_linesrc(row, NULL, NULL);
}

const char *dbg_lines_file(struct dbg_file *f, Dwarf_Die *cudie, Dwarf_Word index)
{
	struct unit_lines *u = unit_get(f, cudie);
	Dwarf_Files *files;
	size_t nfiles;
	if (!u || dwarf_getsrcfiles(&u->cudie, &files, &nfiles) != 0 || index >= nfiles)
		return NULL;
	return dwarf_filesrc(files, index, NULL, NULL);
}
