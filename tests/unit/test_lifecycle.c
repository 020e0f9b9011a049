/* test_lifecycle.c - a job's life as the world reports it: starts that are
 * confirmed late or fail, stops that take time, cancels that wait for the
 * exit; resources are held until the world confirms, and nothing leaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core_harness.h"

/* Take the actions the core has now, without carrying them out. */
static size_t take(struct gp_core *core, const struct gp_action **a)
{
    return gp_core_take_actions(core, a);
}

static uint64_t free_gpus(struct gp_core *core)
{
    return gp_cluster_free_gpus(gp_core_cluster(core));
}

static void a_start_holds_its_gpus_until_the_world_confirms(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 8, &r);
    uint32_t a = submit(core, "a", 4, 100, 0);
    const struct gp_action *act;
    const struct gp_job *j = gp_core_job(core, a);

    (void)state;
    assert_int_equal(gp_core_round(core, 0), 1);
    assert_int_equal(take(core, &act), 1);
    assert_int_equal(act[0].kind, GP_ACT_START);
    assert_int_equal(act[0].job, a);
    assert_int_equal(j->state, GP_JOB_STARTING);
    assert_int_equal(free_gpus(core), 4);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 4);
    assert_int_equal(j->first_start_us, GP_TIME_NONE);
    /* nothing to take twice */
    assert_int_equal(take(core, &act), 0);
    /* confirmed 5 s later: the run begins then */
    assert_int_equal(gp_core_job_started(core, a, S(5)), GP_OK);
    assert_int_equal(j->state, GP_JOB_RUNNING);
    assert_int_equal(j->first_start_us, S(5));
    assert_int_equal(j->run_start_us, S(5));
    assert_int_equal(gp_core_job_started(core, a, S(6)), GP_ESTATE);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(105)),
                     GP_OK);
    /* the GPUs were held from the decision, the work done from the start */
    assert_int_equal(j->gpu_us, 4 * S(105));
    assert_int_equal(j->attained_gpu_us, 4 * S(100));
    assert_int_equal(free_gpus(core), 8);
    gp_core_free(core);
}

/* The bug this replaced: a backend that refused the second start of a
 * round left that job running and its GPUs taken forever (busy 4 while
 * only 2 of 8 were free). */
static void a_failed_start_releases_exactly_that_jobs_gpus(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 8, &r);
    uint32_t a = submit(core, "a", 2, 100, 0);
    uint32_t b = submit(core, "b", 2, 100, 0);
    uint32_t c = submit(core, "c", 2, 100, 0);
    const struct gp_action *act;

    (void)state;
    assert_int_equal(gp_core_round(core, 0), 3);
    assert_int_equal(take(core, &act), 3);
    assert_int_equal(gp_core_job_started(core, a, 0), GP_OK);
    assert_int_equal(gp_core_job_start_failed(core, b, "no such image", 0),
                     GP_OK);
    assert_int_equal(gp_core_job_started(core, c, 0), GP_OK);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_string_equal(gp_core_str(core, gp_core_job(core, b)->why),
                        "no such image");
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 4);
    assert_int_equal(free_gpus(core), 4);
    assert_int_equal(gp_core_npending(core), 1);
    /* a failed start is no preemption and loses no work */
    assert_int_equal(gp_core_job(core, b)->preemptions, 0);
    assert_int_equal(gp_core_job(core, b)->lost_work_us, 0);
    /* it is tried again */
    assert_int_equal(round_at(core, S(1)), 1);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 6);
    gp_core_free(core);
}

static void a_job_whose_starts_keep_failing_fails_with_the_reason(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 8, &r);
    uint32_t a = submit(core, "a", 8, 100, 0);
    const struct gp_action *act;

    (void)state;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gp_core_round(core, S(i)), 1);
        assert_int_equal(take(core, &act), 1);
        assert_int_equal(gp_core_job_start_failed(core, a, "node lost", S(i)),
                         GP_OK);
    }
    assert_int_equal(state_of(core, a), GP_JOB_FAILED);
    assert_int_equal(gp_core_job(core, a)->start_failures, 3);
    assert_string_equal(gp_core_str(core, gp_core_job(core, a)->why),
                        "node lost");
    assert_int_equal(free_gpus(core), 8);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 0);
    assert_int_equal(gp_core_round(core, S(4)), 0);
    gp_core_free(core);
}

/* The bug this replaced: cancel freed the GPUs before the process exited,
 * so another job could be given them while the first still ran. */
static void a_cancelled_job_holds_its_gpus_until_it_exits(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint32_t a = submit(core, "a", 4, 1000, 0);
    uint32_t b;
    const struct gp_action *act;

    (void)state;
    round_at(core, 0);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    b = submit(core, "b", 4, 10, S(10));
    assert_int_equal(gp_core_cancel(core, a, S(10)), GP_OK);
    assert_int_equal(state_of(core, a), GP_JOB_STOPPING);
    assert_int_equal(take(core, &act), 1);
    assert_int_equal(act[0].kind, GP_ACT_KILL);
    assert_int_equal(act[0].reason, GP_STOP_CANCEL);
    /* b cannot have a's GPUs yet */
    assert_int_equal(gp_core_round(core, S(10)), 0);
    assert_int_equal(state_of(core, b), GP_JOB_PENDING);
    assert_int_equal(free_gpus(core), 0);
    /* a second cancel changes nothing and sends nothing */
    assert_int_equal(gp_core_cancel(core, a, S(11)), GP_OK);
    assert_int_equal(take(core, &act), 0);
    /* the process is gone: a is cancelled, its GPUs go to b */
    assert_int_equal(gp_core_job_stopped(core, a, 0, S(12)), GP_OK);
    assert_int_equal(state_of(core, a), GP_JOB_CANCELLED);
    assert_int_equal(gp_core_job(core, a)->end_us, S(12));
    assert_int_equal(round_at(core, S(12)), 1);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(gp_core_cancel(core, a, S(13)), GP_ESTATE);
    gp_core_free(core);
}

static void a_job_cancelled_while_starting_ends_cancelled(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint32_t a = submit(core, "a", 2, 100, 0);
    uint32_t b = submit(core, "b", 2, 100, 0);
    const struct gp_action *act;

    (void)state;
    assert_int_equal(gp_core_round(core, 0), 2);
    assert_int_equal(take(core, &act), 2);
    assert_int_equal(gp_core_cancel(core, a, S(1)), GP_OK);
    assert_int_equal(gp_core_cancel(core, b, S(1)), GP_OK);
    assert_int_equal(take(core, &act), 2);
    /* a's start comes through after all, then it is killed */
    assert_int_equal(gp_core_job_started(core, a, S(2)), GP_OK);
    assert_int_equal(state_of(core, a), GP_JOB_STOPPING);
    assert_int_equal(gp_core_job_stopped(core, a, 0, S(3)), GP_OK);
    assert_int_equal(state_of(core, a), GP_JOB_CANCELLED);
    /* b's start failed */
    assert_int_equal(gp_core_job_start_failed(core, b, "killed", S(2)), GP_OK);
    assert_int_equal(state_of(core, b), GP_JOB_CANCELLED);
    assert_int_equal(free_gpus(core), 4);
    assert_int_equal((gp_core_busy_milli(core) / GP_MILLI_PER_GPU), 0);
    gp_core_free(core);
}

static void reports_that_do_not_fit_the_state_are_refused(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint32_t a = submit(core, "a", 2, 100, 0);

    (void)state;
    assert_int_equal(gp_core_job_started(core, a, 0), GP_ESTATE);
    assert_int_equal(gp_core_job_start_failed(core, a, "x", 0), GP_ESTATE);
    assert_int_equal(gp_core_job_stopped(core, a, 0, 0), GP_ESTATE);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, 0),
                     GP_ESTATE);
    assert_int_equal(gp_core_job_started(core, 99, 0), GP_ENOENT);
    round_at(core, 0);
    assert_int_equal(gp_core_job_stopped(core, a, 0, 0), GP_ESTATE);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_RUNNING, 0), GP_EINVAL);
    gp_core_free(core);
}

/* A starting job cannot be preempted: it has not run, so there is
 * nothing to stop yet. */
static void a_starting_job_is_no_victim(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("srtf", 1, 4, &r);
    uint32_t a = submit(core, "a", 4, 1000, 0);
    uint32_t b;
    const struct gp_action *act;

    (void)state;
    assert_int_equal(gp_core_round(core, 0), 1);
    assert_int_equal(take(core, &act), 1);
    b = submit(core, "b", 4, 10, S(5));
    assert_int_equal(gp_core_round(core, S(5)), 0);
    assert_int_equal(state_of(core, a), GP_JOB_STARTING);
    assert_int_equal(gp_core_job_started(core, a, S(6)), GP_OK);
    /* now it runs, and the shorter job takes its GPUs */
    submit(core, "c", 1, 10, S(7));
    assert_int_equal(round_at(core, S(7)), 2);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    gp_core_free(core);
}

/* A job joins the queue at its submission, and again when it loses its
 * run: that is when it starts waiting afresh (pool reserves for a gang by
 * the time it waited so). */
static void a_job_joins_the_queue_again_when_it_loses_its_run(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("srtf", 1, 4, &r);
    uint32_t a = submit(core, "a", 4, 1000, 1);
    const struct gp_job *j = gp_core_job(core, a);

    (void)state;
    assert_int_equal(j->queued_us, S(1));
    assert_int_equal(round_at(core, S(1)), 1);
    assert_int_equal(state_of(core, a), GP_JOB_RUNNING);
    assert_int_equal(j->queued_us, S(1));
    submit(core, "b", 4, 10, 7);
    assert_int_equal(round_at(core, S(7)), 2);
    assert_int_equal(state_of(core, a), GP_JOB_PENDING);
    assert_int_equal(j->queued_us, S(7));
    gp_core_free(core);
}

static void
a_retired_jobs_handle_finds_nothing_and_its_slot_is_reused(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint64_t a = submit(core, "a", 4, 10, 0), b, found;

    (void)state;
    round_at(core, 0);
    assert_int_equal(gp_core_find_job(core, "a", &found), GP_OK);
    assert_true(found == a);
    assert_int_equal(gp_core_retire(core, a), GP_ESTATE); /* still runs */
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(10)),
                     GP_OK);
    assert_int_equal(gp_core_retire(core, a), GP_OK);
    assert_null(gp_core_job(core, a));
    assert_int_equal(gp_core_retire(core, a), GP_ENOENT);
    assert_int_equal(gp_core_job_started(core, a, S(10)), GP_ENOENT);
    assert_int_equal(gp_core_cancel(core, a, S(10)), GP_ENOENT);
    assert_int_equal(gp_core_find_job(core, "a", &found), GP_ENOENT);
    assert_int_equal(gp_core_nalive(core), 0);
    /* the next job takes the slot, under a new handle */
    b = submit(core, "b", 1, 10, S(11));
    assert_true(b != a);
    assert_int_equal((uint32_t)b, (uint32_t)a);
    assert_int_equal(gp_core_job(core, b)->seq, 1);
    assert_int_equal(gp_core_njobs(core), 1);
    assert_int_equal(gp_core_find_job(core, "b", &found), GP_OK);
    assert_true(found == b);
    gp_core_free(core);
}

/* A timer armed for a job (here LAS's demotion) must not fire on the job
 * that takes its slot after it is retired. */
static void a_retired_jobs_timers_do_not_touch_the_next_job(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("las", 1, 4, &r);
    uint64_t a = submit(core, "a", 4, 100000, 0), b;
    uint64_t rounds;
    int64_t wake;

    (void)state;
    round_at(core, 0);
    wake = gp_core_next_wakeup(core); /* a's demotion */
    assert_true(wake > 0);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(1)), GP_OK);
    assert_int_equal(gp_core_retire(core, a), GP_OK);
    b = submit(core, "b", 4, 100000, S(1));
    round_at(core, S(1));
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    submit(core, "c", 4, 100000, S(2)); /* waits: rounds have work */
    round_at(core, S(2));
    rounds = gp_core_nrounds(core);
    /* at a's old wake-up nothing changed: no round runs */
    round_at(core, wake);
    assert_int_equal(gp_core_nrounds(core), rounds);
    assert_int_equal(state_of(core, b), GP_JOB_RUNNING);
    gp_core_free(core);
}

/* A core that has seen many jobs holds the slots of those alive at once. */
static void retiring_keeps_the_store_to_the_jobs_alive(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 4, 8, &r);
    uint64_t live[64];

    (void)state;
    for (int i = 0; i < 64; i++)
        live[i] = submit(core, "x", 1, 1, 0);
    for (int t = 1; t <= 2000; t++) {
        int k = t % 64;

        round_at(core, S(t));
        if (gp_core_job(core, live[k])->state == GP_JOB_RUNNING) {
            assert_int_equal(
                gp_core_job_ended(core, live[k], GP_JOB_COMPLETED, S(t)),
                GP_OK);
        } else {
            assert_int_equal(gp_core_cancel(core, live[k], S(t)), GP_OK);
            play(core, S(t));
        }
        assert_int_equal(gp_core_retire(core, live[k]), GP_OK);
        live[k] = submit(core, "x", 1, 1, S(t));
    }
    assert_int_equal(gp_core_nsubmitted(core), 64 + 2000);
    assert_int_equal(gp_core_nalive(core), 64);
    assert_int_equal(gp_core_njobs(core), 64);
    gp_core_free(core);
}

/* Traces repeat ids: every live job of an id is found, the newest first,
 * whichever retires first. */
static void jobs_sharing_an_id_are_found_newest_first(void **state)
{
    struct rec r;
    struct gp_core *core = mkcore("fifo", 1, 4, &r);
    uint64_t a = submit(core, "x", 1, 10, 0);
    uint64_t b = submit(core, "x", 1, 10, 0);
    uint64_t c = submit(core, "x", 1, 10, 0), found;

    (void)state;
    round_at(core, 0);
    assert_int_equal(gp_core_find_job(core, "x", &found), GP_OK);
    assert_true(found == c);
    assert_int_equal(gp_core_job_ended(core, c, GP_JOB_COMPLETED, S(10)),
                     GP_OK);
    assert_int_equal(gp_core_retire(core, c), GP_OK);
    assert_int_equal(gp_core_find_job(core, "x", &found), GP_OK);
    assert_true(found == b);
    assert_int_equal(gp_core_job_ended(core, a, GP_JOB_COMPLETED, S(10)),
                     GP_OK);
    assert_int_equal(gp_core_retire(core, a), GP_OK);
    assert_int_equal(gp_core_find_job(core, "x", &found), GP_OK);
    assert_true(found == b);
    assert_int_equal(gp_core_job_ended(core, b, GP_JOB_COMPLETED, S(10)),
                     GP_OK);
    assert_int_equal(gp_core_retire(core, b), GP_OK);
    assert_int_equal(gp_core_find_job(core, "x", &found), GP_ENOENT);
    gp_core_free(core);
}

/* A rejected job says why: too many GPUs, a type the cluster lacks, or
 * the CPUs and memory asked with its GPUs. */
static void a_rejection_names_its_cause(void **state)
{
    struct gp_cluster *cl;
    struct gp_core *core;
    struct gp_node_spec node = {.name = "n0", .gpus = 4, .cpus = 16};
    struct gp_core_config cfg = {.policy = gp_policy_find("fifo"),
                                 .model = GP_PLACE_PACK};
    struct gp_job_spec big = {.id = "big", .gpus = 8, .duration_us = 1};
    struct gp_job_spec cpus = {
        .id = "cpus", .gpus = 2, .cpus = 64, .duration_us = 1};
    struct gp_job_spec typed = {
        .id = "t", .gpus = 1, .gpu_type = "A100", .duration_us = 1};
    uint64_t h;

    (void)state;
    harness_rec = NULL;
    assert_int_equal(gp_cluster_new(&cl), GP_OK);
    assert_int_equal(gp_cluster_add_node(cl, &node, NULL), GP_OK);
    assert_int_equal(gp_core_new(&core, cl, &cfg, NULL), GP_OK);
    assert_int_equal(gp_core_submit(core, &big, 0, &h, NULL), GP_OK);
    assert_int_equal(gp_core_job(core, h)->reject, GP_REJECT_TOO_LARGE);
    assert_int_equal(gp_core_submit(core, &cpus, 0, &h, NULL), GP_OK);
    assert_int_equal(gp_core_job(core, h)->state, GP_JOB_REJECTED);
    assert_int_equal(gp_core_job(core, h)->reject, GP_REJECT_OTHER);
    assert_int_equal(gp_core_submit(core, &typed, 0, &h, NULL), GP_OK);
    assert_int_equal(gp_core_job(core, h)->reject, GP_REJECT_GPU_TYPE);
    gp_core_free(core);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_start_holds_its_gpus_until_the_world_confirms),
        cmocka_unit_test(a_failed_start_releases_exactly_that_jobs_gpus),
        cmocka_unit_test(a_job_whose_starts_keep_failing_fails_with_the_reason),
        cmocka_unit_test(a_cancelled_job_holds_its_gpus_until_it_exits),
        cmocka_unit_test(a_job_cancelled_while_starting_ends_cancelled),
        cmocka_unit_test(reports_that_do_not_fit_the_state_are_refused),
        cmocka_unit_test(a_starting_job_is_no_victim),
        cmocka_unit_test(a_job_joins_the_queue_again_when_it_loses_its_run),
        cmocka_unit_test(
            a_retired_jobs_handle_finds_nothing_and_its_slot_is_reused),
        cmocka_unit_test(a_retired_jobs_timers_do_not_touch_the_next_job),
        cmocka_unit_test(retiring_keeps_the_store_to_the_jobs_alive),
        cmocka_unit_test(jobs_sharing_an_id_are_found_newest_first),
        cmocka_unit_test(a_rejection_names_its_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
