/*
 * lookups.c - what the program's own symbol lookups find, for
 * tests/preload-startup.t: makes a thread (a batched profile sets libunwind
 * up then), then prints, for each name given, "NAME=1" where
 * dlsym(RTLD_DEFAULT) finds it and "NAME=0" where not, and last
 * "unwinder=1" where libunwind is mapped into the process (else 0).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *idle(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	char line[4096];
	pthread_t t;
	FILE *maps;
	int mapped = 0;

	if (pthread_create(&t, NULL, idle, NULL) || pthread_join(t, NULL))
		return 1;
	for (int i = 1; i < argc; i++)
		printf("%s=%d\n", argv[i], dlsym(RTLD_DEFAULT, argv[i]) != NULL);
	maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(line, sizeof(line), maps))
		mapped |= strstr(line, "/libunwind") != NULL;
	if (maps)
		fclose(maps);
	printf("unwinder=%d\n", mapped);
	return 0;
}
