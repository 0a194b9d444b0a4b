/*
 * ranger: a workload that makes exact numbers of range-delimited syscalls,
 * for the range tests.
 *
 *   ranger [-t THREADS] [-f] [-m] [-w FIFO] [-n FIFO] [-d FIFO] R K M
 *
 * Every worker makes R ranges of "getppid(); K x write(1 byte); getpgid(0)"
 * and then M more writes outside any range.  There are THREADS workers in
 * the process (default 1), plus one in a forked child with -f.  With -m each
 * worker moves itself to the other CPU inside every range
 * (sched_setaffinity), so ranges that migrate are exercised.  With -w the
 * workers start, then all wait until a line can be read from FIFO (for a
 * range loaded while the threads already exist).  With -n it first writes
 * a line to FIFO (to release a competitor waiting in "-w" or a marker's
 * "wait"), with no other syscall a range could see; with -d it writes a
 * line to FIFO when all its workers are done.
 *
 * So syscalls:sys_enter_write@getppid..getpgid counts R*K per worker, and
 * the whole run's writes are (R*K + M) per worker.  Output: nothing; exit 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long ranges, writes_in, writes_out;
static bool migrate;
static const char *start_fifo, *notify_fifo, *done_fifo;
static pthread_barrier_t started;

static void write_n(int fd, long n)
{
	char byte = 0;

	for (long i = 0; i < n; i++)
		if (write(fd, &byte, 1) != 1)
			exit(100);
}

/* Move to the CPU this range's number picks (0, 1, 0, ...). */
static void flip_cpu(long r)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r % 2 ? 1 : 0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *worker(void *unused)
{
	int fd = open("/dev/null", O_WRONLY);

	(void)unused;
	if (fd < 0)
		exit(100);
	pthread_barrier_wait(&started);
	for (long r = 0; r < ranges; r++) {
		syscall(SYS_getppid);
		write_n(fd, writes_in);
		if (migrate)
			flip_cpu(r);
		syscall(SYS_getpgid, 0);
	}
	write_n(fd, writes_out);
	close(fd);
	return NULL;
}

/* Block until the test writes a line to the FIFO. */
static void wait_start(void)
{
	char line[16];
	int fd = open(start_fifo, O_RDONLY);

	if (fd < 0 || read(fd, line, sizeof(line)) <= 0)
		exit(100);
	close(fd);
}

static void notify(const char *fifo)
{
	int fd = open(fifo, O_WRONLY);

	if (fd < 0 || write(fd, "go\n", 3) != 3)
		exit(100);
	close(fd);
}

static void run_workers(long threads)
{
	pthread_t *ids = calloc((size_t)threads, sizeof(*ids));

	pthread_barrier_init(&started, NULL, (unsigned)threads + 1);
	for (long i = 0; i < threads; i++)
		pthread_create(&ids[i], NULL, worker, NULL);
	if (start_fifo)
		wait_start();
	pthread_barrier_wait(&started);
	for (long i = 0; i < threads; i++)
		pthread_join(ids[i], NULL);
	free(ids);
}

int main(int argc, char **argv)
{
	long threads = 1;
	bool fork_child = false;
	pid_t child = -1;
	int opt;

	while ((opt = getopt(argc, argv, "t:fmw:n:d:")) != -1) {
		switch (opt) {
		case 't': threads = atol(optarg); break;
		case 'f': fork_child = true; break;
		case 'm': migrate = true; break;
		case 'w': start_fifo = optarg; break;
		case 'n': notify_fifo = optarg; break;
		case 'd': done_fifo = optarg; break;
		default: return 2;
		}
	}
	if (argc - optind != 3 || threads < 1) {
		fprintf(stderr, "usage: ranger [-t THREADS] [-f] [-m] [-w FIFO] [-n FIFO] [-d FIFO] R K M\n");
		return 2;
	}
	ranges = atol(argv[optind]);
	writes_in = atol(argv[optind + 1]);
	writes_out = atol(argv[optind + 2]);
	if (notify_fifo)
		notify(notify_fifo);
	if (fork_child && (child = fork()) == 0) {
		run_workers(1);
		_exit(0);
	}
	run_workers(threads);
	if (child > 0)
		waitpid(child, NULL, 0);
	if (done_fifo)
		notify(done_fifo);
	/* _exit: no atexit handlers making syscalls of their own (ASan). */
	_exit(0);
}
