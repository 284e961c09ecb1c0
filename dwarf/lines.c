/* Line tables, in a Dwarf handle of their own.
 *
 * libdw keeps a unit's decoded line table (some 60 bytes a row, with the
 * file names) for as long as its Dwarf lives, and a template-heavy C++ unit
 * built at -O0 has a hundred thousand rows and more: a report that
 * symbolized frames in a few such units held 40 MB of tables in the module's
 * Dwarf.  Here the tables are decoded in a second Dwarf handle opened on the
 * module's ELF, and before another unit is decoded that handle is ended,
 * with every table it holds, when their rows pass a budget.  One handle for
 * all the units, not one a unit: finding a unit in a new handle reads and
 * keeps every unit header before it (a KiB each, 1,700 units in glibc).
 * A small unit (its DIEs in at most 64 KiB, as a C file's are) has a small
 * table: it is decoded in the module's own Dwarf, which found the unit
 * already, while the rows kept there stay within the budget.
 * The row for an address is the one libdwfl's dwfl_module_getsrc gives: the
 * last row at or below it, unless that ends a sequence. */
#include "internal.h"

#include <stdlib.h>

#include "../base/array.h"

/* Rows kept of the units used before the one decoded: about 2 MB. */
#define ROWS_BUDGET 30000u
#define SMALL_UNIT (64u << 10)

struct unit_lines {
	Dwarf_Off cu;               /* the unit's DIE in the module's Dwarf */
	Dwarf_Die cudie;            /* the unit in dbg_lines.dw, or in the
				       module's Dwarf (in_main) */
	size_t rows;
	bool in_main;
};

struct dbg_lines {
	Dwarf *dw;                  /* holds the tables of the units in V not
				       in_main */
	Dwarf *main;                /* the Dwarf DW reads the ELF of */
	struct unit_lines *v;
	size_t n, cap;
	size_t rows;                /* of the units in DW */
	size_t main_rows;           /* of the units in the module's Dwarf */
	size_t budget;
};

/* Forget the tables DW holds: the handle is ended. */
static void lines_end(struct dbg_lines *lines)
{
	dwarf_end(lines->dw);
	lines->dw = NULL;
	lines->main = NULL;
	size_t kept = 0;
	for (size_t i = 0; i < lines->n; i++)
		if (lines->v[i].in_main)
			lines->v[kept++] = lines->v[i];
	lines->n = kept;
	lines->rows = 0;
}

void dbg_lines_destroy(struct dbg_lines *lines)
{
	if (!lines)
		return;
	lines_end(lines);
	free(lines->v);
	free(lines);
}

/* A handle on MAIN's ELF with the same supplementary (dwz) file. */
static bool lines_open(struct dbg_lines *lines, Dwarf *main)
{
	Elf *elf = main ? dwarf_getelf(main) : NULL;
	lines->dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!lines->dw)
		return false;
	lines->main = main;
	Dwarf *alt = dwarf_getalt(main);
	if (alt)
		dwarf_setalt(lines->dw, alt);
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

/* Whether the unit of CUDIE (in MAIN) holds its DIEs in SMALL_UNIT bytes. */
static bool small_unit(Dwarf *main, Dwarf_Die *cudie)
{
	Dwarf_Off header = dwarf_dieoffset(cudie) - dwarf_cuoffset(cudie), next;
	size_t header_size;
	return dwarf_next_unit(main, header, &next, &header_size, NULL, NULL, NULL, NULL, NULL, NULL) == 0 &&
	       next - header <= SMALL_UNIT;
}

/* CUDIE's table decoded in the module's own Dwarf, as *U. */
static bool decode_in_main(struct dbg_lines *lines, Dwarf_Die *cudie, struct unit_lines *u)
{
	Dwarf_Lines *table;
	if (dwarf_getsrclines(cudie, &table, &u->rows) != 0)
		return false;
	u->cudie = *cudie;
	u->in_main = true;
	lines->main_rows += u->rows;
	return true;
}

static struct unit_lines *unit_get(struct dbg_file *f, Dwarf_Die *cudie)
{
	struct dbg_lines *lines = lines_of(f);
	if (!lines)
		return NULL;
	Dwarf_Off cu = dwarf_dieoffset(cudie);
	Dwarf *main = dwarf_cu_getdwarf(cudie->cu);
	for (size_t i = 0; i < lines->n; i++)
		if (lines->v[i].cu == cu && (lines->v[i].in_main ? dwarf_cu_getdwarf(lines->v[i].cudie.cu)
								 : lines->main) == main)
			return &lines->v[i];
	if (!base_array_reserve(&lines->v, &lines->cap, lines->n + 1, sizeof(*lines->v)))
		return NULL;
	struct unit_lines u = { .cu = cu };
	if (lines->main_rows < lines->budget && small_unit(main, cudie)) {
		if (!decode_in_main(lines, cudie, &u))
			return NULL;
		lines->v[lines->n] = u;
		return &lines->v[lines->n++];
	}
	if (lines->dw && (lines->rows > lines->budget || lines->main != main))
		lines_end(lines);
	if (!lines->dw && !lines_open(lines, main))
		return NULL;
	Dwarf_Lines *table;
	if (!dwarf_offdie(lines->dw, cu, &u.cudie) || dwarf_getsrclines(&u.cudie, &table, &u.rows) != 0)
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
