/*
 * workload: fork, hold, exec and reap the measured command.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/base/signals.h"
#include "agent/workload.h"
#include "proto/ctl_lock.h"

/* Keep fd open across exec and name it in the environment: 0, or -errno
 * (-ENOMEM: no room in the environment). */
static int child_export_fd(const char *var, int fd)
{
	char text[16];

	fcntl(fd, F_SETFD, 0);
	snprintf(text, sizeof(text), "%d", fd);
	return setenv(var, text, 1) ? -errno : 0;
}

/*
 * PERFGATE_CHANNEL_ID="CTL_INODE:ACK_INODE": which pipes the two fds are.
 * The variables outlive the fds -- a grandchild may inherit the
 * environment without the fds, or with other files at those numbers -- so
 * the clients check the inodes and stay inert when they do not match,
 * rather than write commands into somebody else's file.
 */
static int child_export_channel_id(const int channel_fds[2])
{
	struct stat ctl, ack;
	char text[48];

	if (fstat(channel_fds[0], &ctl) || fstat(channel_fds[1], &ack))
		return 0;
	snprintf(text, sizeof(text), "%llu:%llu", (unsigned long long)ctl.st_ino,
		 (unsigned long long)ack.st_ino);
	return setenv("PERFGATE_CHANNEL_ID", text, 1) ? -errno : 0;
}

/* The channel named in the child's environment: 0, or -errno.  A workload
 * started without it would find its client inert and never say why. */
static int child_export_channel(const int channel_fds[3])
{
	int rc = child_export_fd("PERFGATE_CTL_FD", channel_fds[0]);

	if (!rc)
		rc = child_export_fd("PERFGATE_ACK_FD", channel_fds[1]);
	if (!rc)
		rc = child_export_channel_id(channel_fds);
	if (rc)
		return rc;
	if (channel_fds[2] < 0) {
		unsetenv(CTL_LOCK_ENV);
		return 0;
	}
	return child_export_fd(CTL_LOCK_ENV, channel_fds[2]);
}

/* In the child: wait for the go byte, restore the signal dispositions the
 * agent changed, exec.  Never returns; a failure (the channel's variables,
 * the exec) goes to the agent as an errno through exec_write. */

static void child_run(char **argv, int go_read, int exec_write, const int channel_fds[3])
{
	int sigs[SIGNALS_ENDING_MAX], err = 0;
	size_t nr = signals_ending(sigs);
	char byte;

	if (channel_fds)
		err = -child_export_channel(channel_fds);
	signal(SIGPIPE, SIG_DFL);
	for (size_t i = 0; i < nr; i++)
		signal(sigs[i], SIG_DFL);
	if (read(go_read, &byte, 1) != 1)
		_exit(127);	/* the agent gave up before starting us */
	close(go_read);
	/* Told once the agent waits for it, as a failed exec is. */
	if (!err) {
		execvp(argv[0], argv);
		err = errno;
	}
	if (write(exec_write, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int workload_prepare(struct workload *w, char **argv, const int channel_fds[3])
{
	int go[2], exec_pipe[2];

	memset(w, 0, sizeof(*w));
	if (pipe2(go, O_CLOEXEC) || pipe2(exec_pipe, O_CLOEXEC)) {
		log_error("cannot create pipes for the workload: %s", strerror(errno));
		return -1;
	}
	w->pid = fork();
	if (w->pid < 0) {
		log_error("cannot fork the workload: %s", strerror(errno));
		return -1;
	}
	if (w->pid == 0) {
		close(go[1]);
		close(exec_pipe[0]);
		child_run(argv, go[0], exec_pipe[1], channel_fds);
	}
	close(go[0]);
	close(exec_pipe[1]);
	w->go_fd = go[1];
	w->exec_fd = exec_pipe[0];
	w->running = true;
	return 0;
}

int workload_start(struct workload *w, const char *name)
{
	ssize_t n;
	int err = 0;

	if (write(w->go_fd, "g", 1) != 1) {
		log_error("cannot start the workload: %s", strerror(errno));
		return -1;
	}
	close(w->go_fd);
	w->go_fd = -1;
	do
		n = read(w->exec_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(w->exec_fd);
	w->exec_fd = -1;
	if (n == 0)
		return 0;
	log_error("cannot run '%s': %s", name, n == sizeof(err) ? strerror(err) : "exec failed");
	workload_reap(w, true);
	return -1;
}

bool workload_reap(struct workload *w, bool block)
{
	pid_t pid;

	if (!w->running)
		return true;
	do
		pid = wait4(w->pid, &w->status, block ? 0 : WNOHANG, &w->usage);
	while (pid < 0 && errno == EINTR);
	if (pid == w->pid) {
		w->running = false;
		return true;
	}
	return false;
}

void workload_terminate(struct workload *w)
{
	if (w->running)
		kill(w->pid, SIGTERM);
}

void workload_end(struct workload *w, int grace_ms)
{
	struct pollfd pfd = { .fd = -1, .events = POLLIN };

	if (!w->running)
		return;
	workload_terminate(w);
	/* A workload that ignores SIGTERM must not hold the agent forever. */
	pfd.fd = pidfd_open(w->pid, 0);
	if (pfd.fd >= 0) {
		while (poll(&pfd, 1, grace_ms) < 0 && errno == EINTR)
			;
		close(pfd.fd);
	}
	if (!workload_reap(w, false)) {
		log_warn("the workload ignored SIGTERM for %d ms: killing it", grace_ms);
		kill(w->pid, SIGKILL);
	}
	workload_reap(w, true);
}

int workload_exit_code(const struct workload *w)
{
	if (WIFEXITED(w->status))
		return WEXITSTATUS(w->status);
	if (WIFSIGNALED(w->status))
		return 128 + WTERMSIG(w->status);
	return 1;
}
