/* Unit tests for corefile/identity and base/sha256: the FIPS 180-4
 * SHA-256 vectors, and systemd-coredump file names. */
#include "../../corefile/identity.h"
#include "../../base/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UNIT_GROUP "identity"
#include "unit.h"

static void sha256_of(const void *data, size_t len, size_t repeat, char hex[65])
{
	struct base_sha256 ctx;
	base_sha256_init(&ctx);
	for (size_t i = 0; i < repeat; i++)
		base_sha256_update(&ctx, data, len);
	base_sha256_final(&ctx, hex);
}

static void test_sha256_vectors(void)
{
	static const char *const v[][2] = {
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		 "klmnopqrlmnopqrsmnopqrstnopqrstu",
		 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char hex[65], name[32];
		sha256_of(v[i][0], strlen(v[i][0]), 1, hex);
		snprintf(name, sizeof(name), "sha256 vector %zu", i);
		CHECK_STR(name, hex, v[i][1]);
	}
	char hex[65], a[1000];
	memset(a, 'a', sizeof(a));
	sha256_of(a, sizeof(a), 1000, hex);
	CHECK_STR("sha256 of a million 'a'", hex,
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static bool crash_time(const char *path, char t[32])
{
	struct core_coredump_name n;
	if (!core_coredump_name_parse(path, &n))
		return false;
	memcpy(t, n.crashed_at, 32);
	return true;
}

static void test_crash_time(void)
{
	char t[32];
	struct core_coredump_name n;
	CHECK("systemd-coredump name", core_coredump_name_parse(
		"/var/lib/systemd/coredump/core.prog.1000.0123456789abcdef0123456789abcdef.4242."
		"1700000000123456.zst", &n) && strcmp(n.crashed_at, "2023-11-14T22:13:20.123456Z") == 0);
	CHECK("uid, boot id and pid of the name", n.uid == 1000 && n.pid == 4242 &&
		strcmp(n.boot_id, "0123456789abcdef0123456789abcdef") == 0 && n.usec == 1700000000123456ULL);
	CHECK("a command with dots", crash_time(
		"core.my.prog.0.0123456789abcdef0123456789abcdef.1.1700000000000000", t) &&
		strcmp(t, "2023-11-14T22:13:20.000000Z") == 0);
	CHECK("lz4 copy", crash_time(
		"core.p.0.0123456789abcdef0123456789abcdef.1.1700000000000000.lz4", t));
	CHECK("a plain core has no time", !crash_time("/tmp/core.1234", t));
	CHECK("a short boot id is no systemd name", !crash_time(
		"core.p.0.0123456789abcdef.1.1700000000000000", t));
	CHECK("no digits in USEC", !crash_time(
		"core.p.0.0123456789abcdef0123456789abcdef.1.17000x0000000000", t));
	CHECK("a UID beyond 32 bits is no systemd name", !crash_time(
		"core.p.4294967296.0123456789abcdef0123456789abcdef.1.1700000000000000", t));
	CHECK("a PID beyond 31 bits is no systemd name", !crash_time(
		"core.p.0.0123456789abcdef0123456789abcdef.2147483648.1700000000000000", t));
	CHECK("a USEC beyond 64 bits is no systemd name", !crash_time(
		"core.p.0.0123456789abcdef0123456789abcdef.1.18446744073709551616", t));
}

/* A sparse file (data, a hole, data, a trailing hole) hashes as its bytes. */
static void test_file_sha256_sparse(void)
{
	enum { SIZE = 600000, SECOND = 300000 };
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096], want[65], got[65];
	snprintf(path, sizeof(path), "%s/asyncore-sparse-XXXXXX", dir);
	int fd = mkstemp(path);
	unsigned char *bytes = calloc(1, SIZE);
	if (fd < 0 || !bytes) {
		CHECK("sparse file made", false);
		free(bytes);
		return;
	}
	for (size_t i = 0; i < 5000; i++)
		bytes[i] = (unsigned char)(i * 31 + 7);
	memcpy(bytes + SECOND, "0123456789", 10);
	bool made = pwrite(fd, bytes, 5000, 0) == 5000 && pwrite(fd, bytes + SECOND, 10, SECOND) == 10 &&
		    ftruncate(fd, SIZE) == 0;
	close(fd);
	sha256_of(bytes, SIZE, 1, want);
	CHECK("sparse file hashes as its bytes", made && core_file_sha256(path, got) &&
	      strcmp(got, want) == 0);
	unlink(path);
	free(bytes);
}

int main(void)
{
	test_sha256_vectors();
	test_file_sha256_sparse();
	test_crash_time();
	return unit_exit();
}
