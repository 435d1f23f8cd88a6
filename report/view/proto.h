/* SPDX-License-Identifier: MIT */
/*
 * proto.h - a minimal protocol buffers wire-format writer (proto.c), enough
 * for pprof's profile.proto: varints, length-delimited fields, packed
 * repeated varints, nested messages. Encoding only; no schema, no reflection.
 */
#ifndef AUTOPROF_REPORT_PROTO_H
#define AUTOPROF_REPORT_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer; a failed allocation sticks (err) and later writes are dropped. */
struct pbuf {
	uint8_t *p;
	size_t len, cap;
	int err; /* 0 or -ENOMEM */
};

void proto__reset(struct pbuf *b);
void proto__free(struct pbuf *b);
/* Field @field as a varint (int64, uint64, bool: two's complement, no zigzag). */
void proto__varint(struct pbuf *b, uint32_t field, uint64_t v);
/* Field @field as a varint, omitted when @v is 0 (proto3's default). */
void proto__varint_nz(struct pbuf *b, uint32_t field, uint64_t v);
/* Field @field as length-delimited bytes (string, bytes, a nested message). */
void proto__bytes(struct pbuf *b, uint32_t field, const void *data, size_t len);
void proto__string(struct pbuf *b, uint32_t field, const char *s);
/* Nested message @msg (another buffer) as field @field; @msg's error carries over. */
void proto__message(struct pbuf *b, uint32_t field, const struct pbuf *msg);
/* A packed repeated varint field of @n values (nothing when @n is 0). */
void proto__packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n);

#endif /* AUTOPROF_REPORT_PROTO_H */
