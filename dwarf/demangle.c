/* Symbol names as debuggers show them: C++ (Itanium ABI), Rust legacy and
 * Rust v0, through libiberty's demanglers (those of binutils and gdb). */
#include "internal.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* Length of NAME without an LLVM suffix ".llvm.N" (ThinLTO renames a
 * local symbol it exports so: not part of the function's name). */
static size_t without_llvm_suffix(const char *name)
{
	const char *s = strstr(name, ".llvm.");
	if (!s || !s[6])
		return strlen(name);
	for (const char *p = s + 6; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
			return strlen(name);
	return (size_t)(s - name);
}

/* Rust first: a legacy Rust symbol is also a valid C++ one ("_ZN...17h<hash>E"),
 * which the C++ demangler would give with its hash as a last component.
 * gdb's options: parameters and qualifiers, the Rust hash dropped. */
static char *demangle_mangled(const char *name)
{
	char *d = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	return d ? d : cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
}

char *dbg_demangle(const char *name)
{
	if (!name)
		return NULL;
	/* ELF symbol versions ("memcpy@@GLIBC_2.14") are not part of the name. */
	size_t len = strcspn(name, "@");
	bool mangled = len > 2 && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
	if (mangled) {
		char *plain = strndup(name, len);
		if (!plain)
			return NULL;
		plain[without_llvm_suffix(plain)] = 0;
		char *d = demangle_mangled(plain);
		free(plain);
		if (d)
			return d;
	}
	return strndup(name, len);
}

char *dbg_demangle_type(const char *name)
{
	if (!name)
		return NULL;
	/* A type_info's name is a bare type encoding ("St12out_of_range"). */
	char *d = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
	return d ? d : strdup(name);
}
