/* SPDX-License-Identifier: MIT */
/*
 * image.c - the process image as its handlers see it: what the session
 * registers before the sampling handler is installed (image__register), and
 * nothing else. A `autoprof ctl` request (control_request.c) and a window's
 * end (windows.c) run from any thread's handler, one with no sampler of its
 * own too, and reach the image only through this.
 */
#include "handler.h"
#include "setup.h"

static struct ap_image image;

/*
 * Register what the handlers may read and call of the image (copied). Before
 * the sampling handler is installed. Not async-signal-safe.
 */
void image__register(const struct ap_image *img)
{
	image = *img;
}

/* The image as registered (all NULL before). Async-signal-safe. */
const struct ap_image *image__get(void)
{
	return &image;
}
