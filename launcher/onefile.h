/* SPDX-License-Identifier: MIT */
/*
 * onefile.h - one run, one file: under the launcher the per-image files the
 * library writes are merged into the output at the end (onefile.c, with
 * onefile_merge.c).
 */
#ifndef AUTOPROF_ONEFILE_H
#define AUTOPROF_ONEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the merge wrote. */
struct onefile_merged {
	uint64_t records, attrs, build_ids;
	uint64_t first_time, last_time; /* of the records with a time */
	unsigned remapped_files;	/* inputs whose event ids had to change */
};

/*
 * Merge the perf.data files @paths (@nr of them, the run's first process's
 * first) into the new file @out (created with O_EXCL, mode 0600): one header;
 * attrs that are equal kept once with the union of their ids (an id that
 * another attr already has is given a new number, in every record that
 * carries it); every record of every input, sorted by time (a record that
 * has none, or 0, takes the time of the next record of its file that has
 * one, so that its process's maps arrive in order); the features of the
 * first input, with the build ids of all, EVENT_DESC of the merged attrs,
 * the span of all sample times, and @argv (NULL-terminated: the command as
 * the user gave it) as CMDLINE after "autoprof" (NULL: the first input's
 * CMDLINE). Returns 0, or -errno with
 * one line in @why (@out is then removed). Not async-signal-safe.
 */
int onefile_merge__files(const char *const *paths, size_t nr, const char *out, char *const *argv,
			 struct onefile_merged *res, char *why, size_t cap);

/*
 * Before the command runs: unless per-image files were asked for
 * (--per-process, AUTOPROF_PER_PROCESS=1, an -o with %p), the run has
 * windows (merged one at a time: onefile_windows__begin()) or only
 * one image is profiled (--follow 0), note the run's start, for
 * onefile__finish() to merge the files the run writes. Returns 0.
 */
int onefile__begin(const char *output);
/* Does process @pid run (not a zombie)? Unknown (no /proc) counts as yes. */
bool onefile__alive(int pid);
/* Does live process @pid's control endpoint name a file other than @name (a base name in
 * OUTPUT's folder): the image that wrote @name ended at an exec, its file is whole? False
 * when it has no endpoint here. */
bool onefile_live__moved_on(int pid, const char *name);

/*
 * How many processes of this run (started since the launcher) still run
 * whose file OUTPUT.PID[.N] in @dir (@base: OUTPUT's name) is not among the
 * live files the caller found (@has_file: not made yet, or made since), by
 * their control endpoints (onefile_live.c); in @not_started, those
 * of the command's tree that run without the library started (no endpoint
 * after a wait of at most a quarter second, and no file: @has_file), not
 * counted in the result. Not async-signal-safe.
 */
unsigned onefile_live__unwritten(const char *dir, const char *base, bool (*has_file)(int pid),
				 unsigned *not_started);
/* Split @output into its folder ("." when it has none) and its name. */
void onefile__split(const char *output, char *dir, size_t dir_cap, char *base, size_t base_cap);
/*
 * After the command ended: merge the run's per-image files (OUTPUT,
 * OUTPUT.PID, OUTPUT.PID.N written since onefile__begin()) into OUTPUT,
 * take the first process's last .stat as OUTPUT.stat, remove the merged
 * files. The file of a process still alive is left as it is (said in one
 * line unless @quiet); a merge that fails leaves every file and says so.
 * @argv: the command, for the file's CMDLINE. No-op without onefile__begin().
 */
void onefile__finish(char *const *argv, int quiet);
/*
 * Before the command runs, with --window (not --per-process, no %p in
 * @output, --follow): pass the run's window epoch to the library
 * (AUTOPROF_WINDOW_EPOCH) so that every process's windows line up, and have
 * the run's windows merged, one file per window (onefile_windows.c). @argv:
 * the command, for the files' CMDLINE.
 */
void onefile_windows__begin(const char *output, char *const *argv, int quiet);
/* Start merging each window as it ends (a thread), after onefile_windows__begin(). */
void onefile_windows__start(void);
/*
 * After the command ended: merge every window left (the files of processes
 * that outlive the command stay, said in one line), hooks run. No-op unless begun.
 */
void onefile_windows__finish(void);
/* Did onefile_windows__finish() merge the run's windows (for the closing lines)? */
bool onefile_windows__merged(void);
/* `autoprof merge -o OUT FILE...` (merge_cmd.c). Returns the exit status. */
int merge_cmd__run(int argc, char **argv);
/*
 * The summary onefile__finish() read of the run's file @dir/@name into @s,
 * when that file is still as it was read: not merged into OUTPUT, its
 * process gone. False otherwise (read it again).
 */
struct file_summary;
bool onefile__summary(const char *dir, const char *name, struct file_summary *s);
/* The closing lines' extra: the images the merged file holds (after onefile__finish). */
void onefile__say_images(int quiet);

#endif
