/* heap.h - the one binary heap behind every queue of the core: pending
 * shapes, running jobs, timers, the walks of the pending and running
 * iterators, the simulator's event list.
 *
 * Key decision: a macro instantiates the same code for each element type,
 * so the comparison and the position hook are inlined (a heap of 16-byte
 * entries sifted a hundred million times a run cannot afford a function
 * pointer and a memcpy per step), yet there is one implementation to read
 * and to get right.
 *
 *   GP_HEAP_DEFINE(name, T, before, moved)
 *
 * defines, for an array of T used as a heap (h[0] on top):
 *   uint32_t name_up(T *h, uint32_t i, void *ctx)          sift up
 *   uint32_t name_down(T *h, uint32_t n, uint32_t i, void *ctx)
 *   void name_fix(T *h, uint32_t n, uint32_t i, void *ctx)  after a change
 *   void name_remove(T *h, uint32_t *n, uint32_t i, void *ctx)
 *   T name_pop(T *h, uint32_t *n, void *ctx)                n must be > 0
 *   int name_push(env, T **h, uint32_t *n, uint32_t *cap, T x, void *ctx)
 *
 * `before(const T *a, const T *b, void *ctx)` says a belongs above b; it
 * must be a strict total order for the heap's order to depend on nothing
 * but the keys. `moved(T *e, uint32_t pos, void *ctx)` is told where an
 * element lands (for handles that remember their position); pass
 * GP_HEAP_UNMOVED when nothing needs to know. The sift functions return
 * the element's final position.
 */
#ifndef GPUPOOL_CORE_HEAP_H
#define GPUPOOL_CORE_HEAP_H

#include <stdint.h>
#include <stdlib.h>

#include "gpupool/base.h"

/* Grow an array to hold at least `need` elements, doubling, through env's
 * allocator (NULL = the C library's); GP_ENOMEM past 2^31 elements or
 * when allocation fails (the array is unchanged). */
static inline int gp__grow(const struct gp_env *env, void **p, uint32_t *cap,
                           size_t elem, uint32_t need)
{
    uint32_t n;
    void *q;

    if (need <= *cap)
        return GP_OK;
    n = *cap ? *cap : 16;
    while (n < need) {
        if (n > UINT32_MAX / 2)
            return GP_ENOMEM;
        n *= 2;
    }
    if ((size_t)n > SIZE_MAX / elem ||
        !(q = gp_env_realloc(env, *p, (size_t)n * elem)))
        return GP_ENOMEM;
    *p = q;
    *cap = n;
    return GP_OK;
}

#define GP_HEAP_UNMOVED(e, pos, ctx) ((void)(e), (void)(pos), (void)(ctx))

#define GP_HEAP_DEFINE(name, T, before, moved)                                 \
    __attribute__((unused)) static uint32_t name##_up(T *h, uint32_t i,        \
                                                      void *ctx)               \
    {                                                                          \
        T x = h[i];                                                            \
        while (i > 0) {                                                        \
            uint32_t p = (i - 1) / 2;                                          \
            if (!before(&x, &h[p], ctx))                                       \
                break;                                                         \
            h[i] = h[p];                                                       \
            moved(&h[i], i, ctx);                                              \
            i = p;                                                             \
        }                                                                      \
        h[i] = x;                                                              \
        moved(&h[i], i, ctx);                                                  \
        return i;                                                              \
    }                                                                          \
    __attribute__((unused)) static uint32_t name##_down(T *h, uint32_t n,      \
                                                        uint32_t i, void *ctx) \
    {                                                                          \
        T x = h[i];                                                            \
        for (;;) {                                                             \
            uint32_t l = 2 * i + 1, r = l + 1, m = l;                          \
            if (l >= n)                                                        \
                break;                                                         \
            if (r < n && before(&h[r], &h[l], ctx))                            \
                m = r;                                                         \
            if (!before(&h[m], &x, ctx))                                       \
                break;                                                         \
            h[i] = h[m];                                                       \
            moved(&h[i], i, ctx);                                              \
            i = m;                                                             \
        }                                                                      \
        h[i] = x;                                                              \
        moved(&h[i], i, ctx);                                                  \
        return i;                                                              \
    }                                                                          \
    __attribute__((unused)) static void name##_fix(T *h, uint32_t n,           \
                                                   uint32_t i, void *ctx)      \
    {                                                                          \
        name##_up(h, name##_down(h, n, i, ctx), ctx);                          \
    }                                                                          \
    __attribute__((unused)) static void name##_remove(T *h, uint32_t *n,       \
                                                      uint32_t i, void *ctx)   \
    {                                                                          \
        uint32_t last = --*n;                                                  \
        if (i == last)                                                         \
            return;                                                            \
        h[i] = h[last];                                                        \
        name##_fix(h, *n, i, ctx);                                             \
    }                                                                          \
    __attribute__((unused)) static T name##_pop(T *h, uint32_t *n, void *ctx)  \
    {                                                                          \
        T top = h[0];                                                          \
        name##_remove(h, n, 0, ctx);                                           \
        return top;                                                            \
    }                                                                          \
    __attribute__((unused)) static int name##_push(                            \
        const struct gp_env *env, T **h, uint32_t *n, uint32_t *cap, T x,      \
        void *ctx)                                                             \
    {                                                                          \
        int rc_ = gp__grow(env, (void **)h, cap, sizeof(T), *n + 1);           \
        if (rc_ != GP_OK)                                                      \
            return rc_;                                                        \
        (*h)[*n] = x;                                                          \
        name##_up(*h, (*n)++, ctx);                                            \
        return GP_OK;                                                          \
    }

#endif
