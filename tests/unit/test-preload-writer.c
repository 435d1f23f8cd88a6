/* Unit test: the perf.data writer and record builders (preload/writer.c, record.c, features.c). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

#define BATCHES	  500
#define PER_BATCH 8

static struct writer w;

/* Append BATCHES batches of PER_BATCH samples, each batch one writer__append. */
static void *appender(void *arg)
{
	uint32_t tid = (uint32_t)(uintptr_t)arg;
	uint64_t chain[4] = {PERF_CONTEXT_USER, 0x1000, 0x2000, 0x3000};
	char buf[PER_BATCH * 128];

	for (int b = 0; b < BATCHES; b++) {
		size_t len = 0;

		for (int i = 0; i < PER_BATCH; i++)
			len +=
			    record__sample(buf + len, sizeof(buf) - len, false, 0x1000, 42, tid,
					   (uint64_t)b * 1000 + (uint64_t)i, 0, 1000000, chain, 4);
		if (writer__append(&w, buf, len))
			return (void *)1;
	}
	return NULL;
}

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *p;

	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	p = malloc((size_t)st.st_size);
	if (p && read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return p;
}

int main(void)
{
	char dir[] = "/tmp/autoprof-writer.XXXXXX", path[256], old[300], target[300];
	struct writer_event events[2] = {
	    {.attr = {.type = PERF_TYPE_SOFTWARE,
		      .config = PERF_COUNT_SW_CPU_CLOCK,
		      .sample_freq = 1000,
		      .freq = 1,
		      .exclude_kernel = 1},
	     .id = 1,
	     .name = "cpu-clock"},
	    {.attr = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK, .inherit = 1},
	     .id = 2,
	     .name = "task-clock"}};
	pthread_t th[2];
	void *r0, *r1;
	char rec[256];
	size_t n, len;
	const struct perf_file_header *h;
	char *file;
	struct stat st;
	int samples = 0, comms = 0, bad = 0;
	uint64_t pos, end;
	static const struct ap_settled settled = {.event_name = "cpu-clock"};

	plan(27);
	ap_quiet = true;
	autoprof.cfg = &settled;
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(old, sizeof(old), "%s.old", path);
	snprintf(target, sizeof(target), "%s/target", dir);

	/* A symlink at the output path is moved aside, never followed. */
	close(open(target, O_CREAT | O_WRONLY, 0644));
	if (symlink(target, path) < 0)
		return 1;
	ok(writer__open(&w, path, events, 2, false) == 0, "writer opens a new file");
	ok(lstat(old, &st) == 0 && S_ISLNK(st.st_mode), "the symlink was moved to .old");
	ok(stat(target, &st) == 0 && st.st_size == 0, "the symlink's target is untouched");
	ok(lstat(path, &st) < 0 && errno == ENOENT, "no file before its first records");

	n = record__comm(rec, sizeof(rec), 42, 42, "a-very-long-thread-name", 0, false);
	ok(n % 8 == 0 &&
	       n == sizeof(struct perf_record_comm) + 16 + sizeof(struct autoprof_sample_id),
	   "COMM is 8-byte aligned, name cut to 15 characters (%zu bytes)", n);
	ok(writer__append(&w, rec, n) == 0, "append COMM");
	ok(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
	   "the file, made by them, is a regular file with mode 0600");
	n = record__mmap2(rec, sizeof(rec), 42, 0x1000, 0x1000, 0, 8, 1, 1234, 5, 2, "/bin/x", 0,
			  NULL, 0);
	ok(n % 8 == 0 && writer__append(&w, rec, n) == 0, "append MMAP2");
	{
		static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef};
		const struct perf_record_mmap2 *m = (const void *)rec;

		n = record__mmap2(rec, sizeof(rec), 42, 0x1000, 0x1000, 0, 8, 1, 1234, 5, 2,
				  "/bin/x", 0, bid, 20);
		ok(n % 8 == 0 && (m->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
		       m->build_id_size == 20 && !memcmp(m->build_id, bid, 20),
		   "MMAP2 with a build id: misc bit, size and bytes in place of dev/ino");
	}
	ok(record__mmap2(rec, 40, 42, 0, 0, 0, 0, 0, 0, 0, 0, "/bin/x", 0, NULL, 0) == 0,
	   "a record that does not fit is not built");

	pthread_create(&th[0], NULL, appender, (void *)1);
	pthread_create(&th[1], NULL, appender, (void *)2);
	pthread_join(th[0], &r0);
	pthread_join(th[1], &r1);
	ok(!r0 && !r1, "two threads append concurrently without error");

	ok(file_features__write(&w) == 0, "features and final header written");
	ok(writer__append(&w, rec, n) != 0, "no append after the file is finished");

	file = slurp(path, &len);
	h = (const void *)file;
	ok(file && h->magic == PERF_FILE_MAGIC && h->size == 104 && h->attr_size == 144,
	   "header: PERFILE2, 104 bytes, attr_size 144");
	ok(file && h->data.offset + h->data.size <= len && h->adds_features[0] != 0,
	   "data section inside the file, features flagged");

	if (file && h->attrs.offset + h->attrs.size <= len && h->attrs.size == 2 * 144) {
		int good = 0;

		for (int i = 0; i < 2; i++) {
			const struct perf_file_attr *fa =
			    (const void *)(file + h->attrs.offset + (uint64_t)i * 144);
			const struct perf_event_attr *a = (const void *)fa->attr;
			uint64_t id;

			memcpy(&id, file + fa->ids.offset, 8);
			good += a->size == 128 && a->sample_type == AUTOPROF_SAMPLE_TYPE &&
				a->sample_id_all && a->exclude_kernel && !a->inherit &&
				fa->ids.size == 8 && id == (uint64_t)i + 1;
		}
		ok(good == 2, "two attrs: size 128, our sample format, user-only like the sampler, "
			      "ids 1 and 2");
	} else {
		ok(0, "two attrs in the attrs section");
	}
	ok(writer__open(&w, path, events, 0, false) == -EINVAL, "a file needs at least one event");

	pos = h->data.offset;
	end = h->data.offset + h->data.size;
	while (file && pos < end) {
		const struct perf_event_header *e = (const void *)(file + pos);

		if (e->size < 8 || e->size % 8 || pos + e->size > end) {
			bad++;
			break;
		}
		samples += e->type == PERF_RECORD_SAMPLE;
		comms += e->type == PERF_RECORD_COMM;
		pos += e->size;
	}
	ok(!bad && pos == end, "records tile the data section exactly");
	ok(samples == 2 * BATCHES * PER_BATCH, "every sample arrived (%d)", samples);
	ok(comms == 1, "one COMM");

	free(file);

	/* Windows: writer__rotate finishes one file and starts the next with given records. */
	{
		char p1[300], p2[300], comm[128];
		const struct perf_file_header *h1, *h2;
		char *f1, *f2;
		size_t l1, l2, c = record__comm(comm, sizeof(comm), 7, 7, "w", 1, false);

		snprintf(p1, sizeof(p1), "%s/win.1", dir);
		snprintf(p2, sizeof(p2), "%s/win.2", dir);
		ok(writer__open(&w, p1, events, 2, false) == 0 &&
		       writer__append(&w, comm, c) == 0 && writer__append(&w, comm, c) == 0,
		   "a window's file gets two records");
		ok(writer__rotate(&w, p2, comm, c) == 0 && writer__append(&w, comm, c) == 0 &&
		       !strcmp(w.path, p2),
		   "rotate: the next file starts with one record, an append follows");
		ok(writer__rotate(&w, p2, NULL, 0) == -EEXIST, "rotate never writes over a file");
		w.error = 0;
		f1 = slurp(p1, &l1);
		f2 = slurp(p2, &l2);
		h1 = (const void *)f1;
		h2 = (const void *)f2;
		ok(f1 && f2 && h1->magic == PERF_FILE_MAGIC && h2->magic == PERF_FILE_MAGIC &&
		       h1->data.size == 2 * c && h2->data.size == 2 * c && w.fd < 0 &&
		       writer__append(&w, comm, c) != 0,
		   "each file is whole (2 records); a failed rotate leaves the writer without a "
		   "file");
		free(f1);
		free(f2);
		unlink(p1);
		unlink(p2);
	}

	/* writer__append_at and writer__patch: records rewritten in place (a retired live set). */
	{
		char p1[300], a[128], b[128];
		size_t na = record__comm(a, sizeof(a), 7, 7, "aaaa", 1, false);
		size_t nb = record__comm(b, sizeof(b), 7, 7, "bbbb", 2, false);
		uint64_t at1 = 0, at2 = 0;
		const struct perf_file_header *ph;
		char *f = NULL;
		size_t l;

		snprintf(p1, sizeof(p1), "%s/patch", dir);
		ok(na == nb && writer__open(&w, p1, events, 2, false) == 0 &&
		       writer__append_at(&w, a, na, &at1) == 0 &&
		       writer__append_at(&w, a, na, &at2) == 0 && at2 == at1 + na,
		   "append_at: each append says its offset, one after the other");
		ok(writer__patch(&w, at1, b, nb) == 0 &&
		       writer__patch(&w, at2 + 8, b, nb) == -EINVAL &&
		       writer__patch(&w, 8, b, nb) == -EINVAL,
		   "patch: inside the data only");
		ok(file_features__write(&w) == 0 && (f = slurp(p1, &l)) != NULL &&
		       (ph = (const void *)f)->data.size == 2 * na && ph->data.offset == at1 &&
		       !memcmp(f + at1, b, nb) && !memcmp(f + at2, a, na),
		   "the first record rewritten, the second as it was, the data's size unchanged");
		free(f);
		unlink(p1);
	}

	unlink(path);
	unlink(old);
	unlink(target);
	rmdir(dir);
	return tap_done();
}
