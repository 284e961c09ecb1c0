/* A main() for the libFuzzer harnesses without libFuzzer: runs the harness
 * once on each file given, or on each file of each directory given, so that
 * `make check` replays the corpora and crashers under fixtures/fuzz/ with
 * the project's own compiler (and under `make asan` / `make ubsan`).
 *   replay-TARGET FILE|DIR...
 * Prints how many inputs ran; a crash is the harness's own. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	unsigned char *data = NULL;
	size_t size = 0, cap = 0, n;
	do {
		if (size == cap) {
			cap = cap ? 2 * cap : 65536;
			unsigned char *p = realloc(data, cap);
			if (!p)
				abort();
			data = p;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);
	/* An exact-size copy: a read past the input's end is caught. */
	unsigned char *exact = malloc(size ? size : 1);
	if (!exact)
		abort();
	memcpy(exact, data, size);
	free(data);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of DIR, sorted (a replay is reproducible). */
static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;
	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char **p = realloc(names, (n + 1) * sizeof(*names));
		if (!p)
			abort();
		names = p;
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			abort();
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			rc |= run_file(names[i]);
			++*count;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			rc |= run_dir(argv[i], &count);
		} else {
			rc |= run_file(argv[i]);
			count++;
		}
	}
	printf("replayed %zu inputs\n", count);
	return rc ? 1 : 0;
}
