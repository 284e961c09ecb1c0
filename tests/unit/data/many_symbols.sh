#!/bin/sh
# Assembly for a shared object with many symbols of long names (a string
# table of about 2 MB): global and local, sized and sizeless, with gaps
# between them that no symbol holds.
# Usage: many_symbols.sh COUNT > many_symbols.s
awk -v n="${1:-30000}" 'BEGIN {
	print "\t.text"
	for (i = 0; i < n; i++) {
		name = sprintf("many_symbols_function_%06d_with_a_name_long_enough_to_fill_pages", i)
		if (i % 3 != 0)
			printf "\t.globl %s\n", name
		printf "\t.type %s, @function\n%s:\n\tret\n", name, name
		if (i % 7 != 0)
			printf "\t.size %s, 1\n", name
		if (i % 5 == 0)
			print "\t.skip 16"
	}
	print "\t.section .note.GNU-stack,\"\",@progbits"
}'
