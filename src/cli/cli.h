/* cli.h - the gpupool command's subcommands (git-style command table). */
#ifndef GPUPOOL_CLI_H
#define GPUPOOL_CLI_H

#include <stddef.h>

struct gp_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

int gp_cmd_sim(int argc, char **argv);
int gp_cmd_demo(int argc, char **argv);
int gp_cmd_policies(int argc, char **argv);
int gp_cmd_formats(int argc, char **argv);
int gp_cmd_presets(int argc, char **argv);
int gp_cmd_share(int argc, char **argv);
int gp_cmd_serve(int argc, char **argv);
int gp_cmd_submit(int argc, char **argv);
int gp_cmd_queue(int argc, char **argv);
int gp_cmd_show(int argc, char **argv);
int gp_cmd_why(int argc, char **argv);
int gp_cmd_cancel(int argc, char **argv);
int gp_cmd_history(int argc, char **argv);
int gp_cmd_tenants(int argc, char **argv);
int gp_cmd_nodes(int argc, char **argv);
int gp_cmd_ledger(int argc, char **argv);
int gp_cmd_top(int argc, char **argv);
int gp_cmd_token(int argc, char **argv);
int gp_cmd_compare(int argc, char **argv);

/* gpupool compare runs gpupool sim once per trace and keeps the runs. */
#define GP__SIM_KEEP_MAX 256
struct gp_metrics;
struct gp__sim_keep {
    struct gp_metrics *runs[GP__SIM_KEEP_MAX];
    size_t n;
    char command[2048]; /* the last sim's command line */
};
/* gpupool sim with these arguments (argv[0] "sim"): the exit status. When
 * keep is not NULL and the run succeeds, its runs are appended to keep
 * (ownership passes) for gpupool compare. */
int gp__sim_keep_runs(int argc, char **argv, struct gp__sim_keep *keep);

#endif
