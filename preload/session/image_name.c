/* SPDX-License-Identifier: MIT */
/*
 * image_name.c - where an image's file goes (the naming rules at the top of
 * lifecycle.c): the output pattern expanded for this process and image, and
 * the file written beside the one the image before left at that name, which
 * it then replaces.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Expand %p (pid) and %% in pattern into out. Returns 0 or -ENAMETOOLONG. */
static int expand_output(const char *pattern, pid_t pid, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		int w;

		if (p[0] == '%' && p[1] == 'p') {
			w = snprintf(out + n, cap - n, "%d", (int)pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			w = snprintf(out + n, cap - n, "%%");
			p++;
		} else {
			w = snprintf(out + n, cap - n, "%c", *p);
		}
		if (w < 0 || (size_t)w >= cap - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	return 0;
}

/* Where this image's file goes; see the naming rules at the top. */
int image_name__path(char *out, size_t cap)
{
	const char *pattern = autoprof.cfg->output;
	size_t n;

	if (expand_output(pattern, autoprof.pid, out, cap))
		return -ENAMETOOLONG;
	n = strlen(out);
	if (!strstr(pattern, "%p") && !(autoprof.top && autoprof.gen == 0))
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, ".%d", (int)autoprof.pid);
	if (autoprof.gen > 0 && n < cap)
		n += (size_t)snprintf(out + n, cap - n, ".%d", autoprof.gen);
	return n < cap ? 0 : -ENAMETOOLONG;
}

/*
 * Where the file is written first: path itself, or, when it replaces the
 * file the image before left there (autoprof.replace_file), a name beside
 * it that is renamed over it once the file is finished (image_name__replace_left()).
 * Returns 0 or -ENAMETOOLONG.
 */
int image_name__first_path(const char *path, char *out, size_t cap)
{
	int n = autoprof.replace_file ? snprintf(out, cap, "%s.%d.new", path, (int)autoprof.pid)
				      : snprintf(out, cap, "%s", path);

	return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

/*
 * The finished file written beside path takes path's place, in one rename:
 * the run's file is there at every moment. Returns 0 or -errno.
 */
int image_name__replace_left(const char *path)
{
	struct writer *w = &autoprof.writer;

	if (!autoprof.replace_file)
		return 0;
	autoprof.replace_file = false;
	if (rename(w->path, path) < 0)
		return -errno;
	snprintf(w->path, sizeof(w->path), "%s", path);
	return 0;
}

/*
 * Say why the image's first records were not written: the file they make
 * (fresh; writer.c) could not be made, or was and could not be written
 * (path), or, with no error of the writer's, the mappings could not be read.
 */
void image_name__say_unwritten(const char *path, const char *fresh, int err)
{
	if (writer__created(&autoprof.writer))
		pr_warn("cannot write %s: %s; not profiling", path, strerror(-err));
	else if (__atomic_load_n(&autoprof.writer.error, __ATOMIC_RELAXED))
		pr_warn("cannot create %s: %s; not profiling", fresh, strerror(-err));
	else
		pr_warn("cannot read /proc/self/maps: %s; not profiling", strerror(-err));
}
