/* SPDX-License-Identifier: MIT */
/*
 * main.c - autoprof's main: the launcher (launcher.c) without the modes that
 * profile from outside, so that a run of the library's mode loads neither
 * the reader's model nor libdw; a command line that needs one of those modes
 * becomes autoprof-outside (outside_main.c).
 */
#include <stddef.h>

#include "launcher.h"

int main(int argc, char **argv)
{
	return launcher__main(argc, argv, NULL);
}
