/* SPDX-License-Identifier: MIT */
/*
 * driver.h - what the files of report/driver/ share, private to them:
 *   session.c       the session: files added, both passes driven, totals
 *   sideband.c      pass 1: records counted, side-band records applied to the machine
 *   samples.c       pass 2: samples resolved and counted
 *   onewalk.c       both passes of one file in (mostly) one walk
 *   stat_sibling.c  the counter totals in FILE.stat beside a profile
 *   memory_events.c the objects events derived from the memory events
 */
#ifndef AUTOPROF_REPORT_DRIVER_H
#define AUTOPROF_REPORT_DRIVER_H

#include "driver/session.h"

/* ---- session.c ---- */

/* Name the attrs of @pf (EVENT_DESC, else from type/config) and give each its hist. */
int session__name_attrs(struct session *s, struct perf_file *pf);

/* ---- sideband.c: pass 1 ---- */

/* True if @misc's cpumode is the kernel's (or the guest kernel's). */
bool sideband__kernel_mode(u16 misc);
/* True for the side-band records pass 1 collects to build the machine. */
bool sideband__is_side(u32 type);
/* Count record @r of file @fi; keep it in @sd if side-band. Returns 0 or -errno. */
int sideband__scan_record(struct session *s, u32 fi, struct sides *sd, const struct record *r);
/*
 * Pass 1 over file @fi from *pos. With @gap not 0, stops early at a
 * checkpoint (returns 1, *pos there) once @gap bytes of records followed the
 * last side-band record. Returns 0 at the end, or -errno.
 */
int sideband__scan_file(struct session *s, u32 fi, struct sides *sd, u64 *pos, u64 gap);
/* Apply side-band record @rp of @sd to the machine. Returns 0 or -errno. */
int sideband__apply(struct session *s, const struct sides *sd, const struct rec_pos *rp);
/* Build the machine from @sd (sorted by time) and set up pass 2. Returns 0 or -errno. */
int sideband__build_machine(struct session *s, struct sides *sd);

/* ---- samples.c: pass 2 ---- */

/* Resolve and count SAMPLE @r of @pf, if the filters keep it. Returns 0 or -errno. */
int samples__one(struct session *s, const struct perf_file *pf, const struct record *r);
/* Pass 2 over the records of @pf before offset @end. Returns 0 or -errno. */
int samples__file(struct session *s, struct perf_file *pf, u64 end);

/* ---- onewalk.c: both passes of one file in one walk ---- */

/* True if session @s may take the one-walk path. */
bool onewalk__fits(const struct session *s);
/*
 * Both passes over the one file of @s in (mostly) one walk. Returns 1 if
 * done, 0 if pass 1 went to the end instead (the caller goes on as for two
 * passes), or -errno.
 */
int onewalk__process(struct session *s, struct sides *sd);

/* ---- stat_sibling.c: FILE.stat, the counter totals beside an autoprof profile ---- */

int stat_sibling__read(struct session *s, u32 fi);
bool stat_sibling__seen(const struct session *s, const char *path);

/*
 * memory_events.c: after sample @smp of @pf was counted at @frames (@nr
 * locations), count a memory event's objects (period / weight, rounded, at
 * least 1) as a sample of its objects event at the same stack. 0 or -ENOMEM.
 */
/* A memory record of period 0 (a retired live set, an empty one's mark)? Counts it. */
bool memory_events__weightless(struct session *s, const struct perf_file *pf,
			       const struct sample *smp);
/*
 * Attr @name of @pf the library's mark of a memory profile asked for and not
 * recorded (AP_MEMORY_MARK...)? Then one warning says why (once per reason).
 */
void memory_events__note_mark(struct session *s, const struct perf_file *pf, const char *name);
int memory_events__count(struct session *s, const struct perf_file *pf, const struct sample *smp,
			 u32 comm, const u32 *frames, u32 nr);

#endif /* AUTOPROF_REPORT_DRIVER_H */
