// membind.c - which object the program's malloc, free, calloc and realloc
// are bound to: prints "BIND malloc FILE" (FILE: the base name of the object
// dlsym(RTLD_DEFAULT) finds them in, as the loader binds the program's
// calls) for each, then leaks 1 MiB from leak_here (a memory profile finds
// it there) and prints "done". With "child", it then runs itself in a
// child process with an environment of its own: LD_PRELOAD empty, no
// AUTOPROF_*: the profiler puts back what its descendants need.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void where(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	const char *file = "?";

	if (f && dladdr(f, &info) && info.dli_fname) {
		file = strrchr(info.dli_fname, '/');
		file = file ? file + 1 : info.dli_fname;
	}
	printf("BIND %s %s\n", name, file);
}

void *volatile kept;

__attribute__((noinline)) void leak_here(void)
{
	kept = malloc(1 << 20);
	memset(kept, 1, 1 << 20);
}

int main(int argc, char **argv)
{
	where("malloc");
	where("free");
	where("calloc");
	where("realloc");
	leak_here();
	printf("done\n");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "child")) {
		char *args[] = {argv[0], NULL}, *env[] = {"LD_PRELOAD=", NULL};
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			execve("/proc/self/exe", args, env);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return 1;
	}
	return 0;
}
