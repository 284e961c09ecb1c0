/* Unit tests for dwarf/gopclntab: the Go program tests/unit/data/gopcln.go,
 * built with and without symbols (-ldflags='-s -w'), read through its
 * pclntab and compared with the Go toolchain's own readers (go tool nm,
 * go tool addr2line, go version) and with the runtime's traceback of a
 * panic (GOTRACEBACK=system prints each frame's fp and sp).  Then the same
 * table cut short and corrupted: lookups fail, nothing crashes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <gelf.h>

#include "../../dwarf/gopclntab.h"
#include "craft.h"

#define UNIT_GROUP "gopclntab"
#include "unit.h"

#define MAX_LINE 4096

/* CHECK with a printf-style detail on failure. */
#define CHECKF(name, ok, ...)                                                          \
	do {                                                                           \
		char detail_[512];                                                     \
		snprintf(detail_, sizeof(detail_), __VA_ARGS__);                        \
		unit_check((name), (ok), (ok) ? NULL : detail_, __FILE__, __LINE__);  \
	} while (0)

static char *chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* ---- go tool nm: every T symbol found by its entry, same name --------- */

static void check_nm(const struct dbg_gotab *t, const char *path, const char *label)
{
	char cmd[MAX_LINE + 64], line[MAX_LINE];
	snprintf(cmd, sizeof(cmd), "go tool nm '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	size_t n = 0, bad = 0;
	char first_bad[MAX_LINE] = "";
	while (p && fgets(line, sizeof(line), p)) {
		uint64_t addr;
		char type, name[MAX_LINE];
		if (sscanf(line, "%" SCNx64 " %c %4095[^\n]", &addr, &type, name) != 3 || type != 'T')
			continue;
		struct dbg_gofunc f;
		n++;
		/* The symbol of an assembly function's ABI wrapper is NAME.abi0;
		 * pclntab names it NAME. */
		size_t len = strlen(name);
		if (len > 5 && strcmp(name + len - 5, ".abi0") == 0)
			name[len - 5] = '\0';
		/* The runtime's names of generated equality functions hide their
		 * types' array lengths and fields: "type..eq.[...]runtime.Frame". */
		bool eq = strncmp(name, "type..eq.", 9) == 0;
		if (!dbg_gotab_func(t, addr, &f) || f.entry != addr ||
		    (eq ? strncmp(f.name, name, 9) : strcmp(f.name, name)) != 0) {
			if (!bad++)
				snprintf(first_bad, sizeof(first_bad), "%.200s at %" PRIx64, name, addr);
		}
	}
	if (p)
		pclose(p);
	char what[128];
	snprintf(what, sizeof(what), "%s: every T symbol of go tool nm is a function", label);
	CHECKF(what, n > 500 && bad == 0, "%zu symbols, %zu not found (first %.300s)", n, bad, first_bad);
}

/* ---- go tool addr2line: name and file:line at a few hundred pcs ------- */

static void check_addr2line(const struct dbg_gotab *t, const char *path, const char *label)
{
	char in[] = "/tmp/gopclntab-pcs.XXXXXX";
	int fd = mkstemp(in);
	FILE *w = fd >= 0 ? fdopen(fd, "w") : NULL;
	size_t nfunc = dbg_gotab_count(t), npcs = 0;
	uint64_t pcs[600];
	for (size_t i = 0; w && i < nfunc && npcs < 600; i += nfunc / 200 + 1) {
		struct dbg_gofunc f;
		if (!dbg_gotab_func_at(t, i, &f) || f.end <= f.entry)
			continue;
		uint64_t span = f.end - f.entry;
		uint64_t at[3] = { f.entry, f.entry + span / 2, f.end - 1 };
		for (size_t k = 0; k < 3 && npcs < 600; k++) {
			pcs[npcs++] = at[k];
			fprintf(w, "0x%" PRIx64 "\n", at[k]);
		}
	}
	if (w)
		fclose(w);
	char cmd[MAX_LINE + 128], name[MAX_LINE], pos[MAX_LINE];
	snprintf(cmd, sizeof(cmd), "go tool addr2line '%s' < %s 2>/dev/null", path, in);
	FILE *p = popen(cmd, "r");
	size_t i = 0, bad = 0;
	char first_bad[2 * MAX_LINE] = "";
	/* addr2line names the real function and gives the innermost
	 * position: what funcline gives at the pc. */
	while (p && i < npcs && fgets(name, sizeof(name), p) && fgets(pos, sizeof(pos), p)) {
		struct dbg_gofunc f;
		const char *file = NULL;
		int ln = 0;
		char mine[MAX_LINE] = "?";
		chomp(name);
		chomp(pos);
		/* Past the table's last row (the padding after a function's
		 * code) addr2line prints ":-1", the runtime "?:0": no line. */
		if (dbg_gotab_func(t, pcs[i], &f))
			snprintf(mine, sizeof(mine), "%s :-1", f.name);
		if (dbg_gotab_func(t, pcs[i], &f) && dbg_gotab_line(t, &f, pcs[i], &file, &ln))
			snprintf(mine, sizeof(mine), "%s %s:%d", f.name, file, ln);
		char theirs[2 * MAX_LINE + 2];
		snprintf(theirs, sizeof(theirs), "%s %s", name, pos);
		if (strcmp(mine, theirs) != 0 && !bad++)
			snprintf(first_bad, sizeof(first_bad), "0x%" PRIx64 ": '%.300s', want '%.300s'", pcs[i],
				 mine, theirs);
		i++;
	}
	if (p)
		pclose(p);
	unlink(in);
	char what[128];
	snprintf(what, sizeof(what), "%s: name and line equal go tool addr2line's", label);
	CHECKF(what, npcs > 200 && i == npcs && bad == 0, "%zu pcs, %zu compared, %zu differ (%.300s)",
	       npcs, i, bad, first_bad);
}

/* ---- spdelta 0 at every entry ----------------------------------------- */

static void check_entries(const struct dbg_gotab *t, const char *label)
{
	size_t bad = 0, n = dbg_gotab_count(t);
	for (size_t i = 0; i < n; i++) {
		struct dbg_gofunc f;
		int64_t d = -1;
		if (!dbg_gotab_func_at(t, i, &f) || !dbg_gotab_spdelta(t, &f, f.entry, &d) || d != 0)
			bad++;
	}
	char what[128];
	snprintf(what, sizeof(what), "%s: spdelta is 0 at every function's entry", label);
	CHECKF(what, n > 500 && bad == 0, "%zu of %zu not", bad, n);
}

/* ---- the runtime's traceback ------------------------------------------ */

struct tb_frame {
	char name[256], file[MAX_LINE];
	int line;
	bool real;                  /* with pc=, fp=, sp= */
	uint64_t pc, fp, sp, off;
};

struct tb_stats {
	size_t real, inlined, bad_sp, bad_frames;
	char first_bad[1024];
};

static void tb_bad(struct tb_stats *st, const char *fmt, const char *a, uint64_t pc)
{
	if (!st->first_bad[0])
		snprintf(st->first_bad, sizeof(st->first_bad), fmt, a, pc);
}

/* FR[0..N): the inlined levels printed before the real frame FR[N-1],
 * innermost first; CALLEE the frame it called (NULL for the first). */
static void check_group(const struct dbg_gotab *t, struct tb_frame *fr, size_t n,
			const struct tb_frame *callee, struct tb_stats *st)
{
	struct tb_frame *real = &fr[n - 1];
	/* The runtime prints runtime.gopanic as "panic". */
	const char *name = strcmp(real->name, "panic") == 0 ? "runtime.gopanic" : real->name;
	/* A call the runtime injected (a fault's sigpanic, an asynchronous
	 * preemption) returns to the interrupted pc itself: no pc-1. */
	bool trap = callee && (strcmp(callee->name, "runtime.sigpanic") == 0 ||
			       strcmp(callee->name, "runtime.asyncPreempt") == 0 ||
			       strcmp(callee->name, "runtime.debugCallV2") == 0);
	struct dbg_gofunc f;
	if (!dbg_gotab_func(t, real->pc, &f) || f.entry + real->off != real->pc) {
		tb_bad(st, "%s: no function at 0x%" PRIx64, name, real->pc);
		st->bad_frames++;
		return;
	}
	uint64_t tracepc = real->pc > f.entry && !trap ? real->pc - 1 : real->pc;
	int64_t delta;
	/* The runtime: fp = sp + spdelta(frame.pc) + the return address. */
	if (!dbg_gotab_spdelta(t, &f, real->pc, &delta) || real->fp - real->sp != (uint64_t)delta + 8) {
		tb_bad(st, "%s: spdelta disagrees at 0x%" PRIx64, name, real->pc);
		st->bad_sp++;
	}
	struct dbg_goframe out[32];
	size_t got = dbg_gotab_frames(t, &f, tracepc, out, 32);
	bool same = got == n;
	for (size_t i = 0; same && i < n; i++) {
		const char *want = i == n - 1 ? name : fr[i].name;
		same = strcmp(out[i].function, want) == 0 && strcmp(out[i].file, fr[i].file) == 0 &&
		       out[i].line == fr[i].line && out[i].inlined == (i < n - 1);
	}
	if (!same) {
		tb_bad(st, "%s: inline frames differ at 0x%" PRIx64, name, real->pc);
		st->bad_frames++;
	}
	st->real++;
	st->inlined += n - 1;
}

/* One frame's two lines: "NAME(ARGS)" and "\tFILE:LINE[ +0xOFF fp=.. sp=.. pc=..]". */
static bool parse_frame(const char *head, const char *pos, struct tb_frame *fr)
{
	memset(fr, 0, sizeof(*fr));
	const char *paren = strrchr(head, '(');
	if (pos[0] != '\t' || !paren || paren == head || (size_t)(paren - head) >= sizeof(fr->name) ||
	    strncmp(head, "created by ", 11) == 0)
		return false;
	memcpy(fr->name, head, (size_t)(paren - head));
	const char *colon = strrchr(pos, ':');
	char rest[MAX_LINE];
	if (!colon || (size_t)(colon - pos - 1) >= sizeof(fr->file))
		return false;
	memcpy(fr->file, pos + 1, (size_t)(colon - pos - 1));
	rest[0] = '\0';
	if (sscanf(colon + 1, "%d%4095[^\n]", &fr->line, rest) < 1)
		return false;
	fr->real = sscanf(rest, " +0x%" SCNx64 " fp=0x%" SCNx64 " sp=0x%" SCNx64 " pc=0x%" SCNx64,
			  &fr->off, &fr->fp, &fr->sp, &fr->pc) == 4;
	return true;
}

static void check_traceback(const struct dbg_gotab *t, const char *path, const char *mode,
			    const char *label)
{
	char cmd[MAX_LINE + 64], head[MAX_LINE], pos[MAX_LINE];
	snprintf(cmd, sizeof(cmd), "GOTRACEBACK=system '%s' %s 2>&1", path, mode);
	FILE *p = popen(cmd, "r");
	struct tb_frame group[32], callee;
	size_t n = 0;
	bool have_callee = false;
	struct tb_stats st = { 0 };
	while (p && fgets(head, sizeof(head), p)) {
		chomp(head);
		if (strncmp(head, "goroutine ", 10) == 0) {
			n = 0;
			have_callee = false;
			continue;
		}
		if (!head[0] || head[0] == '\t' || !fgets(pos, sizeof(pos), p))
			continue;
		chomp(pos);
		if (n == 32 || !parse_frame(head, pos, &group[n]))
			continue;
		if (!group[n++].real)
			continue;
		check_group(t, group, n, have_callee ? &callee : NULL, &st);
		callee = group[n - 1];
		have_callee = true;
		n = 0;
	}
	if (p)
		pclose(p);
	char what[160];
	snprintf(what, sizeof(what), "%s %s: fp - sp = spdelta + 8 in every frame of the traceback",
		 label, mode);
	CHECKF(what, st.real > 10 && st.bad_sp == 0, "%zu frames, %zu differ (%.300s)", st.real,
	       st.bad_sp, st.first_bad);
	snprintf(what, sizeof(what), "%s %s: the traceback's inlined and real frames", label, mode);
	CHECKF(what, st.inlined >= 2 && st.bad_frames == 0, "%zu frames, %zu inlined, %zu differ (%.300s)",
	       st.real, st.inlined, st.bad_frames, st.first_bad);
}

/* ---- go version ---------------------------------------------------------- */

static void check_version(const char *path, const char *version, const char *label)
{
	char cmd[MAX_LINE + 64], line[MAX_LINE] = "";
	snprintf(cmd, sizeof(cmd), "go version '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (p && !fgets(line, sizeof(line), p))
		line[0] = '\0';
	if (p)
		pclose(p);
	const char *v = strrchr(chomp(line), ' ');
	char what[128];
	snprintf(what, sizeof(what), "%s: version from .go.buildinfo", label);
	CHECK_STR(what, version, v ? v + 1 : "(go version failed)");
}

/* ---- the special functions ------------------------------------------------ */

static void check_funcids(const struct dbg_gotab *t)
{
	static const struct { const char *name; uint8_t id; } want[] = {
		{ "runtime.goexit", DBG_GOFUNC_GOEXIT }, { "runtime.mcall", DBG_GOFUNC_MCALL },
		{ "runtime.morestack", DBG_GOFUNC_MORESTACK }, { "runtime.mstart", DBG_GOFUNC_MSTART },
		{ "runtime.rt0_go", DBG_GOFUNC_RT0_GO }, { "runtime.systemstack", DBG_GOFUNC_SYSTEMSTACK },
		{ "runtime.sigpanic", DBG_GOFUNC_SIGPANIC }, { "runtime.gopanic", DBG_GOFUNC_GOPANIC },
		{ "runtime.asmcgocall", DBG_GOFUNC_ASMCGOCALL }, { "runtime.main", DBG_GOFUNC_RUNTIME_MAIN },
		{ "runtime.systemstack_switch", DBG_GOFUNC_SYSTEMSTACK_SWITCH },
		{ "main.main", DBG_GOFUNC_NORMAL },
	};
	size_t bad = 0;
	const char *first = "";
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct dbg_gofunc f;
		if (!dbg_gotab_func_named(t, want[i].name, &f) || f.funcid != want[i].id) {
			if (!bad++)
				first = want[i].name;
		}
	}
	CHECKF("special functions by funcID", bad == 0, "%zu wrong (first %s)", bad, first);
	struct dbg_gofunc f;
	CHECK("goexit is a top frame", dbg_gotab_func_named(t, "runtime.goexit", &f) &&
					      (f.flag & DBG_GOFLAG_TOPFRAME));
	CHECK("no function named nothing", !dbg_gotab_func_named(t, "main.nothing", &f));
}

/* ---- hostile tables --------------------------------------------------- */

/* The .gopclntab section's bytes and address, malloc'd. */
static uint8_t *read_section(const char *path, size_t *len, uint64_t *addr)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *out = NULL;
	if (!fp)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fileno(fp), ELF_C_READ, NULL);
	size_t shstrndx;
	for (Elf_Scn *scn = elf && elf_getshdrstrndx(elf, &shstrndx) == 0 ? elf_nextscn(elf, NULL) : NULL;
	     scn && !out; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		Elf_Data *d = name && strcmp(name, ".gopclntab") == 0 ? elf_rawdata(scn, NULL) : NULL;
		if (d && (out = malloc(d->d_size))) {
			memcpy(out, d->d_buf, d->d_size);
			*len = d->d_size;
			*addr = sh.sh_addr;
		}
	}
	if (elf)
		elf_end(elf);
	fclose(fp);
	return out;
}

/* Every lookup over a table that may lie: none may crash. */
static size_t exercise(const struct dbg_gotab *t)
{
	size_t answers = 0, n = dbg_gotab_count(t);
	for (size_t i = 0; i < n; i += n / 64 + 1) {
		struct dbg_gofunc f, g;
		const char *file;
		int line;
		int64_t d;
		struct dbg_goframe out[8];
		if (!dbg_gotab_func_at(t, i, &f))
			continue;
		uint64_t pc = f.entry + (f.end - f.entry) / 2;
		answers += dbg_gotab_func(t, pc, &g);
		answers += dbg_gotab_spdelta(t, &f, pc, &d);
		answers += dbg_gotab_line(t, &f, pc, &file, &line);
		answers += dbg_gotab_frames(t, &f, pc, out, 8);
	}
	return answers;
}

static void check_hostile(const char *path)
{
	size_t len = 0;
	uint64_t addr = 0;
	uint8_t *bytes = read_section(path, &len, &addr);
	if (!CHECK("the section read", bytes && len > 4096))
		return;
	const char *why = NULL;
	struct dbg_gotab *t = dbg_gotab_parse(bytes, len, addr, 0, &why);
	CHECK("the section parses", t && !why);
	/* A fake function data region: funcdata offsets land anywhere in it. */
	if (t)
		dbg_gotab_set_funcdata(t, addr, bytes, len, addr);
	CHECK("lookups answer", t && exercise(t) > 0);
	dbg_gotab_destroy(t);

	size_t parsed = 0, refused = 0;
	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : len / 97) {
		uint8_t *copy = malloc(cut ? cut : 1);   /* exact: a read past it is caught */
		memcpy(copy, bytes, cut);
		t = dbg_gotab_parse(copy, cut, addr, 0, &why);
		if (t) {
			parsed++;
			dbg_gotab_set_funcdata(t, addr, copy, cut, addr);
			exercise(t);
		} else {
			refused += why != NULL;
		}
		dbg_gotab_destroy(t);
		free(copy);
	}
	CHECKF("a table cut short: refused with a reason, or read within its bytes", refused > 0,
	       "%zu parsed, %zu refused", parsed, refused);

	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	uint8_t *copy = malloc(len);
	size_t mutants = 0;
	for (int round = 0; round < 300; round++) {
		memcpy(copy, bytes, len);
		for (int k = 0; k < 4; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t at = (size_t)(seed >> 33) % (round < 150 ? 128 : len);
			copy[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
		}
		t = dbg_gotab_parse(copy, len, addr, 0, &why);
		if (t) {
			mutants++;
			dbg_gotab_set_funcdata(t, addr, copy, len, addr);
			exercise(t);
		}
		dbg_gotab_destroy(t);
	}
	free(copy);
	CHECKF("corrupted tables: no crash", true, "%zu parsed", mutants);

	uint8_t liar[64] = { 0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f };
	CHECK("a header that lies is refused", !dbg_gotab_parse(liar, sizeof(liar), 0, 0, &why) && why);
	CHECK("no magic: refused", !dbg_gotab_parse("hello, world", 12, 0, 0, &why) && why);
	CHECK("no bytes: refused", !dbg_gotab_parse(NULL, 0, 0, 0, &why) && why);
	dbg_gotab_destroy(NULL);
	free(bytes);
}

static void check_buildinfo(void)
{
	uint8_t b[64] = "\xff Go buildinf:";
	b[14] = 8;
	b[15] = 2;
	b[32] = 8;
	memcpy(b + 33, "go1.21.0", 8);
	char *v = dbg_go_buildinfo_version(b, sizeof(b), NULL, NULL);
	CHECK_STR("buildinfo: an inline version", v, "go1.21.0");
	free(v);
	b[32] = 60;   /* longer than what is left */
	CHECK("buildinfo: a length that lies", !dbg_go_buildinfo_version(b, sizeof(b), NULL, NULL));
	b[15] = 0;    /* pointers, and nothing to read them with */
	CHECK("buildinfo: pointers without a reader", !dbg_go_buildinfo_version(b, sizeof(b), NULL, NULL));
	CHECK("buildinfo: too short", !dbg_go_buildinfo_version(b, 20, NULL, NULL));
}

static void check_binary(const char *name, bool symbols)
{
	const char *path = craft_data_path(name);
	char *version = NULL;
	const struct dbg_gotab *t = dbg_gotab_for_file(path, 0, &version);
	char what[128];
	snprintf(what, sizeof(what), "%s: table found", name);
	if (!CHECK(what, t)) {
		free(version);
		return;
	}
	const struct dbg_gotab *again = dbg_gotab_for_file(path, 0, NULL);
	snprintf(what, sizeof(what), "%s: read once", name);
	CHECK(what, again == t);
	check_version(path, version, name);
	free(version);
	if (symbols)
		check_nm(t, path, name);
	check_addr2line(t, path, name);
	check_entries(t, name);
	check_traceback(t, path, "panic", name);
	check_traceback(t, path, "nil", name);
	if (symbols)
		check_funcids(t);
}

/* A copy of the stripped program without section headers: the table is
 * found in its segments. */
static void check_no_sections(void)
{
	char path[] = "/tmp/gopclntab-nosections.XXXXXX";
	int out = mkstemp(path);
	FILE *in = fopen(craft_data_path("gopcln.stripped"), "rb");
	FILE *w = out >= 0 ? fdopen(out, "wb") : NULL;
	char buf[65536];
	size_t n, total = 0;
	while (in && w && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (total == 0 && n >= 64) {
			memset(buf + 0x28, 0, 8);   /* e_shoff */
			memset(buf + 0x3c, 0, 4);   /* e_shnum, e_shstrndx */
		}
		total += fwrite(buf, 1, n, w);
	}
	if (in)
		fclose(in);
	if (w)
		fclose(w);
	chmod(path, 0755);
	char *version = NULL;
	const struct dbg_gotab *t = dbg_gotab_for_file(path, 0, &version);
	const struct dbg_gotab *s = dbg_gotab_for_file(craft_data_path("gopcln.stripped"), 0, NULL);
	if (CHECK("no section headers: table found in the segments",
		  t && s && dbg_gotab_count(t) == dbg_gotab_count(s))) {
		check_version(path, version, "no section headers");
		check_traceback(t, path, "nil", "no section headers");
	}
	free(version);
	unlink(path);
}

int main(void)
{
	if (system("go version >/dev/null 2>&1") != 0 || access(craft_data_path("gopcln"), X_OK) != 0) {
		printf("SKIP: %s go is not installed (or build/unit/data/gopcln not built)\n", UNIT_GROUP);
		return 0;
	}
	check_binary("gopcln", true);
	check_binary("gopcln.stripped", false);
	check_no_sections();
	CHECK("a program that is not Go has no table",
	      !dbg_gotab_for_file(craft_data_path("unit_fixture"), 0, NULL));
	check_hostile(craft_data_path("gopcln"));
	check_buildinfo();
	return unit_exit();
}
