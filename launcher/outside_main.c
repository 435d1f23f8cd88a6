/* SPDX-License-Identifier: MIT */
/*
 * outside_main.c - autoprof-outside's main: the whole launcher (launcher.c)
 * with the modes that profile from outside (--outside, static and Go
 * programs, -p/-t, `autoprof top`). autoprof execs it with its own arguments
 * when a command line asks for one of them; it is installed beside
 * libautoprof.so, not on the PATH.
 */
#include "launcher.h"
#include "outside.h"

static const struct launcher_outside modes = {
    .run = outside__run,
    .attach = outside__attach,
    .parse_ids = attach__parse,
    .top = top__run,
};

int main(int argc, char **argv)
{
	return launcher__main(argc, argv, &modes);
}
