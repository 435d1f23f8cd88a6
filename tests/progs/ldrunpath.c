/*
 * ldrunpath.c - dlopen("libldplug.so") by its bare name: glibc finds it through
 * the RUNPATH of the caller ($ORIGIN/lib when the test links it so).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void *h = dlopen("libldplug.so", RTLD_NOW);
	int (*id)(void);

	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	id = (int (*)(void))dlsym(h, "plug_id");
	printf("plug_id %d\n", id ? id() : -1);
	dlclose(h);
	return 0;
}
