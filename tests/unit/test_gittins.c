/* test_gittins.c - the Gittins index table (src/policy/gittins.c) and the
 * tiresias-gittins policy that orders a queue by it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core_harness.h"
#include "policy/policy.h"

static struct gp_gittins *table(double quantum, const double *s, size_t n)
{
    struct gp_gittins *g = NULL;

    assert_int_equal(gp__gittins_new(&g, NULL, quantum), GP_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gp__gittins_add(g, s[i]), GP_OK);
    return g;
}

/* Samples 10, 20, 40, 100 GPU-s, quantum 15: index(a) = (survivors ending
 * within a+15) / (the service survivors use within the quantum). */
static void index_is_the_formula_worked_by_hand(void **state)
{
    static const double s[] = {100, 20, 10, 40};
    struct gp_gittins *g = table(15, s, 4);

    (void)state;
    /* a=0: 4 survive, 10 ends within 15; used 10 + 3 x 15 = 55 */
    assert_float_equal(gp__gittins_index(g, 0), 1.0 / 55, 1e-12);
    /* a=10: 20, 40, 100 survive (> 10); 20 ends by 25; used 10 + 2 x 15 */
    assert_float_equal(gp__gittins_index(g, 10), 1.0 / 40, 1e-12);
    /* a=30: 40 and 100; 40 ends by 45; used 10 + 15 */
    assert_float_equal(gp__gittins_index(g, 30), 1.0 / 25, 1e-12);
    /* a=50: only 100, not by 65: 0 */
    assert_float_equal(gp__gittins_index(g, 50), 0, 0);
    /* past every sample: 0 */
    assert_float_equal(gp__gittins_index(g, 100), 0, 0);
    gp__gittins_free(g);
    g = table(15, NULL, 0);
    assert_float_equal(gp__gittins_index(g, 0), 0, 0); /* no samples */
    assert_int_equal(gp__gittins_add(g, -1), GP_EINVAL);
    assert_int_equal(gp__gittins_add(g, 12), GP_OK);
    /* the table follows a sample added after a lookup */
    assert_float_equal(gp__gittins_index(g, 0), 1.0 / 12, 1e-12);
    gp__gittins_free(g);
}

static char *write_tmp(const char *text)
{
    static char path[64];
    int fd;

    strcpy(path, "/tmp/gp-gittins-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void samples_load_from_a_file_with_its_errors_named(void **state)
{
    struct gp_gittins *g = NULL;
    struct gp_diag d = {{0}, {0}};
    char *p;

    (void)state;
    assert_int_equal(gp__gittins_new(&g, NULL, 15), GP_OK);
    p = write_tmp("duration\r\n100\r\n20\r\n10\r\n40\r\n");
    assert_int_equal(gp__gittins_load(g, p, "k", &d), GP_OK);
    assert_int_equal(gp__gittins_nsamples(g), 4);
    assert_float_equal(gp__gittins_index(g, 10), 1.0 / 40, 1e-12);
    unlink(p);
    p = write_tmp("job,gpu_time\na,5\nb,x\n");
    assert_int_equal(gp__gittins_load(g, p, "k", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, ":3: expected GPU-seconds >= 0"));
    unlink(p);
    p = write_tmp("job,size\na,5\n");
    assert_int_equal(gp__gittins_load(g, p, "k", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, ":1: no column duration or gpu_time"));
    unlink(p);
    p = write_tmp("duration\n");
    assert_int_equal(gp__gittins_load(g, p, "k", &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, "no samples"));
    unlink(p);
    assert_int_equal(gp__gittins_load(g, "/nonexistent/x.csv", "k", &d),
                     GP_ENOENT);
    gp__gittins_free(g);
}

/* 2 GPUs, one queue limit at 40 GPU-s, quantum 20, samples 60, 60, 60,
 * 1000. x (from 0 s) and y (from 10 s) enter Q1 at 40 and 50 s; z (2 GPUs,
 * 15 s, Q0) preempts both at 60 s: x has 60 GPU-s (index 0: only 1000 is
 * left), y 50 (index 3 / (3 x 10 + 20)). u (Q0) arrives at 70 s and waits
 * behind z; when z ends at 75 s, u takes one GPU and the other goes to y,
 * though x entered Q1 first: tiresias, in entry order, gives it to x. */
static void a_queue_is_served_by_gittins_index(void **state)
{
    static const char *const pols[] = {"tiresias-gittins", "tiresias"};
    char *path = write_tmp("duration\n60\n60\n60\n1000\n");

    (void)state;
    for (int k = 0; k < 2; k++) {
        struct gp_kv opts[] = {{"limits", "40"},
                               {"quantum", "20"},
                               {"dist", path},
                               {"learn", "0"}};
        struct rec r;
        struct gp_core *core = mkcore_opts(pols[k], 1, 2, GP_PLACE_PACK, 0, &r,
                                           opts, k == 0 ? 4 : 1);
        uint64_t x, y, z, u;

        assert_non_null(core);
        x = submit(core, "x", 1, 500, 0);
        round_at(core, 0);
        y = submit(core, "y", 1, 500, 10);
        round_at(core, S(10));
        round_at(core, S(40));
        round_at(core, S(50));
        z = submit(core, "z", 2, 15, 60);
        round_at(core, S(60));
        assert_int_equal(state_of(core, z), GP_JOB_RUNNING);
        assert_int_equal(state_of(core, x), GP_JOB_PENDING);
        assert_int_equal(state_of(core, y), GP_JOB_PENDING);
        u = submit(core, "u", 1, 1000, 70);
        round_at(core, S(70));
        assert_int_equal(state_of(core, u), GP_JOB_PENDING);
        assert_int_equal(gp_core_job_ended(core, z, GP_JOB_COMPLETED, S(75)),
                         GP_OK);
        round_at(core, S(75));
        assert_int_equal(state_of(core, u), GP_JOB_RUNNING);
        assert_int_equal(state_of(core, k == 0 ? y : x), GP_JOB_RUNNING);
        assert_int_equal(state_of(core, k == 0 ? x : y), GP_JOB_PENDING);
        gp_core_free(core);
    }
    unlink(path);
}

static void bad_options_are_named(void **state)
{
    struct gp_kv bad_q[] = {{"quantum", "0"}};
    struct gp_kv bad_learn[] = {{"learn", "yes"}};
    struct gp_kv no_file[] = {{"dist", "/nonexistent/d.csv"}};
    struct gp_kv mode[] = {{"mode", "artifact"}};
    struct gp_kv tmode[] = {{"mode", "sometimes"}};
    struct gp_core *core;
    struct rec r;

    (void)state;
    assert_null(
        mkcore_opts("tiresias-gittins", 1, 2, GP_PLACE_PACK, 0, &r, bad_q, 1));
    assert_null(mkcore_opts("tiresias-gittins", 1, 2, GP_PLACE_PACK, 0, &r,
                            bad_learn, 1));
    assert_null(mkcore_opts("tiresias-gittins", 1, 2, GP_PLACE_PACK, 0, &r,
                            no_file, 1));
    assert_null(
        mkcore_opts("tiresias-gittins", 1, 2, GP_PLACE_PACK, 0, &r, mode, 1));
    assert_null(mkcore_opts("tiresias", 1, 2, GP_PLACE_PACK, 0, &r, tmode, 1));
    core = mkcore_opts("tiresias", 1, 2, GP_PLACE_PACK, 0, &r, mode, 1);
    assert_non_null(core); /* tiresias has an artifact mode */
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(index_is_the_formula_worked_by_hand),
        cmocka_unit_test(samples_load_from_a_file_with_its_errors_named),
        cmocka_unit_test(a_queue_is_served_by_gittins_index),
        cmocka_unit_test(bad_options_are_named),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
