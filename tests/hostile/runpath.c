/* SPDX-License-Identifier: MIT */
/*
 * runpath.c - linked with RUNPATH=$ORIGIN/lib; dlopens libhostplug.so by
 * its bare name, which only the RUNPATH can find.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "hot.h"

int main(void)
{
	void *h;
	int (*f)(int);

	hostile_hot(100000000UL);
	h = dlopen("libhostplug.so", RTLD_NOW);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	f = (int (*)(int))dlsym(h, "hostplug_value");
	printf("plugin says %d\n", f ? f(4) : -1);
	return 0;
}
