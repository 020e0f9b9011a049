/* test_predict.c - the run-time predictor: keys and fallbacks, the window
 * and its median, min_samples, bad input, memory and determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpupool/predict.h"
#include "predict/predict_priv.h"

#define S(x) ((int64_t)(x)*GP_US_PER_S)

/* Only the fields the predictor reads; strtab ids are made up (0 = none). */
static struct gp_job mkjob(uint32_t tenant, uint32_t user, uint32_t name,
                           uint32_t gpus)
{
    struct gp_job j;

    memset(&j, 0, sizeof(j));
    j.tenant = tenant;
    j.user = user;
    j.name = name;
    j.demand.gpus = gpus;
    j.demand.type = GP_TYPE_ANY;
    return j;
}

static struct gp_predictor *mkpred(uint32_t window, uint32_t min_samples,
                                   int64_t default_us)
{
    struct gp_predictor *p = NULL;
    struct gp_predictor_config cfg = {
        .window = window,
        .min_samples = min_samples,
        .default_us = default_us,
    };

    assert_int_equal(gp_predictor_new(&p, &cfg, NULL), GP_OK);
    assert_non_null(p);
    return p;
}

static void learn_n(struct gp_predictor *p, const struct gp_job *j, int n,
                    int64_t us)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(gp_predictor_learn(p, j, us), GP_OK);
}

/* Predict and check both the value and the key that gave it. */
static void expect(const struct gp_predictor *p, const struct gp_job *j,
                   int64_t us, enum gp_predict_source src)
{
    enum gp_predict_source got = GP_PRED_DEFAULT;
    int64_t v = gp_predictor_predict(p, j, &got);

    assert_string_equal(gp_predict_source_name(got),
                        gp_predict_source_name(src));
    assert_int_equal(v, us);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* The reference median: sort, take the middle (mean of the two middles,
 * rounded down, for an even count). */
static int64_t ref_median(const int64_t *v, size_t n)
{
    int64_t a[256];

    memcpy(a, v, n * sizeof(a[0]));
    qsort(a, n, sizeof(a[0]), cmp_i64);
    if (n % 2)
        return a[n / 2];
    return a[n / 2 - 1] + (a[n / 2] - a[n / 2 - 1]) / 2;
}

static void no_history_uses_the_time_limit_then_the_default(void **state)
{
    struct gp_predictor *p = mkpred(0, 0, S(42));
    struct gp_job j = mkjob(0, 1, 2, 4);

    (void)state;
    j.time_limit_us = S(100);
    expect(p, &j, S(100), GP_PRED_TIME_LIMIT);
    j.time_limit_us = 0;
    expect(p, &j, S(42), GP_PRED_DEFAULT);
    j.time_limit_us = -5; /* not a limit */
    expect(p, &j, S(42), GP_PRED_DEFAULT);
    assert_int_equal(gp_predictor_nkeys(p), 0);
    gp_predictor_free(p);

    /* NULL config: the default is an hour; source may be NULL */
    assert_int_equal(gp_predictor_new(&p, NULL, NULL), GP_OK);
    assert_int_equal(gp_predictor_predict(p, &j, NULL), S(3600));
    gp_predictor_free(p);
}

static void the_most_specific_key_with_enough_history_answers(void **state)
{
    struct gp_predictor *p = mkpred(32, 3, S(1));
    struct gp_job a = mkjob(0, 1, 10, 1), b = mkjob(0, 1, 10, 2);
    struct gp_job q;

    (void)state;
    learn_n(p, &a, 3, S(10));
    /* every key a has, from the most specific down */
    q = mkjob(0, 1, 10, 1);
    expect(p, &q, S(10), GP_PRED_USER_NAME_GPUS);
    q = mkjob(0, 1, 10, 2);
    expect(p, &q, S(10), GP_PRED_USER_NAME);
    q = mkjob(0, 1, 11, 1);
    expect(p, &q, S(10), GP_PRED_USER_GPUS);
    q = mkjob(0, 1, 11, 2);
    expect(p, &q, S(10), GP_PRED_USER);
    q = mkjob(0, 2, 10, 1);
    expect(p, &q, S(10), GP_PRED_TENANT_GPUS);
    q = mkjob(0, 2, 10, 2);
    expect(p, &q, S(10), GP_PRED_TENANT);
    q = mkjob(1, 2, 10, 1);
    expect(p, &q, S(10), GP_PRED_GLOBAL);
    q.time_limit_us = S(99); /* history beats the time limit */
    expect(p, &q, S(10), GP_PRED_GLOBAL);

    /* a more specific key shadows a broader one with other durations */
    learn_n(p, &b, 3, S(30));
    expect(p, &b, S(30), GP_PRED_USER_NAME_GPUS);
    expect(p, &a, S(10), GP_PRED_USER_NAME_GPUS);
    q = mkjob(0, 1, 10, 4); /* user+name holds 10,10,10,30,30,30 */
    expect(p, &q, S(20), GP_PRED_USER_NAME);
    gp_predictor_free(p);
}

static void jobs_without_a_user_or_name_skip_those_keys(void **state)
{
    struct gp_predictor *p = mkpred(32, 1, S(1));
    struct gp_job anon = mkjob(0, 0, 10, 1), noname = mkjob(0, 1, 0, 1);
    struct gp_job q;

    (void)state;
    learn_n(p, &anon, 1, S(5)); /* tenant+gpus, tenant, global */
    assert_int_equal(gp_predictor_nkeys(p), 3);
    /* user 0 is "no user", not a user called 0 */
    expect(p, &anon, S(5), GP_PRED_TENANT_GPUS);
    learn_n(p, &noname, 1, S(7)); /* + user+gpus, user */
    assert_int_equal(gp_predictor_nkeys(p), 5);
    expect(p, &noname, S(7), GP_PRED_USER_GPUS);
    q = mkjob(0, 1, 10, 1); /* has a name; no user+name history yet */
    expect(p, &q, S(7), GP_PRED_USER_GPUS);
    gp_predictor_free(p);
}

static void median_of_recent_durations_is_predicted(void **state)
{
    struct gp_predictor *p = mkpred(5, 1, S(1));
    struct gp_job j = mkjob(0, 1, 2, 1);
    const int64_t odd[] = {1, 2, 3, 4, 100};
    const uint32_t windows[] = {1, 2, 5, 31, 32, 255};
    struct gp_rng rng;

    (void)state;
    for (size_t i = 0; i < 5; i++)
        learn_n(p, &j, 1, odd[i]);
    expect(p, &j, 3, GP_PRED_USER_NAME_GPUS);
    /* the window slides: 1 and 2 fall out, 3 4 100 200 300 remain */
    learn_n(p, &j, 1, 200);
    learn_n(p, &j, 1, 300);
    expect(p, &j, 100, GP_PRED_USER_NAME_GPUS);
    learn_n(p, &j, 5, 7); /* the old samples are all gone */
    expect(p, &j, 7, GP_PRED_USER_NAME_GPUS);
    gp_predictor_free(p);

    /* an even count: the mean of the two middles, rounded down */
    p = mkpred(4, 1, S(1));
    learn_n(p, &j, 1, 10);
    learn_n(p, &j, 1, 1);
    expect(p, &j, 5, GP_PRED_USER_NAME_GPUS); /* (1 + 10) / 2 */
    learn_n(p, &j, 1, 3);
    learn_n(p, &j, 1, 2);
    expect(p, &j, 2, GP_PRED_USER_NAME_GPUS); /* 1 2 3 10: (2 + 3) / 2 */
    gp_predictor_free(p);

    /* the selection agrees with a full sort, ties and all, at every count
     * up to and past each window */
    gp_rng_init(&rng, 7);
    for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
        int64_t hist[600];

        p = mkpred(windows[w], 1, S(1));
        for (size_t i = 0; i < 600; i++) {
            size_t n = i + 1 < windows[w] ? i + 1 : windows[w];

            /* every other value from a few, so ties are common */
            if (i % 2)
                hist[i] = 1 + (int64_t)(gp_rng_next(&rng) % 9) * S(1);
            else
                hist[i] = 1 + (int64_t)(gp_rng_next(&rng) % S(86400));
            learn_n(p, &j, 1, hist[i]);
            expect(p, &j, ref_median(&hist[i + 1 - n], n),
                   GP_PRED_USER_NAME_GPUS);
        }
        gp_predictor_free(p);
    }
}

static void a_key_needs_min_samples_to_answer(void **state)
{
    struct gp_predictor *p = mkpred(32, 3, S(1));
    struct gp_job j = mkjob(0, 1, 2, 1);

    (void)state;
    learn_n(p, &j, 2, S(10));
    /* two samples: too few for every key but "everyone" */
    expect(p, &j, S(10), GP_PRED_GLOBAL);
    learn_n(p, &j, 1, S(40));
    expect(p, &j, S(10), GP_PRED_USER_NAME_GPUS);
    gp_predictor_free(p);

    p = mkpred(32, 1, S(1)); /* min_samples 1: any history answers */
    learn_n(p, &j, 1, S(10));
    expect(p, &j, S(10), GP_PRED_USER_NAME_GPUS);
    gp_predictor_free(p);

    /* a window below the default min_samples lowers it with it */
    p = mkpred(2, 0, S(1));
    learn_n(p, &j, 2, S(10));
    expect(p, &j, S(10), GP_PRED_USER_NAME_GPUS);
    gp_predictor_free(p);
}

static void global_answers_from_one_sample(void **state)
{
    struct gp_predictor *p = mkpred(32, 5, S(1));
    struct gp_job j = mkjob(0, 1, 2, 1), other = mkjob(3, 4, 5, 8);

    (void)state;
    learn_n(p, &j, 1, S(7));
    expect(p, &j, S(7), GP_PRED_GLOBAL);
    other.time_limit_us = S(500);
    expect(p, &other, S(7), GP_PRED_GLOBAL);
    gp_predictor_free(p);
}

static void learning_rejects_non_positive_durations(void **state)
{
    struct gp_predictor *p = mkpred(32, 1, S(1));
    struct gp_job j = mkjob(0, 1, 2, 1);

    (void)state;
    assert_int_equal(gp_predictor_learn(p, &j, 0), GP_EINVAL);
    assert_int_equal(gp_predictor_learn(p, &j, -1), GP_EINVAL);
    assert_int_equal(gp_predictor_learn(p, &j, INT64_MIN), GP_EINVAL);
    assert_int_equal(gp_predictor_learn(p, NULL, 1), GP_EINVAL);
    assert_int_equal(gp_predictor_learn(NULL, &j, 1), GP_EINVAL);
    assert_int_equal(gp_predictor_nkeys(p), 0);
    expect(p, &j, S(1), GP_PRED_DEFAULT);
    assert_int_equal(gp_predictor_learn(p, &j, 1), GP_OK);
    expect(p, &j, 1, GP_PRED_USER_NAME_GPUS);
    gp_predictor_free(p);
}

static void config_out_of_range_is_rejected(void **state)
{
    struct gp_predictor *p = NULL;
    struct gp_predictor_config cfg = {.window = 256};

    (void)state;
    assert_int_equal(gp_predictor_new(&p, &cfg, NULL), GP_EINVAL);
    cfg = (struct gp_predictor_config){.window = 4, .min_samples = 5};
    assert_int_equal(gp_predictor_new(&p, &cfg, NULL), GP_EINVAL);
    cfg = (struct gp_predictor_config){.default_us = -1};
    assert_int_equal(gp_predictor_new(&p, &cfg, NULL), GP_EINVAL);
    assert_null(p); /* out-parameters are written only on success */
    cfg = (struct gp_predictor_config){.window = 255, .min_samples = 255};
    assert_int_equal(gp_predictor_new(&p, &cfg, NULL), GP_OK);
    gp_predictor_free(p);
    gp_predictor_free(NULL);
}

/* 200k users, one job each: 4 user keys a job, all in one table that keeps
 * its load in (0.46, 0.7], and every user still gets its own answer. */
static void many_keys_stay_within_memory(void **state)
{
    const uint32_t nusers = 200000;
    struct gp_predictor *p = mkpred(32, 1, S(1));
    size_t table;

    (void)state;
    for (uint32_t u = 1; u <= nusers; u++) {
        struct gp_job j = mkjob(u % 4, u, 1, 1u << (u % 4));

        learn_n(p, &j, 1, S(u));
    }
    /* 4 user keys each; tenant+gpus and tenant for 4 tenants; global */
    assert_int_equal(gp_predictor_nkeys(p), 4 * nusers + 4 + 4 + 1);
    for (uint32_t u = 1; u <= nusers; u++) {
        struct gp_job j = mkjob(u % 4, u, 1, 1u << (u % 4));

        expect(p, &j, S(u), GP_PRED_USER_NAME_GPUS);
        j.name = 2;
        expect(p, &j, S(u), GP_PRED_USER_GPUS);
    }
    /* one sample a key sits inline: the table is all the memory there is,
     * 24 bytes a slot at a load of at least 0.46 */
    table = gp__predictor_mem_bytes(p);
    print_message("%zu keys, %.1f bytes per key\n", gp_predictor_nkeys(p),
                  (double)table / (double)gp_predictor_nkeys(p));
    assert_true(table <= (size_t)(gp_predictor_nkeys(p) * 24 / 0.46) + 4096);
    gp_predictor_free(p);
}

/* The sizing the predictor is built for: a million jobs, 10k users with 10
 * job names each, a few GPU counts per name, 8 tenants. */
static void a_million_jobs_take_well_under_100_bytes_each(void **state)
{
    const uint32_t njobs = 1000000;
    struct gp_predictor *p = mkpred(32, 3, S(1));
    struct gp_rng rng;
    double per_job;

    (void)state;
    gp_rng_init(&rng, 42);
    for (uint32_t i = 0; i < njobs; i++) {
        uint32_t user = 1 + (uint32_t)(gp_rng_next(&rng) % 10000);
        uint32_t name = 1 + user * 10 + (uint32_t)(gp_rng_next(&rng) % 10);
        uint32_t gpus = 1u << (gp_rng_next(&rng) % 3);
        struct gp_job j = mkjob(user % 8, user, name, gpus);

        learn_n(p, &j, 1, 1 + (int64_t)(gp_rng_next(&rng) % S(3600)));
    }
    per_job = (double)gp__predictor_mem_bytes(p) / njobs;
    print_message("%zu keys, %.1f bytes per learned job\n",
                  gp_predictor_nkeys(p), per_job);
    assert_true(per_job < 55.0); /* 48.9 when written */
    gp_predictor_free(p);
}

/* Same history, same answers, whatever the run; and the table's layout
 * (which depends on the order keys arrived) never shows in an answer. */
static void predictions_are_deterministic(void **state)
{
    enum { N = 250 };
    struct gp_predictor *fwd = mkpred(255, 2, S(1));
    struct gp_predictor *again = mkpred(255, 2, S(1));
    struct gp_predictor *rev = mkpred(255, 2, S(1));
    struct gp_job jobs[N];
    int64_t us[N];
    struct gp_rng rng;

    (void)state;
    gp_rng_init(&rng, 2024);
    for (int i = 0; i < N; i++) {
        jobs[i] = mkjob((uint32_t)(gp_rng_next(&rng) % 3),
                        (uint32_t)(gp_rng_next(&rng) % 20),
                        (uint32_t)(gp_rng_next(&rng) % 5),
                        1u << (gp_rng_next(&rng) % 4));
        us[i] = 1 + (int64_t)(gp_rng_next(&rng) % S(1000));
    }
    for (int i = 0; i < N; i++) {
        learn_n(fwd, &jobs[i], 1, us[i]);
        learn_n(again, &jobs[i], 1, us[i]);
        learn_n(rev, &jobs[N - 1 - i], 1, us[N - 1 - i]);
    }
    assert_int_equal(gp_predictor_nkeys(fwd), gp_predictor_nkeys(rev));
    /* every learned shape, and some never seen */
    for (int i = 0; i < N + 40; i++) {
        struct gp_job q = i < N ? jobs[i]
                                : mkjob((uint32_t)(i % 5), (uint32_t)(i % 23),
                                        (uint32_t)(i % 7), (uint32_t)i % 16);
        enum gp_predict_source s1, s2, s3;
        int64_t v1 = gp_predictor_predict(fwd, &q, &s1);
        int64_t v2 = gp_predictor_predict(again, &q, &s2);
        int64_t v3 = gp_predictor_predict(rev, &q, &s3);

        assert_true(v1 > 0);
        assert_int_equal(v1, v2);
        assert_int_equal(s1, s2);
        /* the window holds all N samples, so order within a key is moot */
        assert_int_equal(v1, v3);
        assert_int_equal(s1, s3);
    }
    gp_predictor_free(fwd);
    gp_predictor_free(again);
    gp_predictor_free(rev);
}

static void source_names_are_stable(void **state)
{
    (void)state;
    assert_string_equal(gp_predict_source_name(GP_PRED_USER_NAME_GPUS),
                        "user+name+gpus");
    assert_string_equal(gp_predict_source_name(GP_PRED_GLOBAL), "global");
    assert_string_equal(gp_predict_source_name(GP_PRED_TIME_LIMIT),
                        "time_limit");
    assert_string_equal(gp_predict_source_name(GP_PRED_DEFAULT), "default");
    assert_string_equal(gp_predict_source_name((enum gp_predict_source)99),
                        "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_history_uses_the_time_limit_then_the_default),
        cmocka_unit_test(the_most_specific_key_with_enough_history_answers),
        cmocka_unit_test(jobs_without_a_user_or_name_skip_those_keys),
        cmocka_unit_test(median_of_recent_durations_is_predicted),
        cmocka_unit_test(a_key_needs_min_samples_to_answer),
        cmocka_unit_test(global_answers_from_one_sample),
        cmocka_unit_test(learning_rejects_non_positive_durations),
        cmocka_unit_test(config_out_of_range_is_rejected),
        cmocka_unit_test(many_keys_stay_within_memory),
        cmocka_unit_test(a_million_jobs_take_well_under_100_bytes_each),
        cmocka_unit_test(predictions_are_deterministic),
        cmocka_unit_test(source_names_are_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
