#include "signature.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames that never explain a crash: the machinery of aborting, asserting,
 * raising signals, throwing, and starting processes or threads.  Matched
 * against normalised names; an entry ending in '*' matches a prefix. */
static const char *const an_signature_skip_list[] = {
	/* signals and abort */
	"abort", "raise", "gsignal", "__pthread_kill_implementation",
	"__pthread_kill_internal", "__pthread_kill", "pthread_kill", "__restore_rt", "killpg", "kill",
	"__kernel_rt_sigreturn",
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
	"__cxa_call_terminate", "__cxa_call_unexpected", "std::rethrow_exception",
	"std::__throw_*", "_Unwind_RaiseException", "_Unwind_Resume", "_Unwind_Resume_or_Rethrow",
};

bool an_signature_skipped(const char *name)
{
	size_t n = sizeof(an_signature_skip_list) / sizeof(an_signature_skip_list[0]);
	for (size_t i = 0; i < n; i++) {
		const char *e = an_signature_skip_list[i];
		size_t len = strlen(e);
		if (len && e[len - 1] == '*') {
			if (strncmp(name, e, len - 1) == 0)
				return true;
		} else if (strcmp(name, e) == 0) {
			return true;
		}
	}
	return false;
}

uint64_t an_signature_fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Remove every occurrence of NEEDLE from S (in place). */
static void remove_all(char *s, const char *needle)
{
	size_t len = strlen(needle);
	char *p;
	while ((p = strstr(s, needle)))
		memmove(p, p + len, strlen(p + len) + 1);
}

/* Drop " [clone .cold]" and "[abi:cxx11]" groups (in place). */
static void strip_bracket_tags(char *s)
{
	char *w = s;
	for (const char *r = s; *r;) {
		if (*r == '[' && (strncmp(r + 1, "clone", 5) == 0 || strncmp(r + 1, "abi:", 4) == 0)) {
			const char *end = strchr(r, ']');
			if (!end)
				break;
			while (w > s && w[-1] == ' ')
				w--;
			r = end + 1;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

/* "{lambda(int)#2}" -> "{lambda}", "{unnamed type#1}" -> "{unnamed}" (in place). */
static void strip_lambdas(char *s)
{
	char *w = s;
	for (const char *r = s; *r;) {
		bool lambda = strncmp(r, "{lambda(", 8) == 0;
		bool unnamed = strncmp(r, "{unnamed type#", 14) == 0;
		const char *end = (lambda || unnamed) ? strchr(r, '}') : NULL;
		if (end) {
			const char *rep = lambda ? "{lambda}" : "{unnamed}";
			size_t n = strlen(rep);
			memmove(w, rep, n);  /* never longer than what it replaces */
			w += n;
			r = end + 1;
			continue;
		}
		*w++ = *r++;
	}
	*w = '\0';
}

/* Copy the operator token after "operator" at R to W; returns the new R. */
static const char *copy_operator(const char *r, char **w)
{
	static const char opchars[] = "<>=!+-*/%^&|~,[]";
	while (*r == ' ')
		r++;
	if (r[0] == '(' && r[1] == ')') {
		*(*w)++ = '(';
		*(*w)++ = ')';
		return r + 2;
	}
	if (is_ident(*r)) {      /* operator new, operator delete[], operator bool */
		*(*w)++ = ' ';
		while (is_ident(*r) || *r == ':')
			*(*w)++ = *r++;
		if (r[0] == '[' && r[1] == ']') {
			*(*w)++ = '[';
			*(*w)++ = ']';
			r += 2;
		}
		return r;
	}
	while (*r && strchr(opchars, *r))
		*(*w)++ = *r++;
	return r;
}

/* Drop template argument lists and parameter lists (in place). */
static void strip_groups(char *s)
{
	char *w = s;
	int angle = 0, paren = 0;
	for (const char *r = s; *r;) {
		bool top = angle == 0 && paren == 0;
		if (top && strncmp(r, "operator", 8) == 0 && !is_ident(r[8]) &&
		    (r == s || !is_ident(r[-1]))) {
			memmove(w, "operator", 8);
			w += 8;
			r = copy_operator(r + 8, &w);
			continue;
		}
		char c = *r++;
		if (c == '<')
			angle++;
		else if (c == '>' && angle > 0)
			angle--;
		else if (c == '(')
			paren++;
		else if (c == ')' && paren > 0)
			paren--;
		else if (top)
			*w++ = c;
	}
	*w = '\0';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Trim spaces and trailing qualifiers, then drop a leading return type. */
static void strip_qualifiers_and_return_type(char *s)
{
	static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
	size_t len = strlen(s);
	for (bool again = true; again;) {
		again = false;
		while (len && s[len - 1] == ' ')
			len--;
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++) {
			if (ends_with(s, len, quals[i])) {
				len -= strlen(quals[i]);
				again = true;
			}
		}
	}
	s[len] = '\0';
	/* The name is the last space-separated word, except that "operator new"
	 * and friends keep their space. */
	char *cut = NULL;
	for (char *p = s + len; p > s; p--) {
		if (p[-1] != ' ')
			continue;
		if (ends_with(s, (size_t)(p - 1 - s), "operator"))
			continue;
		cut = p;
		break;
	}
	if (cut)
		memmove(s, cut, strlen(cut) + 1);
}

/* Cut GCC clone suffixes of plain symbol names: "f.isra.0", "f.cold". */
static void strip_clone_suffix(char *s)
{
	static const char *const suffixes[] = {".isra.", ".constprop.", ".part.", ".cold",
					       ".lto_priv.", ".localalias"};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *p = strstr(s, suffixes[i]);
		if (p && p > s)
			*p = '\0';
	}
}

char *an_signature_normalize(const char *name)
{
	char *s = strdup(name ? name : "");
	if (!s)
		return NULL;
	strip_bracket_tags(s);
	remove_all(s, "(anonymous namespace)::");
	remove_all(s, "{anonymous}::");
	strip_lambdas(s);
	strip_groups(s);
	strip_qualifiers_and_return_type(s);
	strip_clone_suffix(s);
	/* glibc's internal aliases name the public function: __GI___assert_fail */
	if (strncmp(s, "__GI_", 5) == 0 && s[5])
		memmove(s, s + 5, strlen(s + 5) + 1);
	if (!*s) {
		free(s);
		s = strdup("??");
	}
	return s;
}

/* The thread the signal was delivered to. */
static const struct an_thread *crashing_thread(const struct analysis *an)
{
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].crashing)
			return &an->threads[i];
	for (size_t i = 0; i < an->nthreads; i++)
		if (an->threads[i].tid == an->crashing_tid)
			return &an->threads[i];
	return an->nthreads ? &an->threads[0] : NULL;
}

/* The frames the signature names: those of the task (a bthread) running on
 * thread T when the crash happened in one, else T's own. */
static const struct an_frame *crash_frames(const struct analysis *an, const struct an_thread *t,
					   size_t *n)
{
	*n = t ? t->nframes : 0;
	for (size_t i = 0; t && i < an->ntasks; i++)
		if (an->tasks[i].state == AN_TASK_RUNNING && an->tasks[i].has_tid &&
		    an->tasks[i].tid == t->tid && an->tasks[i].nframes) {
			*n = an->tasks[i].nframes;
			return an->tasks[i].frames;
		}
	return t ? t->frames : NULL;
}

/* Name of an unknown frame: "??" plus its module's file name when known. */
static char *unknown_name(const struct an_frame *f)
{
	const char *mod = f->module ? strrchr(f->module, '/') : NULL;
	mod = mod ? mod + 1 : f->module;
	char *out = NULL;
	if (asprintf(&out, mod ? "??[%s]" : "??", mod) < 0)
		return NULL;
	return out;
}

/* Append " < NAME" (or the first NAME) to the signature being built. */
static bool append_frame(char **sig, size_t *len, size_t *cap, const char *name, bool async,
			 bool first)
{
	size_t need = *len + strlen(name) + 5;
	if (need > *cap) {
		size_t ncap = need * 2;
		char *p = realloc(*sig, ncap);
		if (!p)
			return false;
		*sig = p;
		*cap = ncap;
	}
	*len += (size_t)sprintf(*sig + *len, "%s%s%s", first ? "" : " < ",
				async ? "@" : "", name);
	return true;
}

/* Build the signature string; NULL on out-of-memory. */
static char *build_signature(const struct analysis *an)
{
	size_t cap = 128, len = 0, used = 0;
	char *sig = malloc(cap);
	char *prev = NULL;
	if (!sig)
		return NULL;
	const char *signame = an->has_signal ? an->signal_name : NULL;
	if (an->has_signal && signame)
		len = (size_t)snprintf(sig, cap, "%s: ", signame);
	else if (an->has_signal)
		len = (size_t)snprintf(sig, cap, "signal %d: ", an->signo);
	else
		len = (size_t)snprintf(sig, cap, "no signal: ");
	size_t nframes;
	const struct an_frame *frames = crash_frames(an, crashing_thread(an), &nframes);
	for (size_t i = 0; i < nframes && used < AN_SIGNATURE_FRAMES; i++) {
		const struct an_frame *f = &frames[i];
		char *name = f->function ? an_signature_normalize(f->function) : unknown_name(f);
		if (!name)
			goto fail;
		if (an_signature_skipped(name) || (prev && strcmp(prev, name) == 0)) {
			free(name);   /* skipped, or recursion collapsed */
			continue;
		}
		if (!append_frame(&sig, &len, &cap, name, f->kind == AN_FRAME_ASYNC,
				  used == 0)) {
			free(name);
			goto fail;
		}
		free(prev);
		prev = name;
		used++;
	}
	free(prev);
	if (used == 0 && !append_frame(&sig, &len, &cap, "(no frames)", false, true))
		goto fail_noprev;
	return sig;
fail:
	free(prev);
fail_noprev:
	free(sig);
	return NULL;
}

void an_signature_compute(struct analysis *an)
{
	free(an->signature);
	free(an->signature_hash);
	an->signature = build_signature(an);
	an->signature_hash = NULL;
	if (!an->signature)
		return;
	char hex[17];
	snprintf(hex, sizeof(hex), "%016" PRIx64, an_signature_fnv1a(an->signature));
	an->signature_hash = strdup(hex);
	if (!an->signature_hash) {
		free(an->signature);
		an->signature = NULL;
	}
}
