// SPDX-License-Identifier: MIT
/*
 * mapfloor.c - the kernel's cost of mapping a perf.data file's records once:
 * the floor under any reader that reads them through a mapping (make
 * bench-report, report_speed.py).
 *
 * Maps FILE read-only, reads one byte of each 64 KiB of its data section
 * (one fault maps the aligned 64 KiB around it: the kernel's default fault
 * around), hands the pages back every 64 MiB behind, then unmaps: the page
 * faults, the mapping and unmapping of every page, nothing else. One
 * thread: autoprof-report splits this work between two (report/read/
 * prefault.c), perf report does it on one.
 *
 * usage: mapfloor FILE
 */
#include <autoprof/perf_file.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define STRIDE	(64u << 10)
#define RELEASE (64u << 20)

int main(int argc, char **argv)
{
	struct perf_file_header hdr;
	uint64_t end, o, released;
	volatile const unsigned char *p;
	struct stat st;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: mapfloor FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || pread(fd, &hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    hdr.magic != PERF_FILE_MAGIC) {
		fprintf(stderr, "mapfloor: %s: not a perf.data file\n", argv[1]);
		return 1;
	}
	end = hdr.data.offset + hdr.data.size;
	if (end > (uint64_t)st.st_size)
		end = (uint64_t)st.st_size;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mapfloor: mmap");
		return 1;
	}
	released = hdr.data.offset & ~(uint64_t)4095;
	for (o = hdr.data.offset; o < end; o += STRIDE) {
		(void)p[o]; /* a volatile read: kept */
		if (o - released >= RELEASE) {
			madvise((void *)(p + released), (o & ~(uint64_t)4095) - released,
				MADV_DONTNEED);
			released = o & ~(uint64_t)4095;
		}
	}
	munmap((void *)p, st.st_size);
	close(fd);
	return 0;
}
