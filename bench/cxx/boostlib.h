// The benchmark's shared library (boostlib.cpp) and generated units (gen.py).
#ifndef BENCH_CXX_BOOSTLIB_H
#define BENCH_CXX_BOOSTLIB_H

#include <cstddef>

double lib_area(int n, void (*cb)(int));
size_t lib_parse(const char *text, void (*cb)(int));
int lib_paths(int n, void (*cb)(int));

double bulk0_run(int depth, void (*cb)(int));
double bulk1_run(int depth, void (*cb)(int));
double bulk2_run(int depth, void (*cb)(int));
double bulk3_run(int depth, void (*cb)(int));
double bulk4_run(int depth, void (*cb)(int));
double bulk5_run(int depth, void (*cb)(int));
double bulk6_run(int depth, void (*cb)(int));

#endif
