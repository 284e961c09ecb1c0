#include "store.h"

#include <stdio.h>
#include <stdlib.h>

#include "clickhouse.h"
#include "store_clickhouse.h"
#include "store_sqlite.h"

struct rep_store {
	const struct rep_store_ops *ops;
	void *backend;
};

int rep_store_open(const char *db, struct rep_store **out, char *why, size_t whylen)
{
	struct rep_store *st = calloc(1, sizeof(*st));
	if (!st) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	int rc;
	if (rep_ch_is_url(db)) {
		st->ops = &rep_ch_store_ops;
		rc = rep_ch_store_open(db, (struct rep_ch_store **)&st->backend, why, whylen);
	} else {
		st->ops = &rep_sqlite_ops;
		rc = rep_sqlite_open(db, (struct rep_sqlite **)&st->backend, why, whylen);
	}
	if (rc != 0) {
		free(st);
		return -1;
	}
	*out = st;
	return 0;
}

size_t rep_store_close(struct rep_store *st)
{
	if (!st)
		return 0;
	size_t lost = st->ops->close(st->backend);
	free(st);
	return lost;
}

enum rep_write_result rep_store_write(struct rep_store *st, const struct analysis *an, char *why,
				      size_t whylen)
{
	return st->ops->write(st->backend, an, why, whylen);
}

int rep_store_record_error(struct rep_store *st, const struct rep_core_id *id, const char *reason,
			   char *why, size_t whylen)
{
	return st->ops->record_error(st->backend, id, reason, why, whylen);
}

int rep_store_has(struct rep_store *st, const char *fingerprint)
{
	return st->ops->has(st->backend, fingerprint);
}

void rep_store_pending(struct rep_store *st, size_t *held, size_t *lost)
{
	st->ops->pending(st->backend, held, lost);
}

int rep_store_init(const char *db, char *why, size_t whylen)
{
	if (rep_ch_is_url(db))
		return rep_ch_store_init(db, why, whylen);
	struct rep_sqlite *st = NULL;
	if (rep_sqlite_open(db, &st, why, whylen) != 0)
		return -1;
	rep_sqlite_close(st);
	return 0;
}

void *rep_store_backend(struct rep_store *st, const struct rep_store_ops **ops)
{
	*ops = st->ops;
	return st->backend;
}
