/* test_cluster.c - the free-GPU indexes and the three placement models. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gpupool/cluster.h"

static struct gp_cluster *uniform(uint32_t n, uint32_t g, uint32_t per_sw)
{
    struct gp_cluster *c;

    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, n, g, "V100", per_sw, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    return c;
}

/* A sealed cluster of these nodes. */
static struct gp_cluster *from_specs(const struct gp_node_spec *specs, size_t n)
{
    struct gp_cluster *c;

    assert_int_equal(gp_cluster_new(&c), GP_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gp_cluster_add_node(c, &specs[i], NULL), GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    return c;
}

static struct gp_demand gang(uint32_t gpus)
{
    struct gp_demand d = {.gpus = gpus, .type = GP_TYPE_ANY};
    return d;
}

static int take(struct gp_cluster *c, enum gp_place_model m, uint32_t gpus,
                struct gp_arena *a, struct gp_placement *p)
{
    struct gp_demand d = gang(gpus);
    int rc = gp_cluster_fit(c, m, &d, a, p);

    if (rc != GP_OK)
        return rc;
    return gp_cluster_take(c, p, &d);
}

static void node_gpus_must_be_1_to_64(void **state)
{
    struct gp_cluster *c;
    struct gp_diag diag = {{0}, {0}};
    struct gp_node_spec spec = {.name = "big", .gpus = 65};

    (void)state;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &spec, &diag), GP_EINVAL);
    assert_string_equal(diag.where, "big");
    assert_non_null(strstr(diag.msg, "1..64"));
    spec.gpus = 0;
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_EINVAL);
    spec.gpus = 8;
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &spec, &diag), GP_EEXIST);
    gp_cluster_free(c);
}

static void empty_cluster_cannot_be_sealed(void **state)
{
    struct gp_cluster *c;

    (void)state;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_EINVAL);
    gp_cluster_free(c);
}

static void pack_puts_a_gang_on_one_node_best_fit(void **state)
{
    struct gp_cluster *c = uniform(3, 8, 0);
    struct gp_arena a;
    struct gp_placement p;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 6, &a, &p), GP_OK); /* node0: 2 */
    assert_int_equal(p.nslots, 1);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(p.slots[0].mask, 0x3f);
    assert_int_equal(take(c, GP_PLACE_PACK, 4, &a, &p), GP_OK); /* node1: 4 */
    assert_int_equal(p.slots[0].node, 1);
    /* 2 GPUs: best fit is node0 (exactly 2 free), not node1 (4) */
    assert_int_equal(take(c, GP_PLACE_PACK, 2, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(p.slots[0].mask, 0xc0);
    assert_int_equal(gp_cluster_node_free(c, 0), 0);
    assert_int_equal(gp_cluster_free_gpus(c), 12);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void pack_spreads_a_large_gang_over_the_fewest_nodes(void **state)
{
    struct gp_cluster *c = uniform(4, 8, 0);
    struct gp_arena a;
    struct gp_placement p, q;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 3, &a, &p), GP_OK); /* node0 */
    /* 20 GPUs: two whole nodes and 4 on the best-fitting third */
    assert_int_equal(take(c, GP_PLACE_PACK, 20, &a, &q), GP_OK);
    assert_int_equal(q.nslots, 3);
    assert_int_equal(q.slots[0].gpus + q.slots[1].gpus + q.slots[2].gpus, 20);
    assert_int_equal(gp_cluster_free_gpus(c), 9);
    gp_cluster_give(c, &q, &(struct gp_demand){.gpus = 20});
    assert_int_equal(gp_cluster_free_gpus(c), 29);
    for (uint32_t i = 1; i < 4; i++)
        assert_int_equal(gp_cluster_node_free(c, i), 8);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void nothing_fits_when_too_few_gpus_are_free(void **state)
{
    struct gp_cluster *c = uniform(2, 4, 0);
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = gang(9);

    (void)state;
    gp_arena_init(&a, 0);
    for (int m = GP_PLACE_COUNT; m <= GP_PLACE_TOPO; m++)
        assert_int_equal(gp_cluster_fit(c, (enum gp_place_model)m, &d, &a, &p),
                         GP_ENOFIT);
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_ENOFIT);
    d.gpus = 8;
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_OK);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void count_model_ignores_nodes(void **state)
{
    struct gp_cluster *c = uniform(2, 4, 0);
    struct gp_arena a;
    struct gp_placement p;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_COUNT, 3, &a, &p), GP_OK);
    assert_int_equal(p.nslots, 0);
    assert_int_equal(take(c, GP_PLACE_COUNT, 5, &a, &p), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 0);
    assert_int_equal(take(c, GP_PLACE_COUNT, 1, &a, &p), GP_ENOFIT);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void topo_keeps_a_gang_inside_one_switch(void **state)
{
    /* 2 switches of 2 nodes x 4 GPUs */
    struct gp_cluster *c = uniform(4, 4, 2);
    struct gp_arena a;
    struct gp_placement p, q;

    (void)state;
    gp_arena_init(&a, 0);
    /* take 2 GPUs on node0 (switch 0) and 2 on node2 (switch 1) */
    assert_int_equal(take(c, GP_PLACE_TOPO, 2, &a, &p), GP_OK);
    assert_int_equal(take(c, GP_PLACE_TOPO, 4, &a, &p), GP_OK); /* node1 */
    assert_int_equal(gp_cluster_node_switch(c, p.slots[0].node), 0);
    assert_int_equal(take(c, GP_PLACE_TOPO, 1, &a, &p), GP_OK);
    /* now switch0 has 2 free (node0), 1... 6 GPUs must stay in switch 1 */
    assert_int_equal(take(c, GP_PLACE_TOPO, 6, &a, &q), GP_OK);
    assert_int_equal(q.nswitches, 1);
    for (uint32_t i = 0; i < q.nslots; i++)
        assert_int_equal(gp_cluster_node_switch(c, q.slots[i].node), 1);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void topo_spans_switches_only_when_it_must(void **state)
{
    struct gp_cluster *c = uniform(4, 4, 2);
    struct gp_arena a;
    struct gp_placement p;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_TOPO, 12, &a, &p), GP_OK);
    assert_int_equal(p.nswitches, 2);
    assert_int_equal(p.nslots, 3);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

/* consolidate: a gang that fits a node waits for one rather than split;
 * a larger one takes whole free nodes, within one switch when it can (the
 * switch that holds it most tightly). 2 switches of 3 nodes x 8 GPUs. */
static void consolidate_never_splits_a_gang_that_fits_a_node(void **state)
{
    struct gp_cluster *c = uniform(6, 8, 3);
    struct gp_arena a;
    struct gp_placement p, big;

    (void)state;
    gp_arena_init(&a, 0);
    /* 5 GPUs on each node but one of switch 1 (node 5 stays whole) */
    for (int i = 0; i < 5; i++)
        assert_int_equal(take(c, GP_PLACE_CONSOLIDATE, 5, &a, &p), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 5 * 3 + 8);
    /* 4 GPUs: the fullest node that holds them - none of the 3-free ones
     * does - is node 5 */
    assert_int_equal(take(c, GP_PLACE_CONSOLIDATE, 4, &a, &p), GP_OK);
    assert_int_equal(p.nslots, 1);
    assert_int_equal(p.slots[0].node, 5);
    /* 6 GPUs: 3 + 4 free would do under pack, but no node holds 6 */
    {
        struct gp_demand d = gang(6);
        assert_int_equal(gp_cluster_fit(c, GP_PLACE_CONSOLIDATE, &d, &a, &p),
                         GP_ENOFIT);
        assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_OK);
        assert_true(p.nslots > 1);
    }
    gp_arena_fini(&a);
    gp_cluster_free(c);

    /* whole nodes: switch 0 has 2 whole free nodes, switch 1 has 3 */
    c = uniform(6, 8, 3);
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_CONSOLIDATE, 1, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(take(c, GP_PLACE_CONSOLIDATE, 12, &a, &big), GP_OK);
    assert_int_equal(big.nswitches, 1);
    assert_int_equal(big.nslots, 2);
    for (uint32_t i = 0; i < big.nslots; i++) {
        assert_int_equal(gp_cluster_node_switch(c, big.slots[i].node), 0);
        assert_true(big.slots[i].node != 0); /* node 0 is not whole */
    }
    /* 24 GPUs: 3 whole nodes left (switch 1), none partly used taken */
    assert_int_equal(take(c, GP_PLACE_CONSOLIDATE, 24, &a, &big), GP_OK);
    assert_int_equal(big.nslots, 3);
    assert_int_equal(big.nswitches, 1);
    {
        struct gp_demand d = gang(9); /* 7 free on node 0 and 4 on the 12's
                                         second node: not whole */
        assert_int_equal(gp_cluster_fit(c, GP_PLACE_CONSOLIDATE, &d, &a, &p),
                         GP_ENOFIT);
    }
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void take_refuses_gpus_that_are_not_free(void **state)
{
    struct gp_cluster *c = uniform(1, 4, 0);
    struct gp_arena a;
    struct gp_placement p, twice;
    struct gp_demand d = gang(2);

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 2, &a, &p), GP_OK);
    twice = p;
    twice.slots = &twice.inline_slot;
    assert_int_equal(gp_cluster_take(c, &twice, &d), GP_EPLAN);
    assert_int_equal(gp_cluster_free_gpus(c), 2);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void gpu_types_are_kept_apart(void **state)
{
    const struct gp_node_spec specs[] = {
        {.name = "k", .type = "K80", .gpus = 4},
        {.name = "v", .type = "V100", .gpus = 8},
    };
    struct gp_cluster *c = from_specs(specs, 2);
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = {.gpus = 6};
    uint8_t t;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_find_type(c, "K80", &t), GP_OK);
    d.type = t;
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_ENOFIT);
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_COUNT, &d, &a, &p), GP_ENOFIT);
    d.type = GP_TYPE_ANY;
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_OK);
    assert_string_equal(gp_cluster_type_name(c, p.type), "V100");
    assert_int_equal(gp_cluster_find_type(c, "A100", &t), GP_ENOENT);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void cpus_and_memory_limit_a_node(void **state)
{
    const struct gp_node_spec specs[] = {
        {.name = "s", .gpus = 8, .cpus = 8},  /* small */
        {.name = "f", .gpus = 8, .cpus = 64}, /* fat */
    };
    struct gp_cluster *c = from_specs(specs, 2);
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = {.gpus = 4, .type = GP_TYPE_ANY, .cpus_per_gpu = 4};

    (void)state;
    gp_arena_init(&a, 0);
    /* 4 GPUs x 4 CPUs = 16 CPUs: only the fat node has them */
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    assert_int_equal(gp_cluster_take(c, &p, &d), GP_OK);
    gp_cluster_give(c, &p, &d);
    assert_int_equal(gp_cluster_free_gpus(c), 16);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void adding_a_node_keeps_its_types_speed(void **state)
{
    struct gp_cluster *c;
    struct gp_node_spec spec = {.name = "a0", .type = "A100", .gpus = 8};
    uint8_t t, t2;

    (void)state;
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_type(c, "A100", 2.5, &t), GP_OK);
    /* the first node of a declared type must not reset its speed */
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    assert_true(gp_cluster_type_speed(c, t) == 2.5);
    /* re-declaring with speed 0 ("not given") leaves the speed alone... */
    assert_int_equal(gp_cluster_add_type(c, "A100", 0, &t2), GP_OK);
    assert_int_equal(t2, t);
    assert_true(gp_cluster_type_speed(c, t) == 2.5);
    /* ...a speed > 0 still updates it */
    assert_int_equal(gp_cluster_add_type(c, "A100", 3.0, NULL), GP_OK);
    assert_true(gp_cluster_type_speed(c, t) == 3.0);
    /* a type first seen on a node gets the reference speed */
    spec.name = "k0";
    spec.type = "K80";
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    assert_int_equal(gp_cluster_find_type(c, "K80", &t2), GP_OK);
    assert_true(gp_cluster_type_speed(c, t2) == 1.0);
    gp_cluster_free(c);
}

/* ---- a live cluster ------------------------------------------------------ */

static struct gp_cluster *typed(uint32_t n, uint32_t g, const char *type)
{
    struct gp_cluster *c;

    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, n, g, type, 0, NULL), GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    return c;
}

static void nodes_added_after_the_seal_are_offered_at_once(void **state)
{
    struct gp_cluster *c = uniform(2, 8, 0);
    struct gp_node_spec spec = {.name = "late", .type = "V100", .gpus = 8};
    struct gp_arena a;
    struct gp_placement p;
    uint32_t id;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 16, &a, &p), GP_OK);
    assert_int_equal(take(c, GP_PLACE_PACK, 1, &a, &p), GP_ENOFIT);
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    assert_int_equal(gp_cluster_nnodes(c), 3);
    assert_int_equal(gp_cluster_find_node(c, "late", &id), GP_OK);
    assert_int_equal(id, 2);
    assert_int_equal(gp_cluster_gpus(c), 24);
    assert_int_equal(gp_cluster_up_gpus(c), 24);
    assert_int_equal(gp_cluster_free_gpus(c), 8);
    assert_int_equal(take(c, GP_PLACE_TOPO, 6, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 2);
    assert_int_equal(gp_cluster_node_free(c, 2), 2);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void a_new_gpu_type_can_appear_after_the_seal(void **state)
{
    struct gp_cluster *c = typed(2, 8, "V100");
    struct gp_node_spec spec = {
        .name = "a0", .type = "A100", .gpus = 4, .switch_name = "rack9"};
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = {.gpus = 4};
    uint8_t t;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    assert_int_equal(gp_cluster_ntypes(c), 2);
    assert_int_equal(gp_cluster_nswitches(c), 2);
    assert_int_equal(gp_cluster_find_type(c, "A100", &t), GP_OK);
    d.type = t;
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_TOPO, &d, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 2);
    assert_int_equal(gp_cluster_take(c, &p, &d), GP_OK);
    assert_int_equal(gp_cluster_type_free(c, t), 0);
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_COUNT, &d, &a, &p), GP_ENOFIT);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void
drained_and_down_nodes_offer_nothing_but_keep_their_jobs(void **state)
{
    struct gp_cluster *c = uniform(2, 8, 0);
    struct gp_arena a;
    struct gp_placement p, q;
    struct gp_demand d4 = gang(4);

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 4, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DRAIN, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_node_state(c, 0), GP_NODE_DRAIN);
    assert_int_equal(gp_cluster_nodes_in_state(c, GP_NODE_DRAIN), 1);
    assert_int_equal(gp_cluster_gpus(c), 16);
    assert_int_equal(gp_cluster_up_gpus(c), 8);
    assert_int_equal(gp_cluster_free_gpus(c), 8);
    /* 4 GPUs would fit node0 best, but it is draining */
    assert_int_equal(take(c, GP_PLACE_PACK, 4, &a, &q), GP_OK);
    assert_int_equal(q.slots[0].node, 1);
    assert_int_equal(take(c, GP_PLACE_PACK, 5, &a, &q), GP_ENOFIT);
    /* what ran there is given back onto a node that offers nothing */
    gp_cluster_give(c, &p, &d4);
    assert_int_equal(gp_cluster_node_free(c, 0), 8);
    assert_int_equal(gp_cluster_free_gpus(c), 4);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DOWN, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 4);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_UP, NULL), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 12);
    assert_int_equal(take(c, GP_PLACE_TOPO, 8, &a, &q), GP_OK);
    assert_int_equal(q.slots[0].node, 0);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void giving_and_taking_back_works_on_a_drained_node(void **state)
{
    struct gp_cluster *c = uniform(1, 8, 0);
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = gang(3);

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 3, &a, &p), GP_OK);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DRAIN, NULL),
                     GP_OK);
    /* the core asks "what if it stopped?" with a give and a take */
    gp_cluster_give(c, &p, &d);
    assert_int_equal(gp_cluster_take(c, &p, &d), GP_OK);
    assert_int_equal(gp_cluster_node_free(c, 0), 5);
    assert_int_equal(gp_cluster_node_pieces(c, 0), 1);
    assert_int_equal(gp_cluster_free_gpus(c), 0);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void a_node_with_allocations_cannot_be_removed(void **state)
{
    struct gp_cluster *c = uniform(2, 8, 0);
    struct gp_node_spec again = {.name = "node0", .type = "V100", .gpus = 2};
    struct gp_diag diag = {{0}, {0}};
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = gang(8);
    uint32_t id;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 8, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 0);
    assert_int_equal(gp_cluster_remove_node(c, 0, &diag), GP_ESTATE);
    assert_string_equal(diag.where, "node0");
    assert_non_null(strstr(diag.msg, "1 placement piece"));
    assert_int_equal(gp_cluster_add_node(c, &again, NULL), GP_EEXIST);
    gp_cluster_give(c, &p, &d);
    assert_int_equal(gp_cluster_remove_node(c, 0, NULL), GP_OK);
    /* a tombstone: the id stays, the GPUs go, the name is free again */
    assert_int_equal(gp_cluster_nnodes(c), 2);
    assert_int_equal(gp_cluster_node_state(c, 0), GP_NODE_REMOVED);
    assert_int_equal(gp_cluster_node_gpus(c, 0), 0);
    assert_int_equal(gp_cluster_gpus(c), 8);
    assert_int_equal(gp_cluster_free_gpus(c), 8);
    assert_int_equal(gp_cluster_remove_node(c, 0, NULL), GP_ENOENT);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_UP, NULL),
                     GP_ENOENT);
    assert_int_equal(gp_cluster_find_node(c, "node0", &id), GP_ENOENT);
    assert_int_equal(gp_cluster_add_node(c, &again, NULL), GP_OK);
    assert_int_equal(gp_cluster_find_node(c, "node0", &id), GP_OK);
    assert_int_equal(id, 2);
    assert_int_equal(gp_cluster_nodes_in_state(c, GP_NODE_REMOVED), 1);
    assert_int_equal(gp_cluster_max_node_gpus(c, GP_TYPE_ANY), 8);
    assert_int_equal(take(c, GP_PLACE_PACK, 10, &a, &p), GP_OK);
    assert_int_equal(p.nslots, 2);
    assert_int_equal(take(c, GP_PLACE_PACK, 1, &a, &p), GP_ENOFIT);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void can_ever_fit_counts_only_up_nodes(void **state)
{
    struct gp_cluster *c = typed(2, 8, "V100");
    struct gp_diag diag = {{0}, {0}};
    struct gp_demand d = {.gpus = 16, .type = 0};

    (void)state;
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_set_node_state(c, 1, GP_NODE_DOWN, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, &diag),
                     GP_ENOFIT);
    assert_string_equal(diag.msg, "needs 16 GPUs of type V100; the UP nodes "
                                  "have 8 (16 exist)");
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_COUNT, &d, NULL),
                     GP_ENOFIT);
    d.type = GP_TYPE_ANY;
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_TOPO, &d, &diag),
                     GP_ENOFIT);
    assert_string_equal(diag.msg, "needs 16 GPUs of one type; the UP nodes of "
                                  "the largest type (V100) have 8 (16 exist)");
    d.type = 0;
    assert_int_equal(gp_cluster_max_up_node_gpus(c, 0), 8);
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DRAIN, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_max_up_node_gpus(c, 0), 0);
    assert_int_equal(gp_cluster_max_node_gpus(c, 0), 8);
    d.gpus = 1;
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_ENOFIT);
    assert_int_equal(gp_cluster_set_node_state(c, 1, GP_NODE_UP, NULL), GP_OK);
    assert_int_equal(gp_cluster_can_ever_fit(c, GP_PLACE_PACK, &d, NULL),
                     GP_OK);
    gp_cluster_free(c);
}

static void bad_node_ids_and_states_are_errors(void **state)
{
    struct gp_cluster *c = uniform(1, 8, 0);
    struct gp_diag diag = {{0}, {0}};
    struct gp_node_spec spec = {.name = "x", .gpus = 8, .state = 7};
    enum gp_node_state s;

    (void)state;
    assert_int_equal(gp_cluster_set_node_state(c, 9, GP_NODE_DOWN, &diag),
                     GP_ENOENT);
    assert_string_equal(diag.where, "node 9");
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_REMOVED, NULL),
                     GP_EINVAL);
    assert_int_equal(
        gp_cluster_set_node_state(c, 0, (enum gp_node_state)9, NULL),
        GP_EINVAL);
    assert_int_equal(gp_cluster_remove_node(c, 9, NULL), GP_ENOENT);
    assert_int_equal(gp_cluster_node_state(c, 9), GP_NODE_REMOVED);
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_EINVAL);
    assert_int_equal(gp_node_state_parse("drain", &s), GP_OK);
    assert_int_equal(s, GP_NODE_DRAIN);
    assert_int_equal(gp_node_state_parse("removed", &s), GP_EINVAL);
    assert_string_equal(gp_node_state_name(GP_NODE_DOWN), "down");
    /* setting the state a node has is a no-op */
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_UP, NULL), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 8);
    gp_cluster_free(c);
}

static void a_node_may_start_down_and_join_later(void **state)
{
    struct gp_cluster *c;
    struct gp_node_spec spec = {
        .name = "spare", .gpus = 4, .state = GP_NODE_DOWN};
    struct gp_arena a;
    struct gp_placement p;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 1, 4, "V100", 0, NULL), GP_OK);
    assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    /* a state change before the seal is counted, then indexed at seal */
    assert_int_equal(gp_cluster_set_node_state(c, 0, GP_NODE_DRAIN, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    assert_int_equal(gp_cluster_up_gpus(c), 0);
    assert_int_equal(take(c, GP_PLACE_PACK, 1, &a, &p), GP_ENOFIT);
    assert_int_equal(gp_cluster_set_node_state(c, 1, GP_NODE_UP, NULL), GP_OK);
    assert_int_equal(take(c, GP_PLACE_PACK, 4, &a, &p), GP_OK);
    assert_int_equal(p.slots[0].node, 1);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void count_model_free_reads_zero_when_nodes_go_down(void **state)
{
    struct gp_cluster *c = uniform(2, 4, 0);
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = gang(6);

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(take(c, GP_PLACE_COUNT, 6, &a, &p), GP_OK);
    assert_int_equal(gp_cluster_set_node_state(c, 1, GP_NODE_DOWN, NULL),
                     GP_OK);
    /* 6 GPUs handed out, 4 on UP nodes: overcommitted, nothing offered */
    assert_int_equal(gp_cluster_free_gpus(c), 0);
    assert_int_equal(take(c, GP_PLACE_COUNT, 1, &a, &p), GP_ENOFIT);
    gp_cluster_give(c, &p, &d);
    assert_int_equal(gp_cluster_free_gpus(c), 4);
    assert_int_equal(gp_cluster_set_node_state(c, 1, GP_NODE_UP, NULL), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 8);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

static void a_switch_grows_past_its_first_buckets_after_the_seal(void **state)
{
    struct gp_cluster *c = uniform(2, 8, 0); /* one switch, "sw0" */
    struct gp_node_spec spec = {.type = "V100", .gpus = 8};
    struct gp_node_spec other = {
        .type = "V100", .gpus = 8, .switch_name = "sw1"};
    struct gp_arena a;
    struct gp_placement p;

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_add_node(c, &other, NULL), GP_OK);
    for (int i = 0; i < 14; i++) {
        char name[16];

        snprintf(name, sizeof(name), "late%d", i);
        spec.name = name;
        spec.switch_name = "sw0";
        assert_int_equal(gp_cluster_add_node(c, &spec, NULL), GP_OK);
    }
    assert_int_equal(gp_cluster_nswitches(c), 2);
    /* sw0 has 16 nodes (128 GPUs) now: 120 stay inside it */
    assert_int_equal(take(c, GP_PLACE_TOPO, 120, &a, &p), GP_OK);
    assert_int_equal(p.nswitches, 1);
    for (uint32_t i = 0; i < p.nslots; i++)
        assert_int_equal(gp_cluster_node_switch(c, p.slots[i].node), 0);
    /* removing sw1's only node leaves 8 free in sw0 */
    assert_int_equal(gp_cluster_remove_node(c, 2, NULL), GP_OK);
    assert_int_equal(take(c, GP_PLACE_TOPO, 9, &a, &p), GP_ENOFIT);
    assert_int_equal(take(c, GP_PLACE_TOPO, 8, &a, &p), GP_OK);
    assert_int_equal(gp_cluster_free_gpus(c), 0);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

/* ---- cost ---------------------------------------------------------------- */

static void pack_takes_the_roomiest_nodes_when_cpus_cap_them(void **state)
{
    const struct gp_node_spec specs[] = {
        {.name = "n0", .gpus = 8, .cpus = 8},
        {.name = "n1", .gpus = 8, .cpus = 32},
        {.name = "n2", .gpus = 8, .cpus = 16},
    };
    struct gp_cluster *c = from_specs(specs, 3);
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = {.gpus = 12, .type = GP_TYPE_ANY, .cpus_per_gpu = 4};

    (void)state;
    gp_arena_init(&a, 0);
    /* rooms 2, 8, 4: n1 whole, then n2 holds the rest exactly */
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_OK);
    assert_int_equal(p.nslots, 2);
    assert_int_equal(p.slots[0].node, 1);
    assert_int_equal(p.slots[0].gpus, 8);
    assert_int_equal(p.slots[1].node, 2);
    assert_int_equal(p.slots[1].gpus, 4);
    assert_int_equal(gp_cluster_take(c, &p, &d), GP_OK);
    assert_int_equal(gp_cluster_node_cpus_free(c, 1), 0);
    d.gpus = 3;
    assert_int_equal(gp_cluster_fit(c, GP_PLACE_PACK, &d, &a, &p), GP_ENOFIT);
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

/* With a membership scan per pick (as before), this gang cost ~10^12
 * steps under pack; now it is linear. 100,000 one-node switches also
 * exercise the switch lookup. */
static void a_gang_of_100000_gpus_is_placed_whole(void **state)
{
    struct gp_cluster *c;
    struct gp_arena a;
    struct gp_placement p;
    struct gp_demand d = gang(100000);

    (void)state;
    gp_arena_init(&a, 0);
    assert_int_equal(gp_cluster_new(&c), GP_OK);
    assert_int_equal(gp_cluster_add_uniform(c, 100000, 8, "V100", 1, NULL),
                     GP_OK);
    assert_int_equal(gp_cluster_seal(c), GP_OK);
    assert_int_equal(gp_cluster_nswitches(c), 100000);
    for (int m = GP_PLACE_COUNT; m <= GP_PLACE_TOPO; m++) {
        uint64_t sum = 0;

        gp_arena_reset(&a);
        assert_int_equal(gp_cluster_fit(c, (enum gp_place_model)m, &d, &a, &p),
                         GP_OK);
        for (uint32_t i = 0; i < p.nslots; i++)
            sum += p.slots[i].gpus;
        if (m != GP_PLACE_COUNT) {
            assert_int_equal(p.nslots, 12500);
            assert_int_equal(p.nswitches, 12500);
            assert_int_equal(sum, 100000);
        }
        assert_int_equal(gp_cluster_take(c, &p, &d), GP_OK);
        assert_int_equal(gp_cluster_free_gpus(c), 700000);
        gp_cluster_give(c, &p, &d);
    }
    gp_arena_fini(&a);
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_gpus_must_be_1_to_64),
        cmocka_unit_test(empty_cluster_cannot_be_sealed),
        cmocka_unit_test(pack_puts_a_gang_on_one_node_best_fit),
        cmocka_unit_test(pack_spreads_a_large_gang_over_the_fewest_nodes),
        cmocka_unit_test(nothing_fits_when_too_few_gpus_are_free),
        cmocka_unit_test(count_model_ignores_nodes),
        cmocka_unit_test(topo_keeps_a_gang_inside_one_switch),
        cmocka_unit_test(topo_spans_switches_only_when_it_must),
        cmocka_unit_test(consolidate_never_splits_a_gang_that_fits_a_node),
        cmocka_unit_test(take_refuses_gpus_that_are_not_free),
        cmocka_unit_test(gpu_types_are_kept_apart),
        cmocka_unit_test(cpus_and_memory_limit_a_node),
        cmocka_unit_test(adding_a_node_keeps_its_types_speed),
        cmocka_unit_test(nodes_added_after_the_seal_are_offered_at_once),
        cmocka_unit_test(a_new_gpu_type_can_appear_after_the_seal),
        cmocka_unit_test(
            drained_and_down_nodes_offer_nothing_but_keep_their_jobs),
        cmocka_unit_test(giving_and_taking_back_works_on_a_drained_node),
        cmocka_unit_test(a_node_with_allocations_cannot_be_removed),
        cmocka_unit_test(can_ever_fit_counts_only_up_nodes),
        cmocka_unit_test(bad_node_ids_and_states_are_errors),
        cmocka_unit_test(a_node_may_start_down_and_join_later),
        cmocka_unit_test(count_model_free_reads_zero_when_nodes_go_down),
        cmocka_unit_test(a_switch_grows_past_its_first_buckets_after_the_seal),
        cmocka_unit_test(pack_takes_the_roomiest_nodes_when_cpus_cap_them),
        cmocka_unit_test(a_gang_of_100000_gpus_is_placed_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
