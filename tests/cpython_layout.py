#!/usr/bin/env python3
"""Check a CPython description's layout against the interpreter's own
headers, compiled for x86_64 and for aarch64 (tests/t_cpython_versions.sh).

  cpython_layout.py NAME DESCRIPTION INCLUDE_DIR

INCLUDE_DIR is the version's include/python3.X (its internal/ headers
too).  Every layout member becomes offsetof(TYPE, MEMBER) and every "size"
sizeof(TYPE) in a C file built with Py_BUILD_CORE, and every place the
"offsets" block names (3.13) offsetof(_Py_DebugOffsets, ...) by the names
of DEBUG_OFFSETS below, compiled to assembly by gcc and
aarch64-linux-gnu-gcc; prints one PASS/FAIL line an architecture (a
compiler that is missing: SKIP)."""
import json
import re
import shutil
import subprocess
import sys
import tempfile

# The description's names of 3.13's _Py_DebugOffsets members
# (Include/internal/pycore_runtime.h).
DEBUG_OFFSETS = {
    ('_PyRuntimeState', 'interpreters.head'): 'runtime_state.interpreters_head',
    ('PyInterpreterState', 'next'): 'interpreter_state.next',
    ('PyInterpreterState', 'threads.head'): 'interpreter_state.threads_head',
    ('PyInterpreterState', 'gc'): 'interpreter_state.gc',
    ('PyObject', 'ob_type'): 'pyobject.ob_type',
    ('PyTypeObject', 'tp_name'): 'type_object.tp_name',
    ('PyLongObject', 'long_value.lv_tag'): 'long_object.lv_tag',
    ('PyLongObject', 'long_value.ob_digit'): 'long_object.ob_digit',
    ('PyThreadState', 'next'): 'thread_state.next',
    ('PyThreadState', 'current_frame'): 'thread_state.current_frame',
    ('PyThreadState', 'native_thread_id'): 'thread_state.native_thread_id',
    ('_PyInterpreterFrame', 'previous'): 'interpreter_frame.previous',
    ('_PyInterpreterFrame', 'f_executable'): 'interpreter_frame.executable',
    ('_PyInterpreterFrame', 'instr_ptr'): 'interpreter_frame.instr_ptr',
    ('_PyInterpreterFrame', 'owner'): 'interpreter_frame.owner',
    ('PyCodeObject', 'co_filename'): 'code_object.filename',
    ('PyCodeObject', 'co_qualname'): 'code_object.qualname',
    ('PyCodeObject', 'co_linetable'): 'code_object.linetable',
    ('PyCodeObject', 'co_firstlineno'): 'code_object.firstlineno',
    ('PyCodeObject', 'co_code_adaptive'): 'code_object.co_code_adaptive',
    ('PyBytesObject', 'ob_base.ob_size'): 'bytes_object.ob_size',
    ('PyBytesObject', 'ob_sval'): 'bytes_object.ob_sval',
    ('PyASCIIObject', 'state'): 'unicode_object.state',
    ('PyASCIIObject', 'length'): 'unicode_object.length',
    ('PyASCIIObject', 'size'): 'unicode_object.asciiobject_size',
}

# _asyncio's own (Modules/_asynciomodule.c), in no header: checked against
# DWARF instead (tests/cpython_dwarf_layout.py)
MODULE_TYPES = {'TaskObj', 'futureiterobject'}
# struct tags without a typedef
TAGS = {'gc_generation', '_gc_runtime_state'}

name, desc, include = sys.argv[1:4]
d = json.load(open(desc))
layout = d['layout']
HEADERS = ['Python.h', 'frameobject.h', 'internal/pycore_frame.h', 'internal/pycore_code.h',
           'internal/pycore_pystate.h', 'internal/pycore_interp.h', 'internal/pycore_runtime.h']
exprs, want = [], []
for typ, members in layout.items():
    if typ in MODULE_TYPES:
        continue
    ctype = 'struct ' + typ if typ in TAGS else typ
    for m, v in members.items():
        exprs.append('sizeof(%s)' % ctype if m == 'size' else 'offsetof(%s, %s)' % (ctype, m))
        want.append(v if m == 'size' else v[0])
for typ, members in d.get('offsets', {}).get('members', {}).items():
    for m, at in members.items():
        exprs.append('offsetof(_Py_DebugOffsets, %s)' % DEBUG_OFFSETS.get((typ, m), '?' + m))
        want.append(at)
src = '#define Py_BUILD_CORE 1\n#include <stddef.h>\n'
for h in HEADERS:
    src += '#if __has_include("%s")\n#include "%s"\n#endif\n' % (h, h)
src += 'const unsigned long long layout_values[] = {\n%s\n};\n' % ',\n'.join('  ' + e for e in exprs)

with tempfile.TemporaryDirectory() as tmp:
    open(tmp + '/layout.c', 'w').write(src)
    for arch, cc in (('x86_64', 'gcc'), ('aarch64', 'aarch64-linux-gnu-gcc')):
        if not shutil.which(cc):
            print('SKIP: %s layout on %s: no %s' % (name, arch, cc))
            continue
        r = subprocess.run([cc, '-S', '-O0', '-I', include, '-o', tmp + '/layout.s', tmp + '/layout.c'],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print('FAIL: %s layout on %s: the headers do not compile: %s' % (
                name, arch, ' '.join(r.stderr.split('\n')[:2])))
            continue
        got = [int(x, 0) for x in re.findall(r'^\s*\.(?:quad|xword|8byte)\s+(\S+)',
                                              open(tmp + '/layout.s').read(), re.M)]
        wrong = ['%s = %d, the layout says %d' % (e, g, w)
                 for e, g, w in zip(exprs, got, want) if g != w]
        ok = len(got) == len(want) and not wrong
        print('%s: %s layout on %s: %d offsets and sizes are the headers\'%s' % (
            'PASS' if ok else 'FAIL', name, arch, len(want),
            '' if ok else ': ' + '; '.join(wrong[:4]) + (' (%d values read)' % len(got))))
