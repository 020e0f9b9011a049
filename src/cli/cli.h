/* cli.h - the gpupool command's subcommands (git-style command table). */
#ifndef GPUPOOL_CLI_H
#define GPUPOOL_CLI_H

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

#endif
