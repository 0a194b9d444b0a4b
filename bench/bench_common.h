/*
 * bench_common: what bench/ack-latency.c and bench/windows.c share.  Both
 * start control agents (perfgate, perf stat, a built-in floor) on private
 * FIFO pairs, time round trips over them, read the agents' CPU time from
 * schedstat, measure in alternating blocks per scheduling mode, and must
 * take the agents down however they end.  The measurements themselves and
 * the output stay in each program.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

/* Needs _GNU_SOURCE (cpu_set_t), defined before any #include. */
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define BENCH_MAX_AGENTS	8
#define BENCH_REPLY_MAX		8192
/* The first reply waits for the agent to start up (perf opens its counters
 * and forks the workload first), so it gets a longer timeout. */
#define STARTUP_TIMEOUT_MS	10000

/* The program's name, the prefix of its messages: each program defines it. */
extern const char bench_name[];

/* Where the client and the agents run; -1: wherever the scheduler likes. */
struct bench_sched {
	char label[32];
	int client_cpu;
	int tool_cpu;
};

/* One agent on its FIFO pair; a program embeds it in its own record. */
struct bench_agent {
	const char *name;	/* in messages */
	const char *unit;	/* what count counts, in messages: "pair" */
	const char *argv[16];	/* its command line; argv[0] NULL: the floor */
	size_t floor_ack_len;	/* floor only: 4 "ack\n", 5 "ack\n\0" as perf */
	bool floor_bare;	/* floor only: a command ends where a read ends */
	char control[2 * PATH_MAX + 16];	/* "fifo:CTL,ACK" for argv */
	pid_t pid;		/* also its process group id */
	int ctl_fd;
	int ack_fd;
	char ctl_path[PATH_MAX];
	char ack_path[PATH_MAX];
	char log_path[PATH_MAX];
	char reply[BENCH_REPLY_MAX];	/* read from ACK, not yet consumed */
	size_t reply_len;
	unsigned long count;	/* units sent since start: the program's */
	uint64_t *ns;		/* measured times */
	size_t nns;
	uint64_t cpu_ns;	/* agent CPU during the measured blocks */
};

/* Medians and tails of an agent's measured times, in µs. */
struct bench_result {
	double median_us;
	double p99_us;
	double cpu_us;		/* per measured unit */
};

/* Failing: the message, the agents taken down, exit 1. */
void bench_die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void bench_die_agent(struct bench_agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
void bench_install_signals(void);
void bench_cleanup_files(void);

/* Numbers from the system. */
uint64_t now_ns(void);
uint64_t process_cpu_ns(pid_t pid);
int pin_to_cpu(int cpu);
void bench_pin_client(const struct bench_sched *m, cpu_set_t *saved);

/* Agents: set up once, started and stopped once per scheduling mode. */
void bench_make_workdir(void);
void bench_agent_init(struct bench_agent *a, const char *name,
		      const char *file, const char *unit, long n);
void bench_agent_start(struct bench_agent *a, int pin_cpu);
void bench_agent_stop(struct bench_agent *a);
void bench_send(struct bench_agent *a, const char *cmd);
void bench_reply_read(struct bench_agent *a, char *line, size_t size,
		      int timeout_ms);
void bench_expect_ack(struct bench_agent *a, const char *line,
		      const char *cmd);

/* Measuring and reporting. */
void bench_alternate(long n, long block, int nagents,
		     void (*measure)(int i, long count, void *ctx), void *ctx);
struct bench_result bench_agent_result(struct bench_agent *a);
void bench_print_quotient(int width, double a, double b);
void bench_print_machine(void);

/* Options both programs take. */
long bench_parse_count(const char *arg, const char *what, long min);
int bench_parse_sched(const char *list, int cpu, struct bench_sched *modes,
		      int max);

#endif
