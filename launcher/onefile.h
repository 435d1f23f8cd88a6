/* SPDX-License-Identifier: MIT */
/*
 * onefile.h - one run, one file: under the launcher the library writes its
 * per-image files into a private folder beside the output (onefile.c), and
 * the launcher merges them into the output at the end (onefile_merge.c).
 */
#ifndef AUTOPROF_ONEFILE_H
#define AUTOPROF_ONEFILE_H

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
 * the user gave it) as CMDLINE after "autoprof". Returns 0, or -errno with
 * one line in @why (@out is then removed). Not async-signal-safe.
 */
int onefile_merge(const char *const *paths, size_t nr, const char *out, char *const *argv,
		  struct onefile_merged *res, char *why, size_t cap);

/*
 * Before the command runs: unless per-process files were asked for
 * (--per-process, AUTOPROF_PER_PROCESS=1, an -o with %p, or --window, whose
 * windows are each image's own), make the private folder OUTPUT.parts-PID
 * beside @output and point the library's AUTOPROF_OUTPUT into it. Returns 0
 * (one file or not), or -1 after saying why (the folder cannot be made).
 * @quiet: no line about the folders killed launchers left.
 */
int onefile__begin(const char *output, int quiet);
/*
 * After the command ended (its status in @status, for the closing note):
 * merge the files of the private folder into the output (an existing one
 * moved to OUTPUT.old first, as perf record does), take the run's first
 * process's FILE.stat beside it, and remove the folder. A process of the run
 * still alive keeps its file there (said in one line); a merge that fails
 * leaves the folder as it is and says where. No-op without onefile__begin().
 * @argv: the command, for the file's CMDLINE.
 */
void onefile__finish(char *const *argv, int quiet);
/* The closing lines' extra: the images the merged file holds (after onefile__finish). */
void onefile__say_images(int quiet);

#endif
