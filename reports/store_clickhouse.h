/* The ClickHouse crash store (DESIGN.md "Scale-out store: ClickHouse";
 * reports/SCHEMA.md "ClickHouse"): the tables of the SQLite schema, each a
 * ReplacingMergeTree ordered by the core's fingerprint, with a Distributed
 * table in front of each when the URL names a cluster; rows written in
 * batches of many cores (JSONEachRow), the children first and `cores`
 * last, so a core is stored once its cores row is. */
#ifndef REPORTS_STORE_CLICKHOUSE_H
#define REPORTS_STORE_CLICKHOUSE_H

#include <stddef.h>

#include "store.h"
#include "store_resign.h"

/* Cores held back before one batch of inserts. */
#define REP_CH_BATCH_CORES 256

struct rep_ch_store;

/* Open the store at URL for writing; its schema must exist (`asyncore store
 * init`).  Returns 0 and *OUT, or -1 with a one-line reason in WHY. */
int rep_ch_store_open(const char *url, struct rep_ch_store **out, char *why, size_t whylen);

/* Create the database, the tables and the views at URL, idempotently (on
 * the one shard it names, with ?cluster=).  0, or -1 with WHY. */
int rep_ch_store_init(const char *url, char *why, size_t whylen);

/* rep_store_resign() on ClickHouse: each changed row written again (the
 * newer row replaces the older), frames first and cores rows last, so an
 * interrupted resign leaves every core readable and a rerun finishes it. */
int rep_ch_store_resign(struct rep_ch_store *st, const struct rep_resign_fns *fns,
			struct rep_resign_result *out, char *why, size_t whylen);

#endif
