/* SPDX-License-Identifier: MIT */
/*
 * objects.c - the program's loaded objects, known without the loader's lock.
 *
 * The sampling handler must never wait on the dynamic loader: libunwind's
 * slow path calls dl_iterate_phdr(), which takes the loader's lock, and a
 * thread in dlopen/dlclose holds that lock while it may wait for something
 * the handler holds. So we keep our own table of loaded objects (address
 * range, load bias, program headers, name, build id):
 *  - filled outside any handler with the real dl_iterate_phdr() (at the start of each file,
 *    around each dlclose, as libunwind is loaded), and from the handler, lock-free, with
 *    glibc's _dl_find_object() for a pc in an object loaded since (dlopen is not wrapped:
 *    its caller must stay the program's, whose RUNPATH and $ORIGIN glibc searches);
 *  - read by our dl_iterate_phdr() (wrap/loader.c) while this thread unwinds in the handler
 *    (unwind__in_handler()), and by the handler to write the MMAP2 record of each object a
 *    sample needs, once per file, stamped with the last time the object was known to be
 *    absent (before its first sample, after the unmapping of whatever was there before);
 *  - protected from dlclose: our dlclose() (wrap/loader.c) raises a "loader busy" count, waits
 *    for the readers in flight, writes the records of objects not yet written (they can be
 *    unloaded now), calls the real dlclose, drops what it unloaded, and lowers the count.
 *    Readers that find the loader busy skip (the unwind, or the record) and count it.
 * Objects whose pc must not be unwound from (the loader, libunwind, libgcc_s's unwinder, this
 * library) are also kept in a small append-only list that is always safe to read.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "objects.h"
#include "pages.h"

/* The slots (about a hundred bytes each: a few pages hold every object a
 * program loads; a lookup's scan stays in them), and their names packed
 * apart, in the order they came (a first touch of a page is a page fault:
 * one per object when each slot held PATH_MAX bytes of its own). */
static struct object table[MAX_OBJECTS] AP_LARGE_BSS;
#define NAMES_BYTES (1 << 20)
static char names[NAMES_BYTES] AP_LARGE_BSS;
static size_t names_used; /* atomic */
static char no_name[1];
static int nr_slots; /* slots ever claimed; atomic */
/* Per slot, apart from the slots (a page for all, not one each, is written by a refresh):
 * the file generation its records went to (atomic), the refresh that saw it last (outside
 * handlers only). */
static int written_gen[MAX_OBJECTS], seen[MAX_OBJECTS];

static struct {
	uintptr_t lo, hi;
	unsigned kind; /* 0 while being filled; atomic */
} special[MAX_SPECIAL];
static int nr_special; /* atomic */

static int busy;	    /* dlclose in progress; atomic */
static int inflight;	    /* readers of the table; atomic */
static int file_gen = 1;    /* bumped when a new file starts; atomic */
static uint64_t sync_time;  /* the last complete refresh began here; atomic */
static uint64_t adds, subs; /* what dl_iterate_phdr reports from the table */
static int refresh_no;
static bool ready;
static uintptr_t self_bias;
static pthread_mutex_t sync_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uint64_t skipped_busy; /* table readers turned away by a dlclose; atomic */
static uint64_t generation;   /* bumped when an object comes or goes (cfi.c); atomic */

typedef int (*iterate_cb)(struct dl_phdr_info *, size_t, void *);
static int (*real_iterate)(iterate_cb, void *);
static int (*find_object)(void *, struct dl_find_object *);

/* The kind of object a path names (enum ap_obj_kind bits). Async-signal-safe. */
static unsigned kind_of(const char *name, uintptr_t bias)
{
	const char *base = name;

	if (bias == self_bias && self_bias)
		return AP_OBJ_SELF;
	for (const char *p = name; *p; p++)
		if (*p == '/')
			base = p + 1;
	if (!strcmp(base, "libautoprof-memory.so")) /* our allocator's wrappers (memory_link.h) */
		return AP_OBJ_SELF;
	if (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld64.so", 7))
		return AP_OBJ_LOADER;
	if (!strncmp(base, "libunwind", 9))
		return AP_OBJ_UNWINDER;
	if (!strncmp(base, "libgcc_s", 8))
		return AP_OBJ_EH;
	return 0;
}

/* Remember [lo, hi) as code of this kind, for good. Async-signal-safe. */
static void add_special(uintptr_t lo, uintptr_t hi, unsigned kind)
{
	int n = __atomic_load_n(&nr_special, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++)
		if (special[i].lo == lo && special[i].hi == hi)
			return;
	n = __atomic_fetch_add(&nr_special, 1, __ATOMIC_ACQ_REL);
	if (n >= MAX_SPECIAL)
		return;
	special[n].lo = lo;
	special[n].hi = hi;
	__atomic_store_n(&special[n].kind, kind, __ATOMIC_RELEASE);
}

/* The special kind of the code at pc (0: ordinary code). Async-signal-safe. */
unsigned objects__kind(uintptr_t pc)
{
	int n = __atomic_load_n(&nr_special, __ATOMIC_ACQUIRE);

	if (n > MAX_SPECIAL)
		n = MAX_SPECIAL;
	for (int i = 0; i < n; i++)
		if (pc >= special[i].lo && pc < special[i].hi)
			return __atomic_load_n(&special[i].kind, __ATOMIC_ACQUIRE);
	return 0;
}

/*
 * Give o room for a name of n bytes (the terminating zero included): the
 * room it had, when large enough (a slot reused by the same object again),
 * else new room from the packed names, else from pages of its own. When
 * nothing is left, the name is empty. Async-signal-safe.
 */
static void name_room(struct object *o, size_t n)
{
	size_t at;
	char *room;

	if (o->name && o->name_cap >= n)
		return;
	n = (n + 7) & ~(size_t)7;
	at = __atomic_fetch_add(&names_used, n, __ATOMIC_RELAXED);
	if (at <= NAMES_BYTES && n <= NAMES_BYTES - at)
		room = names + at;
	else
		room = pages__alloc(n); /* kept by the slot, as arena room is */
	o->name = room ? room : no_name;
	o->name_cap = room ? (uint32_t)n : 1;
}

/*
 * Take a slot and describe the object in it; returns it, or NULL when the
 * table is full. Callers are readers in flight (or hold the loader busy).
 * Async-signal-safe.
 */
static struct object *add_object(uintptr_t bias, const ElfW(Phdr) * phdr, int phnum,
				 const char *name, uint64_t loaded_after)
{
	struct object *o = NULL;
	int n = __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE);
	size_t len;

	for (int i = 0; i < n && i < MAX_OBJECTS && !o; i++) {
		int free_state = SLOT_FREE;

		if (__atomic_compare_exchange_n(&table[i].state, &free_state, SLOT_FILLING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			o = &table[i];
	}
	if (!o) {
		n = __atomic_fetch_add(&nr_slots, 1, __ATOMIC_ACQ_REL);
		if (n >= MAX_OBJECTS) {
			__atomic_store_n(&nr_slots, MAX_OBJECTS, __ATOMIC_RELEASE);
			return NULL;
		}
		o = &table[n];
		__atomic_store_n(&o->state, SLOT_FILLING, __ATOMIC_RELEASE);
	}
	o->bias = bias;
	o->phdr = phdr;
	o->phnum = (uint16_t)phnum;
	o->lo = UINTPTR_MAX;
	o->hi = 0;
	for (int i = 0; i < phnum; i++) {
		if (phdr[i].p_type != PT_LOAD)
			continue;
		if (bias + phdr[i].p_vaddr < o->lo)
			o->lo = bias + phdr[i].p_vaddr;
		if (bias + phdr[i].p_vaddr + phdr[i].p_memsz > o->hi)
			o->hi = bias + phdr[i].p_vaddr + phdr[i].p_memsz;
	}
	len = 0;
	if (name && name[0] != '/' && strchr(name, '/')) {
		/* a relative path the loader was given: make it the file's */
		long got;

		name_room(o, PATH_MAX);
		got = o->name_cap >= PATH_MAX ? raw_syscall(SYS_getcwd, o->name, PATH_MAX - 2) : 0;
		if (got > 0 && o->name[0] == '/') {
			len = strlen(o->name);
			o->name[len++] = '/';
		}
	} else {
		name_room(o, name ? strnlen(name, PATH_MAX - 1) + 1 : 1);
	}
	if (name) {
		size_t rest = strnlen(name, o->name_cap - 1 - len);

		memcpy(o->name + len, name, rest);
		len += rest;
	}
	o->name[len] = 0;
	o->bid_size = 0;
	object_notes__build_id(o);
	object_notes__eh_frame(o);
	o->kind = (uint8_t)kind_of(o->name, bias);
	o->loaded_after = loaded_after;
	seen[o - table] = refresh_no;
	__atomic_store_n(&written_gen[o - table], 0, __ATOMIC_RELAXED);
	adds++;
	if (o->kind)
		for (int i = 0; i < phnum; i++)
			if (phdr[i].p_type == PT_LOAD && (phdr[i].p_flags & PF_X))
				add_special(bias + phdr[i].p_vaddr,
					    bias + phdr[i].p_vaddr + phdr[i].p_memsz, o->kind);
	__atomic_store_n(&o->state, SLOT_READY, __ATOMIC_RELEASE);
	__atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE); /* failures cached for its pcs */
	return o;
}

/* The ready object holding pc, or NULL; hint is where to look first. Async-signal-safe. */
static struct object *find(uintptr_t pc, struct object *hint)
{
	int n = __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE);

	if (hint && pc >= hint->lo && pc < hint->hi)
		return hint;
	if (n > MAX_OBJECTS)
		n = MAX_OBJECTS;
	for (int i = 0; i < n; i++) {
		struct object *o = &table[i];

		if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) == SLOT_READY && pc >= o->lo &&
		    pc < o->hi)
			return o;
	}
	return NULL;
}

/*
 * Learn the object holding pc from the loader's lock-free _dl_find_object()
 * and the ELF header in memory; returns it or NULL. Async-signal-safe.
 */
static struct object *discover(uintptr_t pc)
{
	struct dl_find_object r;
	const ElfW(Ehdr) * eh;
	const ElfW(Phdr) * ph;
	struct object *o;

	if (!find_object || find_object((void *)pc, &r) != 0 || !r.dlfo_link_map)
		return NULL;
	eh = r.dlfo_map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh->e_phnum == 0 || eh->e_phnum > 128 ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(*ph) > PAGE)
		return NULL;
	ph = (const void *)((const char *)eh + eh->e_phoff);
	o = find(pc, NULL); /* another thread's handler may have been first */
	if (o)
		return o;
	return add_object(r.dlfo_link_map->l_addr, ph, eh->e_phnum, r.dlfo_link_map->l_name,
			  __atomic_load_n(&sync_time, __ATOMIC_ACQUIRE));
}

/*
 * Make sure the table knows the object holding pc, if the loader has one
 * (so libunwind can read its unwind tables). Only between objects__enter()
 * and objects__leave(). Async-signal-safe.
 */
void objects__learn(uintptr_t pc)
{
	if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) && !find(pc, NULL))
		discover(pc);
}

/*
 * The .eh_frame_hdr of the object holding pc and the end of the memory
 * after it that may be read: false when unknown. Only between
 * objects__enter() and objects__leave(). Async-signal-safe.
 */
bool objects__eh_frame(uintptr_t pc, const uint8_t **hdr, const uint8_t **end)
{
	struct object *o;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return false;
	o = find(pc, NULL);
	if (!o)
		o = discover(pc);
	if (!o || !o->eh_hdr)
		return false;
	*hdr = o->eh_hdr;
	*end = o->eh_end;
	return true;
}

/*
 * Enter as a reader of the table; false (and counted) while a dlclose is in
 * progress, in which case the caller must not read it. Async-signal-safe.
 */
bool objects__enter(void)
{
	__atomic_fetch_add(&inflight, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&busy, __ATOMIC_SEQ_CST))
		return true;
	__atomic_fetch_sub(&inflight, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&skipped_busy, 1, __ATOMIC_RELAXED);
	return false;
}

/* Leave after objects__enter() returned true. Async-signal-safe. */
void objects__leave(void)
{
	__atomic_fetch_sub(&inflight, 1, __ATOMIC_SEQ_CST);
}

/*
 * A number that changes whenever an object is added to the table or dropped
 * from it: rules cached by pc (cfi.c) are valid while it stays the same.
 * Async-signal-safe.
 */
uint64_t objects__generation(void)
{
	return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

/* Count a sample whose stack is skipped: a dlclose was in progress. Async-signal-safe. */
void objects__skipped(void)
{
	__atomic_fetch_add(&skipped_busy, 1, __ATOMIC_RELAXED);
}

/* Samples whose stack or records were skipped because a dlclose was in progress. */
uint64_t objects__skipped_busy(void)
{
	return __atomic_load_n(&skipped_busy, __ATOMIC_RELAXED);
}

/* Keep table readers out (and wait for those in flight). Not async-signal-safe. */
static void quiesce(void)
{
	__atomic_fetch_add(&busy, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&inflight, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void unquiesce(void)
{
	__atomic_fetch_sub(&busy, 1, __ATOMIC_SEQ_CST);
}

static int refresh_one(struct dl_phdr_info *info, size_t size, void *prev_sync)
{
	int n = __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE);
	(void)size;

	if (n > MAX_OBJECTS)
		n = MAX_OBJECTS;
	for (int i = 0; i < n; i++) {
		struct object *o = &table[i];

		if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) == SLOT_READY &&
		    o->bias == info->dlpi_addr && o->phdr == info->dlpi_phdr) {
			seen[i] = refresh_no;
			return 0;
		}
	}
	add_object(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, info->dlpi_name,
		   *(uint64_t *)prev_sync);
	return 0;
}

/*
 * Add every loaded object the table lacks (stamped with the previous
 * refresh's time), and, with prune (loader busy, no reader in flight), free
 * the slots of objects no longer loaded. Caller holds sync_lock.
 * Not async-signal-safe.
 */
static void refresh(bool prune)
{
	uint64_t prev = __atomic_load_n(&sync_time, __ATOMIC_ACQUIRE);
	bool pruned = false;
	int n;

	refresh_no++;
	__atomic_store_n(&sync_time, ap_now(), __ATOMIC_RELEASE);
	real_iterate(refresh_one, &prev);
	if (!prune)
		return;
	n = __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n && i < MAX_OBJECTS; i++)
		if (__atomic_load_n(&table[i].state, __ATOMIC_ACQUIRE) == SLOT_READY &&
		    seen[i] != refresh_no) {
			__atomic_store_n(&table[i].state, SLOT_FREE, __ATOMIC_RELEASE);
			subs++;
			pruned = true;
		}
	/* Another object may be loaded where this one was: libunwind must not
	 * keep frame layouts of the unloaded code (none while it is not set up). */
	if (pruned) {
		unwind__flush_cache();
		__atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE); /* nor cfi.c its rules */
	}
}

static void after_fork_child(void)
{
	sync_lock = (pthread_mutex_t)PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP; /* as it was made */
	__atomic_store_n(&busy, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&inflight, 0, __ATOMIC_SEQ_CST);
}

/*
 * Find the real loader functions and fill the table from the loader's list,
 * once. Not async-signal-safe.
 */
void objects__init(void)
{
	Dl_info self;

	if (ready)
		return;
	real_iterate = (int (*)(iterate_cb, void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
	find_object =
	    (int (*)(void *, struct dl_find_object *))dlsym(RTLD_DEFAULT, "_dl_find_object");
	if (dladdr((void *)objects__init, &self) && self.dli_fbase) {
		struct link_map *lm = NULL;

		if (dladdr1((void *)objects__init, &self, (void **)&lm, RTLD_DL_LINKMAP) && lm)
			self_bias = lm->l_addr;
	}
	if (!real_iterate)
		return;
	pthread_mutex_lock(&sync_lock);
	refresh(false);
	pthread_mutex_unlock(&sync_lock);
	ap_atfork(NULL, NULL, after_fork_child);
	__atomic_store_n(&ready, true, __ATOMIC_RELEASE);
}

/*
 * Enter the objects loaded since the last refresh into the table (libunwind
 * as unwind_lib.c loads it); for a new file, whose first records describe
 * every mapping there is (mappings.c), every object now loaded counts as
 * written to it. Not async-signal-safe.
 */
void objects__refresh(bool new_file)
{
	int gen, n;

	objects__init();
	if (!ready)
		return;
	pthread_mutex_lock(&sync_lock);
	refresh(false);
	gen = new_file ? __atomic_add_fetch(&file_gen, 1, __ATOMIC_ACQ_REL) : 0;
	n = gen ? __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE) : 0;
	for (int i = 0; i < n && i < MAX_OBJECTS; i++)
		__atomic_store_n(&written_gen[i], gen, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&sync_lock);
}

/*
 * The build id of the object mapped at addr, into id (20 bytes); returns its
 * size, 0 if unknown. Not async-signal-safe.
 */
unsigned objects__build_id(uintptr_t addr, uint8_t *id)
{
	struct object *o;
	unsigned n = 0;

	if (!ready || !objects__enter())
		return 0;
	o = find(addr, NULL);
	if (o && o->bid_size) {
		n = o->bid_size;
		memcpy(id, o->bid, n);
	}
	objects__leave();
	return n;
}

/*
 * dl_iterate_phdr() answered from the table, lock-free: only while this
 * thread unwinds in the handler, a reader in flight. Async-signal-safe.
 */
int objects__iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	int n = __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE), ret = 0;

	for (int i = 0; i < n && i < MAX_OBJECTS && !ret; i++) {
		struct object *o = &table[i];
		struct dl_phdr_info info;

		if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) != SLOT_READY)
			continue;
		memset(&info, 0, sizeof(info));
		info.dlpi_addr = o->bias;
		info.dlpi_name = o->name;
		info.dlpi_phdr = o->phdr;
		info.dlpi_phnum = o->phnum;
		info.dlpi_adds = adds;
		info.dlpi_subs = subs;
		ret = cb(&info, sizeof(info), data);
	}
	return ret;
}

/* Whether the table is set up (objects__init ran). Async-signal-safe. */
bool objects__ready(void)
{
	return __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
}

/*
 * Before the real dlclose: keep the table's readers out (waiting for those in
 * flight), then, when this process is profiled into w (NULL: not), write the
 * records of objects its file lacks, which may be unloaded now (pid the
 * process's, signo the sampling signal). Not async-signal-safe.
 */
void objects__before_dlclose(struct writer *w, pid_t pid, int signo)
{
	quiesce();
	if (w) {
		pthread_mutex_lock(&sync_lock);
		refresh(false);
		object_records__write_unwritten(w, pid, signo);
		pthread_mutex_unlock(&sync_lock);
	}
}

/* After the real dlclose: drop what it unloaded, let readers in. Not async-signal-safe. */
void objects__after_dlclose(void)
{
	pthread_mutex_lock(&sync_lock);
	refresh(true);
	pthread_mutex_unlock(&sync_lock);
	unquiesce();
}

/*
 * A window's new file starts (windows.c): every object's MMAP2 records go
 * into it again, each before the first sample that needs it.
 * Async-signal-safe.
 */
void objects__next_window(void)
{
	__atomic_add_fetch(&file_gen, 1, __ATOMIC_ACQ_REL);
}

/* The object holding pc (found, or discovered since the last refresh), or NULL. Async-signal-safe.
 */
struct object *objects__lookup(uintptr_t pc, struct object *hint)
{
	struct object *o = find(pc, hint);

	return o ? o : discover(pc);
}

/* How many slots were ever claimed (objects__at's bound). Async-signal-safe. */
int objects__count(void)
{
	int n = __atomic_load_n(&nr_slots, __ATOMIC_ACQUIRE);

	return n < MAX_OBJECTS ? n : MAX_OBJECTS;
}

/* The object in slot i when it is ready, else NULL. Async-signal-safe. */
struct object *objects__at(int i)
{
	return __atomic_load_n(&table[i].state, __ATOMIC_ACQUIRE) == SLOT_READY ? &table[i] : NULL;
}

/* The file generation o's MMAP2 records went to (atomic). Async-signal-safe. */
int *objects__written_gen(const struct object *o)
{
	return &written_gen[o - table];
}

/* The generation of the current file (records are written once per generation). Async-signal-safe.
 */
int objects__file_gen(void)
{
	return __atomic_load_n(&file_gen, __ATOMIC_ACQUIRE);
}
