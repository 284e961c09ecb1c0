/* The plain-data result of analysing one core.
 *
 * struct analysis holds no library handles: every string is malloc'd and
 * owned by the analysis, every array is owned by its parent, and
 * an_analysis_destroy() frees all of it.  Report writers (text, JSON, SQLite)
 * all work from this structure.  Unknown numeric values are marked by the
 * matching has_* flag; unknown strings are NULL. */
#ifndef ANALYZER_ANALYSIS_H
#define ANALYZER_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version of asyncore: --version, JSON's asyncore_version and the
 * store's analyzer_version. */
#define AN_VERSION "0.2.0"

/* Native frames come from the unwinder, async ones from folly's chains,
 * script and label frames from a runtime description (analyzer/runtime*.c). */
enum an_frame_kind { AN_FRAME_NATIVE, AN_FRAME_ASYNC, AN_FRAME_SCRIPT, AN_FRAME_LABEL };

/* "native", "async", "script" or "label". */
const char *an_frame_kind_name(enum an_frame_kind kind);

/* The kind an_frame_kind_name() names NAME (a store's column); native for
 * NULL or any other text. */
enum an_frame_kind an_frame_kind_parse(const char *name);

/* What a native frame is to a crash a signal handler caught (DESIGN.md
 * "Signal frames and crash handlers"): the signal trampoline (gdb's
 * `<signal handler called>`), a frame of the crash handler (inside the
 * trampoline whose signal frame holds the caught fault), the frame the
 * fault interrupted.  Every trampoline is one, whatever its signal. */
enum an_frame_role { AN_FRAME_PLAIN, AN_FRAME_HANDLER, AN_FRAME_TRAMPOLINE, AN_FRAME_CRASH_SITE };

/* NULL (plain), "crash_handler", "trampoline", "crash_site": JSON's and the
 * stores' frame role. */
const char *an_frame_role_name(enum an_frame_role role);

/* The role an_frame_role_name() names NAME; plain for NULL or any other. */
enum an_frame_role an_frame_role_parse(const char *name);

/* A frame a runtime description gave (script or label): no pc of its own. */
#define AN_FRAME_IS_RUNTIME(f) ((f)->kind == AN_FRAME_SCRIPT || (f)->kind == AN_FRAME_LABEL)

/* A thread's registers as the core saved them, in its architecture's order
 * (analysis.arch: x86_64's user_regs_struct, aarch64's x0..x30, sp, pc,
 * pstate, tpidr_el0); the writers name them with an_thread_reg_name(). */
#define AN_THREAD_NREGS 35

/* Name of thread register N of architecture ARCH (analysis.arch; NULL is
 * x86_64): "r15", ..., "rip", "fs_base"; "x0", ..., "pc", "tpidr_el0". */
const char *an_thread_reg_name(const char *arch, unsigned n);

/* The registers every architecture has, by what they do. */
enum an_reg_role { AN_ROLE_PC, AN_ROLE_SP, AN_ROLE_FP, AN_ROLE_TP };

/* Name of ARCH's register for ROLE ("rip", "rsp", "rbp", "fs_base"; "pc",
 * "sp", "x29", "tpidr_el0"). */
const char *an_reg_role_name(const char *arch, enum an_reg_role role);

/* Registers an unwound frame may carry, by ARCH's DWARF numbers. */
#define AN_FRAME_NREGS 32

/* How many frame registers ARCH numbers, and the name of number N ("rax",
 * ..., "rip"; "x0", ..., "x30", "sp"). */
unsigned an_frame_nregs(const char *arch);
const char *an_frame_reg_name(const char *arch, unsigned n);

/* One formal parameter of a frame, as gdb prints it with
 * `set print frame-arguments scalars`. */
struct an_arg {
	char *name;
	char *type;                 /* the parameter's type name, or NULL */
	char *value;                /* "250", "0x7ffd...", "0x55d4... \"late fee\"",
				       "<optimized out>", "..." */
	char *entry_value;          /* the value at function entry, from the
				       caller's call site (gdb's name@entry), or NULL */
	bool entry_equal;           /* same bytes as value: name=name@entry=VALUE */
};

struct an_frame {
	uint64_t pc;                /* raw pc (return address for callers) */
	char *function;             /* demangled; NULL when unknown */
	uint64_t offset;            /* pc - function start */
	char *module;               /* module path; NULL when unknown */
	uint64_t module_offset;
	char *file;                 /* source file; NULL when unknown */
	uint64_t cfa;               /* canonical frame address, 0 when unknown */
	uint64_t *regs;             /* the recovered registers, packed: one value
				       per bit of regs_known, lowest number
				       first; a block its inline levels share
				       (an_regs_pack); read with an_frame_reg */
	char *display;              /* readable name when it differs from function
				       ("handle_order(Order) [coroutine]"), or NULL */
	struct an_arg *args;        /* one counted block holding the array and its
				       strings, maybe shared (an_args_pack); NULL
				       with nargs 0 and !has_args: no DWARF */
	size_t nargs;
	struct an_arg *locals;      /* local variables in scope at the pc, as
				       gdb's `bt full` lists them (--locals): a
				       block as args is (entry_value NULL); NULL
				       with !has_locals: not asked, or no DWARF */
	size_t nlocals;
	char *runtime;              /* script/label: the description's name */
	char *detail;               /* script/label: the description's detail, or NULL */
	enum an_frame_kind kind;
	enum an_frame_role role;
	int line;                   /* 0 when unknown */
	int inline_depth;           /* 0 for the real frame, >0 for inline levels;
				       a tail call's: its innermost function's */
	uint32_t regs_known;        /* bit N: register N, by DWARF number (x86_64:
				       0 rax .. 16 rip; aarch64: x0..x30, 31 sp),
				       recovered by the unwinder */
	bool activation;            /* pc is where the thread stopped (no pc-1) */
	bool has_offset;
	bool has_module_offset;
	bool inlined;               /* an inline level, not a real call */
	bool seam;                  /* first frame after a native/async switch */
	bool tailcall;              /* restored from DWARF call sites: not on the stack */
	bool has_args;
	bool has_locals;
	bool pooled;                /* function, module and file belong to the
				       analysis's string pool (strpool.h), not
				       to the frame */
};

/* A stack that repeats one cycle of functions many times (a recursion that
 * overflowed its stack, DESIGN.md `recursion`): the analysis keeps the
 * frames before and after the run, and the run as its cycle and count.
 * The frames of true indexes [first, last] are the cycle repeated REPEATS
 * times: (last - first + 1) == ncycle * repeats. */
struct an_recursion {
	size_t first, last;         /* true indexes of the run left out */
	char **cycle;               /* the functions of frames first, first + 1,
				       ... (a frame without one: module@0xOFFSET) */
	size_t ncycle;
	uint64_t repeats;
	struct an_frame caller;     /* the run's innermost real frame, the caller
				       of frames[first - 1]: its pc, CFA and
				       registers only, for that frame's entry
				       values; shown nowhere */
};

/* What a blocked thread waits for (DESIGN.md "Hangs", `blocked_on`). */
enum an_wait_kind {
	AN_WAIT_MUTEX, AN_WAIT_RWLOCK, AN_WAIT_JOIN, AN_WAIT_CONDITION, AN_WAIT_SEMAPHORE,
	AN_WAIT_BARRIER, AN_WAIT_FUTEX, AN_WAIT_IO, AN_WAIT_SLEEP, AN_WAIT_WAIT, AN_WAIT_SYSCALL,
	AN_WAIT_GIL
};

/* "mutex", "rwlock", "join", "condition", "semaphore", "barrier", "futex",
 * "io", "sleep", "wait", "syscall", "gil" (CPython's). */
const char *an_wait_kind_name(enum an_wait_kind kind);

/* The kind an_wait_kind_name() names NAME (a store's column); syscall for
 * NULL or any other text. */
enum an_wait_kind an_wait_kind_parse(const char *name);

/* A thread in a system call and what it waits for there (analyzer/blocking.c). */
struct an_blocked {
	enum an_wait_kind kind;
	uint64_t object;            /* the address waited on (a mutex, the joined
				       thread's struct pthread, the futex word) */
	bool has_object;
	char *object_name;          /* "accounts_lock", "g_pool.lock", or NULL */
	int32_t owner_tid;          /* the holder the object records */
	bool has_owner;
	bool owner_gone;            /* owner_tid is no thread of the process */
	const char *syscall;        /* static: "futex", "read", or NULL (unnamed) */
	long syscall_nr;
	int64_t fd;                 /* io: the call's file descriptor */
	bool has_fd;
	char *fd_target;            /* what the fd is ("pipe:[2231]"), or NULL */
	const char *via;            /* static: the C library's function it waits in
				       ("pthread_cond_wait"), else the call's name */
	char *waiter;               /* the thread's first function outside the C
				       library, or NULL */
	char *summary;              /* "waits for mutex ledger_lock, held by
				       thread 4212" */
	uint64_t since;             /* seconds it has waited, when known */
	bool has_since;
};

/* Free what B owns and B; NULL is a no-op. */
void an_blocked_destroy(struct an_blocked *b);

/* A cycle of the wait-for graph: THREADS[i] waits for OBJECTS[i], held by
 * THREADS[i + 1] (the last by the first). */
struct an_deadlock {
	int32_t *threads;
	uint64_t *objects;
	size_t n;
	char *summary;
};

/* An open file of a live process: /proc/PID/fd/N, a socket's addresses. */
struct an_fd {
	int32_t fd;
	char *target;               /* "/var/log/x", "pipe:[2231]",
				       "socket:[77] 127.0.0.1:5432 -> 127.0.0.1:40112" */
};

struct an_thread {
	int32_t tid;
	bool crashing;
	bool has_tp;                /* the core saved the thread pointer */
	uint64_t regs[AN_THREAD_NREGS];
	unsigned nregs;             /* regs[0, nregs) were saved */
	uint64_t pc, sp, fp, tp;    /* those of regs by role (an_reg_role) */
	uint64_t tls_tp;            /* the thread pointer TLS is found from: tp, or
				       from glibc's list of threads when the core
				       has none (pthreads.h); 0: unknown */
	uint64_t pthread;           /* its glibc struct pthread, 0: unknown */
	struct an_frame *frames;    /* innermost first, native and async spliced */
	size_t nframes;
	char *unwind_error;         /* why the native walk ended early, or NULL */
	uint64_t async_root;        /* thread's current AsyncStackRoot, 0 if none */
	bool has_locals;            /* its frames' locals were asked for (--locals) */
	struct an_recursion *recursion;  /* NULL: frames hold the whole stack;
					    else frames[i >= first] are after
					    the run (an_thread_frame_index) */
	struct an_blocked *blocked;     /* what it waits for; NULL: running */
	/* A live process's (or its snapshot's) account of the thread */
	char *name;                 /* /proc/PID/task/TID/comm, or NULL */
	char state;                 /* R, S, D, ... from its stat; 0: unknown */
	uint64_t cpu_ticks;         /* utime + stime, in clock ticks */
	bool has_cpu;
	uint64_t off_cpu_ms;        /* in state S or D: since it last ran */
	bool has_off_cpu;
};

/* The true index of T's frames[I]: I, or past a recursion's run, I plus
 * the frames it left out. */
size_t an_thread_frame_index(const struct an_thread *t, size_t i);

/* A recursion's run as a stack's indexes hold it, without the rest of
 * an_recursion (stores keep only the indexes, reports/SCHEMA.md
 * `frames.idx`): frames[at] and those after it have their position plus
 * LEFT_OUT for index.  AT 0: nothing left out. */
struct an_index_gap {
	size_t at, left_out;
};

/* The gap of T's frames: at its recursion's first, or none. */
struct an_index_gap an_thread_index_gap(const struct an_thread *t);

/* The true index of frames[I] of a stack with GAP (NULL: none). */
size_t an_index_gap_index(const struct an_index_gap *gap, size_t i);

/* Free a recursion and what it owns; NULL is a no-op. */
void an_recursion_destroy(struct an_recursion *r);

struct an_module {
	char *path;
	uint64_t start, end;
	char *build_id;             /* hex; NULL when unknown */
	char *debuginfo;            /* file the DWARF came from; NULL when none */
	bool debuginfod;            /* that file was fetched from a debuginfod server */
};

/* A chain of coroutine frames suspended on no thread. */
struct an_suspended {
	uint64_t leaf;              /* address of the leaf AsyncStackFrame */
	struct an_frame *frames;
	size_t nframes;
};

/* A user-space task of a runtime (DESIGN.md "Tasks"): a bRPC bthread or a
 * goroutine.  bthreads are running, ready, suspended or created; goroutines
 * running, runnable, syscall, waiting, preempted or idle (the runtime's
 * words). */
enum an_task_state {
	AN_TASK_RUNNING, AN_TASK_READY, AN_TASK_SUSPENDED, AN_TASK_CREATED,
	AN_TASK_RUNNABLE, AN_TASK_SYSCALL, AN_TASK_WAITING, AN_TASK_PREEMPTED, AN_TASK_IDLE
};

/* "running", "ready", "suspended", "created", "runnable", "syscall",
 * "waiting", "preempted", "idle". */
const char *an_task_state_name(enum an_task_state state);

/* The state an_task_state_name() names NAME (a store's column); suspended
 * for NULL or any other text. */
enum an_task_state an_task_state_parse(const char *name);

struct an_task {
	const char *runtime;        /* static: "bthread", "go" */
	uint64_t id;                /* as the runtime prints it (bthread_t, goid) */
	uint64_t address;           /* of its TaskMeta, its g */
	enum an_task_state state;
	const char *wait_kind;      /* static or the analysis's pooled string:
				       "sleep", "join", "butex"; a goroutine's
				       wait reason ("chan receive"); NULL: not
				       waiting */
	uint64_t wait_since;        /* seconds it has waited */
	bool has_wait_since;
	bool locked;                /* a goroutine locked to its OS thread */
	uint64_t wait_address;      /* the butex waited on; a goroutine's channel
				       (hchan), sync object or pollDesc */
	bool has_wait_address;
	char *wait_object_name;     /* the global holding it ("main.orders",
				       "main.muLedger"), malloc'd; NULL: none */
	int64_t wait_fd;            /* a goroutine in IO wait: its pollDesc's fd */
	bool has_wait_fd;
	uint64_t wait_owner_task;   /* the task holding it, as the object records
				       (a bthread mutex built with BRPC_DEBUG_LOCK) */
	bool has_wait_owner_task;
	int32_t wait_owner_tid;     /* the OS thread holding it (a pthread owner) */
	bool has_wait_owner_tid;
	uint64_t wait_target;       /* join: the id of the task joined */
	bool has_wait_target;
	int32_t tid;                /* the OS thread running it */
	bool has_tid;
	char *name;                 /* as the runtime names it (an asyncio
				       task's "Task-3"), or NULL */
	uint64_t fn_address;        /* entry function */
	char *fn;                   /* its name; NULL when unknown */
	const char *created_by;     /* the function that started it (a goroutine's
				       go statement), pooled; NULL: unknown */
	const char *created_file;   /* its file and line, pooled; NULL: unknown */
	int created_line;
	uint64_t created_pc;        /* the go statement's return address */
	bool has_created_pc;
	struct an_frame *frames;    /* innermost first, down to the runtime's entry */
	size_t nframes;
	char *unwind_error;         /* why its stack is missing or cut, or NULL */
	bool has_locals;            /* its frames' locals were asked for (--locals) */
	char *wait_summary;         /* "waits on chan receive in main.parked"
				       (analyzer/waitgraph.c), NULL: not waiting */
};

struct an_event {
	uint64_t order;
	uint64_t timestamp;
	char *location;             /* "file.c:LINE" prefix of the format, or NULL */
	char *function;             /* recorder: `where`; ELFE: symbolized caller */
	char *format;               /* user format (after the location) */
	char *message;              /* formatted message */
	char *library_message;      /* as the recorder library's dump shows it
				       (plain %s as a pointer); NULL: same */
	uint64_t args[12];
	size_t nargs;
	unsigned strings_read;      /* bit i set: %s argument i read post-mortem */
	char indent_mark;           /* '>', '<', '=' leading the user format, or 0 */
	bool in_flight;
};

struct an_recorder {
	char *name;
	char *layout;               /* "recorder" or "elfe" */
	uint64_t address;           /* of the recorder_info / recorder object */
	uint64_t size, writer, reader, commit, overflow;
	uint64_t recovered, in_flight, overwritten;
	struct an_event *events;    /* oldest first */
	size_t nevents;
};

struct an_timeline_entry {
	uint64_t order;
	uint64_t timestamp;
	size_t recorder;            /* index into analysis.recorders */
	size_t event;               /* index into that recorder's events */
};

/* What killed the program (DESIGN.md "JSON", `cause`), decided by
 * analyzer/cause.c from evidence in the core; without evidence, the plain
 * signal's kind.  AN_CAUSE_HANG and AN_CAUSE_DEADLOCK are a hung process's
 * (live, a snapshot, a core another process asked for). */
enum an_cause_kind {
	AN_CAUSE_SIGNAL, AN_CAUSE_STACK_OVERFLOW, AN_CAUSE_NULL_DEREFERENCE, AN_CAUSE_BAD_JUMP,
	AN_CAUSE_UNCAUGHT_EXCEPTION, AN_CAUSE_ASSERTION, AN_CAUSE_ABORT, AN_CAUSE_STACK_SMASHING,
	AN_CAUSE_HEAP_CORRUPTION, AN_CAUSE_BAD_ACCESS, AN_CAUSE_ILLEGAL_INSTRUCTION,
	AN_CAUSE_ARITHMETIC, AN_CAUSE_HANG, AN_CAUSE_DEADLOCK, AN_CAUSE_OOM
};

/* "stack_overflow", "null_dereference", ... as the JSON and the store say. */
const char *an_cause_kind_name(enum an_cause_kind kind);

/* The kind an_cause_kind_name() names NAME; signal for NULL or any other. */
enum an_cause_kind an_cause_kind_parse(const char *name);

/* What a crash handler did with the fault it caught. */
enum an_handler_action {
	AN_HANDLER_RERAISED, AN_HANDLER_ABORTED, AN_HANDLER_EXITED, AN_HANDLER_FAULTED,
	AN_HANDLER_RUNNING
};

/* "re-raised", "aborted", "exited", "faulted" (it faulted in turn),
 * "running" (a live process still inside it). */
const char *an_handler_action_name(enum an_handler_action action);

/* The action an_handler_action_name() names NAME; re-raised for NULL or any
 * other. */
enum an_handler_action an_handler_action_parse(const char *name);

/* The fault a program's own signal handler caught (DESIGN.md "Signal frames
 * and crash handlers"), read from the kernel's signal frame on the stack, or
 * (re-raised on return) from the faulting instruction: the crash the cause
 * and the signature speak of, where the core's signal is the handler's. */
struct an_caught {
	bool present;
	int signo;
	const char *signal_name;    /* static, NULL when unknown */
	int code;
	bool has_code;
	const char *code_name;      /* static, NULL when unknown */
	uint64_t fault_address;
	bool has_fault_address;
	int32_t tid;                /* the thread that faulted */
	uint64_t site;              /* true frame index of the frame the fault
				       interrupted (the crash site) */
	bool on_return;             /* re-raised on return: no signal frame, the
				       evidence is the faulting instruction */
	uint64_t regs[AN_THREAD_NREGS];  /* the registers the fault interrupted
					    (an_thread.regs' order) */
	char *handler;              /* the handler's function, or NULL */
	enum an_handler_action action;
};

/* A runtime's dump another process asked for (DESIGN.md "Hangs"): the Go
 * runtime prints every goroutine on SIGQUIT and, with GOTRACEBACK=crash,
 * then raises SIGABRT itself, so the core's signal is its own; the kernel's
 * signal frame of the SIGQUIT on a handler's stack keeps who sent it. */
struct an_dump_request {
	bool present;
	int signo;                  /* SIGQUIT */
	int32_t sender_pid;         /* the process that sent it */
	int32_t tid;                /* the thread whose handler took it */
};

/* A Go program's own account of its death (analyzer/gopanic.c): the panic
 * or fatal error the runtime printed, read back from memory. */
struct an_go_crash {
	bool present;
	bool fatal;                 /* a fatal error (throw), not a panic */
	char *message;              /* "panic: runtime error: index out of range [5]
				       with length 3", "fatal error: concurrent map
				       writes" (the runtime's first line) */
	char *value_type;           /* a panic's value's Go type ("runtime.boundsError",
				       "*errors.errorString"), or NULL */
	char *signal_line;          /* "[signal SIGSEGV: segmentation violation
				       code=0x1 addr=0x0 pc=0x487d0c]", or NULL */
	int signo;                  /* the signal the panic comes from, 0: none */
	uint64_t sigcode, sigaddr, sigpc;
	uint64_t goid;              /* the panicking (or throwing) goroutine */
	bool has_goid;
};

/* A Node.js program's own account of its death (analyzer/v8.c): the
 * JavaScript exception that was uncaught under --abort-on-uncaught-exception,
 * read from V8's heap, or V8's heap exhaustion. */
struct an_js_crash {
	bool present;
	bool oom;                   /* JavaScript heap out of memory */
	char *type;                 /* the exception's class ("TypeError"), or NULL */
	char *message;              /* its message (oom: node's, "Allocation failed -
				       JavaScript heap out of memory"), or NULL */
	char *thrown_in;            /* the first frame of its own stack: "loadUser", */
	char *thrown_at;            /* "file:///srv/app.mjs:4:23"; NULL: not read */
};

struct an_cause {
	enum an_cause_kind kind;
	char *summary;              /* one line, malloc'd; NULL until decided */
	char *exception_type;       /* uncaught_exception: the demangled type */
	char *exception_what;       /* its what() when the object holds it, or NULL */
	const char *access;         /* null_dereference, bad_access: static "read"/"write",
				       or NULL */
	char *expression;           /* null_dereference, bad_access: "s->bytes", or NULL */
};

struct an_strpool;

struct analysis {
	struct an_strpool *strings; /* the strings pooled frames share, or NULL */
	/* core identity (corefile/identity.h) */
	char *core_path;
	const char *arch;           /* static: "x86_64", "aarch64" */
	uint64_t core_file_size;    /* the file as given */
	uint64_t core_size;         /* decompressed */
	char *core_fingerprint;     /* hex; NULL: not computed (text, HTML) */
	char *core_sha256;          /* hex SHA-256 of the file; NULL: not computed */
	char *crashed_at;           /* ISO 8601 UTC from a systemd-coredump name (or
				       its journal entry), or NULL */
	char *boot_id;              /* systemd-coredump name's boot id, or NULL */
	uint32_t coredump_uid;      /* systemd-coredump name's UID (host's view) */
	bool has_coredump_uid;
	char *unit;                 /* the journal's COREDUMP_UNIT, or NULL */
	char *cmdline;              /* the journal's COREDUMP_CMDLINE, or NULL */
	char *executable;
	char *build_id;             /* main executable's build-id, hex */
	struct an_annotation {
		char *name, *value;
	} *annotations;             /* what the program said of itself
				       (Crashpad's annotations), in its order */
	size_t nannotations;
	int32_t pid;
	bool has_pid;
	uint32_t uid;
	bool has_uid;

	/* a running process read live (report --pid): no core; the hang's
	 * moment and how long the process was stopped */
	bool live;
	uint64_t paused_us;
	char *taken_at;             /* ISO 8601 UTC, or NULL */

	/* signal */
	bool has_signal;
	int signo;
	const char *signal_name;    /* static string, NULL when unknown */
	int code;
	bool has_code;
	const char *code_name;      /* static string, NULL when unknown */
	uint64_t fault_address;
	bool has_fault_address;
	int32_t crashing_tid;
	char *abort_message;        /* glibc's __abort_msg->msg, or NULL */
	struct an_caught caught;    /* the fault a handler caught; !present: none */
	struct an_dump_request dump_request;   /* a SIGQUIT dump's sender */
	struct an_go_crash go;      /* a Go program's panic or fatal error */
	struct an_js_crash js;      /* a Node.js program's uncaught exception or OOM */
	struct an_cause cause;

	struct an_module *modules;
	size_t nmodules;
	struct an_thread *threads;  /* core order, crashing first */
	size_t nthreads;
	struct an_deadlock *deadlocks;   /* the wait-for graph's cycles */
	size_t ndeadlocks;
	struct an_fd *fds;          /* a live process's open files (or its
				       snapshot's account of them) */
	size_t nfds;
	struct an_suspended *suspended;
	size_t nsuspended;
	struct an_task *tasks;      /* running first, then by id */
	size_t ntasks;
	struct an_stack_range {     /* stacks a runtime allocated in its own heap */
		uint64_t lo, hi;    /* (Go: goroutines', a non-cgo M's g0): */
	} *runtime_stacks;          /* nothing of a thread lies above HI */
	size_t nruntime_stacks, runtime_stacks_cap;
	struct an_recorder *recorders;
	size_t nrecorders;
	struct an_timeline_entry *timeline;   /* merged by order */
	size_t ntimeline;

	/* async state */
	bool async_key_found;
	uint32_t async_key;         /* 0xffffffff: never created */

	char *signature;
	char *signature_hash;

	char **warnings;
	size_t nwarnings;
};

/* Allocate an empty analysis; NULL when out of memory. */
struct analysis *an_analysis_create(void);

/* Free the analysis and everything it owns; NULL is a no-op. */
void an_analysis_destroy(struct analysis *an);

/* The index of the thread the signal was delivered to: the one marked
 * crashing, else the one whose tid is crashing_tid, else the first;
 * nthreads when there is no thread. */
size_t an_crashing_thread(const struct analysis *an);

/* AN's thread of id TID, or NULL. */
struct an_thread *an_thread_by_tid(struct analysis *an, int32_t tid);

/* Free the strings an_frame owns (not the frame itself). */
void an_frame_deinit(struct an_frame *frame);

/* Free what an_event owns (not the event itself). */
void an_event_deinit(struct an_event *event);

/* A frame's arguments are many small strings, and frames often have the
 * same (threads parked in one place): an_frame.args is one block holding
 * the array and its strings (an entry value equal to the value is the same
 * string), counted so that frames can share it.  Pack: a block with a copy
 * of ARGS [0, N) (NULL when out of memory); share: one more holder of
 * ARGS; release: one fewer (an_frame_deinit does it), freed with the last.
 * NULL is no block. */
struct an_arg *an_args_pack(const struct an_arg *args, size_t n);
struct an_arg *an_args_share(struct an_arg *args);
void an_args_release(struct an_arg *args);

/* A frame's registers are the callee-saved few in every frame but the
 * innermost: an_frame.regs keeps only those known, counted as args are.
 * Pack: a block with REGS[N] for each bit N of KNOWN (REGS indexed by DWARF
 * number, below AN_FRAME_NREGS), NULL when KNOWN is 0 or out of memory;
 * share and release as for arguments. */
uint64_t *an_regs_pack(const uint64_t *regs, uint32_t known);
uint64_t *an_regs_share(uint64_t *regs);
void an_regs_release(uint64_t *regs);

/* Register N of F (DWARF number) into *VALUE; false when not recovered. */
bool an_frame_reg(const struct an_frame *f, unsigned n, uint64_t *value);

/* strdup that accepts NULL. */
char *an_strdup(const char *s);

#endif
