#include "siglists.h"

#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/array.h"

/* Frames that never explain a crash: the machinery of aborting, asserting,
 * raising signals, throwing, and starting processes or threads. */
static const char *const default_skip[] = {
	/* signals and abort */
	"abort", "raise", "gsignal", "__pthread_kill_implementation", "__pthread_kill_internal",
	"__pthread_kill", "pthread_kill", "__restore_rt", "killpg", "kill", "__kernel_rt_sigreturn",
	/* assertions and fatal libc checks */
	"__assert_fail", "__assert_fail_base", "__assert_perror_fail", "__libc_message",
	"__libc_message_impl", "__libc_fatal", "__fortify_fail", "__chk_fail", "__stack_chk_fail",
	"__stack_chk_fail_local", "malloc_printerr", "__malloc_assert",
	/* process and thread start-up */
	"_start", "__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl",
	"__libc_start_main_alias_2", "start_thread", "clone", "clone3", "__clone", "__clone3",
	"__clone_internal", "bthread::TaskGroup::task_runner", "bthread_make_fcontext",
	/* C++ exceptions and termination */
	"std::terminate", "__cxxabiv1::__terminate", "__gnu_cxx::__verbose_terminate_handler",
	"__cxa_throw", "__cxa_rethrow", "__cxa_pure_virtual", "__cxa_deleted_virtual",
	"__cxa_call_terminate", "__cxa_call_unexpected", "std::rethrow_exception", "std::__throw_.*",
	"_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
	/* Rust panics (by DWARF's names, then by symbols' without DWARF) */
	"std::panicking::.*", "core::panicking::.*", "std::process::abort",
	"std::sys::pal::unix::abort_internal", "std::rt::__rust_abort", "panic_abort::.*",
	"std::sys::backtrace::__rust_end_short_backtrace", "__rustc::.*", "rust_panic",
	"rust_begin_unwind", "__rust_start_panic", "__rust_abort",
	/* V8's builtins: trampolines, stubs and bytecode handlers between
	 * JavaScript frames, and the code of builtin functions, whose own
	 * JavaScript frames (Array.reduce) name them */
	"Builtins_.*",
	"v8::base::OS::Abort", "v8::internal::Isolate::CreateMessageOrAbort",
	"v8::internal::Isolate::ThrowInternal", "v8::internal::Isolate::Throw",
};

/* Frames that only make sense with their caller: string and memory
 * functions (and glibc's per-CPU variants, when a name was not reduced to
 * the public one), fortified wrappers, allocators, formatted output. */
static const char *const default_prefix[] = {
	"w?mem(cpy|move|set|cmp|chr|rchr|pcpy|mem|cmpeq)", "bcmp", "bcopy", "bzero",
	"(str|stp|wcs|wcp)(len|nlen|cpy|ncpy|cat|ncat|cmp|ncmp|chr|rchr|chrnul|str|casestr|spn|cspn"
	"|pbrk|dup|ndup|coll|casecmp|ncasecmp|casecmp_l|ncasecmp_l|tok|tok_r|sep)",
	"__(w?mem|str|stp|wcs|wcp)[a-z_]*_(sse2|ssse3|sse4_1|sse4_2|avx|avx2|avx512|evex|evex512|erms)"
	"(_.*)?",
	"__[a-z]*_chk",
	"operator new", "operator new\\[\\]", "operator delete", "operator delete\\[\\]",
	"malloc", "calloc", "realloc", "reallocarray", "free", "cfree", "memalign", "valloc",
	"pvalloc", "aligned_alloc", "posix_memalign", "__libc_(malloc|calloc|realloc|free|memalign)",
	"_int_(malloc|free|realloc|memalign)", "_int_free_merge_chunk", "_int_free_create_chunk",
	"malloc_consolidate", "sysmalloc", "unlink_chunk", "tcache_.*",
	"v?(f|s|sn|d|as)?printf", "__vfprintf_internal", "__vfwprintf_internal",
	"__vsnprintf_internal", "__printf_buffer.*", "__printf_fp.*", "__strchrnul_.*",
};

struct siglist_entry {
	char *text;
	regex_t re;
};

struct an_signature_lists {
	struct siglist_entry *entries[AN_SIGLIST_COUNT];
	size_t n[AN_SIGLIST_COUNT], cap[AN_SIGLIST_COUNT];
};

static const char *const list_names[AN_SIGLIST_COUNT] = {"skip", "prefix"};

const char *an_signature_list_name(enum an_siglist which)
{
	return list_names[which];
}

/* Compile TEXT, anchored at both ends, onto list WHICH.  0, or a regcomp()
 * code (REG_ESPACE on out-of-memory) with the message in WHY. */
static int add_entry(struct an_signature_lists *l, enum an_siglist which, const char *text,
		     char *why, size_t whylen)
{
	char *anchored = NULL;
	if (asprintf(&anchored, "^(%s)$", text) < 0)
		return REG_ESPACE;
	struct siglist_entry *e = base_array_push(&l->entries[which], &l->n[which], &l->cap[which],
						  sizeof(*e));
	int rc = e ? regcomp(&e->re, anchored, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
	free(anchored);
	if (rc == 0 && !(e->text = strdup(text))) {
		regfree(&e->re);
		rc = REG_ESPACE;
	}
	if (rc != 0) {
		if (e) {
			if (why)
				regerror(rc, &e->re, why, whylen);
			l->n[which]--;   /* the pushed slot holds nothing to free */
		} else if (why) {
			snprintf(why, whylen, "out of memory");
		}
	}
	return rc;
}

static int add_defaults(struct an_signature_lists *l, enum an_siglist which)
{
	const char *const *d = which == AN_SIGLIST_SKIP ? default_skip : default_prefix;
	size_t n = which == AN_SIGLIST_SKIP ? sizeof(default_skip) / sizeof(*default_skip)
					    : sizeof(default_prefix) / sizeof(*default_prefix);
	for (size_t i = 0; i < n; i++)
		if (add_entry(l, which, d[i], NULL, 0) != 0)
			return -1;
	return 0;
}

void an_signature_lists_destroy(struct an_signature_lists *l)
{
	if (!l)
		return;
	for (int w = 0; w < AN_SIGLIST_COUNT; w++) {
		for (size_t i = 0; i < l->n[w]; i++) {
			regfree(&l->entries[w][i].re);
			free(l->entries[w][i].text);
		}
		free(l->entries[w]);
	}
	free(l);
}

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static struct an_signature_lists *default_lists;

static void compile_defaults(void)
{
	struct an_signature_lists *l = calloc(1, sizeof(*l));
	if (!l || add_defaults(l, AN_SIGLIST_SKIP) != 0 || add_defaults(l, AN_SIGLIST_PREFIX) != 0) {
		an_signature_lists_destroy(l);
		return;
	}
	default_lists = l;
}

const struct an_signature_lists *an_signature_lists_default(void)
{
	pthread_once(&default_once, compile_defaults);
	return default_lists;
}

/* Strip the line's end (newline, carriage return, trailing blanks) and its
 * leading blanks; returns the first character kept. */
static char *trim(char *line)
{
	size_t n = strlen(line);
	while (n && strchr(" \t\r\n", line[n - 1]))
		line[--n] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* Read list WHICH from DIR/NAME into L (the defaults when there is no such
 * file).  0, or -1 with WHY. */
static int load_list(struct an_signature_lists *l, const char *dir, enum an_siglist which,
		     char *why, size_t whylen)
{
	char path[4096], *line = NULL, msg[256];
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, list_names[which]);
	FILE *f = fopen(path, "r");
	if (!f && errno == ENOENT) {
		if (add_defaults(l, which) == 0)
			return 0;
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (!f) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) >= 0) {
		char *s = trim(line);
		lineno++;
		if (*s == '\0' || *s == '#')
			continue;
		snprintf(msg, sizeof(msg), "out of memory");
		int bad = strcmp(s, "@defaults") == 0 ? add_defaults(l, which)
						      : add_entry(l, which, s, msg, sizeof(msg));
		if (bad) {
			snprintf(why, whylen, "%s:%u: %s", path, lineno, msg);
			goto out;
		}
	}
	if (ferror(f)) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(line);
	fclose(f);
	return rc;
}

int an_signature_lists_load(const char *dir, struct an_signature_lists **out, char *why,
			    size_t whylen)
{
	struct an_signature_lists *l = calloc(1, sizeof(*l));
	*out = NULL;
	if (!l) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	struct stat st;
	int bad = stat(dir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	if (bad) {
		snprintf(why, whylen, "%s: %s", dir, strerror(bad));
		an_signature_lists_destroy(l);
		return -1;
	}
	for (int w = 0; w < AN_SIGLIST_COUNT; w++)
		if (load_list(l, dir, (enum an_siglist)w, why, whylen) != 0) {
			an_signature_lists_destroy(l);
			return -1;
		}
	*out = l;
	return 0;
}

bool an_signature_lists_match(const struct an_signature_lists *l, enum an_siglist which,
			      const char *name)
{
	for (size_t i = 0; l && i < l->n[which]; i++)
		if (regexec(&l->entries[which][i].re, name, 0, NULL, 0) == 0)
			return true;
	return false;
}
