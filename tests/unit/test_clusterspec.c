/* test_clusterspec.c - clusters from spec strings, presets, JSON files and
 * node-list CSVs: what each builds, and that every error names its place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gpupool/trace.h"
#include "trace/clusterspec.h"

#define DATA "tests/data/cluster/"

static struct gp_cluster *must_build(const char *spec)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_cluster_from_spec(spec, &c, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s: %s", spec, gp_err_name(rc), d.where, d.msg);
    assert_non_null(c);
    return c;
}

/* Build from JSON text in memory; the error code, diag filled. */
static int json_err(const char *text, struct gp_diag *d)
{
    struct gp_cluster *c = NULL;
    int rc;

    memset(d, 0, sizeof(*d));
    rc = gp__cluster_from_json(text, strlen(text), "c.json", &c, d);
    gp_cluster_free(c);
    return rc;
}

static void assert_json_error(const char *text, int code, const char *where,
                              const char *msg_part)
{
    struct gp_diag d;
    int rc = json_err(text, &d);

    if (rc != code)
        fail_msg("%s: got %s (%s: %s), want %s", text, gp_err_name(rc), d.where,
                 d.msg, gp_err_name(code));
    assert_string_equal(d.where, where);
    if (!strstr(d.msg, msg_part))
        fail_msg("message \"%s\" lacks \"%s\"", d.msg, msg_part);
}

static uint32_t node_by_name(const struct gp_cluster *c, const char *name)
{
    for (uint32_t i = 0; i < gp_cluster_nnodes(c); i++)
        if (strcmp(gp_cluster_node_name(c, i), name) == 0)
            return i;
    fail_msg("no node %s", name);
    return UINT32_MAX;
}

/* ---- shapes ------------------------------------------------------------ */

static void shape_puts_nodes_in_switches_of_32(void **state)
{
    struct gp_cluster *c = must_build("64x8");

    (void)state;
    assert_int_equal(gp_cluster_nnodes(c), 64);
    assert_int_equal(gp_cluster_gpus(c), 512);
    assert_int_equal(gp_cluster_nswitches(c), 2);
    assert_int_equal(gp_cluster_ntypes(c), 1);
    assert_int_equal(gp_cluster_node_switch(c, 31),
                     gp_cluster_node_switch(c, 0));
    assert_int_not_equal(gp_cluster_node_switch(c, 32),
                         gp_cluster_node_switch(c, 0));
    gp_cluster_free(c);
}

static void shape_takes_a_type_and_a_switch_size_in_either_order(void **state)
{
    struct gp_cluster *c = must_build("10x4:K80/5");
    struct gp_cluster *d = must_build("10x4/5:K80");
    uint8_t t;

    (void)state;
    assert_int_equal(gp_cluster_nswitches(c), 2);
    assert_int_equal(gp_cluster_find_type(c, "K80", &t), GP_OK);
    assert_int_equal(gp_cluster_type_gpus(c, t), 40);
    assert_int_equal(gp_cluster_nswitches(d), 2);
    assert_int_equal(gp_cluster_gpus(d), 40);
    gp_cluster_free(c);
    gp_cluster_free(d);
}

static void shape_sum_gives_each_part_its_own_switches(void **state)
{
    struct gp_cluster *c = must_build("64x8:V100+32x4:K80");
    uint8_t v, k;

    (void)state;
    assert_int_equal(gp_cluster_nnodes(c), 96);
    assert_int_equal(gp_cluster_gpus(c), 64 * 8 + 32 * 4);
    assert_int_equal(gp_cluster_nswitches(c), 3);
    assert_int_equal(gp_cluster_find_type(c, "V100", &v), GP_OK);
    assert_int_equal(gp_cluster_find_type(c, "K80", &k), GP_OK);
    assert_int_equal(gp_cluster_type_gpus(c, v), 512);
    assert_int_equal(gp_cluster_type_gpus(c, k), 128);
    assert_int_equal(gp_cluster_max_node_gpus(c, k), 4);
    gp_cluster_free(c);

    /* 3 + 3 nodes in switches of 4: the K80 part opens a new switch */
    c = must_build("3x8:V100/4+3x4:K80/4");
    assert_int_equal(gp_cluster_nswitches(c), 2);
    assert_int_not_equal(gp_cluster_node_switch(c, 3),
                         gp_cluster_node_switch(c, 2));
    gp_cluster_free(c);
}

static void bad_shapes_are_einval_and_show_the_accepted_forms(void **state)
{
    static const char *const bad[] = {
        "0x8",  "8x0",          "8x65",      "8x",     "8x8/0",
        "8x8:", "8x8:V100:K80", "8x8/4/4",   "8x8+",   "8x8-",
        "8xx8", "100001x8",     "8x8:V 100", "8x8+x4", "4x8:K80+0x8",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gp_cluster *c = NULL;
        struct gp_diag d = {{0}, {0}};
        int rc = gp_cluster_from_spec(bad[i], &c, &d);

        if (rc != GP_EINVAL)
            fail_msg("%s: got %s", bad[i], gp_err_name(rc));
        assert_null(c);
        assert_string_equal(d.where, bad[i]);
        assert_non_null(strstr(d.msg, "NxG:TYPE"));
        assert_non_null(strstr(d.msg, "64x8:V100+32x4:K80"));
    }
}

static void empty_spec_is_einval(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec("", &c, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "NxG"));
    assert_int_equal(gp_cluster_from_spec(NULL, &c, NULL), GP_EINVAL);
    assert_null(c);
}

/* ---- presets ----------------------------------------------------------- */

static void unknown_preset_lists_the_presets(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec("phily", &c, &d), GP_EINVAL);
    assert_string_equal(d.where, "phily");
    for (size_t i = 0; gp_cluster_presets[i].name; i++)
        if (!strstr(d.msg, gp_cluster_presets[i].name))
            fail_msg("%s not listed in \"%s\"", gp_cluster_presets[i].name,
                     d.msg);
    assert_null(c);
}

struct expect {
    const char *name;
    uint32_t nodes;
    uint64_t gpus;
    uint32_t switches;
    uint32_t types;
};

static void presets_have_the_documented_sizes(void **state)
{
    static const struct expect want[] = {
        {"philly", 352, 2816, 11, 1},
        {"openb", 1213, 6212, 38, 7},
        {"pai", 1814, 6742, 57, 5},
        {"itp", 193, 1544, 10, 1},
        {"itp01", 8, 64, 1, 1},
        {"itp02", 14, 112, 1, 1},
        {"itp03", 18, 144, 1, 1},
        {"itp04", 78, 624, 1, 1},
        {"itp05", 2, 16, 1, 1},
        {"itp06", 14, 112, 1, 1},
        {"itp07", 41, 328, 1, 1},
        {"itp08", 11, 88, 1, 1},
        {"itp09", 5, 40, 1, 1},
        {"itp10", 2, 16, 1, 1},
        {"tiresias-n32g4", 32, 128, 1, 1},
        {"tiresias-n160g8", 160, 1280, 5, 1},
        {"tiresias-n256g8", 256, 2048, 8, 1},
        {"thesis", 64, 512, 2, 1},
    };
    size_t npresets = 0;

    (void)state;
    while (gp_cluster_presets[npresets].name)
        npresets++;
    assert_int_equal(npresets, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct gp_cluster *c = must_build(want[i].name);

        assert_string_equal(gp_cluster_presets[i].name, want[i].name);
        assert_non_null(gp_cluster_presets[i].summary);
        if (gp_cluster_nnodes(c) != want[i].nodes ||
            gp_cluster_gpus(c) != want[i].gpus ||
            gp_cluster_nswitches(c) != want[i].switches ||
            gp_cluster_ntypes(c) != want[i].types)
            fail_msg("%s: %u nodes, %llu GPUs, %u switches, %u types",
                     want[i].name, gp_cluster_nnodes(c),
                     (unsigned long long)gp_cluster_gpus(c),
                     gp_cluster_nswitches(c), gp_cluster_ntypes(c));
        gp_cluster_free(c);
    }
}

static void philly_preset_makes_each_vc_a_switch(void **state)
{
    struct gp_cluster *c = must_build("philly");
    uint32_t n = node_by_name(c, "6214e9-63");

    (void)state;
    assert_string_equal(gp_cluster_switch_name(c, gp_cluster_node_switch(c, n)),
                        "6214e9");
    assert_int_equal(gp_cluster_node_gpus(c, n), 8);
    gp_cluster_free(c);
}

static void openb_preset_keeps_the_gpu_models(void **state)
{
    struct gp_cluster *c = must_build("openb");
    uint8_t t;

    (void)state;
    assert_int_equal(gp_cluster_find_type(c, "G2", &t), GP_OK);
    assert_int_equal(gp_cluster_type_gpus(c, t), 549 * 8);
    assert_int_equal(gp_cluster_find_type(c, "T4", &t), GP_OK);
    assert_int_equal(gp_cluster_type_gpus(c, t), 387 * 2 + 17 * 4);
    gp_cluster_free(c);
}

/* ---- JSON -------------------------------------------------------------- */

static void json_with_switches_types_and_counts(void **state)
{
    struct gp_cluster *c = must_build(DATA "good_switches.json");
    uint8_t k80;
    uint32_t n;

    (void)state;
    assert_int_equal(gp_cluster_nnodes(c), 6);
    assert_int_equal(gp_cluster_gpus(c), 4 * 8 + 2 * 4);
    assert_int_equal(gp_cluster_nswitches(c), 2);
    assert_int_equal(gp_cluster_find_type(c, "K80", &k80), GP_OK);
    assert_true(gp_cluster_type_speed(c, k80) > 0.39 &&
                gp_cluster_type_speed(c, k80) < 0.41);
    n = node_by_name(c, "n-3");
    assert_string_equal(gp_cluster_switch_name(c, gp_cluster_node_switch(c, n)),
                        "rack1");
    n = node_by_name(c, "k80a");
    assert_string_equal(gp_cluster_switch_name(c, gp_cluster_node_switch(c, n)),
                        "rack2");
    assert_int_equal(gp_cluster_node_type(c, n), k80);
    gp_cluster_free(c);
}

static void json_flat_nodes_may_name_their_switch(void **state)
{
    struct gp_cluster *c = must_build(DATA "good_flat.json");
    uint32_t a, b;

    (void)state;
    assert_int_equal(gp_cluster_nnodes(c), 3);
    assert_int_equal(gp_cluster_gpus(c), 18);
    assert_int_equal(gp_cluster_ntypes(c), 2); /* A100 and the default */
    a = node_by_name(c, "a");
    b = node_by_name(c, "b");
    assert_string_equal(gp_cluster_switch_name(c, gp_cluster_node_switch(c, a)),
                        "left");
    assert_string_equal(gp_cluster_switch_name(c, gp_cluster_node_switch(c, b)),
                        "right");
    gp_cluster_free(c);
}

static void json_syntax_error_names_file_and_line(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec(DATA "bad_syntax.json", &c, &d),
                     GP_EPARSE);
    assert_string_equal(d.where, DATA "bad_syntax.json:3");
    assert_non_null(strstr(d.msg, "JSON"));
    assert_null(c);
}

static void json_bad_gpus_names_the_json_path(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};
    char buf[512];

    (void)state;
    assert_int_equal(gp_cluster_from_spec(DATA "bad_gpus.json", &c, &d),
                     GP_EPARSE);
    assert_string_equal(d.where,
                        DATA "bad_gpus.json: switches[1].nodes[0].gpus");
    assert_string_equal(d.msg, "must be 1..64");
    gp_diag_format(&d, GP_EPARSE, buf, sizeof(buf));
    assert_string_equal(buf, DATA "bad_gpus.json: switches[1].nodes[0].gpus: "
                                  "must be 1..64");
}

static void json_schema_errors_name_the_json_path(void **state)
{
    (void)state;
    assert_json_error("[1]", GP_EPARSE, "c.json", "must be an object");
    assert_json_error("{}", GP_EPARSE, "c.json", "no nodes");
    assert_json_error("{\"nodez\": []}", GP_EPARSE, "c.json: nodez",
                      "unknown key");
    assert_json_error("{\"nodes\": {}}", GP_EPARSE, "c.json: nodes",
                      "must be an array");
    assert_json_error("{\"nodes\": [8]}", GP_EPARSE, "c.json: nodes[0]",
                      "must be an object");
    assert_json_error("{\"nodes\": [{\"gpu\": 8}]}", GP_EPARSE,
                      "c.json: nodes[0].gpu", "unknown key");
    assert_json_error("{\"nodes\": [{\"name\": \"a\"}]}", GP_EPARSE,
                      "c.json: nodes[0].gpus", "missing");
    assert_json_error("{\"nodes\": [{\"gpus\": \"8\"}]}", GP_EPARSE,
                      "c.json: nodes[0].gpus", "must be an integer");
    assert_json_error("{\"nodes\": [{\"gpus\": 8.5}]}", GP_EPARSE,
                      "c.json: nodes[0].gpus", "must be an integer");
    assert_json_error("{\"nodes\": [{\"gpus\": 0}]}", GP_EPARSE,
                      "c.json: nodes[0].gpus", "must be 1..64");
    assert_json_error("{\"nodes\": [{\"gpus\": 8, \"count\": 0}]}", GP_EPARSE,
                      "c.json: nodes[0].count", "must be 1..");
    assert_json_error("{\"nodes\": [{\"gpus\": 8, \"cpus\": -1}]}", GP_EPARSE,
                      "c.json: nodes[0].cpus", "must be 0..");
    assert_json_error("{\"nodes\": [{\"gpus\": 8, \"mem_mib\": true}]}",
                      GP_EPARSE, "c.json: nodes[0].mem_mib",
                      "must be an integer");
    assert_json_error("{\"nodes\": [{\"gpus\": 8, \"name\": \"\"}]}", GP_EPARSE,
                      "c.json: nodes[0].name", "characters");
    assert_json_error("{\"nodes\": [{\"gpus\": 8, \"type\": 3}]}", GP_EPARSE,
                      "c.json: nodes[0].type", "must be a string");
    assert_json_error("{\"nodes\": [{\"gpus\": 8, \"switch\": [1]}]}",
                      GP_EPARSE, "c.json: nodes[0].switch", "must be a string");
    assert_json_error(
        "{\"types\": [{\"name\": \"V100\"}], \"nodes\": [{\"gpus\": 8, "
        "\"type\": \"V10\"}]}",
        GP_EPARSE, "c.json: nodes[0].type", "not declared");
    assert_json_error(
        "{\"types\": [{\"name\": \"V100\"}], \"nodes\": [{\"gpus\": 8}]}",
        GP_EPARSE, "c.json: nodes[0].type", "missing");
    assert_json_error("{\"types\": [{\"name\": \"V100\"}, {\"name\": "
                      "\"V100\"}], \"nodes\": [{\"gpus\": 8}]}",
                      GP_EPARSE, "c.json: types[1].name", "declared twice");
    assert_json_error("{\"types\": [{\"name\": \"V100\", \"speed\": 0}]}",
                      GP_EPARSE, "c.json: types[0].speed", "> 0");
    assert_json_error("{\"types\": [{\"name\": \"V100\", \"sped\": 1}]}",
                      GP_EPARSE, "c.json: types[0].sped", "unknown key");
    assert_json_error("{\"types\": {}}", GP_EPARSE, "c.json: types",
                      "must be an array");
    assert_json_error("{\"types\": [\"V100\"]}", GP_EPARSE, "c.json: types[0]",
                      "must be an object");
    assert_json_error("{\"switches\": [{\"nodes\": []}]}", GP_EPARSE,
                      "c.json: switches[0].name", "missing");
    assert_json_error("{\"switches\": [{\"name\": \"r\"}]}", GP_EPARSE,
                      "c.json: switches[0].nodes", "missing");
    assert_json_error("{\"switches\": [{\"name\": \"r\", \"nodes\": [], "
                      "\"x\": 1}]}",
                      GP_EPARSE, "c.json: switches[0].x", "unknown key");
    assert_json_error("{\"switches\": [{\"name\": \"r\", \"nodes\": []}, "
                      "{\"name\": \"r\", \"nodes\": []}]}",
                      GP_EPARSE, "c.json: switches[1].name", "twice");
    assert_json_error("{\"switches\": [{\"name\": \"r\", \"nodes\": "
                      "[{\"gpus\": 8, \"switch\": \"q\"}]}]}",
                      GP_EPARSE, "c.json: switches[0].nodes[0].switch",
                      "unknown key");
    assert_json_error("{\"switches\": 3}", GP_EPARSE, "c.json: switches",
                      "must be an array");
    assert_json_error("{\"switches\": [3]}", GP_EPARSE, "c.json: switches[0]",
                      "must be an object");
}

static void json_duplicate_node_name_is_eexist_at_its_path(void **state)
{
    (void)state;
    assert_json_error("{\"nodes\": [{\"name\": \"a\", \"gpus\": 8}, "
                      "{\"name\": \"a\", \"gpus\": 4}]}",
                      GP_EEXIST, "c.json: nodes[1]", "duplicate");
    /* count makes a-0 and a-1; a later "a-1" collides */
    assert_json_error("{\"nodes\": [{\"name\": \"a\", \"gpus\": 8, "
                      "\"count\": 2}, {\"name\": \"a-1\", \"gpus\": 4}]}",
                      GP_EEXIST, "c.json: nodes[1]", "a-1");
}

static void json_duplicate_key_is_a_syntax_error_with_line(void **state)
{
    (void)state;
    assert_json_error("{\"nodes\": [],\n \"nodes\": []}", GP_EPARSE, "c.json:2",
                      "duplicate");
}

static void json_more_than_32_types_is_refused(void **state)
{
    char buf[4096] = "{\"types\": [";
    struct gp_diag d;

    (void)state;
    for (int i = 0; i < 33; i++) {
        char t[48];

        snprintf(t, sizeof(t), "%s{\"name\": \"T%d\"}", i ? "," : "", i);
        strcat(buf, t);
    }
    strcat(buf, "], \"nodes\": [{\"gpus\": 1, \"type\": \"T0\"}]}");
    assert_int_equal(json_err(buf, &d), GP_EPARSE);
    assert_string_equal(d.where, "c.json: types[32]");
    assert_non_null(strstr(d.msg, "32"));
}

static void json_too_many_nodes_is_erange(void **state)
{
    (void)state;
    assert_json_error("{\"nodes\": [{\"gpus\": 1, \"count\": 100000}, "
                      "{\"gpus\": 1}]}",
                      GP_ERANGE, "c.json: nodes[1]", "more than 100000");
}

/* ---- CSV files and dispatch ------------------------------------------- */

static void openb_node_list_skips_cpu_nodes(void **state)
{
    struct gp_cluster *c = must_build(DATA "openb_nodes.csv");
    uint32_t n;
    uint8_t t;

    (void)state;
    assert_int_equal(gp_cluster_nnodes(c), 3);
    assert_int_equal(gp_cluster_gpus(c), 11);
    assert_int_equal(gp_cluster_nswitches(c), 1);
    n = node_by_name(c, "openb-node-0002");
    assert_int_equal(gp_cluster_find_type(c, "G2", &t), GP_OK);
    assert_int_equal(gp_cluster_node_type(c, n), t);
    assert_int_equal(gp_cluster_node_gpus(c, n), 8);
    gp_cluster_free(c);
}

static void openb_bad_field_names_line_and_field(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec(DATA "openb_bad.csv", &c, &d),
                     GP_EPARSE);
    assert_string_equal(d.where, "openb_bad.csv:3");
    assert_non_null(strstr(d.msg, "field 'gpu'"));
    assert_null(c);
}

static void tiresias_spec_makes_switches_of_its_size(void **state)
{
    struct gp_cluster *c = must_build(DATA "tiresias_n6g4.csv");

    (void)state;
    assert_int_equal(gp_cluster_nnodes(c), 6);
    assert_int_equal(gp_cluster_gpus(c), 24);
    assert_int_equal(gp_cluster_nswitches(c), 2);
    gp_cluster_free(c);
}

static void tiresias_bad_field_names_line_and_field(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec(DATA "tiresias_bad.csv", &c, &d),
                     GP_EPARSE);
    assert_string_equal(d.where, "tiresias_bad.csv:2");
    assert_non_null(strstr(d.msg, "field 'num_gpu_p_node'"));
}

static void unknown_file_content_is_eparse(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec(DATA "not_a_cluster.csv", &c, &d),
                     GP_EPARSE);
    assert_string_equal(d.where, DATA "not_a_cluster.csv");
    assert_non_null(strstr(d.msg, "not a cluster file"));
}

static void missing_file_is_eio(void **state)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp_cluster_from_spec(DATA "nope.json", &c, &d), GP_EIO);
    assert_non_null(strstr(d.where, "nope.json"));
    assert_null(c);
}

static void mem_dispatch_reads_json_and_both_csvs(void **state)
{
    static const char json[] = "  \n{\"nodes\": [{\"gpus\": 2}]}";
    static const char tir[] = "num_switch,num_node_p_switch,num_gpu_p_node,"
                              "num_cpu_p_node,mem_p_node\n1,2,8,64,256\n";
    static const char empty_openb[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                                      "n0,1000,1024,0,\n";
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp__cluster_from_mem(json, strlen(json), "m", &c, &d),
                     GP_OK);
    assert_int_equal(gp_cluster_gpus(c), 2);
    gp_cluster_free(c);
    assert_int_equal(gp__cluster_from_mem(tir, strlen(tir), "m", &c, &d),
                     GP_OK);
    assert_int_equal(gp_cluster_gpus(c), 16);
    gp_cluster_free(c);
    c = NULL;
    assert_int_equal(
        gp__cluster_from_mem(empty_openb, strlen(empty_openb), "m", &c, &d),
        GP_EPARSE);
    assert_non_null(strstr(d.msg, "no GPU nodes"));
    assert_null(c);
}

static void tiresias_spec_over_the_node_cap_is_eparse(void **state)
{
    static const char big[] = "num_switch,num_node_p_switch,num_gpu_p_node,"
                              "num_cpu_p_node,mem_p_node\n"
                              "1000,1000,8,64,256\n";
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(gp__cluster_from_mem(big, strlen(big), "big.csv", &c, &d),
                     GP_EPARSE);
    assert_string_equal(d.where, "big.csv:2");
    assert_non_null(strstr(d.msg, "more than 100000"));
    assert_null(c);
}

/* Regression: the duplicate-switch check compared every pair (100,000
 * switches: 220 s; 30,000: ~20 s). Now hashed: 30,000 take ~0.1 s, ~4 s
 * under ASan, most of it the cluster's own switch lookup (cluster.c). The
 * full 100,000 are timed by bench/bench_parse. */
static void thirty_thousand_switches_build_without_quadratic_checks(void **s)
{
    size_t n = 30000, cap = 64 + n * 40, o = 0;
    char *doc = malloc(cap);
    struct gp_cluster *c = NULL;
    struct gp_diag d = {{0}, {0}};
    (void)s;
    assert_non_null(doc);
    o += (size_t)snprintf(doc, cap, "{\"switches\":[");
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(doc + o, cap - o,
                              "%s{\"name\":\"s%zu\",\"nodes\":[{\"gpus\":1}]}",
                              i ? "," : "", i);
    snprintf(doc + o, cap - o, "]}");
    assert_int_equal(gp__cluster_from_json(doc, strlen(doc), "c.json", &c, &d),
                     GP_OK);
    assert_int_equal(gp_cluster_nswitches(c), n);
    gp_cluster_free(c);
    /* the last one named again */
    snprintf(doc + o - 1, cap - o + 1,
             "},{\"name\":\"s0\",\"nodes\":[{\"gpus\":1}]}]}");
    c = NULL;
    assert_int_equal(gp__cluster_from_json(doc, strlen(doc), "c.json", &c, &d),
                     GP_EPARSE);
    free(doc);
}

static void names_with_control_characters_are_refused(void **state)
{
    (void)state;
    assert_json_error("{\"switches\":[{\"name\":\"s\\u009b\",\"nodes\":"
                      "[{\"gpus\":1}]}]}",
                      GP_EPARSE, "c.json: switches[0].name",
                      "control character 0x9b at byte 2");
    assert_json_error("{\"nodes\":[{\"gpus\":1,\"type\":\"V\\u001b\"}]}",
                      GP_EPARSE, "c.json: nodes[0].type",
                      "control character 0x1b");
    {
        static const char csv[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                                  "n1,1000,1024,1,V100\n"
                                  "n\x1b[2J,1000,1024,1,V100\n";
        struct gp_cluster *c = NULL;
        struct gp_diag d = {{0}, {0}};

        assert_int_equal(
            gp__cluster_from_mem(csv, sizeof(csv) - 1, "n.csv", &c, &d),
            GP_EPARSE);
        assert_string_equal(d.where, "n.csv:3");
        assert_non_null(strstr(d.msg, "field 'sn': control character 0x1b"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_puts_nodes_in_switches_of_32),
        cmocka_unit_test(shape_takes_a_type_and_a_switch_size_in_either_order),
        cmocka_unit_test(shape_sum_gives_each_part_its_own_switches),
        cmocka_unit_test(bad_shapes_are_einval_and_show_the_accepted_forms),
        cmocka_unit_test(empty_spec_is_einval),
        cmocka_unit_test(unknown_preset_lists_the_presets),
        cmocka_unit_test(presets_have_the_documented_sizes),
        cmocka_unit_test(philly_preset_makes_each_vc_a_switch),
        cmocka_unit_test(openb_preset_keeps_the_gpu_models),
        cmocka_unit_test(json_with_switches_types_and_counts),
        cmocka_unit_test(json_flat_nodes_may_name_their_switch),
        cmocka_unit_test(json_syntax_error_names_file_and_line),
        cmocka_unit_test(json_bad_gpus_names_the_json_path),
        cmocka_unit_test(json_schema_errors_name_the_json_path),
        cmocka_unit_test(json_duplicate_node_name_is_eexist_at_its_path),
        cmocka_unit_test(json_duplicate_key_is_a_syntax_error_with_line),
        cmocka_unit_test(json_more_than_32_types_is_refused),
        cmocka_unit_test(json_too_many_nodes_is_erange),
        cmocka_unit_test(openb_node_list_skips_cpu_nodes),
        cmocka_unit_test(openb_bad_field_names_line_and_field),
        cmocka_unit_test(tiresias_spec_makes_switches_of_its_size),
        cmocka_unit_test(tiresias_bad_field_names_line_and_field),
        cmocka_unit_test(tiresias_spec_over_the_node_cap_is_eparse),
        cmocka_unit_test(unknown_file_content_is_eparse),
        cmocka_unit_test(missing_file_is_eio),
        cmocka_unit_test(mem_dispatch_reads_json_and_both_csvs),
        cmocka_unit_test(
            thirty_thousand_switches_build_without_quadratic_checks),
        cmocka_unit_test(names_with_control_characters_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
