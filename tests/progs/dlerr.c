// dlerr.c - prints what dlerror() says first thing in main: "dlerror: (null)"
// without us, and with us too (a preloaded library's failed lookup must not
// leave its message for the program to read). Then execs itself once with
// "again" to check the exec'd image the same way.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *e = dlerror();

	printf("dlerror: %s\n", e ? e : "(null)");
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "exec"))
		execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	return 0;
}
