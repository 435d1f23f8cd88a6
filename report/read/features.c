// SPDX-License-Identifier: MIT
/*
 * features.c - the optional feature sections that follow the data.
 *
 * A table of {offset, size} sits at data.offset + data.size, one entry per
 * set bit of adds_features in increasing bit order. Every feature is
 * optional: a bad one is skipped with a warning, never fatal.
 */
#include "read/read.h"

#include <errno.h>
#include <stdlib.h>

/* A bounded cursor over one feature body. */
struct cur {
	const u8 *p;
	u64 left;
};

static int cur_u32(struct cur *c, u32 *v)
{
	if (c->left < 4)
		return -EINVAL;
	*v = ld32(c->p);
	c->p += 4;
	c->left -= 4;
	return 0;
}

static int cur_skip(struct cur *c, u64 n)
{
	if (c->left < n)
		return -EINVAL;
	c->p += n;
	c->left -= n;
	return 0;
}

/* A perf header string: u32 len (padding included), then len bytes. */
static int cur_string(struct cur *c, char **out)
{
	u32 len;
	const u8 *s;

	if (cur_u32(c, &len))
		return -EINVAL;
	s = c->p;
	if (cur_skip(c, len))
		return -EINVAL;
	*out = strndup((const char *)s, strnlen((const char *)s, len));
	return *out ? 0 : -ENOMEM;
}

/*
 * The CMDLINE feature as one line: the recording command perf wrote, or for
 * autoprof's files ("autoprof PROGRAM ARGS") the program's command line.
 */
static int read_cmdline(struct cur *c, char **out)
{
	u32 n, i;
	size_t used = 0, cap = 0;
	char *buf = NULL;
	int err = 0;

	if (cur_u32(c, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char *arg;
		size_t len;

		err = cur_string(c, &arg);
		if (err)
			break;
		if (i == 0 && n > 1 && !strcmp(arg, "autoprof")) {
			free(arg); /* the recorder's own name (perf writes its path there): */
			continue;  /* "Recorder:" says it; the command is the program's */
		}
		len = strlen(arg);
		if (array__reserve(&buf, &cap, used + len + 2, 1)) {
			free(arg);
			err = -ENOMEM;
			break;
		}
		if (used)
			buf[used++] = ' ';
		memcpy(buf + used, arg, len + 1);
		used += len;
		free(arg);
	}
	if (err) {
		free(buf);
		return err;
	}
	*out = buf ? buf : strdup("");
	return *out ? 0 : -ENOMEM;
}

/* EVENT_DESC names, applied to the attrs by index. */
static int read_event_desc(struct perf_file *pf, struct cur *c)
{
	u32 nr, attr_size, i;

	if (cur_u32(c, &nr) || cur_u32(c, &attr_size))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		u32 nr_ids;
		char *name;
		int err;

		if (cur_skip(c, attr_size) || cur_u32(c, &nr_ids))
			return -EINVAL;
		err = cur_string(c, &name);
		if (err)
			return err;
		if (cur_skip(c, (u64)nr_ids * 8)) {
			free(name);
			return -EINVAL;
		}
		if (i < pf->nr_attrs && name[0] && !pf->attrs[i].name)
			pf->attrs[i].name = name;
		else
			free(name);
	}
	return 0;
}

/*
 * Add the build-id records at @p (@len bytes: struct perf_record_build_id,
 * each header.size long, the name after it) to @f. The first id given for
 * a name is kept. Returns 0, -EINVAL if a record is malformed (those before
 * it are kept), -ENOMEM.
 */
int features__read_build_ids(struct features *f, const u8 *p, u64 len)
{
	const size_t fixed = sizeof(struct perf_record_build_id);

	while (len >= sizeof(struct perf_event_header)) {
		struct perf_record_build_id rec;
		struct build_id_note *n;
		size_t id_len = 20, name_len;

		memcpy(&rec, p, sizeof(rec.header));
		if (rec.header.size < fixed || rec.header.size > len)
			return -EINVAL;
		memcpy(&rec, p, fixed);
		if ((rec.header.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) && rec.build_id[20] &&
		    rec.build_id[20] <= 20)
			id_len = rec.build_id[20];
		name_len = strnlen((const char *)p + fixed, rec.header.size - fixed);
		if (name_len) {
			if (array__reserve(&f->build_ids, &f->cap_build_ids, f->nr_build_ids + 1,
					   sizeof(*f->build_ids)))
				return -ENOMEM;
			n = &f->build_ids[f->nr_build_ids];
			n->path = strndup((const char *)p + fixed, name_len);
			if (!n->path)
				return -ENOMEM;
			util__hex(n->hex, rec.build_id, id_len);
			f->nr_build_ids++;
		}
		p += rec.header.size;
		len -= rec.header.size;
	}
	return 0;
}

static int read_feature(struct perf_file *pf, int bit, struct cur *c)
{
	struct features *f = &pf->feat;

	switch (bit) {
	case PERF_FEAT_HOSTNAME:
		return f->hostname ? 0 : cur_string(c, &f->hostname);
	case PERF_FEAT_OSRELEASE:
		return f->osrelease ? 0 : cur_string(c, &f->osrelease);
	case PERF_FEAT_ARCH:
		return f->arch ? 0 : cur_string(c, &f->arch);
	case PERF_FEAT_VERSION:
		return f->version ? 0 : cur_string(c, &f->version);
	case PERF_FEAT_CMDLINE:
		return f->cmdline ? 0 : read_cmdline(c, &f->cmdline);
	case PERF_FEAT_NRCPUS:
		if (cur_u32(c, &f->nr_cpus_avail) || cur_u32(c, &f->nr_cpus_online))
			return -EINVAL;
		f->has_nrcpus = true;
		return 0;
	case PERF_FEAT_EVENT_DESC:
		return read_event_desc(pf, c);
	case PERF_FEAT_BUILD_ID:
		return features__read_build_ids(f, c->p, c->left);
	case PERF_FEAT_STAT:
		f->has_stat = true;
		return 0;
	case PERF_FEAT_COMPRESSED: {
		struct perf_feat_compressed fc;

		if (c->left < sizeof(fc))
			return -EINVAL;
		memcpy(&fc, c->p, sizeof(fc));
		f->has_comp = true;
		f->comp_type = fc.type;
		f->comp_level = fc.level;
		f->comp_mmap_len = fc.mmap_len;
		return 0;
	}
	default:
		return 0;
	}
}

static const char *feature_name(int bit)
{
	switch (bit) {
	case PERF_FEAT_HOSTNAME:
		return "HOSTNAME";
	case PERF_FEAT_OSRELEASE:
		return "OSRELEASE";
	case PERF_FEAT_ARCH:
		return "ARCH";
	case PERF_FEAT_VERSION:
		return "VERSION";
	case PERF_FEAT_CMDLINE:
		return "CMDLINE";
	case PERF_FEAT_NRCPUS:
		return "NRCPUS";
	case PERF_FEAT_EVENT_DESC:
		return "EVENT_DESC";
	case PERF_FEAT_COMPRESSED:
		return "COMPRESSED";
	case PERF_FEAT_BUILD_ID:
		return "BUILD_ID";
	default:
		return "feature";
	}
}

/*
 * Read the feature sections of an opened file into pf->feat (and event names
 * into pf->attrs[].name). Returns 0, or -EINVAL after skipping what was bad,
 * with a one-line description in @warn; -ENOMEM if memory ran out.
 */
int features__read(struct perf_file *pf, char *warn, size_t warn_len)
{
	const struct perf_file_header *h = &pf->hdr;
	u64 table, nr = 0;
	int bit, err = 0, idx = 0;

	warn[0] = 0;
	for (bit = 0; bit < PERF_FEAT_BITS; bit++)
		nr += (h->adds_features[bit / 64] >> (bit % 64)) & 1;
	if (!nr)
		return 0;
	if (pf->data_repaired) {
		snprintf(warn, warn_len,
			 "feature sections ignored (the data size in the header is unusable)");
		return -EINVAL;
	}
	table = h->data.offset + h->data.size;
	if (table > pf->size || nr * sizeof(struct perf_file_section) > pf->size - table) {
		snprintf(warn, warn_len, "feature table at offset %llu is outside the file",
			 (unsigned long long)table);
		return -EINVAL;
	}
	for (bit = 0; bit < PERF_FEAT_BITS; bit++) {
		struct perf_file_section sec;
		struct cur c;
		int ret;

		if (!((h->adds_features[bit / 64] >> (bit % 64)) & 1))
			continue;
		memcpy(&sec, pf->base + table + idx++ * sizeof(sec), sizeof(sec));
		if (sec.offset > pf->size || sec.size > pf->size - sec.offset) {
			if (!err)
				snprintf(warn, warn_len, "%s feature (bit %d) is outside the file",
					 feature_name(bit), bit);
			err = -EINVAL;
			continue;
		}
		c = (struct cur){pf->base + sec.offset, sec.size};
		ret = read_feature(pf, bit, &c);
		if (ret == -ENOMEM)
			return ret;
		if (ret && !err) {
			snprintf(warn, warn_len, "%s feature (bit %d) is malformed",
				 feature_name(bit), bit);
			err = ret;
		}
	}
	return err;
}

/*
 * Read one feature body (@len bytes at @p, feature @bit), as a pipe-mode
 * HEADER_FEATURE record carries it. Returns 0, -EINVAL if malformed, -ENOMEM.
 */
int features__read_one(struct perf_file *pf, int bit, const u8 *p, u64 len)
{
	struct cur c = {p, len};

	return read_feature(pf, bit, &c);
}

void features__drop_build_ids(struct features *f, bool keep_kernel)
{
	size_t i, n = 0;

	for (i = 0; i < f->nr_build_ids; i++) {
		if (keep_kernel && !strcmp(f->build_ids[i].path, "[kernel.kallsyms]"))
			f->build_ids[n++] = f->build_ids[i];
		else
			free(f->build_ids[i].path);
	}
	f->nr_build_ids = n;
	if (!n) {
		free(f->build_ids);
		f->build_ids = NULL;
		f->cap_build_ids = 0;
	}
}

void features__exit(struct features *f)
{
	features__drop_build_ids(f, false);
	free(f->hostname);
	free(f->osrelease);
	free(f->arch);
	free(f->version);
	free(f->cmdline);
	memset(f, 0, sizeof(*f));
}
