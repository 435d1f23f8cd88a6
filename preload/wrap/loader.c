/* SPDX-License-Identifier: MIT */
/*
 * loader.c - the loader functions we wrap (handler/objects.c keeps the table):
 *  - dl_iterate_phdr: the loader's, except while this thread unwinds in the
 *    sampling handler: then our table answers, without the loader's lock;
 *  - dlclose: the table's readers are kept out while the loader unmaps.
 * dlopen and dlmopen are not wrapped: glibc searches the RUNPATH ($ORIGIN) of
 * their caller, which must stay the program's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>

#include "wrap.h"

typedef int (*iterate_cb)(struct dl_phdr_info *, size_t, void *);
static int (*real_iterate)(iterate_cb, void *);
static int (*real_dlclose)(void *);

/*
 * dl_iterate_phdr: the loader's own, except while this thread unwinds in the
 * sampling handler, where the table answers without any lock (then
 * async-signal-safe). Not instrumented by sanitizers: their runtimes call it
 * before they are set up.
 */
AP_API __attribute__((no_sanitize("address", "undefined"))) int dl_iterate_phdr(iterate_cb cb,
										void *data)
{
	if (objects__ready() && unwind__in_handler())
		return objects__iterate(cb, data);
	if (!real_iterate)
		real_iterate = (int (*)(iterate_cb, void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
	return real_iterate ? real_iterate(cb, data) : 0;
}

/*
 * dlclose: keep the table's readers out while the loader unmaps, write the
 * records of objects the file lacks first (they may be unloaded now), then
 * drop what was unloaded. errno and dlerror() are the real call's.
 * Not async-signal-safe.
 */
AP_API int dlclose(void *handle)
{
	int ret, err;
	bool profiled;

	if (!real_dlclose)
		real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!real_dlclose)
		return -1;
	if (!objects__ready())
		return real_dlclose(handle);
	profiled = wrap_in_session();
	objects__before_dlclose(profiled ? &autoprof.writer : NULL, autoprof.pid, autoprof.signo);
	/* Not under any lock of ours: a constructor run by another thread's
	 * dlopen, under the loader's lock, may call dlclose too. */
	ret = real_dlclose(handle);
	err = errno;
	objects__after_dlclose();
	errno = err;
	return ret;
}
