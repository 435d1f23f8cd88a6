// SPDX-License-Identifier: MIT
/*
 * proto.c - the protocol buffers wire format, written by hand (see proto.h):
 * a tag is (field << 3 | wire type), wire type 0 a base-128 varint, 2 a
 * varint length followed by the bytes.
 */
#include "proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_LEN = 2 };

void proto__reset(struct pbuf *b)
{
	b->len = 0;
	b->err = 0;
}

void proto__free(struct pbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Make room for @n more bytes. Returns false (and sets err) when out of memory. */
static int reserve(struct pbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	uint8_t *p;

	if (b->err)
		return 0;
	if (b->len + n <= b->cap)
		return 1;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return 0;
	}
	b->p = p;
	b->cap = cap;
	return 1;
}

static void raw_varint(struct pbuf *b, uint64_t v)
{
	if (!reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void proto__varint(struct pbuf *b, uint32_t field, uint64_t v)
{
	raw_varint(b, (uint64_t)field << 3 | WT_VARINT);
	raw_varint(b, v);
}

void proto__varint_nz(struct pbuf *b, uint32_t field, uint64_t v)
{
	if (v)
		proto__varint(b, field, v);
}

void proto__bytes(struct pbuf *b, uint32_t field, const void *data, size_t len)
{
	raw_varint(b, (uint64_t)field << 3 | WT_LEN);
	raw_varint(b, len);
	if (len && reserve(b, len)) {
		memcpy(b->p + b->len, data, len);
		b->len += len;
	}
}

void proto__string(struct pbuf *b, uint32_t field, const char *s)
{
	proto__bytes(b, field, s, strlen(s));
}

void proto__message(struct pbuf *b, uint32_t field, const struct pbuf *msg)
{
	if (msg->err) {
		b->err = msg->err;
		return;
	}
	proto__bytes(b, field, msg->p, msg->len);
}

void proto__packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += varint_size(v[i]);
	raw_varint(b, (uint64_t)field << 3 | WT_LEN);
	raw_varint(b, len);
	for (i = 0; i < n; i++)
		raw_varint(b, v[i]);
}
