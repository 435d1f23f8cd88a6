/*
 * lookups.c - what the program's own symbol lookups find, for
 * tests/preload-startup.t:
 *   lookups [--chroot|--syscall-chroot DIR] NAME...
 * makes a thread (a batched profile sets libunwind up then; with --chroot,
 * after shutting itself in DIR, as a sandbox does, through libc or
 * syscall()), then prints, for each
 * NAME, "NAME=1" where dlsym(RTLD_DEFAULT) finds it and "NAME=0" where not,
 * and last "unwinder=1" where libunwind is mapped into the process (else
 * 0). Exit status 2 where chroot is refused (not root).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *idle(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	FILE *maps = fopen("/proc/self/maps", "r"); /* (read after a chroot too) */
	char line[4096];
	int i = 1, mapped = 0;
	pthread_t t;

	if (argc > 2 && !strcmp(argv[1], "--chroot")) {
		if (chroot(argv[2]) || chdir("/"))
			return 2;
		i = 3;
	} else if (argc > 2 && !strcmp(argv[1], "--syscall-chroot")) {
		if (syscall(SYS_chroot, argv[2]) || chdir("/"))
			return 2;
		i = 3;
	}
	if (pthread_create(&t, NULL, idle, NULL) || pthread_join(t, NULL))
		return 1;
	for (; i < argc; i++)
		printf("%s=%d\n", argv[i], dlsym(RTLD_DEFAULT, argv[i]) != NULL);
	while (maps && fgets(line, sizeof(line), maps))
		mapped |= strstr(line, "/libunwind") != NULL;
	if (maps)
		fclose(maps);
	printf("unwinder=%d\n", mapped);
	return 0;
}
