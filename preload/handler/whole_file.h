/* SPDX-License-Identifier: MIT */
/*
 * whole_file.h - files that appear only whole (whole_file.c): made unnamed
 * in their directory (O_TMPFILE), written, then linked at their name, so
 * that neither a reader nor the end of the process finds one half made.
 */
#ifndef AUTOPROF_HANDLER_WHOLE_FILE_H
#define AUTOPROF_HANDLER_WHOLE_FILE_H

/*
 * An unnamed file (mode 0600) in path's directory, dir a scratch of PATH_MAX
 * bytes: fd or -errno (-EOPNOTSUPP, not tried, where no way of naming one is
 * open to this process). Async-signal-safe.
 */
int whole_file__open(const char *path, char *dir);

/*
 * Give the unnamed file on fd its name, path, never over a file there
 * (-EEXIST). 0 or -errno; -ENOLINK: it cannot be named (make a file by its
 * name instead). Async-signal-safe.
 */
int whole_file__link(int fd, const char *path);

#endif
