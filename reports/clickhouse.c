#include "clickhouse.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Retries of a failing statement: waits of 0.25, 0.5, 1, 2, 4 and 8 s
 * (about 16 s in all) ride out a server restart; then the caller fails. */
#define CH_TRIES 7
#define CH_FIRST_WAIT_MS 250
#define CH_CONNECT_TIMEOUT_S 10L

struct rep_ch {
	CURL *curl;
	char *base;                 /* "http://HOST:PORT/" */
	char *database;
	char *cluster;              /* NULL: one server */
	char *url;                  /* as given, for messages */
	bool transient;             /* the last failure may pass on retrying */
	long limit_ms;              /* a reader's bound per query; < 0: none */
	bool timed_out;             /* the last query passed it */
};

/* The HTTP answer being received. */
struct reply_buf {
	char *data;
	size_t len, cap;
};

/* libcurl is opened with dlopen() when a store is on a server: linked in,
 * it and the TLS, Kerberos and LDAP libraries it loads cost every run of
 * every command some 10 ms of start-up and 6 MB, for a store few use. */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*init)(void);
	void (*cleanup)(CURL *c);
	void (*reset)(CURL *c);
	CURLcode (*setopt)(CURL *c, CURLoption option, ...);
	CURLcode (*perform)(CURL *c);
	CURLcode (*getinfo)(CURL *c, CURLINFO info, ...);
	const char *(*strerror)(CURLcode code);
	char *(*escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
} curl;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

/* Open libcurl (kept open) and do its global setup, which is not
 * thread-safe: once, before any handle. */
static void curl_setup(void)
{
	void *lib = dlopen("libcurl.so.4", RTLD_NOW);
	if (!lib)
		lib = dlopen("libcurl-gnutls.so.4", RTLD_NOW);
	if (!lib)
		return;
	*(void **)&curl.global_init = dlsym(lib, "curl_global_init");
	*(void **)&curl.init = dlsym(lib, "curl_easy_init");
	*(void **)&curl.cleanup = dlsym(lib, "curl_easy_cleanup");
	*(void **)&curl.reset = dlsym(lib, "curl_easy_reset");
	*(void **)&curl.setopt = dlsym(lib, "curl_easy_setopt");
	*(void **)&curl.perform = dlsym(lib, "curl_easy_perform");
	*(void **)&curl.getinfo = dlsym(lib, "curl_easy_getinfo");
	*(void **)&curl.strerror = dlsym(lib, "curl_easy_strerror");
	*(void **)&curl.escape = dlsym(lib, "curl_easy_escape");
	*(void **)&curl.free = dlsym(lib, "curl_free");
	if (!curl.global_init || !curl.init || !curl.cleanup || !curl.reset || !curl.setopt ||
	    !curl.perform || !curl.getinfo || !curl.strerror || !curl.escape || !curl.free ||
	    curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		curl.init = NULL;   /* unusable */
}

bool rep_ch_is_url(const char *db)
{
	return db && strncmp(db, REP_CH_SCHEME, strlen(REP_CH_SCHEME)) == 0;
}

/* A database or cluster name goes into statements as an identifier: letters,
 * digits and '_' only. */
static bool plain_name(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

/* HOST:PORT/DATABASE[?cluster=NAME] after the scheme into CH. */
static int parse_url(struct rep_ch *ch, const char *url, char *why, size_t whylen)
{
	const char *hostport = url + strlen(REP_CH_SCHEME);
	const char *slash = strchr(hostport, '/');
	if (!slash || slash == hostport || !strchr(hostport, ':') || strchr(hostport, ':') > slash) {
		snprintf(why, whylen, "%s: expected clickhouse://HOST:PORT/DATABASE[?cluster=NAME]", url);
		return -1;
	}
	const char *db = slash + 1, *query = strchr(db, '?');
	size_t dblen = query ? (size_t)(query - db) : strlen(db);
	if (!plain_name(db, dblen)) {
		snprintf(why, whylen, "%s: the database name must be letters, digits and '_'", url);
		return -1;
	}
	if (query) {
		const char *name = query + 1;
		if (strncmp(name, "cluster=", 8) != 0 || !plain_name(name + 8, strlen(name + 8))) {
			snprintf(why, whylen, "%s: the only parameter is cluster=NAME (letters, digits, '_')",
				 url);
			return -1;
		}
		ch->cluster = strdup(name + 8);
	}
	ch->database = strndup(db, dblen);
	if (asprintf(&ch->base, "http://%.*s/", (int)(slash - hostport), hostport) < 0)
		ch->base = NULL;
	if (!ch->database || !ch->base || (query && !ch->cluster)) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	return 0;
}

int rep_ch_open(const char *url, struct rep_ch **out, char *why, size_t whylen)
{
	struct rep_ch *ch = calloc(1, sizeof(*ch));
	if (!ch || !(ch->url = strdup(url))) {
		free(ch);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	ch->limit_ms = -1;
	if (parse_url(ch, url, why, whylen) != 0)
		goto fail;
	pthread_once(&curl_once, curl_setup);
	if (!curl.init) {
		snprintf(why, whylen, "%s: libcurl (libcurl.so.4) cannot be loaded", url);
		goto fail;
	}
	if (!(ch->curl = curl.init())) {
		snprintf(why, whylen, "%s: cannot set up libcurl", url);
		goto fail;
	}
	*out = ch;
	return 0;
fail:
	rep_ch_close(ch);
	return -1;
}

void rep_ch_close(struct rep_ch *ch)
{
	if (!ch)
		return;
	if (ch->curl)
		curl.cleanup(ch->curl);
	free(ch->base);
	free(ch->database);
	free(ch->cluster);
	free(ch->url);
	free(ch);
}

const char *rep_ch_database(const struct rep_ch *ch)
{
	return ch->database;
}

void rep_ch_set_time_limit(struct rep_ch *ch, long ms)
{
	ch->limit_ms = ms >= 0 ? ms : -1;
}

bool rep_ch_timed_out(const struct rep_ch *ch)
{
	return ch->timed_out;
}

const char *rep_ch_cluster(const struct rep_ch *ch)
{
	return ch->cluster;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct reply_buf *b = arg;
	size_t n = size * nmemb;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->data, cap);
		if (!p)
			return 0;   /* libcurl fails the transfer */
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* The request's URL: the base, SETTINGS, and the statement when the body
 * carries data. */
static char *request_url(struct rep_ch *ch, const char *sql, bool data, const char *settings)
{
	char *escaped = data ? curl.escape(ch->curl, sql, 0) : NULL, *url = NULL;
	if (data && !escaped)
		return NULL;
	if (asprintf(&url, "%s?%s%s%s", ch->base, settings ? settings : "", data ? "&query=" : "",
		     data ? escaped : "") < 0)
		url = NULL;
	curl.free(escaped);
	return url;
}

/* Server errors worth a retry: the network between servers, a shard
 * down or restarting, a server too busy for now (ClickHouse's codes). */
static bool transient_error(const char *body)
{
	static const int codes[] = {3, 32, 159, 173, 202, 209, 210, 241, 242, 252, 279, 285, 319};
	int code;
	if (!body || sscanf(body, "Code: %d", &code) != 1)
		return true;   /* no ClickHouse exception: a proxy or a server going down */
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i] == code)
			return true;
	return false;
}

/* The server's message in one line: its first line, without the stack
 * trace 18.16 appends. */
static void server_message(const char *body, long status, char *why, size_t whylen)
{
	size_t n = body ? strcspn(body, "\r\n") : 0;
	if (n)
		snprintf(why, whylen, "%.*s", (int)n, body);
	else
		snprintf(why, whylen, "HTTP status %ld", status);
}

int rep_ch_run(struct rep_ch *ch, const char *sql, const char *data, size_t len,
	       const char *settings, char **reply, char *why, size_t whylen)
{
	struct reply_buf b = {0};
	char *url = request_url(ch, sql, data != NULL, settings);
	long status = 0;
	int rc = -1;
	if (!url) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	CURL *c = ch->curl;
	curl.reset(c);
	curl.setopt(c, CURLOPT_URL, url);
	curl.setopt(c, CURLOPT_POST, 1L);
	curl.setopt(c, CURLOPT_POSTFIELDS, data ? data : sql);
	curl.setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(data ? len : strlen(sql)));
	curl.setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl.setopt(c, CURLOPT_WRITEDATA, &b);
	curl.setopt(c, CURLOPT_CONNECTTIMEOUT, CH_CONNECT_TIMEOUT_S);
	curl.setopt(c, CURLOPT_NOSIGNAL, 1L);
	/* the server stops the query at its bound; the wait for its answer
	 * ends a second later whatever the server does */
	if (ch->limit_ms >= 0)
		curl.setopt(c, CURLOPT_TIMEOUT_MS, ch->limit_ms + 1000L);
	CURLcode cc = curl.perform(c);
	ch->transient = true;
	ch->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
	if (cc != CURLE_OK) {
		snprintf(why, whylen, "%s: %s", ch->url, curl.strerror(cc));
		goto out;
	}
	curl.getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		server_message(b.data, status, why, whylen);
		ch->transient = transient_error(b.data);
		ch->timed_out = b.data && strncmp(b.data, "Code: 159,", 10) == 0;   /* TIMEOUT_EXCEEDED */
		goto out;
	}
	if (reply) {
		*reply = b.data ? b.data : strdup("");
		b.data = NULL;
		if (!*reply) {
			snprintf(why, whylen, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	free(b.data);
	free(url);
	return rc;
}

/* rep_ch_run() with retries, the answer in *REPLY when REPLY is not NULL. */
static int run_retry(struct rep_ch *ch, const char *sql, const char *data, size_t len,
		     const char *settings, char **reply, char *why, size_t whylen)
{
	unsigned wait_ms = CH_FIRST_WAIT_MS;
	for (int tries = 1;; tries++) {
		if (rep_ch_run(ch, sql, data, len, settings, reply, why, whylen) == 0)
			return 0;
		if (tries == CH_TRIES || !ch->transient)
			return -1;
		usleep(wait_ms * 1000u);
		wait_ms *= 2;
	}
}

int rep_ch_run_retry(struct rep_ch *ch, const char *sql, const char *data, size_t len,
		     const char *settings, char *why, size_t whylen)
{
	return run_retry(ch, sql, data, len, settings, NULL, why, whylen);
}

int rep_ch_select(struct rep_ch *ch, const char *sql, bool readonly, json_t **out, char *why,
		  size_t whylen)
{
	char *reply = NULL, *settings = NULL;
	json_error_t err;
	/* the URL's database is the default one of a reader's own SQL; an IN
	 * (not GLOBAL IN) over Distributed tables runs on each shard over its
	 * own tables (a core's rows are all on one shard), and over one
	 * server's it is the primary key's, which GLOBAL IN is not */
	long limit_s = ch->limit_ms < 0 ? 0 : ch->limit_ms < 1000 ? 1 : (ch->limit_ms + 999) / 1000;
	if (asprintf(&settings, "database=%s&default_format=JSONCompact&distributed_product_mode=local"
		     "&output_format_json_quote_64bit_integers=0%s&max_execution_time=%ld", ch->database,
		     readonly ? "&readonly=1" : "", readonly ? limit_s : 0L) < 0) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc = readonly ? rep_ch_run(ch, sql, NULL, 0, settings, &reply, why, whylen)
			  : run_retry(ch, sql, NULL, 0, settings, &reply, why, whylen);
	free(settings);
	if (rc != 0)
		return -1;
	*out = json_loads(reply, 0, &err);
	free(reply);
	if (!*out || !json_is_array(json_object_get(*out, "data")) ||
	    !json_is_array(json_object_get(*out, "meta"))) {
		snprintf(why, whylen, "%s: unreadable answer: %s", ch->url, *out ? "no data" : err.text);
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

char *rep_ch_quote(const char *text)
{
	size_t n = strlen(text), o = 0;
	char *q = malloc(2 * n + 3);
	if (!q)
		return NULL;
	q[o++] = '\'';
	for (const char *p = text; *p; p++) {
		if (*p == '\'' || *p == '\\')
			q[o++] = '\\';
		q[o++] = *p;
	}
	q[o++] = '\'';
	q[o] = '\0';
	return q;
}

json_t *rep_ch_cell(json_t *value, const char *type)
{
	const char *s = json_string_value(value);
	if (s && type && strstr(type, "Int64")) {   /* Int64, UInt64, Nullable(...) */
		char *end;
		long long v = strstr(type, "UInt64") ? (long long)strtoull(s, &end, 10) : strtoll(s, &end, 10);
		if (*s && !*end)
			return json_integer(v);
	}
	return json_incref(value);
}
