/* Unit tests for base/: the growable array, the open-addressing table, the
 * range search, string lists and digits. */
#include "../../base/array.h"
#include "../../base/strlist.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_GROUP "base"
#include "unit.h"

/* An open-addressing table grown by base_table_reserve keeps every entry
 * findable from base_hash_slot, colliding hashes and hash 0 included. */
static void test_table(void)
{
	struct entry {
		uint64_t hash;
		uint64_t value;         /* nonzero: an entry is never all zero */
	} *slots = NULL;
	size_t cap = 0, used = 0;
	bool ok = true;
	for (uint64_t i = 1; i <= 1000 && ok; i++) {
		uint64_t h = i % 7 == 0 ? 0 : i % 5 == 0 ? 42 : i * 0x9e3779b97f4a7c15ULL;
		ok = base_table_reserve(&slots, &cap, used, sizeof(*slots)) && 2 * (used + 1) <= cap;
		size_t j = ok ? base_hash_slot(h, cap) : 0;
		while (ok && slots[j].value)
			j = (j + 1) & (cap - 1);
		if (ok) {
			slots[j] = (struct entry){ .hash = h, .value = i };
			used++;
		}
	}
	size_t found = 0;
	for (uint64_t i = 1; i <= 1000 && ok; i++) {
		uint64_t h = i % 7 == 0 ? 0 : i % 5 == 0 ? 42 : i * 0x9e3779b97f4a7c15ULL;
		for (size_t j = base_hash_slot(h, cap); slots[j].value; j = (j + 1) & (cap - 1))
			if (slots[j].value == i && slots[j].hash == h) {
				found++;
				break;
			}
	}
	CHECK("table: every entry found after growing", ok && found == 1000 &&
	      (cap & (cap - 1)) == 0 && cap >= 2000);
	free(slots);
}

/* Pushed elements come back zeroed and in order; the shrunk array keeps them. */
static void test_array(void)
{
	uint32_t *items = NULL;
	size_t n = 0, cap = 0;
	bool ok = true;
	for (uint32_t i = 0; i < 100 && ok; i++) {
		uint32_t *slot = base_array_push(&items, &n, &cap, sizeof(*items));
		ok = slot && *slot == 0;
		if (ok)
			*slot = i * 3;
	}
	base_array_shrink(&items, &cap, n, sizeof(*items));
	for (size_t i = 0; i < n && ok; i++)
		ok = items[i] == i * 3;
	CHECK("array: pushed elements kept in order", ok && n == 100 && cap == 100);
	CHECK("array: an impossible size is refused",
	      !base_array_reserve(&items, &cap, SIZE_MAX / 2, sizeof(*items)) && cap == 100);
	free(items);
}

struct span {
	uint64_t start, end;
};

static void span_range(const void *elem, uint64_t *start, uint64_t *end)
{
	const struct span *s = elem;
	*start = s->start;
	*end = s->end;
}

/* The range holding a key is found; a key in a gap or past either end is not. */
static void test_range_find(void)
{
	static const struct span spans[] = {{0x1000, 0x2000}, {0x2000, 0x2100}, {0x5000, 0x6000}};
	size_t n = sizeof(spans) / sizeof(spans[0]);
	CHECK("range: first byte", base_range_find(spans, n, sizeof(spans[0]), 0x1000, span_range) == &spans[0]);
	CHECK("range: end is exclusive", base_range_find(spans, n, sizeof(spans[0]), 0x2000, span_range) == &spans[1]);
	CHECK("range: last byte", base_range_find(spans, n, sizeof(spans[0]), 0x5fff, span_range) == &spans[2]);
	CHECK("range: a gap", !base_range_find(spans, n, sizeof(spans[0]), 0x3000, span_range));
	CHECK("range: below and above", !base_range_find(spans, n, sizeof(spans[0]), 0xfff, span_range) &&
	      !base_range_find(spans, n, sizeof(spans[0]), 0x6000, span_range));
	CHECK("range: empty", !base_range_find(spans, 0, sizeof(spans[0]), 0x1000, span_range));
}

static bool append(char ***list, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bool ok = base_strlist_vappend(list, n, fmt, ap);
	va_end(ap);
	return ok;
}

/* An equal string is appended once; the list owns copies. */
static void test_strlist(void)
{
	char **list = NULL;
	size_t n = 0;
	bool ok = append(&list, &n, "thread %d", 1) && append(&list, &n, "thread %d", 2) &&
		  append(&list, &n, "thread %d", 1);
	CHECK("strlist: a repeated string is kept once", ok && n == 2);
	CHECK_STR("strlist: formatted", n == 2 ? list[1] : NULL, "thread 2");
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

static void test_digits(void)
{
	char buf[32], tmp[BASE_DIGITS_MAX + 1];
	tmp[BASE_DIGITS_MAX] = '\0';
	CHECK_STR("digits: hex", base_hex(buf, 0xdeadbeef), "0xdeadbeef");
	CHECK_STR("digits: hex zero", base_hex(buf, 0), "0x0");
	CHECK_STR("digits: hex max", base_hex(buf, UINT64_MAX), "0xffffffffffffffff");
	CHECK_STR("digits: decimal max", base_digits(tmp + BASE_DIGITS_MAX, UINT64_MAX, 10),
		  "18446744073709551615");
}

int main(void)
{
	test_array();
	test_table();
	test_range_find();
	test_strlist();
	test_digits();
	return unit_exit();
}
