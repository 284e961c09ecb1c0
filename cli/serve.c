/* `asyncore serve --db FILE|URL [--listen HOST:PORT]`: the store in a
 * browser, read-only (DESIGN.md "Serving the store").  libmicrohttpd runs a
 * bounded pool of threads, each with its own read-only connection to the
 * store; a request names a page of reports/pages.h and nothing else: no
 * path of a request reaches the file system. */
#include "cli.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reports/pages.h"
#include "../reports/html.h"
#include "../reports/reader.h"
#include "../reports/store_sqlite.h"
#include "options.h"
#include "test_hooks.h"

/* Bounds of what one client can ask: threads answering at once,
 * connections held, seconds a connection may idle, bytes of a request
 * (its line and headers), bytes of a query's text, milliseconds one query
 * of the store may run (past it the page is a 503, the thread free),
 * buckets a page shows. */
enum {
	SERVE_THREADS = 8, SERVE_CONNECTIONS = 256, SERVE_IDLE_SECONDS = 15,
	SERVE_REQUEST_BYTES = 32 * 1024, SERVE_QUERY_BYTES = 256, SERVE_QUERY_MS = 5000,
	SERVE_MAX_BUCKETS = 1000
};

/* libmicrohttpd is opened with dlopen() by serve alone: linked in, it and
 * the TLS libraries it loads would cost every other command their start-up
 * and some MB of resident memory. */
static struct {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port,
					  MHD_AcceptPolicyCallback apc, void *apc_cls,
					  MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *d);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *d,
							enum MHD_DaemonInfoType type, ...);
	const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind kind,
					       const char *key);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header,
					       const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status,
					  struct MHD_Response *r);
	void (*destroy_response)(struct MHD_Response *r);
} mhd;

/* Open libmicrohttpd; false (with the reason said) when it cannot be. */
static bool mhd_open(void)
{
	void *lib = dlopen("libmicrohttpd.so.12", RTLD_NOW);
	if (!lib) {
		cli_error("serve", "libmicrohttpd cannot be loaded (%s): install Debian's libmicrohttpd12",
			  dlerror());
		return false;
	}
	*(void **)&mhd.start_daemon = dlsym(lib, "MHD_start_daemon");
	*(void **)&mhd.stop_daemon = dlsym(lib, "MHD_stop_daemon");
	*(void **)&mhd.get_daemon_info = dlsym(lib, "MHD_get_daemon_info");
	*(void **)&mhd.lookup_connection_value = dlsym(lib, "MHD_lookup_connection_value");
	*(void **)&mhd.create_response_from_buffer = dlsym(lib, "MHD_create_response_from_buffer");
	*(void **)&mhd.add_response_header = dlsym(lib, "MHD_add_response_header");
	*(void **)&mhd.queue_response = dlsym(lib, "MHD_queue_response");
	*(void **)&mhd.destroy_response = dlsym(lib, "MHD_destroy_response");
	if (mhd.start_daemon && mhd.stop_daemon && mhd.get_daemon_info && mhd.lookup_connection_value &&
	    mhd.create_response_from_buffer && mhd.add_response_header && mhd.queue_response &&
	    mhd.destroy_response)
		return true;
	cli_error("serve", "libmicrohttpd.so.12 lacks a function serve calls");
	return false;
}

/* Each pool thread's reader, opened on its first request. */
static const char *serve_db;
static pthread_key_t reader_key;

static void reader_free(void *r)
{
	rep_reader_close(r);
}

static struct rep_reader *thread_reader(void)
{
	struct rep_reader *r = pthread_getspecific(reader_key);
	if (!r && rep_reader_open(serve_db, &r) == 0) {
		rep_reader_set_time_limit(r, test_hook_query_limit(SERVE_QUERY_MS));
		pthread_setspecific(reader_key, r);
	}
	return r;
}

/* True when S (NUL-terminated) has 1..MAX characters, each in ALLOWED. */
static bool made_of(const char *s, const char *allowed, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	return n >= 1 && n <= max && strspn(s, allowed) == n;
}

static const char hex_digits[] = "0123456789abcdef";

static bool is_date(const char *s)
{
	return s && strlen(s) == 10 && made_of(s, "0123456789-", 10) && s[4] == '-' && s[7] == '-';
}

/* A query argument of the request, NULL when absent or empty. */
static const char *arg(struct MHD_Connection *c, const char *name)
{
	const char *v = mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
	return v && *v ? v : NULL;
}

/* The bucket list's filter from the request; false when a value is not of
 * its kind (the request is then a 400). */
static bool bucket_filter(struct MHD_Connection *c, struct rep_bucket_filter *f)
{
	static const char *const sorts[] = {"count", "first", "last", "signature"};
	const char *sort = arg(c, "sort"), *order = arg(c, "order"), *limit = arg(c, "limit");
	memset(f, 0, sizeof(*f));
	f->executable = arg(c, "executable");
	f->build_id = arg(c, "build_id");
	f->cause_kind = arg(c, "cause");
	f->from = arg(c, "from");
	f->to = arg(c, "to");
	f->limit = 100;
	if ((f->executable && strlen(f->executable) > SERVE_QUERY_BYTES) ||
	    (f->build_id && !made_of(f->build_id, hex_digits, 128)) ||
	    (f->cause_kind && !made_of(f->cause_kind, "abcdefghijklmnopqrstuvwxyz_", 32)) ||
	    (f->from && !is_date(f->from)) || (f->to && !is_date(f->to)))
		return false;
	for (size_t i = 0; sort && i < 4; i++)
		if (strcmp(sort, sorts[i]) == 0)
			f->sort = (enum rep_bucket_sort)i;
	f->ascending = order && strcmp(order, "asc") == 0;
	if (limit) {
		if (!made_of(limit, "0123456789", 5))
			return false;
		long n = atol(limit);
		/* each bucket shown costs queries: a page shows a bounded number */
		f->limit = n < 1 ? 1 : n > SERVE_MAX_BUCKETS ? SERVE_MAX_BUCKETS : n;
	}
	return true;
}

/* The page URL names, into OUT; its HTTP status. */
static int route(struct MHD_Connection *c, const char *url, FILE *out, bool *json)
{
	struct rep_reader *r = thread_reader();
	struct rep_bucket_filter f;
	const char *rest = url, *q;
	*json = strncmp(url, "/api/", 5) == 0;
	if (*json)
		rest = url + 4;   /* "/api/buckets" is "/buckets" as JSON */
	if (!r) {
		rep_page_error(out, 503, "the store cannot be read", *json);
		return 503;
	}
	rep_html_link_functions(true);   /* a thread's own switch: this one serves pages */
	if ((!*json && strcmp(rest, "/") == 0) || (*json && strcmp(rest, "/buckets") == 0)) {
		if (bucket_filter(c, &f))
			return rep_page_buckets(out, r, &f, *json);
		rep_page_error(out, 400, "a filter's value is not of its kind", *json);
		return 400;
	}
	if (strncmp(rest, "/bucket/", 8) == 0 && made_of(rest + 8, hex_digits, 16))
		return rep_page_bucket(out, r, rest + 8, *json);
	if (strncmp(rest, "/core/", 6) == 0 && made_of(rest + 6, "0123456789abcdef-", 128))
		return rep_page_core(out, r, rest + 6, *json);
	if (strcmp(rest, "/search") == 0) {
		q = arg(c, "q");
		if (!q || strlen(q) <= SERVE_QUERY_BYTES)
			return rep_page_search(out, r, q, *json);
		rep_page_error(out, 400, "the query is too long", *json);
		return 400;
	}
	rep_page_error(out, 404, "no such page", *json);
	return 404;
}

/* Headers every answer carries: the page may run only its own inline
 * script and style, load nothing, and be framed by nobody. */
static void add_headers(struct MHD_Response *resp, bool json)
{
	mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				json ? "application/json" : "text/html; charset=utf-8");
	mhd.add_response_header(resp, "Content-Security-Policy",
				"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
				"img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
	mhd.add_response_header(resp, "X-Content-Type-Options", "nosniff");
	mhd.add_response_header(resp, "Referrer-Policy", "no-referrer");
	mhd.add_response_header(resp, "Cache-Control", "no-store");
}

static enum MHD_Result answer(struct MHD_Connection *c, int status, char *body, size_t len, bool json)
{
	struct MHD_Response *resp = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	add_headers(resp, json);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = mhd.queue_response(c, (unsigned)status, resp);
	mhd.destroy_response(resp);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_size, void **state)
{
	char *body = NULL;
	size_t len = 0;
	bool json = false;
	int status;
	(void)cls, (void)version, (void)upload, (void)upload_size, (void)state;
	FILE *out = open_memstream(&body, &len);
	if (!out)
		return MHD_NO;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		json = strncmp(url, "/api/", 5) == 0;
		rep_page_error(out, 405, "only GET and HEAD", json);
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else {
		status = route(c, url, out, &json);
	}
	if (status == 500) {   /* whatever was half-written is dropped: the page says so */
		fclose(out);
		free(body);
		body = NULL;
		if (!(out = open_memstream(&body, &len)))
			return MHD_NO;
		if (thread_reader() && rep_reader_timed_out(thread_reader()))
			status = 503;
		rep_page_error(out, status, status == 503 ? "the store took too long: try a narrower question"
							  : "the store failed: see the server's log", json);
	}
	if (fclose(out) != 0) {
		free(body);
		return MHD_NO;
	}
	return answer(c, status, body, len, json);
}

/* HOST:PORT (or [V6]:PORT) into an address; false when it is none. */
static bool parse_listen(const char *text, struct sockaddr_storage *sa, bool *v6)
{
	char host[64];
	const char *colon = strrchr(text, ':');
	unsigned long long port;
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof(host) ||
	    !cli_number("--listen", colon + 1, 0, 65535, &port))
		return false;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - text), text);
	memset(sa, 0, sizeof(*sa));
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
	size_t n = strlen(host);
	*v6 = host[0] == '[' && host[n - 1] == ']';
	if (*v6) {
		host[n - 1] = '\0';
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		return inet_pton(AF_INET6, host + 1, &a6->sin6_addr) == 1;
	}
	if (strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	a4->sin_family = AF_INET;
	a4->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &a4->sin_addr) == 1;
}

enum serve_option { O_DB, O_LISTEN };

static const struct cli_option serve_options[] = {
	{"--db", true, O_DB},
	{"--listen", true, O_LISTEN},
	{NULL, false, 0},
};

static bool parse_serve_args(int argc, char **argv, const char **db, const char **listen)
{
	struct cli_args args;
	const char *v;
	int id;
	cli_args_init(&args, "serve", argc, argv);
	while ((id = cli_next(&args, serve_options, &v)) != CLI_END) {
		if (id == CLI_ERROR)
			return false;
		if (id == O_DB) {
			*db = v;
		} else if (id == O_LISTEN) {
			*listen = v;
		} else {
			cli_error("serve", "unexpected argument %s", v);
			return false;
		}
	}
	if (!*db) {
		cli_error("serve", "usage: asyncore serve --db FILE|URL [--listen HOST:PORT]");
		return false;
	}
	return true;
}

/* Whether SQLite store R has the schema the pages read: serve opens it
 * read-only, so an older one is not migrated here. */
static bool schema_current(struct rep_reader *r, const char *db)
{
	json_t *rows = NULL;
	if (rep_reader_rows(r, "PRAGMA user_version", NULL, &rows) != 0)
		return false;
	json_int_t v = json_integer_value(json_array_get(json_array_get(rows, 0), 0));
	json_decref(rows);
	if (v >= REP_SCHEMA_VERSION)
		return true;
	cli_error("serve", "%s: a store of schema version %lld, older than this asyncore's (%d): run"
		  " asyncore store init --db %s to bring it up to date", db, (long long)v,
		  REP_SCHEMA_VERSION, db);
	return false;
}

/* The store is opened once before listening, so a wrong --db fails now. */
static bool store_readable(const char *db)
{
	struct rep_reader *r = NULL;
	json_t *rows = NULL;
	if (rep_reader_open(db, &r) != 0)
		return false;
	bool ok = rep_reader_rows(r, rep_reader_clickhouse(r) ? "SELECT count() FROM cores"
							      : "SELECT count(*) FROM cores", NULL, &rows) == 0 &&
		  (rep_reader_clickhouse(r) || schema_current(r, db));
	json_decref(rows);
	rep_reader_close(r);
	return ok;
}

static struct MHD_Daemon *start(const struct sockaddr_storage *sa, bool v6)
{
	return mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, on_request, NULL,
				MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned)SERVE_THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_IDLE_SECONDS,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_REQUEST_BYTES,
				MHD_OPTION_END);
}

int cli_serve(int argc, char **argv)
{
	const char *db = NULL, *listen = "127.0.0.1:8080";
	struct sockaddr_storage sa;
	struct MHD_Daemon *d;
	sigset_t stop;
	bool v6;
	int sig = 0;
	if (!parse_serve_args(argc, argv, &db, &listen))
		return CLI_EXIT_UNUSABLE;
	if (!parse_listen(listen, &sa, &v6)) {
		cli_error("serve", "--listen %s: not HOST:PORT (an IPv4 address, localhost or [IPv6])", listen);
		return CLI_EXIT_UNUSABLE;
	}
	if (!store_readable(db) || !mhd_open())
		return CLI_EXIT_UNUSABLE;
	serve_db = db;
	pthread_key_create(&reader_key, reader_free);
	/* the pool's threads inherit the mask: the signals come to sigwait */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!(d = start(&sa, v6))) {
		cli_error("serve", "cannot listen on %s", listen);
		return CLI_EXIT_UNUSABLE;
	}
	const union MHD_DaemonInfo *info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	char host[64];
	snprintf(host, sizeof(host), "%.*s", (int)(strrchr(listen, ':') - listen), listen);
	printf("asyncore: serving %s at http://%s:%u/ (read-only; SIGINT or SIGTERM stops)\n", db, host,
	       info ? (unsigned)info->port : 0);
	fflush(stdout);
	sigwait(&stop, &sig);
	mhd.stop_daemon(d);
	fprintf(stderr, "asyncore: serve: stopped by %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	return CLI_EXIT_OK;
}
