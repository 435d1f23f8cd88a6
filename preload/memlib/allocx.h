/* SPDX-License-Identifier: MIT */
/*
 * allocx.h - the allocators' own entry points that allocx.c interposes
 * (jemalloc's, tcmalloc's, C23's): their names and shapes, and the
 * stand-ins of allocx_emul.c for those no loaded object defines. Hidden.
 */
#ifndef AUTOPROF_MEMLIB_ALLOCX_H
#define AUTOPROF_MEMLIB_ALLOCX_H

#pragma GCC visibility push(hidden)

/* The shapes of the entry points: allocating (A_*), resizing (R_*), freeing (F_*). */
enum {
	A_N,   /* void *(size_t n) */
	A_NF,  /* void *(size_t n, int flags): mallocx */
	A_NM,  /* void *(size_t n, size_t size): calloc's */
	A_AN,  /* void *(size_t align, size_t n): memalign's */
	A_NX,  /* void *(size_t n, x): nothrow new, aligned new */
	A_NXY, /* void *(size_t n, x, y): aligned nothrow new */
	A_PM,  /* int (void **out, size_t align, size_t n): posix_memalign's */
	R_PN,  /* void *(void *p, size_t n): realloc's */
	R_PNF, /* void *(void *p, size_t n, int flags): rallocx */
	R_X,   /* size_t (void *p, size_t size, size_t extra, int flags): xallocx */
	F_P,   /* void (void *p) */
	F_PX,  /* void (void *p, x) */
	F_PXY, /* void (void *p, x, y) */
};

#define ENTRIES(X)                                                                                 \
	X(MALLOCX, "mallocx", A_NF)                                                                \
	X(RALLOCX, "rallocx", R_PNF)                                                               \
	X(XALLOCX, "xallocx", R_X)                                                                 \
	X(DALLOCX, "dallocx", F_PX)                                                                \
	X(SDALLOCX, "sdallocx", F_PXY)                                                             \
	X(TC_MALLOC, "tc_malloc", A_N)                                                             \
	X(TC_MALLOC_SKIP, "tc_malloc_skip_new_handler", A_N)                                       \
	X(TC_CALLOC, "tc_calloc", A_NM)                                                            \
	X(TC_REALLOC, "tc_realloc", R_PN)                                                          \
	X(TC_MEMALIGN, "tc_memalign", A_AN)                                                        \
	X(TC_POSIX_MEMALIGN, "tc_posix_memalign", A_PM)                                            \
	X(POSIX_MEMALIGN_, "__posix_memalign", A_PM)                                               \
	X(TC_VALLOC, "tc_valloc", A_N)                                                             \
	X(TC_PVALLOC, "tc_pvalloc", A_N)                                                           \
	X(TC_NEW, "tc_new", A_N)                                                                   \
	X(TC_NEWARRAY, "tc_newarray", A_N)                                                         \
	X(TC_NEW_NT, "tc_new_nothrow", A_NX)                                                       \
	X(TC_NEWARRAY_NT, "tc_newarray_nothrow", A_NX)                                             \
	X(TC_NEW_AL, "tc_new_aligned", A_NX)                                                       \
	X(TC_NEWARRAY_AL, "tc_newarray_aligned", A_NX)                                             \
	X(TC_NEW_AL_NT, "tc_new_aligned_nothrow", A_NXY)                                           \
	X(TC_NEWARRAY_AL_NT, "tc_newarray_aligned_nothrow", A_NXY)                                 \
	X(TC_FREE, "tc_free", F_P)                                                                 \
	X(TC_CFREE, "tc_cfree", F_P)                                                               \
	X(CFREE, "cfree", F_P)                                                                     \
	X(LIBC_CFREE, "__libc_cfree", F_P)                                                         \
	X(TC_DELETE, "tc_delete", F_P)                                                             \
	X(TC_DELETEARRAY, "tc_deletearray", F_P)                                                   \
	X(TC_FREE_SIZED, "tc_free_sized", F_PX)                                                    \
	X(TC_DELETE_SIZED, "tc_delete_sized", F_PX)                                                \
	X(TC_DELETEARRAY_SIZED, "tc_deletearray_sized", F_PX)                                      \
	X(TC_DELETE_NT, "tc_delete_nothrow", F_PX)                                                 \
	X(TC_DELETEARRAY_NT, "tc_deletearray_nothrow", F_PX)                                       \
	X(TC_DELETE_AL, "tc_delete_aligned", F_PX)                                                 \
	X(TC_DELETEARRAY_AL, "tc_deletearray_aligned", F_PX)                                       \
	X(FREE_SIZED, "free_sized", F_PX)                                                          \
	X(TC_DELETE_SIZED_AL, "tc_delete_sized_aligned", F_PXY)                                    \
	X(TC_DELETEARRAY_SIZED_AL, "tc_deletearray_sized_aligned", F_PXY)                          \
	X(TC_DELETE_AL_NT, "tc_delete_aligned_nothrow", F_PXY)                                     \
	X(TC_DELETEARRAY_AL_NT, "tc_deletearray_aligned_nothrow", F_PXY)                           \
	X(FREE_ALIGNED_SIZED, "free_aligned_sized", F_PXY)

#define ENUM(id, name, shape) id,
enum { ENTRIES(ENUM) NR_ENTRIES };
_Static_assert(NR_ENTRIES <= 64, "allocx.c keeps a bit per entry");
#undef ENUM

/* Entry i's stand-in, of its shape, when no loaded object defines it: what its name says,
 * done with the C allocator's functions (alloc.h's real). */
void *allocx_emul__fn(int i);

#pragma GCC visibility pop

#endif /* AUTOPROF_MEMLIB_ALLOCX_H */
