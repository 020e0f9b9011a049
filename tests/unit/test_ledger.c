/* test_ledger.c - changing a tenant's promise at run time
 * (gp_core_update_tenant): what it changes, what it refuses, and that the
 * next rounds act on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core_harness.h"

static void add(struct gp_core *core, const char *name, uint32_t guarantee)
{
    struct gp_tenant_spec t = {.name = name, .guarantee = guarantee};

    assert_int_equal(gp_core_add_tenant(core, &t, NULL), GP_OK);
}

static void submit_for(struct gp_core *core, const char *tenant, int n,
                       double at_s)
{
    static int seq;

    for (int i = 0; i < n; i++) {
        char id[32];
        struct gp_job_spec spec = {
            .id = id,
            .tenant = tenant,
            .gpus = 1,
            .duration_us = S(100000),
            .submit_us = (int64_t)(at_s * 1e6),
            .checkpointable = true,
        };
        uint64_t jid;

        snprintf(id, sizeof(id), "%s%d", tenant, seq++);
        assert_int_equal(
            gp_core_submit(core, &spec, spec.submit_us, &jid, NULL), GP_OK);
    }
}

static const struct gp_tenant_info *info(struct gp_core *core, const char *name)
{
    uint32_t t;

    assert_int_equal(gp_core_find_tenant(core, name, &t), GP_OK);
    return gp_core_tenant_info(core, t);
}

/* a fills 4 GPUs; b then asks for 4. Alike, each is entitled to 2. Given a
 * guarantee of 4 while the jobs run, b is entitled to all 4 at once and the
 * pool takes a's GPUs back for it in the next rounds; without the change b
 * ends with 2. */
static void a_raised_guarantee_takes_gpus_back_at_the_next_round(void **state)
{
    (void)state;
    for (int raise = 0; raise <= 1; raise++) {
        struct rec r;
        struct gp_core *core = mkcore("pool", 1, 4, &r);

        assert_non_null(core);
        add(core, "a", 0);
        add(core, "b", 0);
        submit_for(core, "a", 4, 0);
        round_at(core, 0);
        assert_int_equal(info(core, "a")->held_milli, 4000);
        submit_for(core, "b", 4, 1);
        if (raise) {
            struct gp_tenant_spec up = {.name = "b", .guarantee = 4};

            assert_true(info(core, "b")->entitled < 2.01);
            assert_int_equal(gp_core_update_tenant(core, &up, NULL), GP_OK);
            /* the ledger is stale until read: read, it is the new one */
            assert_int_equal(info(core, "b")->guarantee, 4);
            assert_true(info(core, "b")->entitled > 3.99);
            assert_true(info(core, "a")->entitled < 0.01);
        }
        for (int k = 0; k < 10; k++)
            round_at(core, S(2 + k));
        assert_int_equal(info(core, "b")->held_milli, raise ? 4000 : 2000);
        assert_int_equal(info(core, "a")->held_milli, raise ? 0 : 2000);
        assert_true(r.preempts >= (raise ? 4u : 2u));
        gp_core_free(core);
    }
}

/* Weight, cap and lend_limit change; a lower cap holds the tenant to it
 * from the next rounds on. */
static void weight_cap_and_lend_limit_change(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("pool", 1, 8, &r);
    struct gp_tenant_spec up = {
        .name = "a", .weight = 3, .guarantee = 2, .cap = 3, .lend_limit = 1};
    const struct gp_tenant_info *a;

    (void)state;
    assert_non_null(core);
    add(core, "a", 2);
    add(core, "b", 0);
    submit_for(core, "a", 8, 0);
    round_at(core, 0);
    assert_int_equal(info(core, "a")->held_milli, 8000);
    assert_int_equal(gp_core_update_tenant(core, &up, NULL), GP_OK);
    a = info(core, "a");
    assert_true(a->weight == 3);
    assert_int_equal(a->guarantee, 2);
    assert_int_equal(a->cap, 3);
    assert_int_equal(a->lend_limit, 1);
    assert_true(a->entitled < 3.01);
    /* weight 0 means 1, as when declared */
    up.weight = 0;
    assert_int_equal(gp_core_update_tenant(core, &up, NULL), GP_OK);
    assert_true(info(core, "a")->weight == 1);
    gp_core_free(core);
}

static void refused(struct gp_core *core, const struct gp_tenant_spec *s,
                    int code, const char *words)
{
    struct gp_diag d = {{0}, {0}};
    const struct gp_tenant_info *before = info(core, "p");
    struct gp_tenant_info copy = *before;

    assert_int_equal(gp_core_update_tenant(core, s, &d), code);
    assert_non_null(strstr(d.msg, words));
    /* nothing changed */
    before = info(core, "p");
    assert_true(before->weight == copy.weight);
    assert_int_equal(before->guarantee, copy.guarantee);
    assert_int_equal(before->cap, copy.cap);
    assert_int_equal(before->lend_limit, copy.lend_limit);
}

static void mistakes_are_refused_and_change_nothing(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("pool", 1, 8, &r);
    struct gp_tenant_spec p = {.name = "p", .guarantee = 4, .cap = 6};
    struct gp_tenant_spec c = {.name = "c", .parent = "p", .guarantee = 2};
    struct gp_tenant_spec s;

    (void)state;
    assert_non_null(core);
    assert_int_equal(gp_core_add_tenant(core, &p, NULL), GP_OK);
    assert_int_equal(gp_core_add_tenant(core, &c, NULL), GP_OK);
    add(core, "q", 0);
    submit_for(core, "undeclared", 1, 0); /* a tenant made by its job */

    s = (struct gp_tenant_spec){.name = "nope"};
    refused(core, &s, GP_ENOENT, "no tenant declared as 'nope'");
    s = (struct gp_tenant_spec){.name = "undeclared"};
    refused(core, &s, GP_ENOENT, "'undeclared'");
    s = (struct gp_tenant_spec){.name = NULL};
    refused(core, &s, GP_ENOENT, "no tenant");
    s = (struct gp_tenant_spec){.name = "p", .guarantee = 4, .cap = 3};
    refused(core, &s, GP_EINVAL, "cap 3 is below the guarantee 4");
    s = (struct gp_tenant_spec){.name = "p", .guarantee = 4, .lend_limit = 5};
    refused(core, &s, GP_EINVAL, "lend_limit 5 is above the guarantee 4");
    s = (struct gp_tenant_spec){.name = "p", .weight = -1};
    refused(core, &s, GP_EINVAL, "weight");
    s = (struct gp_tenant_spec){.name = "p", .weight = 1.0 / 0.0};
    refused(core, &s, GP_EINVAL, "weight");
    s = (struct gp_tenant_spec){.name = "p", .parent = "q"};
    refused(core, &s, GP_EINVAL, "place in the tree");
    {
        struct gp_type_guarantee g = {"gpu", 2};

        s = (struct gp_tenant_spec){
            .name = "p", .guarantee = 2, .by_type = &g, .nby_type = 1};
        refused(core, &s, GP_EINVAL, "guarantee_by_type");
    }
    /* the parent a child has may be named */
    s = (struct gp_tenant_spec){.name = "c", .parent = "p", .guarantee = 1};
    assert_int_equal(gp_core_update_tenant(core, &s, NULL), GP_OK);
    assert_int_equal(info(core, "c")->guarantee, 1);
    s = (struct gp_tenant_spec){.name = "c", .parent = "q", .guarantee = 1};
    assert_int_equal(gp_core_update_tenant(core, &s, NULL), GP_EINVAL);
    gp_core_free(core);
}

/* A guarantee split by GPU type keeps its parts: weight and cap change,
 * the guarantee may only be restated. */
static void a_typed_tenant_keeps_its_parts(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("pool", 1, 8, &r);
    struct gp_type_guarantee g = {"gpu", 3};
    struct gp_tenant_spec t = {.name = "t", .by_type = &g, .nby_type = 1};
    struct gp_tenant_spec s;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_non_null(core);
    assert_int_equal(gp_core_add_tenant(core, &t, NULL), GP_OK);
    s = (struct gp_tenant_spec){.name = "t", .weight = 2, .cap = 5};
    assert_int_equal(gp_core_update_tenant(core, &s, NULL), GP_OK);
    assert_int_equal(info(core, "t")->guarantee, 3);
    assert_int_equal(info(core, "t")->by_type[0].guarantee, 3);
    assert_int_equal(info(core, "t")->cap, 5);
    s = (struct gp_tenant_spec){.name = "t", .guarantee = 3, .cap = 5};
    assert_int_equal(gp_core_update_tenant(core, &s, NULL), GP_OK);
    s = (struct gp_tenant_spec){.name = "t", .guarantee = 4};
    assert_int_equal(gp_core_update_tenant(core, &s, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "split by GPU type"));
    s = (struct gp_tenant_spec){.name = "t", .cap = 2};
    assert_int_equal(gp_core_update_tenant(core, &s, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "below the guarantee 3"));
    assert_int_equal(info(core, "t")->cap, 5);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_raised_guarantee_takes_gpus_back_at_the_next_round),
        cmocka_unit_test(weight_cap_and_lend_limit_change),
        cmocka_unit_test(mistakes_are_refused_and_change_nothing),
        cmocka_unit_test(a_typed_tenant_keeps_its_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
