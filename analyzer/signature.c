#include "signature.h"

#include "../corefile/core.h"
#include "waitgraph.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Drop template argument lists and parameter lists (in place).  A Rust
 * name that begins with a qualified path keeps its type: "<main::Ledger>::debit"
 * is main::Ledger::debit, "<Box<F> as FnOnce<A>>::call_once" Box::call_once. */
static void strip_groups(char *s)
{
	char *w = s;
	int angle = 0, paren = 0;
	bool qpath = s[0] == '<', as_seen = false;
	for (const char *r = s; *r;) {
		bool top = angle == 0 && paren == 0;
		if (qpath && angle == 1 && paren == 0 && r > s) {
			if (strncmp(r, " as ", 4) == 0)
				as_seen = true;
			if (*r != '<' && *r != '>') {
				if (!as_seen)
					*w++ = *r;
				r++;
				continue;
			}
		}
		if (top && strncmp(r, "operator", 8) == 0 && !is_ident(r[8]) &&
		    (r == s || !is_ident(r[-1]))) {
			memmove(w, "operator", 8);
			w += 8;
			r = copy_operator(r + 8, &w);
			continue;
		}
		char c = *r++;
		/* Rust v0 writes generic arguments after "::" ("f::<T>"). */
		if (c == '<' && top && w - s >= 2 && w[-1] == ':' && w[-2] == ':')
			w -= 2;
		if (c == '<')
			angle++;
		else if (c == '>' && angle > 0 && --angle == 0)
			qpath = false;
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

/* glibc's per-CPU variants of string and memory functions name the public
 * function, so one crash on two machines is one bucket:
 * "__memmove_avx_unaligned_erms" -> "memmove", "__strlen_evex" -> "strlen". */
static void strip_cpu_variant(char *s)
{
	static const char *const tokens[] = {"sse2", "ssse3", "sse4_1", "sse4_2", "avx", "avx2",
					     "avx512", "evex", "evex512", "erms"};
	if (strncmp(s, "__", 2) != 0 || !isalpha((unsigned char)s[2]))
		return;
	for (char *p = strchr(s + 2, '_'); p; p = strchr(p + 1, '_')) {
		for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
			size_t n = strlen(tokens[i]);
			if (strncmp(p + 1, tokens[i], n) == 0 && (p[1 + n] == '_' || p[1 + n] == '\0')) {
				*p = '\0';
				memmove(s, s + 2, strlen(s + 2) + 1);
				return;
			}
		}
	}
}

/* A Go function's name: a method's receiver ("sync.(*Mutex).Lock") or the
 * runtime's generated code ("type..eq.[2]interface {}") is part of it, not
 * a parameter list or a return type.  C and C++ names never hold ".(". */
static bool is_go_name(const char *s)
{
	return strstr(s, ".(") || strncmp(s, "type..", 6) == 0;
}

char *an_signature_normalize(const char *name)
{
	char *s = strdup(name ? name : "");
	if (!s || is_go_name(s))
		return s;
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
	strip_cpu_variant(s);
	if (!*s) {
		free(s);
		s = strdup("??");
	}
	return s;
}


char *an_signature_frame_name(const struct an_frame *f)
{
	/* V8's frames are named as JavaScript names them ("new Ledger",
	 * "(anonymous)"), not as C++ is: kept as they are. */
	if (f->function && f->kind == AN_FRAME_SCRIPT && f->runtime && strcmp(f->runtime, "node") == 0)
		return strdup(f->function);
	if (f->function)
		return an_signature_normalize(f->function);
	const char *mod = f->module ? strrchr(f->module, '/') : NULL;
	mod = mod ? mod + 1 : f->module;
	char *out = NULL;
	if (mod && *mod && f->has_module_offset) {
		if (asprintf(&out, "%s@0x%" PRIx64, mod, f->module_offset) < 0)
			return NULL;
		return out;
	}
	return strdup("??");
}

/* A signature being built: the string and how many frames it holds. */
struct sigbuf {
	char *s;
	size_t len, cap;
	unsigned frames;
};

/* Append TEXT to the signature being built. */
static bool append_text(struct sigbuf *b, const char *text)
{
	size_t need = b->len + strlen(text) + 1;
	if (need > b->cap) {
		size_t ncap = need * 2;
		char *p = realloc(b->s, ncap);
		if (!p)
			return false;
		b->s = p;
		b->cap = ncap;
	}
	memcpy(b->s + b->len, text, strlen(text) + 1);
	b->len += strlen(text);
	return true;
}

/* Append " < NAME" (or the first NAME) to the signature being built.  How
 * the frame was found (on the stack, through an async chain, inlined) is
 * not part of it: one call chain is one bucket whatever the build. */
static bool append_frame(struct sigbuf *b, const char *name)
{
	if ((b->frames && !append_text(b, " < ")) || !append_text(b, name))
		return false;
	b->frames++;
	return true;
}

/* Whether the frames include a runtime description's (script or label). */
static bool has_runtime_frames(const struct an_signature_input *in)
{
	for (size_t i = 0; i < in->nframes; i++)
		if (AN_FRAME_IS_RUNTIME(&in->frames[i]))
			return true;
	return false;
}

/* Append the frames' names as the lists say; false on out-of-memory.  A
 * stack with script or label frames leaves out its frames without a
 * function name: an engine's anonymous frames say less than its scripts. */
static bool append_frames(struct sigbuf *b, const struct an_signature_input *in,
			  const struct an_signature_lists *lists)
{
	unsigned counted = 0, prefixed = 0;
	char *prev = NULL;
	bool ok = true;
	bool runtime = has_runtime_frames(in);
	for (size_t i = 0; i < in->nframes && counted < AN_SIGNATURE_FRAMES; i++) {
		const struct an_frame *f = &in->frames[i];
		if (runtime && !f->function)
			continue;
		char *name = an_signature_frame_name(f);
		if (!name) {
			ok = false;
			break;
		}
		bool prefix = false;
		if (an_signature_lists_match(lists, AN_SIGLIST_SKIP, name) ||
		    (prev && strcmp(prev, name) == 0) ||
		    ((prefix = an_signature_lists_match(lists, AN_SIGLIST_PREFIX, name)) &&
		     prefixed == AN_SIGNATURE_FRAMES)) {
			free(name);   /* skipped, recursion collapsed, or prefix frames enough */
			continue;
		}
		if (!append_frame(b, name)) {
			free(name);
			ok = false;
			break;
		}
		if (prefix)
			prefixed++;
		else
			counted++;
		free(prev);
		prev = name;
	}
	free(prev);
	return ok;
}

/* The signature names of IN's frames (skip-listed ones left out) into
 * NAMES (room for in->nframes); *AT: how many come from the frames before
 * in->collapsed_at.  Returns how many, or -1 on out-of-memory. */
static long frame_names(const struct an_signature_input *in, const struct an_signature_lists *lists,
			char **names, size_t *at)
{
	size_t n = 0;
	bool runtime = has_runtime_frames(in);
	*at = 0;
	for (size_t i = 0; i < in->nframes; i++) {
		if (i == in->collapsed_at)
			*at = n;
		if (runtime && !in->frames[i].function)
			continue;
		char *name = an_signature_frame_name(&in->frames[i]);
		if (!name) {
			while (n)
				free(names[--n]);
			return -1;
		}
		if (an_signature_lists_match(lists, AN_SIGLIST_SKIP, name))
			free(name);
		else
			names[n++] = name;
	}
	return (long)n;
}

/* The shortest cycle that the names on both sides of AT repeat (the frames
 * on each side of a recursion's cut are whole cycles), 0 when none. */
static size_t cycle_at(char *const *names, size_t n, size_t at)
{
	for (size_t l = 1; l <= AN_SIGNATURE_MAX_CYCLE && l <= at && at + l <= n; l++) {
		size_t j = 0;
		while (j < l && strcmp(names[at - l + j], names[at + j]) == 0)
			j++;
		if (j == l)
			return l;
	}
	return 0;
}

/* A recursion's signature: its cycle, rotated to end at the function the
 * entering frame called (so where the stack ran out does not matter), and
 * that frame: "recursion pong < ping, entered from start_recursion".
 * Returns 1 when written, 0 when the frames show no cycle at the cut, -1 on
 * out-of-memory. */
static int append_recursion(struct sigbuf *b, const struct an_signature_input *in,
			    const struct an_signature_lists *lists)
{
	char **names = calloc(in->nframes ? in->nframes : 1, sizeof(*names));
	size_t at;
	long n = names ? frame_names(in, lists, names, &at) : -1;
	int rc = n < 0 ? -1 : 0;
	size_t l = n > 0 ? cycle_at(names, (size_t)n, at) : 0;
	if (l) {
		size_t end = at;
		while (end < (size_t)n && strcmp(names[end], names[end - l]) == 0)
			end++;
		rc = append_text(b, "recursion ") ? 1 : -1;
		for (size_t i = end - l; i < end && rc == 1; i++)
			rc = append_frame(b, names[i]) ? 1 : -1;
		if (rc == 1 && end < (size_t)n && (!append_text(b, ", entered from ") || !append_text(b, names[end])))
			rc = -1;
	}
	for (long i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int an_signature_of(const struct an_signature_input *in, const struct an_signature_lists *lists,
		    char **signature, char **hash)
{
	struct sigbuf b = {.cap = 128};
	char hex[17];
	*signature = *hash = NULL;
	if (!lists && !(lists = an_signature_lists_default()))
		return -1;
	if (!(b.s = malloc(b.cap)))
		return -1;
	if (in->signal_name)
		b.len = (size_t)snprintf(b.s, b.cap, "%s: ", in->signal_name);
	else if (in->has_signal)
		b.len = (size_t)snprintf(b.s, b.cap, "signal %d: ", in->signo);
	else
		b.len = (size_t)snprintf(b.s, b.cap, "no signal: ");
	int rec = in->collapsed_at ? append_recursion(&b, in, lists) : 0;
	if (rec < 0 || (rec == 0 && !append_frames(&b, in, lists)) ||
	    (b.frames == 0 && !append_frame(&b, "(no frames)")))
		goto fail;
	snprintf(hex, sizeof(hex), "%016" PRIx64, an_signature_fnv1a(b.s));
	if (!(*hash = strdup(hex)))
		goto fail;
	*signature = b.s;
	return 0;
fail:
	free(b.s);
	return -1;
}

/* The frames the signature names: those of the task (a bthread) running on
 * thread T when the crash happened in one, else T's own. */
static const struct an_frame *crash_frames(const struct analysis *an, const struct an_thread *t,
					   size_t *n, size_t *collapsed_at)
{
	*n = t ? t->nframes : 0;
	*collapsed_at = t && t->recursion ? t->recursion->first : 0;
	for (size_t i = 0; t && i < an->ntasks; i++)
		if (an->tasks[i].state == AN_TASK_RUNNING && an->tasks[i].has_tid &&
		    an->tasks[i].tid == t->tid && an->tasks[i].nframes) {
			*n = an->tasks[i].nframes;
			*collapsed_at = 0;
			return an->tasks[i].frames;
		}
	return t ? t->frames : NULL;
}

size_t an_signature_start(const struct an_frame *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (frames[i].role == AN_FRAME_CRASH_SITE)
			return i;
	return 0;
}

struct an_crash_signals an_crash_signals_of(const struct analysis *an)
{
	const struct an_caught *caught = &an->caught;
	struct an_crash_signals s = {
		.has_signal = an->has_signal, .signo = an->signo, .signal_name = an->signal_name,
		.caught_signo = caught->signo,
		.caught_signal_name = caught->present ? caught->signal_name : NULL,
	};
	if (an->go.present) {
		s.go_crash = an->go.fatal ? "fatal error" : "panic";
		s.go_signo = an->go.signo;
		s.go_signal_name = an->go.signo ? core_signal_name(an->go.signo) : NULL;
	}
	return s;
}

void an_signature_set_signal(struct an_signature_input *in, const struct an_crash_signals *s)
{
	if (s->go_crash) {
		in->has_signal = true;
		in->signo = s->go_signo;
		in->signal_name = s->go_signo ? s->go_signal_name : s->go_crash;
	} else if (s->caught_signal_name) {
		in->has_signal = true;
		in->signo = s->caught_signo;
		in->signal_name = s->caught_signal_name;
	} else {
		in->has_signal = s->has_signal;
		in->signo = s->signo;
		in->signal_name = s->has_signal ? s->signal_name : NULL;
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A deadlock's signature (DESIGN.md "Hangs"): the waiting functions of its
 * cycle (each thread's first frame outside the C library and the runtime),
 * normalised and sorted, so that one deadlock is one bucket whichever
 * thread took a signal, in whichever order they were made. */
static bool deadlock_signature(struct analysis *an, const struct an_deadlock *d)
{
	char **names = calloc(d->n ? d->n : 1, sizeof(*names));
	struct sigbuf b = {.cap = 128};
	char hex[17];
	bool ok = names && (b.s = malloc(b.cap)) && append_text(&b, "deadlock: ");
	for (size_t i = 0; ok && i < d->n; i++) {
		const struct an_thread *t = an_thread_by_tid(an, d->threads[i]);
		const char *w = t && t->blocked ? t->blocked->waiter : NULL;
		ok = (names[i] = w ? an_signature_normalize(w) : strdup("??")) != NULL;
	}
	if (ok)
		qsort(names, d->n, sizeof(*names), name_cmp);
	for (size_t i = 0; ok && i < d->n; i++)
		ok = (!i || append_text(&b, ", ")) && append_text(&b, names[i]);
	for (size_t i = 0; names && i < d->n; i++)
		free(names[i]);
	free(names);
	if (ok) {
		snprintf(hex, sizeof(hex), "%016" PRIx64, an_signature_fnv1a(b.s));
		ok = (an->signature_hash = strdup(hex)) != NULL;
	}
	if (!ok) {
		free(b.s);
		return false;
	}
	an->signature = b.s;
	return true;
}

/* A hang's signature, from its wait-for graph (analyzer/waitgraph.c). */
static bool hang_signature(struct analysis *an)
{
	char hex[17];
	char *sig = an_hang_signature(an, an_signature_normalize);
	if (!sig)
		return false;
	snprintf(hex, sizeof(hex), "%016" PRIx64, an_signature_fnv1a(sig));
	char *hash = strdup(hex);
	if (!hash) {
		free(sig);
		return false;
	}
	free(an->signature);
	free(an->signature_hash);
	an->signature = sig;
	an->signature_hash = hash;
	return true;
}

void an_signature_compute(struct analysis *an, const struct an_signature_lists *lists)
{
	if (an->cause.kind == AN_CAUSE_DEADLOCK && an->ndeadlocks) {
		free(an->signature);
		free(an->signature_hash);
		an->signature = an->signature_hash = NULL;
		if (deadlock_signature(an, &an->deadlocks[0]))
			return;
	}
	if (an->cause.kind == AN_CAUSE_HANG && hang_signature(an))
		return;
	size_t nframes, collapsed_at;
	size_t t = an_crashing_thread(an);
	const struct an_frame *frames = crash_frames(an, t < an->nthreads ? &an->threads[t] : NULL,
						     &nframes, &collapsed_at);
	size_t start = an_signature_start(frames, nframes);
	const struct an_crash_signals signals = an_crash_signals_of(an);
	struct an_signature_input in = {
		.frames = frames ? frames + start : NULL,
		.nframes = nframes - start,
		.collapsed_at = collapsed_at > start ? collapsed_at - start : 0,
	};
	an_signature_set_signal(&in, &signals);
	free(an->signature);
	free(an->signature_hash);
	if (an_signature_of(&in, lists, &an->signature, &an->signature_hash) != 0)
		an->signature = an->signature_hash = NULL;
}
