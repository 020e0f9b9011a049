/* test_share.c - GPUs below one device: shares in milli-GPUs, zero-GPU
 * jobs, the best-fit and FGD placers, allocation rate and fragmentation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpupool/cluster.h"

/* n nodes of g GPUs (and cpus CPUs), one type, sealed. */
static struct gp_cluster *nodes(uint32_t n, uint32_t g, uint32_t cpus)
{
    struct gp_cluster *c;

    assert_int_equal(gp_cluster_new(&c), GP_OK);
    for (uint32_t i = 0; i < n; i++) {
        struct gp_node_spec spec = {.type = "T4", .gpus = g, .cpus = cpus};

        assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    }
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    return c;
}

static struct gp_demand share(uint32_t milli)
{
    struct gp_demand d = {.type = GP_TYPE_ANY, .gpu_milli = milli};
    return d;
}

/* Fit and take a demand with a placer; the placement lands in *p. */
static int place(struct gp_cluster *c, enum gp_place_model m,
                 enum gp_share_placer pl, const struct gp_demand *d,
                 struct gp_placement *p)
{
    struct gp_arena a;
    int rc;

    gp_arena_init(&a, 0);
    rc = gp_cluster_fit_with(c, m, pl, d, &a, p);
    if (rc == GP_OK && p->nslots > 1)
        rc = GP_EINVAL; /* these tests place on one node */
    if (rc == GP_OK) {
        if (p->nslots == 1)
            p->slots = &p->inline_slot;
        rc = gp_cluster_take(c, p, d);
    }
    gp_arena_fini(&a);
    return rc;
}

static void shares_fill_one_device_up_to_1000_milli(void **state)
{
    struct gp_cluster *c = nodes(1, 2, 0);
    struct gp_placement p;
    struct gp_demand d = share(600);

    (void)state;
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.gpus, 0);
    assert_int_equal(p.milli, 600);
    assert_int_equal(p.nslots, 1);
    assert_int_equal(p.slots[0].dev, 0);
    assert_int_equal(p.slots[0].milli, 600);
    assert_int_equal(p.slots[0].mask, 0);
    assert_int_equal(gp_cluster_node_free(c, 0), 1);
    assert_int_equal(gp_cluster_free_gpus(c), 1);
    /* 400 fits exactly what device 0 has left */
    d = share(400);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].dev, 0);
    assert_int_equal(gp_cluster_node_dev_used(c, 0, 0), 1000);
    d = share(500);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].dev, 1);
    d = share(600);
    assert_int_equal(place(c, GP_PLACE_TOPO, GP_SHARE_BESTFIT, &d, &p),
                     GP_ENOFIT);
    assert_int_equal(gp_cluster_node_pieces(c, 0), 3);
    gp_cluster_free(c);
}

static void take_refuses_a_share_past_a_full_device(void **state)
{
    struct gp_cluster *c = nodes(1, 1, 0);
    struct gp_placement p, q;
    struct gp_demand d = share(600);

    (void)state;
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    q = p;
    q.slots = &q.inline_slot;
    assert_int_equal(gp_cluster_take(c, &q, &d), GP_EPLAN);
    q.inline_slot.dev = 1; /* no such device */
    q.milli = q.inline_slot.milli = 300;
    assert_int_equal(gp_cluster_take(c, &q, &d), GP_EPLAN);
    q.inline_slot.dev = 0;
    q.inline_slot.milli = 200; /* slot and placement disagree */
    assert_int_equal(gp_cluster_take(c, &q, &d), GP_EPLAN);
    q.inline_slot.milli = 300;
    assert_int_equal(gp_cluster_take(c, &q, &d), GP_OK);
    assert_int_equal(gp_cluster_node_dev_used(c, 0, 0), 900);
    gp_cluster_free(c);
}

static void a_gang_never_takes_a_shared_device(void **state)
{
    struct gp_cluster *c = nodes(1, 2, 0);
    struct gp_placement p;
    struct gp_demand d = share(100), g2 = {.gpus = 2, .type = GP_TYPE_ANY};
    struct gp_demand g1 = {.gpus = 1, .type = GP_TYPE_ANY};

    (void)state;
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &g2, &p),
                     GP_ENOFIT);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &g1, &p), GP_OK);
    assert_int_equal(p.slots[0].mask, 0x2);
    assert_int_equal(gp_cluster_node_dev_used(c, 0, 1), 1000);
    /* nor does a share land on a gang's device */
    d = share(1);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].dev, 0);
    gp_cluster_free(c);
}

static void best_fit_takes_the_tightest_device_that_is_enough(void **state)
{
    struct gp_cluster *c = nodes(3, 1, 0);
    struct gp_placement p;
    struct gp_demand d;

    (void)state;
    d = share(500); /* node0: 500 free */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    d = share(700); /* node1: 300 free */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    d = share(250); /* 300 free on node1 is the tightest that is enough */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    d = share(400); /* node1 has 50 left: node0's 500 */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    d = share(600); /* only a whole device is left */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 2);
    gp_cluster_free(c);
}

static void shares_and_gangs_respect_cpus_and_memory(void **state)
{
    struct gp_cluster *c = nodes(2, 2, 8);
    struct gp_diag diag = {{0}, {0}};
    struct gp_placement p, q;
    struct gp_demand d = share(300);

    (void)state;
    d.cpus = 6;
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(gp_cluster_node_cpus_free(c, 0), 2);
    /* the partly used device of node0 has room, its CPUs do not */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &q), GP_OK);
    assert_int_equal(q.slots[0].node, 1);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &q),
                     GP_ENOFIT);
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_OK);
    d.cpus = 9;
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, &diag),
                     GP_ENOFIT);
    assert_string_equal(diag.msg,
                        "needs 300 milli-GPUs, 9 CPUs and 0 MiB on one node; "
                        "no UP node has them (the largest UP node has 2 GPUs)");
    d.cpus = 6;
    gp_cluster_give(c, &p, &d);
    assert_int_equal(gp_cluster_node_cpus_free(c, 0), 8);
    assert_int_equal(gp_cluster_node_dev_used(c, 0, 0), 0);
    assert_int_equal(gp_cluster_node_free(c, 0), 2);
    gp_cluster_free(c);
}

static void zero_gpu_jobs_take_only_cpus_and_memory(void **state)
{
    struct gp_cluster *c;
    struct gp_node_spec big = {.name = "big", .gpus = 1, .cpus = 64};
    struct gp_node_spec small = {.name = "small", .gpus = 1, .cpus = 12};
    struct gp_placement p;
    struct gp_demand d = {.type = GP_TYPE_ANY, .cpus = 10, .mem_mib = 100};

    (void)state;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &big, NULL), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &small, NULL), GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    /* best fit by CPUs: the small node */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.gpus + p.milli, 0);
    assert_int_equal(p.slots[0].node, 1);
    assert_int_equal(gp_cluster_node_cpus_free(c, 1), 2);
    assert_int_equal(gp_cluster_free_gpus(c), 2);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    d.cpus = 60;
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p),
                     GP_ENOFIT);
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_OK);
    d.cpus = 65;
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_ENOFIT);
    /* under `count` it names no node and takes no GPU */
    assert_int_equal(place(c, GP_PLACE_COUNT, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.nslots, 0);
    assert_int_equal(p.type, 0);
    assert_int_equal(gp_cluster_free_gpus(c), 2);
    gp_cluster_free(c);
}

static void malformed_demands_are_errors(void **state)
{
    struct gp_cluster *c = nodes(1, 2, 0);
    struct gp_diag diag = {{0}, {0}};
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = share(1000);

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_EINVAL);
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, &diag),
                     GP_EINVAL);
    assert_non_null(strstr(diag.msg, "gpu_milli 1..999"));
    d = share(500);
    d.gpus = 1;
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_EINVAL);
    d = share(500);
    d.cpus_per_gpu = 2;
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_EINVAL);
    assert_int_equal(gp_cluster_observe(c, &d), GP_EINVAL);
    d = share(500);
    assert_int_equal(gp_cluster_fit_with(c, GP_PLACE_PACK,
                                         (enum gp_share_placer)7, &d, &a, &p),
                     GP_EINVAL);
    assert_int_equal(gp_cluster_set_share_placer(c, (enum gp_share_placer)7),
                     GP_EINVAL);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void count_model_packs_shares_into_whole_gpus(void **state)
{
    struct gp_cluster *c = nodes(1, 2, 0);
    struct gp_placement p[4];
    struct gp_demand d6 = share(600), d3 = share(300);

    (void)state;
    assert_int_equal(place(c, GP_PLACE_COUNT, GP_SHARE_BESTFIT, &d6, &p[0]),
                     GP_OK);
    assert_int_equal(p[0].nslots, 0);
    assert_int_equal(gp_cluster_free_gpus(c), 1);
    assert_int_equal(place(c, GP_PLACE_COUNT, GP_SHARE_BESTFIT, &d6, &p[1]),
                     GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 0);
    assert_int_equal(place(c, GP_PLACE_COUNT, GP_SHARE_BESTFIT, &d3, &p[2]),
                     GP_OK);
    assert_int_equal(place(c, GP_PLACE_COUNT, GP_SHARE_BESTFIT, &d6, &p[3]),
                     GP_ENOFIT);
    assert_int_equal(gp_cluster_alloc_milli(c), 1500);
    gp_cluster_give(c, &p[1], &d6);
    assert_int_equal(gp_cluster_free_gpus(c), 1);
    gp_cluster_give(c, &p[0], &d6);
    gp_cluster_give(c, &p[2], &d3);
    assert_int_equal(gp_cluster_free_gpus(c), 2);
    assert_int_equal(gp_cluster_alloc_milli(c), 0);
    gp_cluster_free(c);
}

static void a_drained_node_offers_no_share(void **state)
{
    struct gp_cluster *c = nodes(2, 1, 0);
    struct gp_placement p, q;
    struct gp_demand d = share(300);

    (void)state;
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DRAIN, NULL),
                     GP_OK);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &q), GP_OK);
    assert_int_equal(q.slots[0].node, 1);
    gp_cluster_give(c, &q, &d);
    gp_cluster_give(c, &p, &d);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &q), GP_OK);
    assert_int_equal(q.slots[0].node, 1); /* shares node1's device */
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_UP, NULL), GP_OK);
    gp_cluster_give(c, &q, &d);
    assert_int_equal(gp_cluster_node_dev_used(c, 1, 0), 300);
    gp_cluster_free(c);
}

static void alloc_rate_counts_shares_and_whole_devices_on_up_nodes(void **state)
{
    struct gp_cluster *c = nodes(2, 2, 0);
    struct gp_placement p, q;
    struct gp_demand d = share(500), g = {.gpus = 1, .type = GP_TYPE_ANY};

    (void)state;
    assert_true(gp_cluster_alloc_rate(c) == 0);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &g, &q), GP_OK);
    assert_int_equal(p.slots[0].node, q.slots[0].node);
    assert_int_equal(gp_cluster_up_milli(c), 4000);
    assert_int_equal(gp_cluster_alloc_milli(c), 1500);
    assert_true(gp_cluster_alloc_rate(c) == 0.375);
    /* the other node goes down: 1500 of 2000 */
    assert_int_equal(
        gp_cluster_set_node_state(c, 1 - p.slots[0].node, GP_NODE_DOWN, NULL),
        GP_OK);
    assert_true(gp_cluster_alloc_rate(c) == 0.75);
    assert_int_equal(
        gp_cluster_set_node_state(c, p.slots[0].node, GP_NODE_DOWN, NULL),
        GP_OK);
    assert_true(gp_cluster_alloc_rate(c) == 0);
    gp_cluster_free(c);
}

static void fragmentation_follows_the_fgd_definition(void **state)
{
    struct gp_cluster *c = nodes(1, 2, 8);
    struct gp_placement p;
    struct gp_demand d = share(700);
    struct gp_shape half = {.gpu_milli = 500, .weight = 1};
    struct gp_shape two = {.gpus = 2, .weight = 1};
    struct gp_shape both[2] = {{.gpu_milli = 500, .weight = 3},
                               {.gpus = 2, .weight = 1}};
    struct gp_shape cpu = {.cpus = 4, .weight = 1};
    struct gp_shape hungry = {.gpu_milli = 100, .cpus = 9, .weight = 1};
    struct gp_shape bad = {.gpu_milli = 1000, .weight = 1};
    double f;

    (void)state;
    /* device 0: 300 free, device 1: 1000 free */
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    /* a 500 share can use device 1, not device 0's 300 */
    assert_int_equal(gp_cluster_fragmentation(c, &half, 1, &f), GP_OK);
    assert_true(f == 300);
    /* a 2-GPU gang cannot run here: all 1300 free is a fragment */
    assert_int_equal(gp_cluster_fragmentation(c, &two, 1, &f), GP_OK);
    assert_true(f == 1300);
    /* expectation over the workload: 3/4 * 300 + 1/4 * 1300 */
    assert_int_equal(gp_cluster_fragmentation(c, both, 2, &f), GP_OK);
    assert_true(f == 550);
    /* a task without GPUs uses none of them */
    assert_int_equal(gp_cluster_fragmentation(c, &cpu, 1, &f), GP_OK);
    assert_true(f == 1300);
    /* a task the node lacks CPUs for */
    assert_int_equal(gp_cluster_fragmentation(c, &hungry, 1, &f), GP_OK);
    assert_true(f == 1300);
    assert_int_equal(gp_cluster_fragmentation(c, &bad, 1, &f), GP_EINVAL);
    /* the cluster's own workload, empty: 0 */
    assert_int_equal(gp_cluster_fragmentation(c, NULL, 0, &f), GP_OK);
    assert_true(f == 0);
    assert_int_equal(gp_cluster_set_workload(c, both, 2, NULL), GP_OK);
    assert_int_equal(gp_cluster_fragmentation(c, NULL, 0, &f), GP_OK);
    assert_true(f == 550);
    /* DOWN nodes are not counted */
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DOWN, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_fragmentation(c, NULL, 0, &f), GP_OK);
    assert_true(f == 0);
    gp_cluster_free(c);
}

/* node0's device has 600 free, node1's is whole. Best fit puts a 200 share
 * on node0 (600 -> 400); with a workload of 500 shares that strands 400,
 * while node1 (1000 -> 800) still hosts a 500. FGD picks node1. */
static void fgd_places_where_fragmentation_grows_least(void **state)
{
    struct gp_cluster *c = nodes(2, 1, 0);
    struct gp_placement p;
    struct gp_demand d = share(400), small = share(200);
    struct gp_shape half = {.gpu_milli = 500, .weight = 1};
    struct gp_arena a;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(
        gp_cluster_fit_with(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &small, &a, &p),
        GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    /* no workload yet: FGD places as best fit */
    assert_int_equal(
        gp_cluster_fit_with(c, GP_PLACE_PACK, GP_SHARE_FGD, &small, &a, &p),
        GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(gp_cluster_set_workload(c, &half, 1, NULL), GP_OK);
    assert_int_equal(gp_cluster_set_share_placer(c, GP_SHARE_FGD), GP_OK);
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &small, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    assert_int_equal(p.slots[0].dev, 0);
    assert_int_equal(gp_cluster_take(c, &p, &small), GP_OK);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

/* A 1-GPU gang under FGD: taken from a node of two whole devices, it
 * breaks up the pair a 2-GPU task could use (fragmentation +500); taken
 * from the node whose other device is shared, it lowers it (-500). */
static void
fgd_places_a_small_gang_on_one_node_and_a_big_one_by_pack(void **state)
{
    struct gp_cluster *c = nodes(2, 2, 0);
    struct gp_placement p;
    struct gp_demand d = share(500), g = {.gpus = 1, .type = GP_TYPE_ANY};
    struct gp_shape w[2] = {{.gpus = 2, .weight = 1},
                            {.gpu_milli = 500, .weight = 1}};
    struct gp_arena a;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DRAIN, NULL),
                     GP_OK);
    assert_int_equal(place(c, GP_PLACE_PACK, GP_SHARE_BESTFIT, &d, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_UP, NULL), GP_OK);
    assert_int_equal(gp_cluster_set_workload(c, w, 2, NULL), GP_OK);
    assert_int_equal(
        gp_cluster_fit_with(c, GP_PLACE_PACK, GP_SHARE_FGD, &g, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    assert_int_equal(p.slots[0].mask, 0x2);
    /* a gang larger than any node falls back to pack */
    g.gpus = 3;
    assert_int_equal(
        gp_cluster_fit_with(c, GP_PLACE_PACK, GP_SHARE_FGD, &g, &a, &p), GP_OK);
    assert_int_equal(p.nslots, 2);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void the_workload_is_learnt_from_what_arrives(void **state)
{
    struct gp_cluster *c = nodes(1, 2, 0);
    struct gp_diag diag = {{0}, {0}};
    struct gp_demand d = share(500), g = {.gpus = 2, .cpus_per_gpu = 4};
    struct gp_shape w[2] = {{.gpu_milli = 500, .weight = 1},
                            {.gpu_milli = 500, .weight = 0}};
    double f;

    (void)state;
    assert_int_equal(gp_cluster_observe(c, &d), GP_OK);
    assert_int_equal(gp_cluster_observe(c, &g), GP_OK);
    assert_int_equal(gp_cluster_observe(c, &d), GP_OK);
    assert_int_equal(gp_cluster_nshapes(c), 2);
    /* empty cluster: the gang shape fits (no fragment), so does the share */
    assert_int_equal(gp_cluster_fragmentation(c, NULL, 0, &f), GP_OK);
    assert_true(f == 0);
    assert_int_equal(gp_cluster_set_workload(c, w, 2, &diag), GP_EINVAL);
    assert_string_equal(diag.where, "shapes[1]");
    assert_int_equal(gp_cluster_nshapes(c), 2); /* unchanged */
    w[1].weight = 1;                            /* equal shapes merge */
    assert_int_equal(gp_cluster_set_workload(c, w, 2, NULL), GP_OK);
    assert_int_equal(gp_cluster_nshapes(c), 1);
    assert_int_equal(gp_cluster_set_workload(c, NULL, 0, NULL), GP_OK);
    assert_int_equal(gp_cluster_nshapes(c), 0);
    assert_int_equal(gp_cluster_set_workload(c, w, GP_MAX_SHAPES + 1, &diag),
                     GP_ERANGE);
    gp_cluster_free(c);
}

static void placer_names_parse_and_print(void **state)
{
    enum gp_share_placer p;

    (void)state;
    assert_int_equal(gp_share_placer_parse("fgd", &p), GP_OK);
    assert_int_equal(p, GP_SHARE_FGD);
    assert_int_equal(gp_share_placer_parse("bestfit", &p), GP_OK);
    assert_int_equal(p, GP_SHARE_BESTFIT);
    assert_int_equal(gp_share_placer_parse("worst", &p), GP_EINVAL);
    assert_string_equal(gp_share_placer_name(GP_SHARE_FGD), "fgd");
}

/* Counters against a recount over the nodes, through the public getters. */
static void check_counters(const struct gp_cluster *c)
{
    uint64_t gpus = 0, up = 0, free = 0, alloc = 0;

    for (uint32_t i = 0; i < gp_cluster_nnodes(c); i++) {
        enum gp_node_state s = gp_cluster_node_state(c, i);
        uint32_t g = gp_cluster_node_gpus(c, i);

        if (s == GP_NODE_REMOVED)
            continue;
        gpus += g;
        if (s != GP_NODE_UP)
            continue;
        up += g;
        free += gp_cluster_node_free(c, i);
        for (uint32_t d = 0; d < g; d++)
            alloc += gp_cluster_node_dev_used(c, i, d);
    }
    assert_int_equal(gp_cluster_gpus(c), gpus);
    assert_int_equal(gp_cluster_up_gpus(c), up);
    assert_int_equal(gp_cluster_free_gpus(c), free);
    assert_int_equal(gp_cluster_alloc_milli(c), alloc);
}

/* Could a share of m milli with cpus CPUs go anywhere? (by brute force) */
static bool share_fits_somewhere(const struct gp_cluster *c, uint32_t m,
                                 uint32_t cpus)
{
    for (uint32_t i = 0; i < gp_cluster_nnodes(c); i++) {
        if (gp_cluster_node_state(c, i) != GP_NODE_UP ||
            gp_cluster_node_cpus_free(c, i) < cpus)
            continue;
        for (uint32_t d = 0; d < gp_cluster_node_gpus(c, i); d++)
            if (1000 - gp_cluster_node_dev_used(c, i, d) >= m)
                return true;
    }
    return false;
}

struct held {
    struct gp_placement p;
    struct gp_demand d;
};

/* Random shares, gangs, zero-GPU jobs, state changes, additions and
 * removals: every fit must be takable, no share may be refused while a
 * device could hold it, and every counter must match a recount. */
static void random_operations_keep_every_counter_true(void **state)
{
    struct gp_cluster *c = nodes(6, 4, 32);
    struct held *h = calloc(4096, sizeof(*h));
    struct gp_arena a;
    struct gp_rng rng;
    uint32_t nh = 0, placed[3] = {0, 0, 0};

    (void)state;
    assert_non_null(h);
    gp_arena_init(&a, 0);
    gp_rng_init(&rng, 7);
    for (int step = 0; step < 20000; step++) {
        uint64_t r = gp_rng_next(&rng) % 100;
        uint32_t nn = gp_cluster_nnodes(c);
        uint32_t node = (uint32_t)(gp_rng_next(&rng) % nn);

        if (r < 45 && nh < 4096) {
            struct gp_demand d = {.type = GP_TYPE_ANY};
            uint64_t kind = gp_rng_next(&rng) % 3;
            enum gp_share_placer pl = (enum gp_share_placer)(step % 2);
            struct gp_placement tmp;
            int rc;

            if (kind == 0) {
                d.gpus = 1 + (uint32_t)(gp_rng_next(&rng) % 6);
                d.cpus_per_gpu = (uint32_t)(gp_rng_next(&rng) % 3);
            } else {
                d.gpu_milli =
                    kind == 1 ? 1 + (uint32_t)(gp_rng_next(&rng) % 999) : 0;
                d.cpus = (uint32_t)(gp_rng_next(&rng) % 8);
            }
            if (step % 4 == 1)
                assert_int_equal(gp_cluster_observe(c, &d), GP_OK);
            gp_arena_reset(&a);
            rc = gp_cluster_fit_with(c, GP_PLACE_TOPO, pl, &d, &a, &h[nh].p);
            if (rc == GP_ENOFIT) {
                if (kind == 1 && pl == GP_SHARE_BESTFIT)
                    assert_false(share_fits_somewhere(c, d.gpu_milli, d.cpus));
                continue;
            }
            assert_int_equal(rc, GP_OK);
            assert_int_equal(gp_cluster_take(c, &h[nh].p, &d), GP_OK);
            tmp = h[nh].p; /* its slots are in the arena */
            assert_int_equal(gp_placement_copy(&h[nh].p, &tmp), GP_OK);
            h[nh++].d = d;
            placed[kind]++;
        } else if (r < 80 && nh > 0) {
            uint32_t k = (uint32_t)(gp_rng_next(&rng) % nh);

            gp_cluster_give(c, &h[k].p, &h[k].d);
            gp_placement_fini(&h[k].p);
            h[k] = h[--nh];
            if (h[k].p.nslots == 1)
                h[k].p.slots = &h[k].p.inline_slot;
        } else if (r < 94) {
            enum gp_node_state s = (enum gp_node_state)(gp_rng_next(&rng) % 3);
            int rc = gp_cluster_set_node_state(c, node, s, NULL);

            assert_true(rc == GP_OK ||
                        (rc == GP_ENOENT &&
                         gp_cluster_node_state(c, node) == GP_NODE_REMOVED));
        } else if (r < 97) {
            struct gp_node_spec spec = {
                .type = gp_rng_next(&rng) % 2 ? "T4" : "A10",
                .gpus = 1 + (uint32_t)(gp_rng_next(&rng) % 8),
                .cpus = 32,
            };
            assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
        } else {
            int rc = gp_cluster_remove_node(c, node, NULL);

            if (gp_cluster_node_pieces(c, node))
                assert_int_equal(rc, GP_ESTATE);
        }
        check_counters(c);
    }
    while (nh > 0) {
        nh--;
        gp_cluster_give(c, &h[nh].p, &h[nh].d);
        gp_placement_fini(&h[nh].p);
    }
    check_counters(c);
    for (int k = 0; k < 3; k++) /* gangs, shares, zero-GPU jobs */
        assert_true(placed[k] > 500);
    assert_int_equal(gp_cluster_alloc_milli(c), 0);
    for (uint32_t i = 0; i < gp_cluster_nnodes(c); i++) {
        assert_int_equal(gp_cluster_node_pieces(c, i), 0);
        if (gp_cluster_node_state(c, i) != GP_NODE_REMOVED)
            assert_int_equal(gp_cluster_node_cpus_free(c, i), 32);
    }
    free(h);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares_fill_one_device_up_to_1000_milli),
        cmocka_unit_test(take_refuses_a_share_past_a_full_device),
        cmocka_unit_test(a_gang_never_takes_a_shared_device),
        cmocka_unit_test(best_fit_takes_the_tightest_device_that_is_enough),
        cmocka_unit_test(shares_and_gangs_respect_cpus_and_memory),
        cmocka_unit_test(zero_gpu_jobs_take_only_cpus_and_memory),
        cmocka_unit_test(malformed_demands_are_errors),
        cmocka_unit_test(count_model_packs_shares_into_whole_gpus),
        cmocka_unit_test(a_drained_node_offers_no_share),
        cmocka_unit_test(
            alloc_rate_counts_shares_and_whole_devices_on_up_nodes),
        cmocka_unit_test(fragmentation_follows_the_fgd_definition),
        cmocka_unit_test(fgd_places_where_fragmentation_grows_least),
        cmocka_unit_test(
            fgd_places_a_small_gang_on_one_node_and_a_big_one_by_pack),
        cmocka_unit_test(the_workload_is_learnt_from_what_arrives),
        cmocka_unit_test(placer_names_parse_and_print),
        cmocka_unit_test(random_operations_keep_every_counter_true),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
