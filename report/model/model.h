/* SPDX-License-Identifier: MIT */
/*
 * model.h - what the samples are resolved against: processes and their maps
 * over time (machine.c), object files (dso.c) with their symbols (symbols.c,
 * PLT entries included) and separate debug files (elffile.c), names
 * (demangle.c, cxxname.c), source lines and inlined functions (srcline.c),
 * kernel symbols (kallsyms.c) and JIT symbol maps /tmp/perf-PID.map
 * (jitmap.c).
 * The second stage: uses util/ and the reader's sample (read/read.h); never
 * aggregate/, view/ or the driver (report/driver/), which calls it.
 */
#ifndef AUTOPROF_REPORT_MODEL_H
#define AUTOPROF_REPORT_MODEL_H

#include <elfutils/libdw.h>
#include <gelf.h>

#include "read/read.h"
#include "util/util.h"

/* ---- dso.c + symbols.c + demangle.c + srcline.c ---- */

struct sym {
	u64 start, end; /* [start, end) in the ELF's virtual addresses */
	const char *name;
};

struct symtab {
	struct sym *syms;
	size_t nr;
	char *names; /* one arena for all names */
};

struct load_seg {
	u64 offset, filesz, vaddr;
};

struct dwarf_handle; /* srcline.c */

#define BUILD_ID_MAX 64

struct dso {
	char *path;
	const char *short_name; /* basename, points into path (or into own_name) */
	char *own_name;		/* "[JIT] tid PID" for a perf map, as perf shows it */
	u32 id;
	bool special; /* [vdso], [heap], //anon ...: never opened */
	bool jitmap;  /* a /tmp/perf-PID.map: text symbols at absolute addresses */
	bool loaded;  /* load attempted */
	bool missing; /* the file could not be opened */
	bool dw_tried;
	struct dwarf_handle *dw;
	char build_id[2 * BUILD_ID_MAX + 1]; /* as recorded (hex), or "" */
	struct symtab symtab;
	struct load_seg *segs;
	size_t nr_segs;
};

/* A build id recorded for an object no dso stands for yet. */
struct dso_build_id {
	char *path;
	char hex[2 * BUILD_ID_MAX + 1];
};

struct dsos {
	struct dso **v;
	size_t nr, cap;
	struct kvmap by_hash; /* path hash -> first index, chained by linear scan */
	/* build ids of objects not seen yet: path hash -> index in ids */
	struct kvmap ids_by_hash;
	struct dso_build_id *ids;
	size_t nr_ids, cap_ids;
	bool no_load; /* never open files named in the data (fuzzing) */
};

struct dso *dsos__findnew(struct dsos *d, const char *path, size_t len);
/* Record build id @hex for the object named @path (the first given is kept). 0 or -ENOMEM. */
int dsos__set_build_id(struct dsos *d, const char *path, size_t len, const char *hex);
/* True if @dso has a file to read symbols from (a path, or [vdso] with a build id). */
bool dso__has_file(const struct dso *dso);
void dsos__exit(struct dsos *d);
void dso__load(struct dso *dso, bool no_load);
const struct sym *dso__find_sym(struct dso *dso, u64 file_off, bool no_load);
int dso__vaddr(const struct dso *dso, u64 file_off, u64 *vaddr);

int symbols__load(struct dso *dso);
const struct sym *symbols__lookup(const struct symtab *t, u64 vaddr);
void symbols__exit_table(struct symtab *t);
char *demangle__name(const char *name);
void demangle__set_full(bool full);
bool demangle__full(void);
void cxxname__shorten(char *s);
void cxxname__fit(const char *name, char *buf, size_t len);

/* ---- elffile.c: object files and their separate debug files ---- */

struct elf_handle {
	int fd;
	Elf *elf;
};

int elffile__open(struct elf_handle *eh, const char *path);
void elffile__close(struct elf_handle *eh);
Elf_Scn *elffile__section(Elf *elf, Elf64_Word type, GElf_Shdr *shdr);
Elf_Scn *elffile__section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr);
size_t elffile__build_id(Elf *elf, char hex[2 * BUILD_ID_MAX + 1]);
int elffile__add_debug_dir(const char *dir);
bool elffile__debug_file(const struct dso *dso, Elf *elf, struct elf_handle *eh);
int elffile__open_object(const struct dso *dso, struct elf_handle *eh);
int elffile__open_dwarf(const struct dso *dso, int *fd, void **elf);

/* ---- buildid.c: perf's build-id cache and this machine's vdso ---- */

bool buildid__same(const char *file_hex, const char *recorded);
int buildid__cache_path(const char *hex, const char *name, char *buf, size_t len);
bool buildid__own_vdso(struct elf_handle *eh, const char *hex);
/* The files were recorded on this kernel: a [vdso] without a build id is this machine's. */
void buildid__host_vdso(bool same_kernel);
/* A [vdso] recorded with build id @hex ("" for none) can be opened. */
bool buildid__vdso_known(const char *hex);

/* ---- dwarf_lazy.c: compressed DWARF unpacked a CU at a time ---- */

struct dwarf_lazy;
struct dwarf_lazy *dwarf_lazy__open(Elf *elf, bool plain);
bool dwarf_lazy__unread(const char *name);
/* The Dwarf (valid until the next call) and CU DIE of @vaddr, or NULL. */
Dwarf *dwarf_lazy__cu(struct dwarf_lazy *dl, u64 vaddr, Dwarf_Die *cudie);
/* All of .debug_info unpacked (*len bytes, owned by @dl), or NULL. */
const void *dwarf_lazy__all(struct dwarf_lazy *dl, u64 *len);
void dwarf_lazy__close(struct dwarf_lazy *dl);

/* ---- cachedir.c: the report's cache folder, trusted only when ours alone ---- */

/* True when @fd (opened without following a link) is this user's: a directory no one else may
 * write, or a regular file. */
bool cachedir__ours(int fd, bool dir);
/* $XDG_CACHE_HOME/autoprof (else ~/.cache/autoprof) opened, made (0700) with @mkdirs: a descriptor
 * when cachedir__ours(), else -1. */
int cachedir__open(bool mkdirs);
/* Folder @name in @parent (closed; -1 gives -1), made (0700) with @mkdirs: a descriptor when
 * cachedir__ours(), else -1. */
int cachedir__sub(int parent, const char *name, bool mkdirs);
/* File @name in folder @dir opened to read, no link followed: a descriptor when cachedir__ours(),
 * else -1. */
int cachedir__file(int dir, const char *name);
/* A new temporary file "@name.<suffix>" in @dir (its name into @tmp, @len bytes), opened to write:
 * a descriptor or -1. */
int cachedir__tmp(int dir, const char *name, char *tmp, size_t len);

/* ---- debugcache.c: compressed debug files kept unpacked, by build id ---- */

struct debugcache_key {
	char hex[2 * BUILD_ID_MAX + 1]; /* the file's build id */
	u64 info_size;			/* its .debug_info, unpacked */
	u32 sections;			/* CRC of its kept sections' names, types, unpacked sizes */
	u32 nr_sections;		/* how many */
};

bool debugcache__wanted(Elf *elf, struct debugcache_key *key);
int debugcache__open(const struct debugcache_key *key, int *fd, Elf **elf);
void debugcache__store(Elf *src, const struct debugcache_key *key, const void *info);

/* ---- jitmap.c ---- */

bool jitmap__is_anon(const char *name, size_t len);
bool jitmap__is_path(const char *path);
int jitmap__load(struct dso *dso);

#define SRCLINE_MAX 512
int srcline__find(struct dso *dso, u64 vaddr, bool inlines, char *buf, size_t len);
void srcline__close(struct dso *dso);

/* One function inlined at an address: its shown name and where it is defined. */
struct inline_frame {
	char *name; /* malloc'ed */
	char *decl; /* "file.c:12" where the function is defined (malloc'ed), or NULL */
};

#define MAX_INLINE_DEPTH 16
int srcline__inlines(struct dso *dso, u64 vaddr, struct inline_frame *out, int max);
int srcline__find_depth(struct dso *dso, u64 vaddr, u32 depth, char *buf, size_t len);

/* ---- kallsyms.c ---- */

struct ksym {
	u64 addr;
	const char *name;
};

struct kallsyms {
	struct ksym *syms;
	size_t nr;
	char *arena;
	u64 text; /* address of _text, 0 if not listed */
	bool loaded;
};

int kallsyms__load(struct kallsyms *k, const char *path);
int kallsyms__load_cached(struct kallsyms *k);
const struct ksym *kallsyms__lookup(const struct kallsyms *k, u64 addr);
void kallsyms__exit(struct kallsyms *k);

/*
 * The kernel symbols of a session: /proc/kallsyms read by a thread of its
 * own while the records are read (prefetch), used only once enabled (the
 * files' kernel map fits this machine), relocated by that map's pgoff.
 */
struct kernel_syms {
	struct kallsyms k;
	pthread_t thread;
	bool running;	 /* the prefetch thread is to be joined */
	bool enabled;	 /* kernel addresses are to be named through k */
	bool ready;	 /* k loaded and reloc set */
	u64 pgoff;	 /* the kernel MMAP's pgoff: where _text was in the file */
	u64 reloc;	 /* added to file addresses to get /proc/kallsyms ones */
	char path[4096]; /* the kallsyms file to read instead of /proc/kallsyms, or "" */
};

void kallsyms__prefetch(struct kernel_syms *ks);
void kallsyms__enable(struct kernel_syms *ks, u64 pgoff, const char *path);
bool kallsyms__ready(struct kernel_syms *ks);
const struct ksym *kallsyms__find(const struct kernel_syms *ks, u64 addr);
void kallsyms__syms_exit(struct kernel_syms *ks);

/* ---- unwind_dwarf.c: user stacks of --call-graph dwarf samples, through libdw ---- */

/* The deepest stack kept: a SAMPLE record is at most 64 KiB, so 8192 u64s. */
#define MAX_FRAMES 8192

struct unwinder;
struct proc;

struct unwinder *unwind_dwarf__new(void);
int unwind_dwarf__user(struct unwinder *uw, struct proc *p, const struct sample *s,
		       const struct user_stack *us, bool no_load, const u64 **out, u32 max,
		       u32 *nr);
u64 unwind_dwarf__failed(const struct unwinder *uw);
void unwind_dwarf__free(struct unwinder *uw);

/* ---- machine.c ---- */

#define TIME_NEVER UINT64_MAX

struct map {
	u64 start, end, pgoff;
	u64 time, end_time; /* valid from time (0: always) until end_time (an exec) */
	u32 epoch;	    /* how many execs of the process came before it */
	/* From time until stable_until no map of its epoch lies over it: it is
	 * the map of all its addresses (machine__finish(), machine__map_decides()). */
	u64 stable_until;
	struct dso *dso;
};

struct proc {
	u32 pid;
	u32 fork_epoch;	     /* epoch of the fork: the parent's maps count only within it */
	struct proc *parent; /* forked from */
	u64 fork_time;
	u64 exit_time; /* TIME_NEVER: no EXIT record */
	bool has_fork;
	struct map *maps;
	size_t nr_maps, cap_maps;
	u64 *execs; /* exec times, increasing */
	size_t nr_execs, cap_execs;
	u64 *max_end; /* prefix maximum of map ends, after machine__finish() */
	bool simple;  /* maps of one epoch never overlap: (epoch, addr) decides the map */
	const struct map *last;
	struct kvmap same; /* (start, end) -> index of the last map of that range added */
};

/* A name a thread took at a time (COMM records over time; an exec renames). */
struct comm_at {
	u64 time;
	char comm[32];
};

struct thread {
	u32 pid, tid;
	char comm[32];	       /* its last name */
	struct comm_at *names; /* every name it had, by time */
	size_t cap_names;
	u32 nr_names;
};

/* The kernel's text mapping, from a "[kernel.kallsyms]..." MMAP of pid -1. */
struct kmap {
	bool present;
	u64 start, end, pgoff;
};

/* The pid of the kernel's own maps (modules): perf's MMAPs of pid -1 */
#define MACHINE_KERNEL_PID UINT32_MAX

struct machine {
	struct proc **procs;
	size_t nr_procs, cap_procs;
	struct kvmap proc_idx; /* pid -> index */
	struct thread *threads;
	size_t nr_threads, cap_threads;
	struct kvmap thread_idx; /* tid -> index */
	struct dsos dsos;
	struct kmap kmap;
	bool comm_changes; /* some thread had two names: samples look theirs up by time */
	bool has_modules;  /* kernel modules' maps, in process MACHINE_KERNEL_PID */
};

int machine__mmap(struct machine *m, u32 pid, u64 start, u64 len, u64 pgoff, const char *name,
		  size_t name_len, bool exec, u64 time);
int machine__comm(struct machine *m, u32 pid, u32 tid, const char *comm, size_t len, bool exec,
		  u64 time);
int machine__fork(struct machine *m, u32 pid, u32 ppid, u32 tid, u32 ptid, u64 time);
int machine__exit_task(struct machine *m, u32 pid, u32 tid, u64 time);
int machine__finish(struct machine *m);
struct proc *machine__find_proc(const struct machine *m, u32 pid);
const struct thread *machine__find_thread(const struct machine *m, u32 tid);
const char *machine__comm_of(const struct machine *m, u32 pid, u32 tid);
u32 machine__comm_idx_slow(const struct machine *m, u32 tid, u64 time);

/*
 * Which of thread @tid's names it had at @time, for machine__task_comm():
 * 0 (its last name) unless some thread of the machine changed its name.
 */
static inline u32 machine__comm_idx(const struct machine *m, u32 tid, u64 time)
{
	return m->comm_changes ? machine__comm_idx_slow(m, tid, time) : 0;
}

/* The name of thread @tid of @pid as machine__comm_idx() gave it (@idx). */
const char *machine__task_comm(const struct machine *m, u32 pid, u32 tid, u32 idx);
u32 machine__proc_epoch(const struct proc *p, u64 time);
const struct map *machine__proc_find_map(struct proc *p, u64 addr, u64 time, u32 epoch);
bool machine__map_decides(const struct map *mp, u64 time);
void machine__exit(struct machine *m);

#endif /* AUTOPROF_REPORT_MODEL_H */
