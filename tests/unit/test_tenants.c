/* test_tenants.c - the tenants file: what it accepts, and errors that name
 * the entry and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trace/tenants.h"

static int parse(const char *json, struct gp_tenant_list *l,
                 struct gp_diag *diag)
{
    gp_tenant_list_init(l);
    return gp_tenants_parse(l, json, strlen(json), "t.json", diag);
}

static void a_full_entry_is_read(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(
        parse("{\"tenants\":[{\"name\":\"r\",\"guarantee\":8},"
              "{\"name\":\"v\",\"parent\":\"r\",\"weight\":2.5,\"cap\":6,"
              "\"lend_limit\":1,\"guarantee\":5},"
              "{\"name\":\"w\",\"guarantee_by_type\":{\"V100\":3,"
              "\"K80\":2}}]}",
              &l, &d),
        GP_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.t[1].name, "v");
    assert_string_equal(l.t[1].parent, "r");
    assert_true(l.t[1].weight == 2.5);
    assert_int_equal(l.t[1].guarantee, 5);
    assert_int_equal(l.t[1].cap, 6);
    assert_int_equal(l.t[1].lend_limit, 1);
    assert_int_equal(l.t[1].nby_type, 0);
    assert_int_equal(l.t[2].guarantee, 5); /* the sum by type */
    assert_int_equal(l.t[2].nby_type, 2);
    assert_string_equal(l.t[2].by_type[0].type, "V100");
    assert_int_equal(l.t[2].by_type[0].gpus, 3);
    assert_string_equal(l.t[2].by_type[1].type, "K80");
    assert_int_equal(l.t[2].by_type[1].gpus, 2);
    gp_tenant_list_fini(&l);
}

static void expect_error(const char *json, int code, const char *where,
                         const char *words)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    assert_int_equal(parse(json, &l, &d), code);
    assert_non_null(strstr(d.where, where));
    assert_non_null(strstr(d.msg, words));
    gp_tenant_list_fini(&l);
}

static void mistakes_name_the_entry_and_the_key(void **state)
{
    (void)state;
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarnatee\":1}]}", GP_EPARSE,
                 "tenants[0]", "guarnatee");
    expect_error("{\"tenants\":[{\"name\":\"a\"},{\"name\":\"b\",\"cap\":1,"
                 "\"guarantee\":2}]}",
                 GP_EINVAL, "tenants[1]", "below the guarantee");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee\":2,"
                 "\"lend_limit\":3}]}",
                 GP_EINVAL, "tenants[0]", "above the guarantee");
    expect_error("{\"tenants\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", GP_EEXIST,
                 "tenants[1]", "twice");
    expect_error("{\"tenants\":[{\"name\":\"c\",\"parent\":\"p\"}]}", GP_ENOENT,
                 "tenants[0].parent", "'p'");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee\":-1}]}", GP_ERANGE,
                 "tenants[0]", "guarantee");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"weight\":0}]}", GP_ERANGE,
                 "tenants[0]", "weight");
    expect_error("{\"tenants\":[{\"guarantee\":1}]}", GP_EPARSE, "tenants[0]",
                 "name");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee\":3,"
                 "\"guarantee_by_type\":{\"V100\":2}}]}",
                 GP_EINVAL, "tenants[0]", "differs");
    expect_error("{\"tenants\":[{\"name\":\"r\",\"guarantee\":4},"
                 "{\"name\":\"c\",\"parent\":\"r\","
                 "\"guarantee_by_type\":{\"V100\":2}}]}",
                 GP_EINVAL, "tenants[1]", "without parent or children");
    expect_error("{\"tenants\":[{\"name\":\"r\",\"guarantee_by_type\":"
                 "{\"V100\":2}},{\"name\":\"c\",\"parent\":\"r\"}]}",
                 GP_EINVAL, "tenants[1]", "without parent or children");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee_by_type\":{}}]}",
                 GP_EPARSE, "tenants[0]", "guarantee_by_type");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee_by_type\":"
                 "{\"V100\":\"2\"}}]}",
                 GP_EPARSE, "tenants[0]", "guarantee_by_type.V100");
    expect_error("{\"tenant\":[]}", GP_EPARSE, "t.json", "tenant");
    expect_error("{\"tenants\":\n[{\"name\":\"a\",}]}", GP_EPARSE, "t.json:2",
                 "");
}

static void a_missing_file_is_an_io_error(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_load(&l, "/nonexistent/t.json", &d), GP_EIO);
    assert_non_null(strstr(d.where, "/nonexistent/t.json"));
    gp_tenant_list_fini(&l);
}

static void the_bundled_files_load(void **state)
{
    static const char *const files[] = {
        "data/tenants/philly-vcs.json",
        "data/tenants/gavel-vcs.json",
        "data/tenants/itp-clusters.json",
    };
    static const uint32_t gpus[] = {512, 512, 1544};

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        struct gp_tenant_list l;
        struct gp_diag d = {{0}, {0}};
        uint32_t sum = 0;

        gp_tenant_list_init(&l);
        assert_int_equal(gp_tenants_load(&l, files[i], &d), GP_OK);
        for (size_t k = 0; k < l.n; k++)
            sum += l.t[k].guarantee;
        assert_int_equal(sum, gpus[i]);
        gp_tenant_list_fini(&l);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_full_entry_is_read),
        cmocka_unit_test(mistakes_name_the_entry_and_the_key),
        cmocka_unit_test(a_missing_file_is_an_io_error),
        cmocka_unit_test(the_bundled_files_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
