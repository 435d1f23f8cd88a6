/* SPDX-License-Identifier: MIT */
/*
 * perf_file.h - the perf.data on-disk layout, shared by the writer (preload/)
 * and the reader (report/).
 *
 * Everything here is the "PERFILE2" format as perf 6.x reads it, in native
 * byte order. See tools/perf/Documentation/perf.data-file-format.txt. Kernel
 * record layouts that <linux/perf_event.h> only describes in comments are
 * spelled out as structs here.
 */
#ifndef AUTOPROF_PERF_FILE_H
#define AUTOPROF_PERF_FILE_H

#include <linux/perf_event.h>
#include <stdint.h>

/* "PERFILE2" read as a little-endian u64. */
#define PERF_FILE_MAGIC 0x32454c4946524550ULL
/* The same bytes read with the other byte order: a file from a foreign host. */
#define PERF_FILE_MAGIC_SWAPPED 0x50455246494c4532ULL

/*
 * The attr size we write. perf 6.1 refuses attr.size 136 (VER8), so we
 * write the 128-byte VER7 layout even where the system header is newer.
 */
#define PERF_FILE_ATTR_SIZE 128

/* Feature bits in perf_file_header.adds_features (HEADER_* in perf). */
enum perf_file_feature {
	PERF_FEAT_TRACING_DATA = 1,
	PERF_FEAT_BUILD_ID = 2,
	PERF_FEAT_HOSTNAME = 3,
	PERF_FEAT_OSRELEASE = 4,
	PERF_FEAT_VERSION = 5,
	PERF_FEAT_ARCH = 6,
	PERF_FEAT_NRCPUS = 7,
	PERF_FEAT_CPUDESC = 8,
	PERF_FEAT_CPUID = 9,
	PERF_FEAT_TOTAL_MEM = 10,
	PERF_FEAT_CMDLINE = 11,
	PERF_FEAT_EVENT_DESC = 12,
	PERF_FEAT_CPU_TOPOLOGY = 13,
	PERF_FEAT_NUMA_TOPOLOGY = 14,
	PERF_FEAT_BRANCH_STACK = 15,
	PERF_FEAT_PMU_MAPPINGS = 16,
	PERF_FEAT_GROUP_DESC = 17,
	PERF_FEAT_AUXTRACE = 18,
	PERF_FEAT_STAT = 19,
	PERF_FEAT_CACHE = 20,
	PERF_FEAT_SAMPLE_TIME = 21,
	PERF_FEAT_MEM_TOPOLOGY = 22,
	PERF_FEAT_CLOCKID = 23,
	PERF_FEAT_DIR_FORMAT = 24,
	PERF_FEAT_BPF_PROG_INFO = 25,
	PERF_FEAT_BPF_BTF = 26,
	PERF_FEAT_COMPRESSED = 27,
	PERF_FEAT_CPU_PMU_CAPS = 28,
	PERF_FEAT_CLOCK_DATA = 29,
	PERF_FEAT_HYBRID_TOPOLOGY = 30,
	PERF_FEAT_PMU_CAPS = 31,
	PERF_FEAT_BITS = 256,
};

/* Record types perf itself adds to the stream (>= 64, never from the kernel). */
enum perf_user_record_type {
	PERF_RECORD_USER_TYPE_START = 64,
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_EVENT_TYPE = 65,
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_ID_INDEX = 69,
	PERF_RECORD_AUXTRACE_INFO = 70,
	PERF_RECORD_AUXTRACE = 71,
	PERF_RECORD_AUXTRACE_ERROR = 72,
	PERF_RECORD_THREAD_MAP = 73,
	PERF_RECORD_CPU_MAP = 74,
	PERF_RECORD_STAT_CONFIG = 75,
	PERF_RECORD_STAT = 76,
	PERF_RECORD_STAT_ROUND = 77,
	PERF_RECORD_EVENT_UPDATE = 78,
	PERF_RECORD_TIME_CONV = 79,
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,
	PERF_RECORD_FINISHED_INIT = 82,
	PERF_RECORD_LAST_KNOWN = 83, /* first type we never emit nor interpret */
};

/* {offset, size} of a region of the file. */
struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

/* The 104-byte file header at offset 0. */
struct perf_file_header {
	uint64_t magic;	    /* PERF_FILE_MAGIC */
	uint64_t size;	    /* sizeof(struct perf_file_header) */
	uint64_t attr_size; /* size of one struct perf_file_attr entry */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types; /* unused, zero */
	uint64_t adds_features[PERF_FEAT_BITS / 64];
};
_Static_assert(sizeof(struct perf_file_header) == 104, "perf_file_header is 104 bytes");

/* One entry of the attrs section: the event attr and where its ids are. */
struct perf_file_attr {
	uint8_t attr[PERF_FILE_ATTR_SIZE]; /* struct perf_event_attr, attr.size bytes */
	struct perf_file_section ids;	   /* array of u64 event ids */
};
_Static_assert(sizeof(struct perf_file_attr) == 144, "perf_file_attr is 144 bytes");

/*
 * Record bodies that follow struct perf_event_header. Each is followed by the
 * sample_id trailer when the attr has sample_id_all (not shown here), and the
 * strings are NUL-terminated and padded so the record size is a multiple of 8.
 */

/* type: PERF_RECORD_MMAP (1) */
struct perf_record_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	char filename[];
};

/* type: PERF_RECORD_LOST (2) */
struct perf_record_lost {
	struct perf_event_header header;
	uint64_t id;
	uint64_t lost;
};

/* type: PERF_RECORD_COMM (3) */
struct perf_record_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

/* type: PERF_RECORD_EXIT (4) and PERF_RECORD_FORK (7) */
struct perf_record_fork {
	struct perf_event_header header;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

/* type: PERF_RECORD_THROTTLE (5) and PERF_RECORD_UNTHROTTLE (6) */
struct perf_record_throttle {
	struct perf_event_header header;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
};

/* type: PERF_RECORD_MMAP2 (10) */
struct perf_record_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct { /* when header.misc has PERF_RECORD_MISC_MMAP_BUILD_ID */
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};
_Static_assert(sizeof(struct perf_record_mmap2) == 72, "perf_record_mmap2 fixed part");

/* type: PERF_RECORD_LOST_SAMPLES (13) */
struct perf_record_lost_samples {
	struct perf_event_header header;
	uint64_t lost;
};

/* Pipe mode: the file header is only {magic, size = 16}; records follow. */
struct perf_pipe_file_header {
	uint64_t magic;
	uint64_t size;
};

/* type: PERF_RECORD_HEADER_ATTR (64): attr.size bytes of attr, then u64 ids to the end */
struct perf_record_header_attr {
	struct perf_event_header header;
	uint8_t attr[];
};

/* type: PERF_RECORD_HEADER_TRACING_DATA (66): followed by size bytes outside the record */
struct perf_record_header_tracing_data {
	struct perf_event_header header;
	uint32_t size;
	uint32_t pad;
};

/* type: PERF_RECORD_AUXTRACE (71): followed by size bytes of AUX data outside the record */
struct perf_record_auxtrace {
	struct perf_event_header header;
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu, reserved;
};

/* type: PERF_RECORD_EVENT_UPDATE (78); type NAME (2) carries a NUL-terminated name */
#define PERF_EVENT_UPDATE_NAME 2
struct perf_record_event_update {
	struct perf_event_header header;
	uint64_t type;
	uint64_t id;
	char data[];
};

/* type: PERF_RECORD_HEADER_FEATURE (80): one feature section, as in a file */
struct perf_record_header_feature {
	struct perf_event_header header;
	uint64_t feat_id;
	uint8_t data[];
};

/* type: PERF_RECORD_COMPRESSED (81): a chunk of a compressed record stream */
struct perf_record_compressed {
	struct perf_event_header header;
	uint8_t data[];
};

/* HEADER_COMPRESSED feature body and its one compression type */
struct perf_feat_compressed {
	uint32_t version, type, level, ratio, mmap_len;
};
#define PERF_COMP_ZSTD 1

/* type: PERF_RECORD_STAT_CONFIG (75): nr {tag, val} pairs */
enum perf_stat_config_tag {
	PERF_STAT_CONFIG_TERM_AGGR_MODE = 0,
	PERF_STAT_CONFIG_TERM_INTERVAL = 1,
	PERF_STAT_CONFIG_TERM_SCALE = 2,
	PERF_STAT_CONFIG_TERM_AGGR_LEVEL = 3,
};
struct perf_record_stat_config_entry {
	uint64_t tag;
	uint64_t val;
};
struct perf_record_stat_config {
	struct perf_event_header header;
	uint64_t nr;
	struct perf_record_stat_config_entry data[];
};

/* type: PERF_RECORD_STAT (76): one counter value */
struct perf_record_stat {
	struct perf_event_header header;
	uint64_t id;
	uint32_t cpu;
	uint32_t thread;
	uint64_t val, ena, run;
};
_Static_assert(sizeof(struct perf_record_stat) == 48, "perf_record_stat is 48 bytes");

/* type: PERF_RECORD_STAT_ROUND (77) */
enum { PERF_STAT_ROUND_TYPE_INTERVAL = 0, PERF_STAT_ROUND_TYPE_FINAL = 1 };
struct perf_record_stat_round {
	struct perf_event_header header;
	uint64_t type;
	uint64_t time;
};

/* Feature BUILD_ID: a sequence of these, each header.size long. */
struct perf_record_build_id {
	struct perf_event_header header; /* misc: cpumode | PERF_RECORD_MISC_BUILD_ID_SIZE */
	int32_t pid;
	uint8_t build_id[24]; /* 20 bytes of id, size in byte 20 when misc says so */
	char filename[];
};
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)

/* Feature strings: u32 length (padded to PERF_FILE_NAME_ALIGN) then the bytes. */
#define PERF_FILE_NAME_ALIGN 64

/* Callchain context markers (any value >= PERF_CONTEXT_MAX is a marker). */
#define PERF_CONTEXT_IS_MARKER(ip) ((uint64_t)(ip) >= (uint64_t)PERF_CONTEXT_MAX)

/*
 * The sample layout every attr we write uses, and the one the reader
 * handles fastest: IDENTIFIER first, so several attrs can share the file.
 */
#define AUTOPROF_SAMPLE_TYPE                                                                       \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* Trailer after every non-sample record we write (sample_id_all with the type above). */
struct autoprof_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

/* Round n up to a multiple of 8, the alignment of every record. */
#define PERF_ALIGN8(n) (((n) + 7) & ~(uint64_t)7)

#endif /* AUTOPROF_PERF_FILE_H */
