/* test_base.c - the small things every module uses: the arena refuses
 * what it cannot hold (never wraps), arithmetic on time x GPUs saturates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "gpupool/base.h"

static void a_huge_arena_request_is_refused_not_wrapped(void **state)
{
    struct gp_arena a;
    char *p;

    (void)state;
    gp_arena_init(&a, 1 << 20);
    /* rounded up to the alignment these would wrap to a few bytes */
    assert_null(gp_arena_alloc(&a, SIZE_MAX));
    assert_null(gp_arena_alloc(&a, SIZE_MAX - 3));
    assert_null(gp_arena_alloc(&a, (1 << 20) + 1));
    assert_non_null(p = gp_arena_alloc(&a, 100));
    p[99] = 1;
    assert_int_equal(a.used_total % sizeof(max_align_t), 0);
    gp_arena_fini(&a);
}

static void time_by_gpus_saturates_instead_of_overflowing(void **state)
{
    /* 100 years in microseconds on 100,000 GPUs */
    int64_t t = INT64_C(3155760000) * GP_US_PER_S;

    (void)state;
    assert_int_equal(gp_mul_sat(t, 100000), INT64_MAX);
    assert_int_equal(gp_mul_sat(-t, 100000), INT64_MIN);
    assert_int_equal(gp_mul_sat(t, 2), 2 * t);
    assert_int_equal(gp_add_sat(INT64_MAX, 1), INT64_MAX);
    assert_int_equal(gp_add_sat(INT64_MIN, -1), INT64_MIN);
    assert_int_equal(gp_add_sat(40, 2), 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_huge_arena_request_is_refused_not_wrapped),
        cmocka_unit_test(time_by_gpus_saturates_instead_of_overflowing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
